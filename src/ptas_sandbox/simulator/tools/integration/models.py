"""Integration report rules: each reads a world's recorded traffic (the request journal, the delivery log,
tokens, subscriptions, observations made at the edge) and returns findings with evidence and a fix. No Flask.

Only the software under test is judged: control calls (`/_sandbox`), calls with the world key and calls a
harness marked as its own setup (journal mark `harness`) are not, though they are history. Every rule judges a
call against the state at the time of the call (tokens, webhooks, a Retry-After window), as the journal and
the tables' timestamps tell it, never against today's. One finding per rule and cause, with a count.

A finding: {"rule", "severity", "title", "message", "fix", "evidence": [{"at", "operationId", "method", "path",
"status", "requestId" | "deliveryId", "injected"}]}. Severities: error > warning > info.
"""

import json
import re
from dataclasses import dataclass
from urllib.parse import parse_qs

from ...events import RETIRED
from ...partners import models as partners
from ...timestamps import SECOND_US, parse, render
from ..faults import models as faults
from ..journal import models as journal

SCHEMA = """
CREATE TABLE IF NOT EXISTS report_observations (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    world TEXT NOT NULL,
    rule TEXT NOT NULL,
    at INTEGER NOT NULL,
    operation TEXT,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    status INTEGER,
    detail TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS report_observations_by_world ON report_observations (world, seq);
"""

SEVERITIES = ("info", "warning", "error")
OBSERVATIONS_KEPT = 500         # per world
EVIDENCE_SHOWN = 5              # per finding; `count` says how many there were
SLOW_MS = 1000                  # a receiver slower than this holds the sender up (the sender gives up at 2 s)
# Creations a duplicate of which matters and whose result a read shows (the collection lists it): only these can
# be blamed for a blind repeat. A second Account UI session or user token does no harm and cannot be looked up.
CHECKABLE_WRITES = ("CreateUser", "CreateAccount", "CreateWebhook", "CreateOwnPartnerToken", "CreatePartnerToken",
                    "CreatePartner")
TOKEN_MAKERS = ("CreateOwnPartnerToken", "CreatePartnerToken", "CreateUserToken", "CreateOwnUserToken")
PARTNER_TOKEN_MAKERS = ("CreateOwnPartnerToken", "CreatePartnerToken")
REVOKERS = ("RevokePartnerOwnToken", "RevokePartnerToken")
HOOK_WRITES = ("CreateWebhook", "UpdateWebhook", "PatchWebhook")
UNROUTED = ("UnknownPath", "MethodNotAllowed")
# Reads a webhook makes needless: the operation, and the event kinds that say its answer changed. An account's
# `statistics` (in GetAccount and in every account GetAccounts lists) are what tell whether new transactions
# exist (spec §1 capability 5), and a TransactionsImported changes them.
POLLED = {"GetTransactions": ("TransactionsImported",),
          "GetAccounts": ("AccountCreated", "AccountUpdated", "AccountDeleted", "TransactionsImported"),
          "GetAccount": ("AccountUpdated", "AccountDeleted", "TransactionsImported"),
          "GetDataImports": ("TransactionsImported",)}
# The filters of a polled list, as the event fields they select (a change elsewhere does not change the list).
LIST_FILTERS = {"GetAccounts": {"userId": "user", "accountTypeId": "accountType"},
                "GetDataImports": {"accountId": "account", "userId": "user"}}
ACCOUNT_IN_PATH = re.compile(r"/accounts/([^/]+)")
# Reads of what does not change unless an event says so (the catalogue, the partner itself).
METADATA = {"GetAccountTypes": ("AccountTypeUpdated",), "GetAccountType": ("AccountTypeUpdated",),
            "GetOwnPartner": ()}
METADATA_READS = 3              # reads of one metadata path with nothing changed between: more is needless
ACCOUNT_WRITES = ("CreateAccount", "ValidateAccountCredentials")
ACCOUNT_TYPE_READS = ("GetAccountTypes", "GetAccountType")
UNUSED_RESOURCES = 3            # scope families a token holds and never uses before it is "every scope"
TOKENS_PER_SUBJECT = 3          # tokens made for one subject while an earlier one was still valid
SHORT_USE = 2                   # requests a token made "per request" serves before the next one is made
# A token's last stretch, in which a new one for the same subject is a renewal (spec §1 capability 2: a new token
# "when the previous one is expired or about to expire"): a quarter of its life, or 15 minutes if that is more,
# but never more than half of it (so tokens made seconds apart are never renewals, however short they live).
RENEWAL_SHARE = 4
RENEWAL_SECONDS = 15 * 60


@dataclass(frozen=True)
class Rule:
    id: str
    severity: str
    title: str
    fix: str


RULES = {r.id: r for r in (
    Rule("removed-path", "error", "Calls to paths removed from the interface",
         "Use the current operation (spec §4.2 note 6 lists the replacements); /openapi.json has every live path."),
    Rule("unknown-path", "error", "Calls to paths or methods the interface does not have",
         "Build requests from the OpenAPI document (/openapi.json): the path, its method and the /partner/v2 "
         "prefix."),
    Rule("deprecated-operation", "warning", "Calls to deprecated operations",
         "Move to the operation that replaces it before it is removed (the OpenAPI document marks deprecated ones)."),
    Rule("deprecated-field", "warning", "Requests using deprecated fields",
         "Send the field that replaced it: accountTypeIds (an array) instead of accountTypeId on POST /accountui "
         "(spec §4.3 note 4)."),
    Rule("retry-after-ignored", "error", "Requests sent before a Retry-After had passed",
         "After a 429 (or a 503 with Retry-After) wait the seconds Retry-After names before sending that "
         "operation again, and after a 429 of the global limit (spec §8: 100 requests per 60 s, all requests) "
         "before sending any request: the simplest is to hold every request of the client until then."),
    Rule("blind-retry", "error", "A request that may have run repeated without checking the result",
         "A 500 after the work, a connection dropped after it, or a timeout does not say the operation failed: "
         "read the resource (or its list) first, then repeat only what is missing."),
    Rule("refused-repeated", "warning", "Requests the service refused, sent again unchanged",
         "A 4xx says the request itself is wrong: read the ProblemDetails (detail, errors) and change the "
         "request, or stop; sending it again gets the same answer."),
    Rule("credentials-misplaced", "error", "Tokens sent in the wrong place or with the wrong scheme",
         "Send a token only as `Authorization: Bearer <token>` (spec §5 rule 1): never in the query string "
         "(it lands in logs) or another header."),
    Rule("initial-token-in-use", "warning", "The initial partner token is still used for API calls",
         "Create a long-lived partner token with partner:update (POST /partners/self/tokens), store it securely "
         "and use it instead (spec §5 rule 2)."),
    Rule("initial-token-not-revoked", "warning", "The initial partner token was never revoked",
         "Revoke the initial token with the long-lived one (DELETE /partners/self/tokens/{id}), as spec §5 advises."),
    Rule("partner-token-exposed", "error", "A partner token was handed to an end-user page",
         "Partner tokens must not be shared with users (spec §5 rule 2): open Account UI and User UI sessions "
         "server-side and send the person only the session's url; give a browser a user token at most."),
    Rule("expired-user-token", "warning", "User tokens used after they expired",
         "Renew a user token with CreateUserToken (POST /users/{id}/tokens) before its expiresAt, or at the first "
         "401, and stop using the old one."),
    Rule("expired-partner-token", "warning", "Partner tokens used after they expired",
         "Renew a partner token with CreateOwnPartnerToken (POST /partners/self/tokens) before its expiresAt, or "
         "at the first 401, and stop using the old one; a job that runs for hours needs a token that outlives it."),
    Rule("revoked-token-used", "warning", "Tokens used after the client revoked them",
         "Forget a token when you revoke it: switch every worker to its replacement first, then revoke."),
    Rule("token-per-request", "warning", "A new token made again and again while the last one was still valid",
         "Keep a token until shortly before its expiresAt and use it for every request; making tokens costs "
         "calls of your §8 budget and leaves many valid secrets about."),
    Rule("scope-too-wide", "info", "Tokens holding scopes they never use",
         "Ask a token only for the scopes its job needs: a leaked token can then do only that. (Advice: the "
         "spec does not require it, so it never fails a build at --fail-on warning.)"),
    Rule("account-types-hardcoded", "warning", "Accounts created without reading the account types",
         "Read GetAccountTypes (or GetAccountType) and build the credential fields from it: account types "
         "and their fields must not be hard-coded (spec §1.4)."),
    Rule("polling-instead-of-webhook", "warning", "Resources polled while a webhook tells when they change",
         "A webhook for this resource exists: read it when a notification says it changed instead of polling."),
    Rule("metadata-reread", "info", "Metadata read again and again although nothing changed",
         "Cache account types and the partner's own record; read them again after an AccountTypeUpdated "
         "notification or a 404, not before every use."),
    Rule("pagination-ignored", "warning", "Only the first page read while nextPageReference was present",
         "Follow nextPageReference (as pageReference) until it is null, or the rest of the data is never seen."),
    Rule("stopped-after-failure", "warning", "The client stopped after a failed call",
         "A dropped connection or a 5xx is transient: retry with backoff (after reading what a write did) "
         "instead of giving up."),
    Rule("retired-event-subscribed", "warning", "Webhooks subscribed to retired event kinds",
         "Subscribe to the current kinds only (spec §6): retired ones are accepted and never fire."),
    Rule("webhook-receiver-unreachable", "warning", "Webhook receivers that could not be reached or timed out",
         "Keep the receiver reachable while its webhook is active; pause (isActive false) or delete the webhook "
         "before the receiver goes away."),
    Rule("webhook-receiver-refused", "warning", "Webhook receivers that refused correctly signed notifications",
         "A 4xx to a notification signed with the webhook's secret loses it: check the signature with the "
         "secret of that webhook (id.timestamp.body) and accept every event kind you subscribed to."),
    Rule("webhook-receiver-failed", "warning", "Webhook receivers that answered with a server error",
         "Answer 2xx once the notification is stored; do the work afterwards, and never let it fail the answer."),
    Rule("webhook-receiver-slow", "info", f"Webhook receivers slower than {SLOW_MS} ms",
         "Acknowledge first (2xx), process later: a slow receiver risks timeouts and duplicate deliveries."),
    Rule("bad-signature-accepted", "error", "A notification with an invalid signature was acknowledged",
         "Verify webhook-signature (HMAC-SHA256 of id.timestamp.body with the webhook's secret) and answer 4xx "
         "when it does not match; see docs/webhooks.md."),
)}


def observe(store, world, rule, at, method, path, detail, operation=None, status=None):
    """Something the journal cannot show (a token in a page URL), kept bounded."""
    store.insert("report_observations", world=world, rule=rule, at=at, operation=operation, method=method,
                 path=path, status=status, detail=detail)
    store.execute("DELETE FROM report_observations WHERE world = ? AND seq <= (SELECT seq FROM report_observations "
                  "WHERE world = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)", (world, world, OBSERVATIONS_KEPT))


# --- evidence ----------------------------------------------------------------------------------------------

@dataclass
class Entry:
    """A journal entry with its world-clock instant as a number, and whose it is (the partner of its token)."""
    entry: dict
    at: int
    partner: str | None = None

    def __post_init__(self):
        entry = self.entry
        self.seq, self.operationId, self.method, self.path, self.status = (
            entry["id"], entry["operationId"], entry["method"], entry["path"], entry["status"])
        self.token_id = (entry.get("token") or {}).get("id")
        # what makes two requests the same: method, path, query and body (as journaled)
        self.key = (self.method, self.path, entry.get("query"),
                    json.dumps(entry["request"].get("body"), sort_keys=True))

    @property
    def control(self):
        return self.operationId.startswith("Sandbox")

    @property
    def token_kind(self):
        return (self.entry.get("token") or {}).get("kind")

    @property
    def injected(self):
        return self.entry["marks"].get("injected")

    @property
    def answer_faulted(self):
        """A fault changed what the client got (latency only delays it)."""
        return bool(self.injected) and self.injected.get("type") != "latency"

    @property
    def judged(self):
        """The software under test made it: not the control API, the world key or a harness's setup."""
        marks = self.entry["marks"]
        return not self.control and self.token_kind != "world" and not marks.get("harness") and not marks.get("tool")

    @property
    def started(self):
        return (self.entry.get("monotonic") or (None, None))[0]

    @property
    def answered(self):
        return (self.entry.get("monotonic") or (None, None))[1]

    def in_flight_at(self, other):
        """Whether this call was sent before `other`'s answer went out (so it could not have heeded it)."""
        if self.started is None or other.answered is None:
            return False
        return self.started < other.answered

    def waited(self, since, seconds):
        """Whether this call came `seconds` after `since`'s answer on the world clock or in real time (a
        frozen world clock does not move while a client sleeps)."""
        if self.at - since.at >= seconds * SECOND_US:
            return True
        return self.started is not None and since.answered is not None and \
            self.started - since.answered >= seconds * 1_000_000_000

    def params(self):
        return parse_qs(self.entry.get("query") or "")

    def body(self):
        return self.entry["request"].get("body")

    def answer(self):
        body = self.entry["response"].get("body")
        return body if isinstance(body, dict) else {}

    def same_request(self, other):
        return self.key == other.key

    def ok(self):
        return self.status is not None and 200 <= self.status < 300

    def evidence(self, **extra):
        return {"at": self.entry["at"], "requestId": self.entry["id"], "operationId": self.entry["operationId"],
                "method": self.entry["method"], "path": self.entry["path"], "status": self.entry["status"],
                "injected": bool(self.injected), **extra}


def finding(rule_id, message, evidence, count=None, **extra):
    rule = RULES[rule_id]
    return {"rule": rule.id, "severity": rule.severity, "title": rule.title, "message": message, "fix": rule.fix,
            "count": len(evidence) if count is None else count, "evidence": evidence[:EVIDENCE_SHOWN], **extra}


def grouped(calls, key):
    found = {}
    for call in calls:
        found.setdefault(key(call), []).append(call)
    return found


def listing(names):
    return ", ".join(sorted(str(n) for n in names))


# --- the rules ---------------------------------------------------------------------------------------------

def removed_paths(data):
    calls = [c for c in data.api_calls if c.operationId == "RemovedPath"]
    if calls:
        yield finding("removed-path", f"{len(calls)} call(s) to removed paths: "
                      f"{listing({f'{c.method} {c.path}' for c in calls})}.", [c.evidence() for c in calls])


def unknown_paths(data):
    calls = [c for c in data.api_calls if c.operationId in UNROUTED]
    if calls:
        yield finding("unknown-path", f"{len(calls)} call(s) no operation takes: "
                      f"{listing({f'{c.method} {c.path}' for c in calls})}.", [c.evidence() for c in calls])


def deprecated_operations(data):
    by_op = grouped([c for c in data.api_calls if c.operationId in data.deprecated], lambda c: c.operationId)
    for op, calls in by_op.items():
        yield finding("deprecated-operation", f"{op} is deprecated; called {len(calls)} time(s).",
                      [c.evidence() for c in calls], operationId=op)


# (operationId, body field) the spec calls deprecated in requests, and what replaces it.
DEPRECATED_FIELDS = {("CreateAccountUiSession", "accountTypeId"): "accountTypeIds"}


def deprecated_fields(data):
    by_field = {}
    for call in data.api_calls:
        body = call.body()
        for (op, name), replacement in DEPRECATED_FIELDS.items():
            if call.operationId == op and isinstance(body, dict) and name in body:
                by_field.setdefault((op, name, replacement), []).append(call)
    for (op, name, replacement), calls in by_field.items():
        yield finding("deprecated-field", f"{op} was sent the deprecated field `{name}` {len(calls)} time(s); use "
                      f"`{replacement}`.", [c.evidence() for c in calls], operationId=op, field=name)


def retry_after(call):
    wait = call.entry["marks"].get("retryAfter")
    if wait is None and call.injected:
        wait = call.injected.get("retryAfter")
    return int(wait) if wait is not None and call.status in (429, 503) else None


def global_refusal(call):
    """A 429 of spec §8's global limit (journal mark `rateLimit`), which holds for every request of the partner;
    any other Retry-After (an injected fault, an operation's own limit, a 503) holds for its operation."""
    return call.entry["marks"].get("rateLimit") == "global"


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
    if any(c.same_request(call) and c.in_flight_at(call) for c in later_calls):
        return "was sent again while it still ran (the client's timeout)"
    return None


def checks_result(check, failed):
    """A read after a failed write that could show whether the write happened (the collection or the item)."""
    return check.method == "GET" and (check.path.startswith(failed.path) or failed.path.startswith(check.path))


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
                if checks_result(later, first) and not later.in_flight_at(first):
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


def token_status(data, call):
    """Why a 401 came: 'expired', 'revoked' or None (another reason), from the token as it was at the call."""
    token = data.tokens.get(call.token_id)
    if call.status != 401 or token is None:
        return None
    if token["revoked_at"] is not None and token["revoked_at"] <= call.at:
        return "revoked"
    if call.at >= token["expires_at"]:
        return "expired"
    return None


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


def credentials_misplaced(data):
    by_where = grouped([c for c in data.api_calls if c.entry["marks"].get("credentials")],
                       lambda c: c.entry["marks"]["credentials"])
    for where, calls in by_where.items():
        yield finding("credentials-misplaced", f"{len(calls)} call(s) carried a token in {where}; the service "
                      "reads only `Authorization: Bearer <token>` and answered 401.", [c.evidence() for c in calls],
                      where=where)


USER_TOKEN_MAKERS = ("CreateUserToken", "CreateOwnUserToken", "CreateUser")


def tokens_made(calls, tokens):
    """Journal id of each successful token-making call -> the token it handed over. The answer names a token
    of over an hour by id; a shorter one (no public id) is the token its caller's token made at that instant."""
    made, taken = {}, set()
    for call in calls:
        if call.operationId not in TOKEN_MAKERS + ("CreateUser",) or not call.ok():
            continue
        answer = call.answer()
        if call.operationId == "CreateUser":
            answer = answer.get("token") or {}
        if not answer:                  # a garbled or cut answer handed no token over
            continue
        kind = "user" if call.operationId in USER_TOKEN_MAKERS else "partner"
        found = tokens.get(answer["id"]) if answer.get("id") else next(
            (t for t in sorted(tokens.values(), key=lambda t: t["id"]) if t["id"] not in taken
             and t["kind"] == kind and t["created_at"] == created_at(answer, call) and t["name"] != "initial token"
             and t["created_by"] in (call.token_id, None) and t["expires_in"] == answer.get("expiresIn")), None)
        if found is not None:
            made[call.seq] = found["id"]
            taken.add(found["id"])
    return made


def created_at(answer, call):
    """When the answer says the token was made (a latency fault moves the world clock during the call)."""
    try:
        return parse(answer["createdAt"])
    except (KeyError, TypeError, ValueError):
        return call.at


def delivered_seq(data, token):
    """The journal id from which the client held the token: the answer that handed it over, or its first use
    (a token it used it held). None: never delivered (a 500 after it was made, a dropped answer)."""
    seqs = [seq for seq in (data.handed.get(token["id"]), data.first_use.get(token["id"])) if seq is not None]
    return min(seqs) if seqs else (0 if token["name"] == "initial token" else None)


def live_at(data, token, call):
    """Whether the client held `token`, valid, when it made `call` (history: delivery, revocation, expiry)."""
    held = delivered_seq(data, token)
    if held is None or held >= call.seq:
        return False
    revoked = token["revoked_at"]
    if revoked is not None and (revoked < call.at or (revoked == call.at and data.revoked_seq(token) < call.seq)):
        return False
    return call.at < token["expires_at"]


def is_successor(data, token, initial):
    """A long-lived partner token with partner:update the client made (or uses) in place of the initial one."""
    scope = token["scope"].split()
    return token["id"] != initial["id"] and token["kind"] == "partner" and token["partner_id"] == initial[
        "partner_id"] and token["expires_in"] > initial["expires_in"] and (
        "partner:update" in scope or "partner:all" in scope) and delivered_seq(data, token) is not None


def initial_token(data):
    initial = data.initial_token
    if initial is None:
        return
    successors = [t for t in data.tokens.values() if is_successor(data, t, initial)]
    uses = [c for c in data.api_calls if c.token_id == initial["id"]]
    late = [c for c in uses if any(live_at(data, t, c) for t in successors)]
    if late:
        yield finding("initial-token-in-use", f"The initial partner token made {len(late)} call(s) while a "
                      "long-lived token the client held was valid.", [c.evidence() for c in late])
    if successors and initial["revoked_at"] is None:
        since = min(delivered_seq(data, t) for t in successors)
        yield finding("initial-token-not-revoked", "A long-lived partner token exists, and the initial token "
                      f"(id {initial['id']}) is still valid until {render(initial['expires_at'])}.",
                      [{"at": render(initial["created_at"]), "tokenId": initial["id"], "requestId": since}])
    if uses and not successors:
        yield finding("initial-token-in-use", f"All {len(uses)} API call(s) of the root partner use the initial "
                      f"token, which expires after {initial['expires_in'] // 86400} day(s); no long-lived token "
                      "was created.", [c.evidence() for c in uses])


def partner_token_exposed(data):
    rows = data.observations.get("partner-token-exposed", [])
    if rows:
        yield finding("partner-token-exposed", f"A partner token reached an end-user page or URL {len(rows)} "
                      f"time(s): {rows[0]['detail']}", [observation_evidence(r) for r in rows])


# Tokens judged after their expiry, by kind: the rule, and the subject a new token renews them for.
EXPIRED = {"user": ("expired-user-token", "user_id"), "partner": ("expired-partner-token", "partner_id")}


def expired_tokens(data):
    """A token used after its expiry, when no new token of its kind for its subject (its user, its partner) was
    made at or after the expiry, or used again once the client held such a new one."""
    late = {}
    for call in data.api_calls:
        token = data.tokens.get(call.token_id)
        if token and token["kind"] in EXPIRED and call.at >= token["expires_at"]:
            late.setdefault(call.token_id, []).append(call)
    cases = {kind: [] for kind in EXPIRED}
    for token_id, calls in late.items():
        token = data.tokens[token_id]
        subject = EXPIRED[token["kind"]][1]
        renewals = [delivered_seq(data, t) for t in data.tokens.values() if t["kind"] == token["kind"]
                    and t[subject] == token[subject] and t["created_at"] >= token["expires_at"]]
        renewals = [seq for seq in renewals if seq is not None]
        renewed = min(renewals) if renewals else None
        # The old token used again after the client held a fresh one; before that, only calls other threads had
        # in flight when the first 401 went out are forgiven.
        again = [c for c in calls[1:] if not c.in_flight_at(calls[0]) and (renewed is None or c.seq > renewed)]
        if again or renewed is None:
            cases[token["kind"]].append((token, calls if renewed is None else [calls[0], *again], renewed is not None))
    for kind, found in cases.items():
        if not found:
            continue
        rule, subject = EXPIRED[kind]
        stopped = [t[subject] for t, _, renewed in found if not renewed]
        yield finding(rule, f"{len(found)} {kind} token(s) were used after they expired "
                      f"({sum(len(c) for _, c, _ in found)} call(s))" + (
                          f"; no new {kind} token was made for {kind}(s) {listing(set(stopped))}" if stopped else "")
                      + ".", [c.evidence() for _, calls, _ in found for c in calls],
                      count=sum(len(c) for _, c, _ in found))


def revoked_after(data, call):
    """Whether the call's token had been revoked before it (whatever the answer: a fault may stand in)."""
    token = data.tokens.get(call.token_id)
    revoked = token["revoked_at"] if token else None
    if revoked is None:
        return False
    return revoked < call.at or (revoked == call.at and data.revoked_seq(token) < call.seq)


def revoked_tokens(data):
    calls = [c for c in data.api_calls if revoked_after(data, c)]
    if calls:
        yield finding("revoked-token-used", f"{len(calls)} call(s) used a token after it was revoked "
                      f"({len({c.token_id for c in calls})} token(s)).", [c.evidence() for c in calls])


def about_to_expire(token, at):
    """Whether `at` falls in the token's last stretch (RENEWAL_SHARE, RENEWAL_SECONDS)."""
    life = token["expires_at"] - token["created_at"]
    stretch = min(max(life // RENEWAL_SHARE, RENEWAL_SECONDS * SECOND_US), life // 2)
    return token["expires_at"] - at <= stretch


def token_per_request(data):
    made = [c for c in data.api_calls if c.operationId in TOKEN_MAKERS and c.seq in data.made]
    needless = []
    # one subject and one purpose: the same path (a user's tokens) asking for the same scope
    for _, calls in grouped(made, lambda c: (c.partner, c.path, (c.body() or {}).get("scope")
                                              if isinstance(c.body(), dict) else None)).items():
        for call in calls[1:]:
            earlier = [data.tokens[data.made[c.seq]] for c in calls if c.seq < call.seq]
            # a valid token dropped after a request or two (one per worker, used on, is no such mistake), and not
            # about to expire (renewing one then is what the spec describes)
            if any(live_at(data, t, call) and data.uses.get(t["id"], 0) <= SHORT_USE
                   and not about_to_expire(t, call.at) for t in earlier):
                needless.append(call)
    if len(needless) >= TOKENS_PER_SUBJECT - 1:
        yield finding("token-per-request", f"{len(needless)} token(s) were made while an earlier token for the "
                      f"same subject was still valid ({listing({c.operationId for c in needless})}).",
                      [c.evidence() for c in needless])


def scope_resources(scopes):
    return {s.split(":")[0] for s in scopes}


def scope_too_wide(data):
    wide = []
    makers = {data.made[c.seq]: c for c in data.api_calls if c.operationId in TOKEN_MAKERS and c.seq in data.made}
    uses = grouped([c for c in data.api_calls if c.operationId in data.operations], lambda c: c.token_id)
    for token_id, maker in makers.items():
        token, used = data.tokens[token_id], uses.get(token_id, [])
        if len(used) < 2:
            continue
        needed = set()
        for call in used:
            needed |= scope_resources(data.operations[call.operationId].scopes_for(token["kind"])[:1])
        unused = scope_resources(token["scope"].split()) - needed
        if len(unused) >= UNUSED_RESOURCES:
            wide.append((token, maker, unused))
    if wide:
        token, maker, unused = wide[0]
        yield finding("scope-too-wide", f"{len(wide)} token(s) hold scopes they never used: token {token['id']} "
                      f"holds `{token['scope']}` and used none of {listing(unused)}.",
                      [maker.evidence(tokenId=t["id"], unused=sorted(u)) for t, maker, u in wide])


def account_types_hardcoded(data):
    blind = []
    for calls in grouped(data.api_calls, lambda c: c.partner).values():
        read = False
        for call in calls:
            read = read or (call.operationId in ACCOUNT_TYPE_READS and call.ok())
            if call.operationId in ACCOUNT_WRITES and not read:
                blind.append(call)
    if blind:
        yield finding("account-types-hardcoded", f"{len(blind)} account request(s) named account types and "
                      "credential fields without a read of the account types before them.",
                      [c.evidence() for c in blind])


def hooks_of(data):
    """Every webhook of the world as history: id -> (partner, kinds, [(from, until), ...] while active), from the
    journal's webhook writes (deleted and paused ones included) and the current table. A webhook is told only
    its own partner's events (webhooks.deliveries.fan_out), so it excuses only that partner's polling."""
    hooks = {}
    for row in data.hooks:
        hooks[row["id"]] = {"partner": row["partner_id"], "kinds": set(json.loads(row["events"])),
                            "active": [row["created_at"]] if row["is_active"] else [], "closed": []}
    for call in data.all_calls:
        if not call.ok():
            continue
        if call.operationId in HOOK_WRITES:
            answer = call.answer()
            hook = hooks.setdefault(answer.get("id"), {"partner": call.partner, "kinds": set(), "active": [],
                                                       "closed": []})
            hook["kinds"] |= set(answer.get("events") or [])
            if answer.get("isActive") and not hook["active"]:
                hook["active"].append(call.at)
            elif answer.get("isActive") is False and hook["active"]:
                hook["closed"].append((hook["active"].pop(), call.at))
        elif call.operationId == "DeleteWebhook":
            hook = hooks.get(call.path.rstrip("/").rsplit("/", 1)[-1])
            if hook and hook["active"]:
                hook["closed"].append((hook["active"].pop(), call.at))
    return {i: (h["partner"], h["kinds"], h["closed"] + [(start, None) for start in h["active"]])
            for i, h in hooks.items() if i}


def subscribed(hooks, partner, kinds, at):
    return any(owner == partner and kinds & hook_kinds and any(start <= at and (end is None or at < end)
                                                                for start, end in spans)
               for owner, hook_kinds, spans in hooks.values())


def polled_scope(data, call):
    """What a polled read shows, as the event fields a change to it has: the account in its path (GetAccount,
    GetTransactions), or the filters of a list (GetAccounts, GetDataImports), a user token standing for a
    userId filter of its own user. The partner is the caller's in every case."""
    found = ACCOUNT_IN_PATH.search(call.path)
    if call.operationId in ("GetAccount", "GetTransactions") and found:
        return (("account", found.group(1)),)
    params = call.params()
    scope = {field: params[name][0] for name, field in LIST_FILTERS.get(call.operationId, {}).items()
             if params.get(name)}
    token = data.tokens.get(call.token_id) or {}
    if token.get("kind") == "user":
        scope["user"] = token["user_id"]
    return tuple(sorted(scope.items()))


def polling(data):
    """Per partner and resource (path and scope): reads while a webhook for its kinds existed, against the
    changes to that resource (not another account's, not another partner's)."""
    hooks = hooks_of(data)
    cases = []
    reads = [c for c in data.api_calls if c.operationId in POLLED and c.method == "GET" and c.ok()
             and not c.answer_faulted and "pageReference" not in c.params()]
    for (partner, path, scope), calls in grouped(reads, lambda c: (c.partner, c.path, polled_scope(data, c))).items():
        kinds = set(POLLED[calls[0].operationId])
        during = [c for c in calls if subscribed(hooks, partner, kinds, c.at)]
        if len(during) < 3:
            continue
        changes = [e for e in data.events if e["kind"] in kinds and e["partner"] == partner
                   and all(e[field] == value for field, value in scope)
                   and during[0].at <= e["created_at"] <= during[-1].at]
        if len(during) > len(changes) + 1:
            cases.append((path, during, changes))
    if cases:
        path, during, changes = cases[0]
        yield finding("polling-instead-of-webhook", f"{len(cases)} resource(s) were polled while a webhook for "
                      f"them existed; e.g. {path} was read {len(during)} time(s) between {during[0].entry['at']} "
                      f"and {during[-1].entry['at']}, while {len(changes)} change(s) to it were notified.",
                      [c.evidence() for _, calls, _ in cases for c in calls],
                      count=sum(len(calls) for _, calls, _ in cases), paths=sorted({p for p, _, _ in cases}))


def metadata_reread(data):
    cases = []
    reads = [c for c in data.api_calls if c.operationId in METADATA and c.ok() and not c.answer_faulted]
    for (_, path), calls in grouped(reads, lambda c: (c.partner, c.path)).items():
        kinds = set(METADATA[calls[0].operationId])
        changed = [e for e in data.events if e["kind"] in kinds and calls[0].at <= e["created_at"] <= calls[-1].at]
        if not changed and len(calls) > METADATA_READS:
            cases.append((path, calls))
    if cases:
        yield finding("metadata-reread", f"{len(cases)} metadata path(s) were read more than {METADATA_READS} "
                      f"times with nothing changed: {listing({p for p, _ in cases})}.",
                      [c.evidence() for _, calls in cases for c in calls], count=sum(len(c) for _, c in cases))


def pagination(data):
    calls = data.api_calls
    ignored = [call for i, call in enumerate(calls) if call.entry["marks"].get("nextPageReference")
               and not any(later.path == call.path and "pageReference" in later.params() for later in calls[i + 1:])]
    if ignored:
        yield finding("pagination-ignored", f"{len(ignored)} page(s) with nextPageReference were never followed "
                      f"({listing({c.operationId for c in ignored})}).", [c.evidence() for c in ignored])


def failed_call(call):
    return call.status is None or call.status >= 500


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


def retired_events(data):
    def kinds_of(call):
        body = call.body()
        return set(body.get("events") or []) if isinstance(body, dict) else set()
    calls = [c for c in data.api_calls if c.operationId in HOOK_WRITES and kinds_of(c) & set(RETIRED)]
    if calls:
        kinds = set().union(*(kinds_of(c) & set(RETIRED) for c in calls))
        yield finding("retired-event-subscribed", f"{len(calls)} webhook write(s) subscribed to retired kinds "
                      f"({listing(kinds)}), which never fire.", [c.evidence() for c in calls])


RECEIVER_FAULTS = (("webhook-receiver-unreachable", lambda r: r["response_status"] is None),
                   ("webhook-receiver-refused", lambda r: r["response_status"] is not None
                    and 400 <= r["response_status"] < 500),
                   ("webhook-receiver-failed", lambda r: r["response_status"] is not None
                    and not 200 <= r["response_status"] < 300 and not 400 <= r["response_status"] < 500))


def webhook_receivers(data):
    attempts = []
    for row in data.deliveries:
        effects = data.injected_deliveries.get(row["id"], [])
        if row["attempted_at"] is None or row["status"] not in ("succeeded", "failed") or "bad-signature" in effects:
            continue
        attempts.append(row)
    for rule, test in RECEIVER_FAULTS:
        rows = [r for r in attempts if test(r)]
        if rows:
            yield finding(rule, f"{len(rows)} attempt(s) to {len({r['webhook_id'] for r in rows})} webhook(s) "
                          f"failed, e.g. {rows[0]['url']}: {rows[0]['error'] or rows[0]['response_status']}.",
                          [delivery_evidence(r) for r in rows], webhooks=sorted({r["webhook_id"] for r in rows}))
    slow = [r for r in attempts if r["response_status"] is not None and 200 <= r["response_status"] < 300
            and r["duration_ms"] is not None and r["duration_ms"] > data.slow_ms]
    if slow:
        yield finding("webhook-receiver-slow", f"{len(slow)} attempt(s) took over {data.slow_ms} ms.",
                      [delivery_evidence(r) for r in slow], webhooks=sorted({r["webhook_id"] for r in slow}))


def bad_signature_accepted(data):
    rows = [r for r in data.deliveries if "bad-signature" in data.injected_deliveries.get(r["id"], [])
            and r["response_status"] is not None and 200 <= r["response_status"] < 300]
    if rows:
        yield finding("bad-signature-accepted", f"{len(rows)} notification(s) signed wrongly on purpose (a "
                      f"bad-signature fault) were answered 2xx, e.g. {rows[0]['response_status']} from webhook "
                      f"{rows[0]['webhook_id']}.", [delivery_evidence(r) for r in rows])


RULE_CHECKS = (removed_paths, unknown_paths, deprecated_operations, deprecated_fields, retry_after_ignored,
               blind_retries, refused_repeated, credentials_misplaced, initial_token, partner_token_exposed,
               expired_tokens, revoked_tokens, token_per_request, scope_too_wide, account_types_hardcoded,
               polling, metadata_reread, pagination, stopped_after_failure, retired_events, webhook_receivers,
               bad_signature_accepted)


def observation_evidence(row):
    return {"at": render(row["at"]), "operationId": row["operation"], "method": row["method"], "path": row["path"],
            "status": row["status"], "detail": row["detail"]}


def delivery_evidence(row):
    return {"at": render(row["attempted_at"]), "deliveryId": row["id"], "webhookId": row["webhook_id"],
            "eventType": row["event_type"], "attempt": row["attempt"], "status": row["response_status"],
            "error": row["error"], "durationMs": row["duration_ms"]}


# --- gathering and judging ---------------------------------------------------------------------------------

@dataclass
class Traffic:
    api_calls: list             # judged: the software under test's calls in the window
    all_calls: list             # history: every call the journal keeps
    observations: dict
    operations: dict
    deprecated: set
    tokens: dict
    initial_token: dict | None
    hooks: list
    events: list
    deliveries: list
    injected_deliveries: dict
    slow_ms: float
    made: dict | None = None        # journal id of a token-making call -> the token it handed over
    left_out: dict | None = None    # calls of the window not judged, by why (control, worldKey, harness, tools)

    def __post_init__(self):
        if self.made is None:
            self.made = tokens_made(self.all_calls, self.tokens)
        self.handed, self.first_use, self.revocations = {}, {}, {}     # token id -> journal id
        self.uses = {}                                                  # token id -> calls made with it
        for seq, token_id in sorted(self.made.items(), reverse=True):
            self.handed[token_id] = seq
        for call in reversed(self.all_calls):
            if call.token_id:
                self.first_use[call.token_id] = call.seq
                self.uses[call.token_id] = self.uses.get(call.token_id, 0) + 1
            if call.operationId in REVOKERS and call.ok():
                self.revocations[call.path.rstrip("/").rsplit("/", 1)[-1]] = call.seq

    def revoked_seq(self, token):
        """The journal id of the call that revoked `token` (or the end of time when the journal lacks it)."""
        return self.revocations.get(token["id"], 2**62)


def gather(store, world, operations, since=None, slow_ms=SLOW_MS, after=None):
    """Everything the rules read, from the stores of the areas that keep it (read only)."""
    tokens = {r["id"]: dict(r) for r in store.all("SELECT * FROM tokens WHERE world = ?", (world,))}
    calls = []
    for e in journal.entries(store, world, order="asc", limit=None, internal=True):
        token = tokens.get((e.get("token") or {}).get("id"))
        calls.append(Entry(e, parse(e["at"]), token["partner_id"] if token else None))
    window = [c for c in calls if (since is None or c.at >= since) and (after is None or c.seq > after)]
    start = since or 0
    if after is not None:
        start = max(start, min((c.at for c in window), default=2**62))
    observations = {}
    for row in store.all("SELECT * FROM report_observations WHERE world = ? AND at >= ? ORDER BY seq",
                         (world, start)):
        observations.setdefault(row["rule"], []).append(row)
    root = partners.root_of(store, world)
    root_tokens = sorted((t for t in tokens.values() if root and t["partner_id"] == root
                          and t["kind"] == "partner"), key=lambda t: (t["created_at"], t["id"]))
    initial = next((t for t in root_tokens if t["name"] == "initial token"), root_tokens[0] if root_tokens else None)
    hooks = [dict(h) for h in store.all("SELECT * FROM webhooks WHERE world = ?", (world,))]
    events = [event_of(e) for e in store.all(
        "SELECT kind, created_at, partner_id, data FROM events WHERE world = ? AND test = 0", (world,))]
    deliveries = [dict(r) for r in store.all("SELECT * FROM webhook_deliveries WHERE world = ? AND "
                                             "(attempted_at IS NULL OR attempted_at >= ?) ORDER BY seq",
                                             (world, start))]
    deprecated = {op_id for op_id, op in operations.items() if op.deprecated}
    traffic = Traffic([c for c in window if c.judged], calls, observations, operations, deprecated, tokens,
                      initial, hooks, events, deliveries, faults.injected_deliveries(store, world), slow_ms)
    traffic.left_out = {"control": sum(c.control for c in window),
                        "worldKey": sum(c.token_kind == "world" and not c.control for c in window),
                        "harness": sum(bool(c.entry["marks"].get("harness")) for c in window),
                        "tools": sum(bool(c.entry["marks"].get("tool")) and not c.control and c.token_kind != "world"
                                     and not c.entry["marks"].get("harness") for c in window)}
    return traffic


def event_of(row):
    """An event as the rules read it: its kind, when, and what it changed (the partner, the account, its user
    and account type; None where the kind has no account)."""
    data = json.loads(row["data"])
    account = data.get("account") or {}
    return {"kind": row["kind"], "created_at": row["created_at"], "partner": row["partner_id"],
            "account": account.get("id"), "user": data.get("userId") or account.get("userId"),
            "accountType": account.get("accountTypeId")}


def judge(traffic, now, world, since=None, after=None):
    """The report of one world: findings of every rule, worst first, and what was judged."""
    findings = [f for check in RULE_CHECKS for f in check(traffic)]
    order = {s: i for i, s in enumerate(reversed(SEVERITIES))}
    findings.sort(key=lambda f: (order[f["severity"]], f["rule"]))
    return {
        "world": world, "generatedAt": render(now), "since": render(since), "after": after,
        "judged": {"requests": len(traffic.api_calls), "deliveries": len(traffic.deliveries),
                   "observations": sum(map(len, traffic.observations.values())),
                   # calls in the window the software under test did not make (docs/chaos.md, what is judged)
                   "notJudged": traffic.left_out or {}},
        "summary": {s: sum(f["severity"] == s for f in findings) for s in SEVERITIES},
        "rules": [{"id": r.id, "severity": r.severity, "title": r.title} for r in RULES.values()],
        "findings": findings,
    }


def at_or_above(findings, severity):
    floor = SEVERITIES.index(severity)
    return [f for f in findings if SEVERITIES.index(f["severity"]) >= floor]
