"""Refusals and failures: what a client does after a 429, a 4xx, a 5xx or a dropped connection."""

import json
import re

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
    already in flight could not have known (`followed_up` says when one within the round trip still did)."""
    early, refusals = [], []
    for calls in grouped(data.api_calls, lambda c: c.partner).values():
        covered = set()
        for i, refused in enumerate(calls):
            wait = retry_after(refused)
            if wait is None:
                continue
            whole = global_refusal(refused)
            held = [c for c in calls[i + 1:] if (whole or c.operationId == refused.operationId)]
            mine = [c for c in held if c.seq not in covered and not c.waited(refused, wait)
                    and (not c.in_flight_at(refused) or followed_up(c, refused, held))]
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


def followed_up(call, refused, held):
    """Whether a call arriving within a round trip of a refusal was still sent after the client had read an
    answer given after it: the refused request itself sent again, or a request that follows one of the calls
    the refusal holds that arrived after it and was answered before this one arrived (a loop going straight
    on; for an operation's own refusal, the same request again: other threads' in-flight requests differ)."""
    if call.sent_while_running(refused):
        return False
    if call.same_request(refused):
        return True
    whole = global_refusal(refused)
    return any(d.seq != call.seq and d.arrived is not None and d.answered is not None and d.arrived >= refused.answered
               and d.answered < call.arrived and (whole or d.same_request(call)) for d in held)


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


# What the spec says to do so that a status never comes, by status (the finding adds the problem's own detail).
AVOIDABLE = {
    400: "Build the request from the operation's schema in /openapi.json (required fields, types, and values "
         "the service handed over, such as a pageReference from nextPageReference for the same search, spec "
         "§4.3); the ProblemDetails `errors` name the field.",
    403: "Use a token that may call the operation: a token kind the operation accepts (spec §5 rule 5) holding "
         "one of the scopes it needs (spec §5 scope table, §7 rule 1). Ask for the scope when making the token.",
    404: "Use ids with a token that can see them: a user token sees only its own user's accounts, and a deleted "
         "resource is gone (spec §5 rules 5-6). Keep which token owns which resource.",
    409: "Read the state before you change it: the resource already exists or cannot change that way (one "
         "account per provider and user, spec §1; a token cannot revoke itself, spec §5 rule 2).",
    415: "Send a JSON body with `Content-Type: application/json` (spec §4.1).",
}
# Refusals judged by rules of their own (a token's state, credentials, paths) or not the client's to avoid.
NOT_AVOIDABLE = (401, 429)


def refusal_cause(call):
    """(status, problem type) of a refusal the spec tells how to avoid, or None."""
    if call.status is None or not 400 <= call.status < 500 or call.status in NOT_AVOIDABLE or call.injected \
            or call.operationId in UNROUTED + ("RemovedPath",) or call.entry["marks"].get("credentials"):
        return None
    problem = call.entry["response"].get("body")
    return call.status, (problem.get("type") if isinstance(problem, dict) else None)


def problem_detail(call):
    problem = call.entry["response"].get("body")
    return str(problem.get("detail") or problem.get("title") or "") if isinstance(problem, dict) else ""


def created_ids(data):
    """Id -> (partner, journal id of its creation, journal id of its deletion or None): what each client made,
    from the answers of its successful creations and deletions."""
    made = {}
    for call in data.all_calls:
        if call.method == "POST" and call.ok() and not call.answer_faulted and isinstance(call.answer().get("id"), str):
            made.setdefault(call.answer()["id"], [call.partner, call.seq, None])
        elif call.method == "DELETE" and call.ok():
            found = made.get(call.named_id)
            if found and found[2] is None:
                found[2] = call.seq
    return made


def test_samples(data):
    """Ids only test notifications named (isTest: sample data, docs/webhooks.md; the test operations answer the
    same notification), never in a record the service answered or a real notification: they name no record of
    the world. The control API's answers show notifications as the sandbox keeps them, samples too: not counted."""
    sample, real = set(), set()
    for delivery in data.deliveries:
        try:
            test = json.loads(delivery["request_body"] or "{}").get("isTest") is True
        except (ValueError, AttributeError):
            continue
        (sample if test else real).update(words(delivery["request_body"]))
    for call in data.all_calls:
        if call.ok() and not call.control:        # a refusal's problem repeats the id it was asked for
            (sample if call.answer().get("isTest") is True else real).update(
                words(json.dumps(call.entry["response"].get("body"))))
    return {word for word in sample - real if len(word) >= 8 and any(c.isdigit() for c in word)}   # ids alone


def own_resource_missing(call, made, gone, samples=frozenset()):
    """A 404 the client was in a position to avoid: for a resource its own partner made and had not deleted (it
    used an id with a token that cannot see it, another user's); for one whose deletion its own partner had
    been answered (`gone`: id -> that delete) before it sent the call: it was told the resource is gone; or for
    an id only a test notification gave (`samples`): it was told the data is a sample."""
    for part in call.path.strip("/").split("/"):
        if part in samples:
            return True
        found = made.get(part)
        if found and found[0] == call.partner and found[1] < call.seq and (found[2] is None or found[2] > call.seq):
            return True
        deleted = gone.get(part)
        if deleted is not None and deleted.partner == call.partner and deleted.seq < call.seq \
                and not call.in_flight_at(deleted):
            return True
    return False


@judges(
    Rule("refusal-avoidable", "warning", "Requests refused for a cause the spec tells how to avoid",
         "Read the ProblemDetails (detail, errors) and fix the request where the spec says how; the finding "
         "names the section for each status."),
)
def avoidable_refusals(data):
    """Each cause once (operation, status, problem type), from its first refusal: a 4xx a careful client never
    meets, since the spec says how to build the request. A 404 counts only for a resource the client itself
    made and had not deleted (another user's token), or one whose deletion it had been answered; other 404s may
    be a race with a deletion it was not told of. A request sent again after its answer was lost (a 5xx, a drop,
    a cut or garbled body) may meet what it did (a 409, a 404): not the client's to avoid. A cause sent again
    unchanged is refused-repeated's, told once there."""
    made, samples = created_ids(data), test_samples(data)
    causes = {}
    for partner_calls in grouped(data.api_calls, lambda c: c.partner).values():
        lost = set()            # requests whose answer the client did not get: a repeat may meet what they did
        gone = {}               # id -> the delete of it whose answer the client read
        for call in partner_calls:
            cause = refusal_cause(call)
            if call.status is None or call.status >= 500 or call.answer_faulted:
                lost.add(call.key)
            missing = call.status == 404 and not own_resource_missing(call, made, gone, samples)
            if call.method == "DELETE" and call.ok() and not call.answer_faulted:
                gone.setdefault(call.named_id, call)
            if cause is None or call.key in lost or missing:
                continue
            causes.setdefault((call.operationId, *cause), []).append(call)
    for (op, status, _), calls in causes.items():
        if len({(c.key, c.token_id) for c in calls}) < len(calls):
            continue
        first = calls[0]
        extra = {"fix": AVOIDABLE[status]} if status in AVOIDABLE else {}
        yield finding("refusal-avoidable", f"{op} was refused {status} {len(calls)} time(s): "
                      f"{problem_detail(first) or 'see the problem in the evidence'}",
                      [c.evidence() for c in calls], operationId=op, status=status, **extra)


UNREADABLE = ("truncate", "malformed")      # faults that hand a 2xx whose body cannot be read


def failure_of(data, call):
    """What went wrong with a call the client must recover from, in words, or None: a dropped connection, a
    5xx, a 401 (renew the token; an expired or revoked one is the token rules') or a 2xx whose body was cut or
    garbled (read it again)."""
    if call.status is None:
        return "a dropped connection"
    if call.status >= 500 or (call.status == 401 and not token_status(data, call)):
        return f"a {call.status}"
    if call.ok() and call.answer_faulted and call.injected["type"] in UNREADABLE:
        return f"a {call.status} whose body was {'cut' if call.injected['type'] == 'truncate' else 'garbled'}"
    return None


@judges(
    Rule("stopped-after-failure", "warning", "The client stopped after a failed call",
         "Recover from every failed call instead of giving up: a dropped connection or a 5xx is transient "
         "(retry with backoff, after reading what a write did), a 401 asks for a new token (spec §5 rule 6, "
         "§1 capability 2), and a 2xx whose body cannot be parsed is read again (a write: read the resource)."),
)
def stopped_after_failure(data):
    last = {}
    for call in data.api_calls:
        last[call.partner] = call
    stopped = [c for c in last.values() if failure_of(data, c) and c.operationId not in UNROUTED]
    if stopped:
        call = stopped[0]
        yield finding("stopped-after-failure", f"The client's last call ({call.operationId} at "
                      f"{call.entry['at']}) met {failure_of(data, call)}, and it never called again.",
                      [c.evidence() for c in stopped])


def path_ids(call, operation):
    """The values of the call's path parameters that name a resource (not `self`, not an account type or an
    event kind, which the spec and the documentation name)."""
    template = [s for s in operation.path.strip("/").split("/") if s]
    actual = [s for s in call.path.strip("/").split("/") if s][-len(template):] if template else []
    if len(actual) != len(template):
        return []
    return [value for name, value, before in zip(template, actual, [None, *template])
            if name.startswith("{") and value != "self" and before not in ("accounttypes", "testevents")]


def body_ids(call):
    """The ids a call's JSON body names at its top level (`userId`, `accountId`: how a create names what it
    belongs to), a null among them; not `accountTypeId`, which the documentation names."""
    body = (call.entry.get("request") or {}).get("body")
    if not isinstance(body, dict):
        return []
    return [value for name, value in body.items()
            if name.endswith("Id") and name != "accountTypeId" and (value is None or isinstance(value, str))]


# What a missing value turns into when a client puts it where an id belongs: no resource is ever named so.
MISSING = {None, "", "None", "null", "undefined", "nil", "NaN"}

WORD = re.compile(r"[\w.~-]+")


def words(text):
    return set(WORD.findall(text or ""))


class Told:
    """Every id-like word the client may have read up to a call: every answer the world's journal keeps (whoever
    asked: a harness hands its clients what it made), every notification attempted by then. Read forward once,
    call by call."""

    def __init__(self, data):
        self.calls, self.next_call = data.all_calls, 0
        self.deliveries = sorted((d for d in data.deliveries if d["attempted_at"] is not None),
                                 key=lambda d: d["attempted_at"])
        self.next_delivery = 0
        # and what the world holds that the journal, which keeps only its newest calls, may have let go: tokens
        # and their users and partners, webhooks, the accounts and users events name
        self.known = {t[k] for t in data.tokens.values() for k in ("id", "user_id", "partner_id") if t.get(k)}
        self.known |= {h["id"] for h in data.hooks} | {e[k] for e in data.events for k in ("account", "user")
                                                      if isinstance(e.get(k), str)}

    def before(self, call):
        while self.next_call < len(self.calls) and self.calls[self.next_call].seq < call.seq:
            self.known |= words(json.dumps(self.calls[self.next_call].entry["response"].get("body")))
            self.next_call += 1
        while self.next_delivery < len(self.deliveries) and \
                self.deliveries[self.next_delivery]["attempted_at"] <= call.at:
            self.known |= words(self.deliveries[self.next_delivery]["request_body"])
            self.next_delivery += 1
        return self.known


@judges(
    Rule("carried-on-after-failure", "warning", "An id no answer had given used after a failed call",
         "After a failed call, go on only with what an answer gave you: a create that failed made nothing to "
         "read, update or delete. Handle the failure (retry, look the resource up in its list, or stop the task) "
         "before using its result."),
)
def carried_on_after_failure(data):
    """A call made after a failed call of the same partner that names, in its path or its body, an id the client
    cannot have been given: a missing value spelled as one (null, "None"), whatever the answer; or, refused 404
    or 400, an id that no answer the client could have read before it held (the journal's answers, the
    notifications, its tokens). The client used what the failed call would have returned. An id a client got
    from an answer is never judged."""
    told, failed, found = Told(data), {}, []
    for call in data.api_calls:
        operation = data.operations.get(call.operationId)
        if operation is not None and call.partner in failed:
            ids = path_ids(call, operation) + body_ids(call)
            if ids:
                refused = call.status in (400, 404)
                known = told.before(call) if refused else set()
                unknown = [i for i in ids if i in MISSING or (refused and i not in known)]
                if unknown:
                    found.append((call, failed[call.partner], ["null" if i is None else i for i in unknown]))
        if call.status is None or call.status >= 400 or call.answer_faulted:
            failed[call.partner] = call
    if found:
        call, before, unknown = found[0]
        yield finding("carried-on-after-failure", f"{len(found)} call(s) named an id no answer had given the "
                      f"client, after a failed call: e.g. {call.method} {call.path} ({call.status}) names "
                      f"{listing(unknown)}, after {before.operationId} at {before.entry['at']} "
                      f"{'answered ' + str(before.status) if before.status is not None else 'was dropped'}.",
                      [e for c, b, _ in found for e in (c.evidence(), b.evidence())], count=len(found))
