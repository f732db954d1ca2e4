"""`ptas report`: the integration report of a world, as text, JSON or JUnit XML; the exit status is 1 when a
finding reaches --fail-on, so CI fails a build on it (docs/chaos.md)."""

import json

from ._client import add_target, run

SEVERITIES = ("info", "warning", "error")


def add(commands):
    r = commands.add_parser("report", help="judge a world's recorded traffic (findings, evidence, fixes)")
    add_target(r)
    r.add_argument("--format", choices=["text", "json", "junit"], default="text")
    r.add_argument("--fail-on", choices=[*SEVERITIES, "never"], default="warning",
                   help="exit 1 when a finding is at least this severe (default warning)")
    r.add_argument("--since", help="judge only traffic from this instant on (world clock)")
    r.add_argument("--output", "-o", help="write the report to this file instead of standard output")
    r.set_defaults(func=run("report", report))


def report(sandbox, args):
    query = {"since": args.since} if args.since else {}
    body = sandbox.call("GET", "/_sandbox/report", params=query)
    if args.format == "json":
        text = json.dumps(body, indent=2) + "\n"
    else:
        from ptas_sandbox.simulator.tools.integration import render
        text = render.text(body) if args.format == "text" else render.junit(
            body, "error" if args.fail_on == "never" else args.fail_on)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(text)
    else:
        print(text, end="")
    if args.fail_on == "never":
        return 0
    floor = SEVERITIES.index(args.fail_on)
    return 1 if any(SEVERITIES.index(f["severity"]) >= floor for f in body["findings"]) else 0
