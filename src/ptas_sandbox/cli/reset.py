"""`ptas reset`: wipe the world back to its root partner and its tokens; `--delete`: delete it."""

from ._client import add_target, run


def reset(sandbox, args):
    if args.delete:
        sandbox.call("DELETE", "/_sandbox/world", expect=(204,))
        print("deleted the world: its tokens and world key are refused from now on")
        return
    body = sandbox.call("POST", "/_sandbox/reset")
    print(f"reset: world {body.get('reset')} is back to its root partner and that partner's tokens (they still "
          "work); everything else is gone: users, accounts, child partners, webhooks (a running `ptas listen` "
          "subscribes again), faults and the journal")


def add(commands):
    r = commands.add_parser("reset", help="wipe the world back to its root partner and tokens")
    r.add_argument("--delete", action="store_true",
                   help="delete the world with everything in it instead, freeing its place on a shared sandbox")
    add_target(r)
    r.set_defaults(func=run("reset", reset))
