"""`ptas snapshot save FILE` and `ptas snapshot load FILE [--replace]`: a world as one JSON document, and that
document as a new world of any sandbox, or in place of the world it came from (docs/chaos.md)."""

import json
import os

from ._client import Failed, add_target, run, write_text


def add(commands):
    s = commands.add_parser("snapshot", help="save a world to a file, or load one into a new world")
    actions = s.add_subparsers(dest="action", required=True)
    save = actions.add_parser("save", help="export the token's world to FILE")
    add_target(save)
    save.add_argument("file")
    save.set_defaults(func=run("snapshot save", save_snapshot))
    load = actions.add_parser("load", help="load FILE into a new world (or --replace the one it came from); "
                                           "prints its partner token")
    add_target(load)
    load.add_argument("file")
    load.add_argument("--replace", action="store_true",
                      help="put it in place of the world it was saved from (or loaded into before), same ids; "
                           "--token of that world's root partner, or PTAS_ADMIN_KEY")
    load.set_defaults(func=run("snapshot load", load_snapshot))


def save_snapshot(sandbox, args):
    document = sandbox.call("GET", "/_sandbox/snapshot")
    write_text(args.file, json.dumps(document, separators=(",", ":")))
    tables = document["tables"]
    sizes = ", ".join(f"{name} {len(rows) if isinstance(rows, list) else rows['rows']}" for name, rows in
                      sorted(tables.items()))
    print(f"saved world {document['world']['id']} at {document['world']['clock']['now']} to {args.file} ({sizes})")


def load_snapshot(sandbox, args):
    try:
        with open(args.file, "rb") as source:
            raw = source.read()
    except OSError as error:
        raise Failed(f"cannot read {args.file}: {error}", 2) from None
    headers = {"Content-Type": "application/json"}
    if os.environ.get("PTAS_ADMIN_KEY"):        # a shared sandbox: loading (and replacing) needs the admin key
        headers["X-Sandbox-Admin-Key"] = os.environ["PTAS_ADMIN_KEY"]
    if args.replace and not (sandbox.token or "X-Sandbox-Admin-Key" in headers):
        raise Failed("--replace needs a root partner token of the world it replaces (--token or PTAS_TOKEN), or "
                     "PTAS_ADMIN_KEY", 2)
    loaded = sandbox.call("POST", "/_sandbox/snapshots", auth=bool(args.replace and sandbox.token), expect=(201,),
                          data=raw, headers=headers, params={"replace": "true"} if args.replace else None)
    print(f"{'replaced: ' if args.replace else ''}loaded into world {loaded['world']['id']} "
          f"(clock {loaded['world']['clock']['now']})")
    print(f"partner token {loaded['accessToken']}")
