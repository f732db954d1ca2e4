"""`ptas snapshot save FILE` and `ptas snapshot load FILE`: a world as one JSON document, and that document as
a new world of any sandbox (docs/chaos.md)."""

import json
import sys

from . import _control


def add(commands):
    s = commands.add_parser("snapshot", help="save a world to a file, or load one into a new world")
    actions = s.add_subparsers(dest="action", required=True)
    save = actions.add_parser("save", help="export the token's world to FILE")
    _control.arguments(save)
    save.add_argument("file")
    save.set_defaults(func=save_snapshot)
    load = actions.add_parser("load", help="load FILE into a new world; prints its partner token")
    _control.arguments(load)
    load.add_argument("file")
    load.set_defaults(func=load_snapshot)


def save_snapshot(args):
    document = _control.call(args, "GET", "/_sandbox/snapshot").json()
    with open(args.file, "w", encoding="utf-8") as out:
        json.dump(document, out, separators=(",", ":"))
    tables = document["tables"]
    sizes = ", ".join(f"{name} {len(rows) if isinstance(rows, list) else rows['rows']}" for name, rows in
                      sorted(tables.items()))
    print(f"saved world {document['world']['id']} at {document['world']['clock']['now']} to {args.file} ({sizes})")


def load_snapshot(args):
    try:
        with open(args.file, "rb") as source:
            raw = source.read()
    except OSError as error:
        sys.exit(f"ptas: cannot read {args.file}: {error}")
    loaded = _control.call(args, "POST", "/_sandbox/snapshots", needs_token=False, data=raw,
                           headers={"Content-Type": "application/json"}).json()
    print(f"loaded into world {loaded['world']['id']} (clock {loaded['world']['clock']['now']})")
    print(f"partner token {loaded['accessToken']}")
