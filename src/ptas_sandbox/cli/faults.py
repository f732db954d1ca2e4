"""`ptas faults`: add, list and delete a world's faults (docs/chaos.md)."""

import json

from ._client import Failed, add_target, run


def add(commands):
    f = commands.add_parser("faults", help="make a world's API calls or notifications misbehave")
    actions = f.add_subparsers(dest="action", required=True)

    a = actions.add_parser("add", help="add a fault (flags, or the whole body with --json)")
    add_target(a)
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
    a.set_defaults(func=run("faults add", add_fault))

    ls = actions.add_parser("list", help="the world's faults and recent injections")
    add_target(ls)
    ls.set_defaults(func=run("faults list", list_faults))

    d = actions.add_parser("delete", help="delete one fault, or all with --all")
    add_target(d)
    d.add_argument("id", nargs="?")
    d.add_argument("--all", action="store_true")
    d.set_defaults(func=run("faults delete", delete_faults))


def body_of(args):
    if args.json:
        try:
            return json.loads(args.json)
        except ValueError as error:
            raise Failed(f"--json is not JSON: {error}", 2) from None
    if not args.effect:
        raise Failed("give --effect (or --json)", 2)
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


def add_fault(sandbox, args):
    made = sandbox.call("POST", "/_sandbox/faults", expect=(201,), json=body_of(args))
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


def list_faults(sandbox, args):
    listed = sandbox.call("GET", "/_sandbox/faults")
    for fault in listed["faults"]:
        print(f"{fault['id']}  {describe(fault)}")
    if not listed["faults"]:
        print("no faults")
    # The server answers the newest injections with the faults (a deleted fault's too): what --help promises.
    if listed.get("injections"):
        print("recent injections:")
    for shot in listed.get("injections") or []:
        target = f"{shot['method']} {shot['path']}" if shot.get("path") else f"delivery {shot.get('deliveryId', '?')}"
        print(f"  {shot['at'][:23]}  {shot['faultId']}  {shot['effect']}  {target}")


def delete_faults(sandbox, args):
    if args.all:
        print(f"deleted {sandbox.call('DELETE', '/_sandbox/faults')['deleted']} fault(s)")
    elif args.id:
        sandbox.call("DELETE", f"/_sandbox/faults/{args.id}", expect=(204,))
        print(f"deleted {args.id}")
    else:
        raise Failed("give a fault id or --all", 2)
