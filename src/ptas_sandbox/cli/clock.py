"""`ptas clock [advance 1h|set TS|freeze|thaw]`: show or move the world clock of a running sandbox."""

from ptas_sandbox.durations import seconds

from ._client import Failed, add_target, run


def duration(text):
    """Seconds of a duration as typed (ptas_sandbox.durations), or a one-line refusal (exit 2)."""
    try:
        return seconds(text)
    except ValueError as error:
        raise Failed(str(error), 2) from None


def clock(sandbox, args):
    action, value = args.action, args.value
    if action == "advance" and value and value.startswith("-"):
        duration(value)                 # refused in the inspector's words too
    if action is None:
        body = sandbox.call("GET", "/_sandbox/clock")
    else:
        if action in ("advance", "set") and not value:
            raise Failed(f"`ptas clock {action}` needs a value, e.g. `ptas clock advance 1h`", 2)
        request = {"advance": lambda: {"advance": duration(value)}, "set": lambda: {"set": value},
                   "freeze": lambda: {"freeze": True}, "thaw": lambda: {"freeze": False}}[action]()
        body = sandbox.call("POST", "/_sandbox/clock", json=request)
    print(f"{body['now']} ({'frozen' if body['frozen'] else 'running'})")


def add(commands):
    c = commands.add_parser("clock", help="show or move the world clock of a running sandbox")
    c.add_argument("action", nargs="?", choices=["advance", "set", "freeze", "thaw"])
    c.add_argument("value", nargs="?", help="advance: a duration (90s, 15m, 1h, 2d); set: an ISO 8601 instant")
    add_target(c)
    c.set_defaults(func=run("clock", clock), claim=negative)


def negative(args, extra):
    """`advance -1h` reaches `clock` (argparse takes `-1h` for an option) to be refused in words."""
    if args.action == "advance" and args.value is None and len(extra) == 1:
        args.value = extra[0]
        return True
    return False
