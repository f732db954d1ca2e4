"""`ptas requests`: the world's request journal, newest last; `--follow` keeps printing new calls (tail -f)."""

import re
import time

from ._client import Failed, add_target, run


def line(entry):
    token = f"{entry['token']['kind']} {entry['token']['id'][:8]}" if entry.get("token") else "-"
    query = f"?{entry['query']}" if entry.get("query") else ""
    marks = entry.get("marks") or {}
    notes = []
    if marks.get("injected"):
        notes.append(f"[injected {marks['injected'].get('type')}]")
    notes += [f"[{name}]" for name in ("harness", "credentials") if marks.get(name)]
    if marks.get("tool"):
        notes.append(f"[{marks['tool']}]")
    status = "---" if entry["status"] is None else entry["status"]      # a dropped connection: no answer
    return (f"#{entry['id']:<5} {entry['at'][:23]}  {status}  {entry['method']:6} {entry['path']}{query}  "
            f"{entry['operationId']}  {entry['latencyMs']:.1f}ms  {token}" + "".join(f"  {n}" for n in notes))


def show(sandbox, args):
    if args.follow and args.interval <= 0:      # refused before the first page, not after it (sleep(-1))
        raise Failed(f"--interval {args.interval:g}: give a number of seconds above 0", 2)
    if args.status and not re.fullmatch(r"[1-5](\d\d|xx)", args.status.lower()):
        raise Failed(f"--status {args.status}: give a status such as 404 or a class such as 4xx", 2)
    filters = {k: v for k, v in {"operationId": args.operation, "status": args.status,
                                 "tokenId": args.token_id,
                                 "marked": "injected" if args.injected else args.marked,
                                 "tools": "true" if args.tools else None}.items() if v}
    page = sandbox.call("GET", "/_sandbox/requests", params={**filters, "pageSize": args.limit})
    entries = list(reversed(page["requests"]))
    for entry in entries:
        print(line(entry), flush=True)
    if not entries:
        hint = " (give the whole token id: a line shows its first 8 characters)" \
            if args.token_id and len(args.token_id) <= 8 else ""
        print(f"no requests match{hint}" if filters.keys() - {"tools"} else "no requests yet", flush=True)
    last = entries[-1]["id"] if entries else 0
    while args.follow:
        time.sleep(args.interval)       # polling a remote sandbox for what others do: the only way to tail
        page = sandbox.call("GET", "/_sandbox/requests", params={**filters, "order": "asc", "after": last,
                                                                 "pageSize": 1000})
        for entry in page["requests"]:
            print(line(entry), flush=True)
            last = entry["id"]


def add(commands):
    p = commands.add_parser("requests", help="show the world's request journal (tail it with --follow)")
    p.add_argument("-f", "--follow", action="store_true", help="keep printing new requests")
    p.add_argument("-n", "--limit", type=int, default=20, help="how many recent requests (default 20)")
    p.add_argument("--operation", help="only this operationId")
    p.add_argument("--status", help="only this status (404) or class (4xx)")
    p.add_argument("--token-id", help="only calls made with this token id")
    p.add_argument("--injected", action="store_true", help="only calls a fault was injected into")
    p.add_argument("--marked", help="only calls with this mark (injected, dropped, harness, credentials, tool)")
    p.add_argument("--tools", action="store_true",
                   help="also the calls of ptas's own commands (listen, trigger, ...), left out by default")
    p.add_argument("--interval", type=float, default=1.0, help="seconds between polls with --follow")
    add_target(p)
    p.set_defaults(func=run("requests", show))
