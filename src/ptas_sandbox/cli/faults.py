"""`ptas faults`: add, list and delete a world's faults (docs/chaos.md)."""

import json
import sys

from . import _control


def add(commands):
    f = commands.add_parser("faults", help="make a world's API calls or notifications misbehave")
    actions = f.add_subparsers(dest="action", required=True)

    a = actions.add_parser("add", help="add a fault (flags, or the whole body with --json)")
    _control.arguments(a)
    a.add_argument("--json", help="the body of POST /_sandbox/faults as JSON")
    a.add_argument("--effect", help="status, latency, drop, truncate, malformed, success-then-500, duplicate, "
                                    "delay, reorder, bad-signature")
    a.add_argument("--status", type=int, help="for --effect status: 429, 500, 502, 503 or 504")
    a.add_argument("--retry-after", type=int, help="seconds, for a status effect")
    a.add_argument("--seconds", type=float, help="for latency and delay")
    a.add_argument("--clock", choices=["world", "wall"], help="for latency (default world)")
    a.add_argument("--after", action="store_true", help="for drop: after the operation completed")
    a.add_argument("--copies", type=int, help="for duplicate")
    a.add_argument("--operation", help="match an operationId, e.g. GetTransactions")
    a.add_argument("--method", help="match a method")
    a.add_argument("--path", help="match a path pattern, e.g. /accounts/*/transactions")
    a.add_argument("--token-id", help="match calls of one token (its id)")
    a.add_argument("--webhook", help="match notifications of one webhook (its id)")
    a.add_argument("--event", help="match notifications of one event kind")
    a.add_argument("--times", type=int, help="the next N matching calls (default 1)")
    a.add_argument("--probability", type=float, help="each matching call with this chance (seeded)")
    a.add_argument("--seed", type=int, help="the seed of --probability")
    a.set_defaults(func=add_fault)

    ls = actions.add_parser("list", help="the world's faults and recent injections")
    _control.arguments(ls)
    ls.set_defaults(func=list_faults)

    d = actions.add_parser("delete", help="delete one fault, or all with --all")
    _control.arguments(d)
    d.add_argument("id", nargs="?")
    d.add_argument("--all", action="store_true")
    d.set_defaults(func=delete_faults)


def body_of(args):
    if args.json:
        try:
            return json.loads(args.json)
        except ValueError as error:
            sys.exit(f"ptas: --json is not JSON: {error}")
    if not args.effect:
        sys.exit("ptas: give --effect (or --json)")
    effect = {"type": args.effect}
    for key, value in (("status", args.status), ("retryAfter", args.retry_after), ("seconds", args.seconds),
                       ("clock", args.clock), ("copies", args.copies)):
        if value is not None:
            effect[key] = value
    if args.after:
        effect["after"] = True
    match = {k: v for k, v in (("operationId", args.operation), ("method", args.method), ("path", args.path),
                               ("token", args.token_id), ("webhookId", args.webhook), ("eventType", args.event))
             if v is not None}
    body = {"effect": effect, "match": match}
    for key, value in (("times", args.times), ("probability", args.probability), ("seed", args.seed)):
        if value is not None:
            body[key] = value
    return body


def add_fault(args):
    made = _control.call(args, "POST", "/_sandbox/faults", json=body_of(args)).json()
    print(f"{made['id']}  {describe(made)}")


def describe(fault):
    effect = dict(fault["effect"])
    kind = effect.pop("type")
    match = ", ".join(f"{k}={v}" for k, v in fault["match"].items()) or "every " + (
        "call" if fault["target"] == "api" else "notification")
    scope = (f"{fault.get('remaining')} of {fault['times']} left" if "times" in fault else "") + (
        f" p={fault['probability']} seed={fault['seed']}" if "probability" in fault else "")
    extra = " ".join(f"{k}={v}" for k, v in effect.items())
    return f"{kind}{' ' + extra if extra else ''} on {match}; {scope.strip()}; injected {fault['injected']}"


def list_faults(args):
    listed = _control.call(args, "GET", "/_sandbox/faults").json()
    for fault in listed["faults"]:
        print(f"{fault['id']}  {describe(fault)}")
    if not listed["faults"]:
        print("no faults")


def delete_faults(args):
    if args.all:
        print(f"deleted {_control.call(args, 'DELETE', '/_sandbox/faults').json()['deleted']} fault(s)")
    elif args.id:
        _control.call(args, "DELETE", f"/_sandbox/faults/{args.id}")
        print(f"deleted {args.id}")
    else:
        sys.exit("ptas: give a fault id or --all")
