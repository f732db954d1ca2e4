"""`ptas reset`: wipe the world back to its root partner and its tokens."""

from ._client import add_target, run


def reset(sandbox, args):
    body = sandbox.call("POST", "/_sandbox/reset")
    print(f"reset: {body.get('reset')}")


def add(commands):
    r = commands.add_parser("reset", help="wipe the world back to its root partner and tokens")
    add_target(r)
    r.set_defaults(func=run("reset", reset))
