"""`ptas scenarios`: the named sandbox worlds, of this installation or (`--url`) of a running sandbox."""

import os

from ._client import run


def add(commands):
    sc = commands.add_parser("scenarios", help="list the named scenarios")
    sc.add_argument("--url", default=os.environ.get("PTAS_URL"),
                    help="ask a running sandbox (or PTAS_URL) instead of this installation")
    sc.set_defaults(func=scenarios)


def scenarios(args):
    if args.url:
        return run("scenarios", remote)(args)
    from ptas_sandbox.simulator.tools.scenarios import catalogue
    show(catalogue())
    return 0


def remote(sandbox, args):
    listed = sandbox.call("GET", "/_sandbox/scenarios", auth=False)["scenarios"]
    show([(s["name"], s["summary"]) for s in listed])


def show(listed):
    for name, summary in listed:
        print(f"{name:20} {summary}")
