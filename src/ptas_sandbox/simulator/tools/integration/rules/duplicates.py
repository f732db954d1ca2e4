"""Duplicates and leaks: creating what the client already has (a second webhook for one callback URL, a second
user with one e-mail, a second child partner of one name), which a read of the collection would have shown, and
creating what it never uses (a partner token, a child partner), which stays valid for anyone who finds it."""

from .base import Rule, finding, grouped, judges, listing

# The field that makes two creations the same thing, by operation: the collection lists it, so a client can look.
IDENTITY = {"CreateWebhook": "callbackUrl", "CreateUser": "email", "CreatePartner": "name"}


def identity(call):
    body = call.body()
    value = body.get(IDENTITY[call.operationId]) if isinstance(body, dict) else None
    return value.strip().lower() if isinstance(value, str) and value.strip() else None


@judges(
    Rule("created-again", "warning", "Resources created again while the same one still existed",
         "Look before you create: list the collection (GET /webhooks, GET /users, GET /partners) at start and "
         "reuse what exists; one webhook per callback URL (two deliver every event twice), one user per person "
         "(spec §1 capability 2: CreateUserToken gives an existing user a new token)."),
)
def created_again(data):
    """A successful creation whose identity (IDENTITY) matches a resource the same partner made, got the answer
    of, and had not deleted. A creation whose answer was lost is blind-retry's."""
    again = []
    for calls in grouped(data.api_calls, lambda c: c.partner).values():
        live = {}                   # (operation, identity) -> (the first creation, the id it answered)
        for call in calls:
            if call.method == "DELETE" and call.ok():
                gone = call.named_id
                live = {k: v for k, v in live.items() if v[1] != gone}
            if call.operationId not in IDENTITY or not call.ok() or call.answer_faulted or identity(call) is None:
                continue
            key = (call.operationId, identity(call))
            if key in live:
                again.append((live[key][0], call))
            else:
                live[key] = (call, call.answer().get("id"))
    if again:
        first, later = again[0]
        yield finding("created-again", f"{len(again)} creation(s) repeated what existed "
                      f"({listing({c.operationId for _, c in again})}): e.g. {later.operationId} at "
                      f"{later.entry['at']} made a second {IDENTITY[later.operationId]} {identity(later)!r}, first "
                      f"made at {first.entry['at']}.", [c.evidence() for _, c in again])


AGAIN_SECONDS = 60      # world-clock (or real) seconds within which the same update sent again is "at once"


@judges(
    Rule("updated-again", "warning", "Updates repeated at once, unchanged, after they succeeded",
         "Do a change once: an update the service answered 2xx is done, and sending it again only spends the "
         "rate limit (spec §8) and may notify every webhook again. A notification delivered more than once "
         "(the same webhook-id) asks for its work once: deduplicate on webhook-id (docs/webhooks.md)."),
)
def updated_again(data):
    """A PUT or PATCH the same partner sent with the same path and body as one it had been answered 2xx, within
    AGAIN_SECONDS of it and with no other write to that path between (a client stating its settings again at
    each start, hours apart, is not judged). One sent while the first still ran (a retry after a client's own
    timeout) and one whose answer was lost (a 5xx, a drop, a cut or garbled body) are retries, not repeats. One
    sent just after the answer by another thread of the client counts: two parts of a client doing one change
    twice (each copy of a notification handled) is the mistake."""
    again = []
    for calls in grouped(data.api_calls, lambda c: c.partner).values():
        done = {}                   # path -> the last update answered 2xx there, while no other write followed
        for call in calls:
            if call.method not in ("PUT", "PATCH", "POST", "DELETE"):
                continue
            before = done.pop(call.path, None)
            if call.method not in ("PUT", "PATCH"):
                continue
            if before is not None and call.same_request(before) and call.ok() and not call.sent_while_running(before) \
                    and not call.waited(before, AGAIN_SECONDS):
                again.append((before, call))
            if call.ok() and not call.answer_faulted:
                done[call.path] = call
    if again:
        first, later = again[0]
        yield finding("updated-again", f"{len(again)} update(s) sent again unchanged after the same update had "
                      f"succeeded: e.g. {later.operationId} {later.path} at {later.entry['at']}, already answered "
                      f"{first.status} at {first.entry['at']}.", [c.evidence() for _, c in again])


@judges(
    Rule("created-unused", "info", "Partner tokens and child partners created and never used",
         "Create a token when a job needs it and revoke what no job uses (DELETE /partners/self/tokens/{id}); "
         "create a child partner when a customer needs one, and give it a token (spec §5 rules 2-4). An unused "
         "token is a valid secret lying about."),
)
def created_unused(data):
    """An own partner token handed over (and never used, nor revoked, to the window's end), and a child partner
    for which no token was made and which made no call. A child's token is meant for another system (spec §5
    rule 4), so CreatePartnerToken is not judged."""
    unused = []
    for call in data.api_calls:
        token = data.tokens.get(data.made.get(call.seq)) if call.operationId == "CreateOwnPartnerToken" else None
        if token is not None and not data.uses.get(token["id"]) and token["revoked_at"] is None:
            unused.append((call, f"token {token['id']} ({token['scope']})"))
        if call.operationId == "CreatePartner" and call.ok() and not call.answer_faulted:
            child = call.answer().get("id")
            if child and not any(t["partner_id"] == child for t in data.tokens.values()) \
                    and not any(c.partner == child for c in data.all_calls):
                unused.append((call, f"child partner {child}"))
    if unused:
        yield finding("created-unused", f"{len(unused)} thing(s) created and never used: "
                      f"{listing(what for _, what in unused)}.", [c.evidence() for c, _ in unused])


def account_identity(data, call):
    """(user, account type) of an account a CreateAccount answered: one account per provider per user (spec §1)."""
    answer = call.answer()
    user = answer.get("userId") or (data.tokens.get(call.token_id) or {}).get("user_id")
    kind = answer.get("accountTypeId")
    return (user, kind) if isinstance(user, str) and isinstance(kind, str) else None


@judges(
    Rule("recreated-instead-of-updated", "warning", "Accounts deleted and created again instead of refreshed",
         "Keep the account: TriggerAccountRefresh (with a start date) fetches its transactions again and "
         "UpdateAccount changes its credentials (spec §1 capability 5, §4.3). Deleting and creating it again "
         "loses its id, its history and its imports, and every notification names a new account."),
)
def recreated_accounts(data):
    """A CreateAccount for the user and account type of an account the same partner had deleted before it."""
    made, gone, again = {}, {}, []
    for calls in grouped(data.api_calls, lambda c: c.partner).values():
        for call in calls:
            if call.operationId == "CreateAccount" and call.ok() and not call.answer_faulted:
                identity = account_identity(data, call)
                if identity is not None and identity in gone:
                    again.append((gone.pop(identity), call))
                made[call.answer().get("id")] = identity
            elif call.operationId == "DeleteAccount" and call.ok():
                identity = made.get(call.named_id)
                if identity is not None:
                    gone[identity] = call
    if again:
        yield finding("recreated-instead-of-updated", f"{len(again)} account(s) were deleted and created again for "
                      "the same user and account type.", [e for pair in again for e in (pair[0].evidence(),
                                                                                         pair[1].evidence())],
                      count=len(again))
