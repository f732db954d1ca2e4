"""`ptas snapshot save FILE` and `ptas snapshot load FILE`: a world as one JSON document, and that document as
a new world of any sandbox (docs/chaos.md)."""

import json

from ._client import Failed, add_target, run


def add(commands):
    s = commands.add_parser("snapshot", help="save a world to a file, or load one into a new world")
    actions = s.add_subparsers(dest="action", required=True)
    save = actions.add_parser("save", help="export the token's world to FILE")
    add_target(save)
    save.add_argument("file")
    save.set_defaults(func=run("snapshot save", save_snapshot))
    load = actions.add_parser("load", help="load FILE into a new world; prints its partner token")
    add_target(load, token=False)
    load.add_argument("file")
    load.set_defaults(func=run("snapshot load", load_snapshot))


def save_snapshot(sandbox, args):
    document = sandbox.call("GET", "/_sandbox/snapshot")
    with open(args.file, "w", encoding="utf-8") as out:
        json.dump(document, out, separators=(",", ":"))
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
    loaded = sandbox.call("POST", "/_sandbox/snapshots", auth=False, expect=(201,), data=raw,
                          headers={"Content-Type": "application/json"})
    print(f"loaded into world {loaded['world']['id']} (clock {loaded['world']['clock']['now']})")
    print(f"partner token {loaded['accessToken']}")
