"""`ptas report`: the integration report of a world, as text, JSON or JUnit XML. Exit status: 0 clean, 1 a
finding reaches --fail-on, 2 the report could not be made (no sandbox, no world, no access), so CI tells a
failing integration from a broken job (docs/chaos.md). --junit always writes its file: the report, or
one test case in error saying why there is none."""

import json

from ._client import Failed, add_target, run, write_text

SEVERITIES = ("info", "warning", "error")


def add(commands):
    r = commands.add_parser("report", help="judge a world's recorded traffic (findings, evidence, fixes)")
    add_target(r)
    r.add_argument("--format", choices=["text", "json", "junit"], default="text")
    r.add_argument("--fail-on", choices=[*SEVERITIES, "never"], default="warning",
                   help="exit 1 when a finding is at least this severe (default warning)")
    r.add_argument("--since", help="judge only traffic from this instant on (world clock)")
    r.add_argument("--after", type=int, help="judge only calls after this journal entry id")
    r.add_argument("--junit", metavar="FILE", help="also write the JUnit XML to FILE (whatever --format is)")
    r.add_argument("--output", "-o", help="write the report to this file instead of standard output")
    r.set_defaults(func=run("report", report))


def report(sandbox, args):
    query = {k: v for k, v in (("since", args.since), ("after", args.after)) if v is not None}
    from ptas_sandbox.simulator.tools.integration import render
    try:
        body = sandbox.call("GET", "/_sandbox/report", params=query)
    except Failed as failure:
        # CI reads the JUnit file: one that says why beats none
        for path in {args.junit, args.output if args.format == "junit" else None} - {None}:
            write_text(path, render.unjudged(str(failure)))
        raise Failed(f"could not judge: {failure}", 2) from None
    fail_on = "error" if args.fail_on == "never" else args.fail_on
    if args.junit:
        write_text(args.junit, render.junit(body, fail_on))
    if args.format == "json":
        text = json.dumps(body, indent=2) + "\n"
    else:
        text = render.text(body) if args.format == "text" else render.junit(body, fail_on)
    if args.output:
        write_text(args.output, text)
    else:
        print(text, end="")
    if args.fail_on == "never":
        return 0
    floor = SEVERITIES.index(args.fail_on)
    return 1 if any(SEVERITIES.index(f["severity"]) >= floor for f in body["findings"]) else 0

