"""Refusals and failures: what a client does after a 429, a 4xx, a 5xx or a dropped connection."""

from .base import UNROUTED, Rule, finding, grouped, judges, listing
from .history import token_status

# Creations a duplicate of which matters and whose result a read shows (the collection lists it): only these can
# be blamed for a blind repeat. A second Account UI session or user token does no harm and cannot be looked up.
CHECKABLE_WRITES = ("CreateUser", "CreateAccount", "CreateWebhook", "CreateOwnPartnerToken", "CreatePartnerToken",
                    "CreatePartner")


def retry_after(call):
    wait = call.entry["marks"].get("retryAfter")
    if wait is None and call.injected:
        wait = call.injected.get("retryAfter")
    return int(wait) if wait is not None and call.status in (429, 503) else None


def global_refusal(call):
    """A 429 of spec §8's global limit (journal mark `rateLimit`), which holds for every request of the partner;
    any other Retry-After (an injected fault, an operation's own limit, a 503) holds for its operation."""
    return call.entry["marks"].get("rateLimit") == "global"


@judges(
    Rule("retry-after-ignored", "error", "Requests sent before a Retry-After had passed",
         "After a 429 (or a 503 with Retry-After) wait the seconds Retry-After names before sending that "
         "operation again, and after a 429 of the global limit (spec §8: 100 requests per 60 s, all requests) "
         "before sending any request: the simplest is to hold every request of the client until then."),
)
def retry_after_ignored(data):
    """Per partner: a call sent after a 429/503 answer went out and before its Retry-After had passed (world
    clock or real time), of the same operation, or of any operation after a refusal of the global limit. Calls
    already in flight could not have known."""
    early, refusals = [], []
    for calls in grouped(data.api_calls, lambda c: c.partner).values():
        covered = set()
        for i, refused in enumerate(calls):
            wait = retry_after(refused)
            if wait is None:
                continue
            whole = global_refusal(refused)
            mine = [c for c in calls[i + 1:] if (whole or c.operationId == refused.operationId)
                    and c.seq not in covered and not c.in_flight_at(refused) and not c.waited(refused, wait)]
            if mine:
                refusals.append(refused)
                early += mine
                covered.update(c.seq for c in mine)
    if early:
        ops = {c.operationId for c in early}
        first = refusals[0]
        to = "of the global rate limit, which holds for every request" if global_refusal(first) else \
            "to that operation"
        yield finding("retry-after-ignored", f"{len(early)} request(s) of {listing(ops)} were sent within the "
                      f"Retry-After of an earlier {first.status} {to} (e.g. {retry_after(first)} s asked at "
                      f"{first.entry['at']}).",
                      [first.evidence(retryAfter=retry_after(first))] + [c.evidence() for c in early],
                      count=len(early))


def may_have_run(call, later_calls):
    """Why the operation of a failed write may have completed: the answer after the work was a 500 (or the
    connection dropped after it), or the client gave up waiting and sent it again while it ran. None if it
    did not run (an injected status, a drop before it) or did not fail."""
    injected = call.injected or {}
    kind = injected.get("type")
    # A fault shapes the answer of an operation that ran; one refused before it (a 429 of the rate limit, a 4xx)
    # kept its refusal, and the journal's status tells which the client got.
    if kind == "success-then-500" and call.status == 500:
        return "answered 500 after the operation completed"
    if kind == "drop" and call.status is None:
        return "its connection dropped after the operation completed" if injected.get("after") else None
    if kind == "status" or injected.get("skipped"):
        return None
    if call.status is not None and call.status >= 500:
        return f"answered {call.status}"
    if any(c.same_request(call) and c.sent_while_running(call) for c in later_calls):
        return "was sent again while it still ran (the client's timeout)"
    return None


def checks_result(check, failed):
    """A read after a failed write that could show whether the write happened (the collection or the item)."""
    return check.method == "GET" and (check.path.startswith(failed.path) or failed.path.startswith(check.path))


@judges(
    Rule("blind-retry", "error", "A request that may have run repeated without checking the result",
         "A 500 after the work, a connection dropped after it, or a timeout does not say the operation failed: "
         "read the resource (or its list) first, then repeat only what is missing."),
)
def blind_retries(data):
    repeats, why = [], {}
    for partner_calls in grouped(data.api_calls, lambda c: c.partner).values():
        same = grouped(partner_calls, lambda c: c.key)
        for i, first in enumerate(partner_calls):
            if first.operationId not in CHECKABLE_WRITES:
                continue
            reason = may_have_run(first, [c for c in same[first.key] if c.seq > first.seq])
            if reason is None:
                continue
            for later in partner_calls[i + 1:]:
                if checks_result(later, first) and not later.sent_while_running(first):
                    break
                if later.same_request(first):
                    repeats.append((first, later))
                    why.setdefault(reason, first)
                    break
    if repeats:
        first, later = repeats[0]
        yield finding("blind-retry", f"{len(repeats)} write(s) that may have run were sent again without reading "
                      f"what they did: {first.method} {first.path} {may_have_run(first, [later])} at "
                      f"{first.entry['at']} and was sent again at {later.entry['at']}.",
                      [e for pair in repeats for e in (pair[0].evidence(), pair[1].evidence())], count=len(repeats),
                      causes=sorted(why))


@judges(
    Rule("refused-repeated", "warning", "Requests the service refused, sent again unchanged",
         "A 4xx says the request itself is wrong: read the ProblemDetails (detail, errors) and change the "
         "request, or stop; sending it again gets the same answer."),
)
def refused_repeated(data):
    by_status = {}
    for partner_calls in grouped(data.api_calls, lambda c: c.partner).values():
        same = grouped(partner_calls, lambda c: c.key)
        repeated = set()
        for refused in partner_calls:
            if refused.status is None or not 400 <= refused.status < 500 or refused.status == 429 \
                    or refused.seq in repeated or token_status(data, refused) \
                    or refused.operationId in UNROUTED + ("RemovedPath",):
                continue
            # the same answer again, or one a fault stood in for (the client could not know it would differ)
            again = [c for c in same[refused.key] if c.seq > refused.seq and c.token_id == refused.token_id
                     and (c.status == refused.status or c.injected)]
            if again:
                repeated.update(c.seq for c in again)
                by_status.setdefault(refused.status, []).append((refused, again))
    for status, cases in sorted(by_status.items()):
        evidence = [e for refused, again in cases for e in [refused.evidence()] + [c.evidence() for c in again]]
        yield finding("refused-repeated", f"{sum(len(a) for _, a in cases)} request(s) answered {status} were "
                      f"sent again unchanged ({listing({r.operationId for r, _ in cases})}).", evidence,
                      count=sum(len(a) for _, a in cases), status=status)


def failed_call(call):
    return call.status is None or call.status >= 500


@judges(
    Rule("stopped-after-failure", "warning", "The client stopped after a failed call",
         "A dropped connection or a 5xx is transient: retry with backoff (after reading what a write did) "
         "instead of giving up."),
)
def stopped_after_failure(data):
    last = {}
    for call in data.api_calls:
        last[call.partner] = call
    stopped = [c for c in last.values() if failed_call(c) and c.operationId not in UNROUTED]
    if stopped:
        call = stopped[0]
        what = "a dropped connection" if call.status is None else f"a {call.status}"
        yield finding("stopped-after-failure", f"The client's last call ({call.operationId} at "
                      f"{call.entry['at']}) met {what}, and it never called again.", [c.evidence() for c in stopped])
