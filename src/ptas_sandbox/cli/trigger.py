"""`ptas trigger EVENT`: fire a test event in the world and deliver it to its webhooks now."""

import re

from ._client import Failed, add_target, run

EVENTS = ("TransactionsImported", "AccountCreated", "AccountUpdated", "AccountDeleted", "AccountTypeUpdated")


def event_kind(text):
    """`AccountCreated`, `accountcreated` or `account.created` as the spec's event kind."""
    wanted = re.sub(r"[^a-z]", "", text.lower())
    for kind in EVENTS:
        if kind.lower() == wanted:
            return kind
    raise Failed(f"no event kind {text!r}; one of {', '.join(EVENTS)}", 2)


def trigger(sandbox, args):
    kind = event_kind(args.event)
    sandbox.need_partner_token()
    event = sandbox.call("POST", f"/testevents/{kind.lower()}", expect=(200, 202), json={})
    print(f"{kind} test event {event.get('id')} recorded")
    if args.flush:
        flushed = sandbox.call("POST", "/_sandbox/webhooks/flush")
        log = sandbox.call("GET", "/_sandbox/deliveries", params={"eventId": event.get("id")})["deliveries"]
        for attempt in log:
            outcome = attempt["response"]["status"] if attempt.get("response") else attempt.get("error") or ""
            print(f"  -> {attempt['url']}  {attempt['status']} {outcome}".rstrip())
        if not log:
            print(f"  no webhook of this world listens to {kind} ({flushed['attempted']} attempts)")


def add(commands):
    t = commands.add_parser("trigger", help="fire a test event and deliver it to the world's webhooks now")
    t.add_argument("event", help=f"an event kind: {', '.join(EVENTS)}")
    t.add_argument("--no-flush", dest="flush", action="store_false", help="record it, deliver it later")
    add_target(t, partner=True)
    t.set_defaults(func=run("trigger", trigger))
