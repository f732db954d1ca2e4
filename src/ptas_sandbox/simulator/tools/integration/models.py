"""Integration report rules: each reads a world's recorded traffic (the request journal, the delivery log,
tokens, subscriptions, observations made at the edge) and returns findings with evidence and a fix. No Flask.

A finding: {"rule", "severity", "title", "message", "fix", "evidence": [{"at", "operationId", "method", "path",
"status", "requestId" | "deliveryId", "injected"}]}. Severities: error > warning > info.
"""

import json
import re
from dataclasses import dataclass
from urllib.parse import parse_qs

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
NON_IDEMPOTENT = ("POST", "PATCH")
TRANSACTION_READS = ("GetTransactions", "GetTransactionsDeprecated")
USER_TOKEN_ISSUERS = ("CreateUserToken", "CreateOwnUserToken", "CreateUser")


@dataclass(frozen=True)
class Rule:
    id: str
    severity: str
    title: str
    fix: str


RULES = {r.id: r for r in (
    Rule("removed-path", "error", "Calls to paths removed from the interface",
         "Use the current operation (spec §4.2 note 6 lists the replacements); /openapi.json has every live path."),
    Rule("deprecated-operation", "warning", "Calls to deprecated operations",
         "Move to the operation that replaces it before it is removed (the OpenAPI document marks deprecated ones)."),
    Rule("deprecated-field", "warning", "Requests using deprecated fields",
         "Send the field that replaced it: accountTypeIds (an array) instead of accountTypeId on POST /accountui "
         "(spec §4.3 note 4)."),
    Rule("retry-after-ignored", "error", "Requests sent before a Retry-After had passed",
         "After a 429 (or a 503 with Retry-After) wait the seconds Retry-After names before the next request; "
         "spec §8 allows 100 requests per 60 s."),
    Rule("blind-retry", "error", "A non-idempotent request repeated after a 5xx without checking the result",
         "A 5xx or a dropped connection does not say the operation failed: read the resource (or list) first, "
         "then repeat only what is missing."),
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
    Rule("polling-instead-of-webhook", "warning", "GetTransactions polled more often than imports arrive",
         "A webhook for TransactionsImported exists: fetch transactions when it says an import finished instead "
         "of polling."),
    Rule("pagination-ignored", "warning", "Only the first page read while nextPageReference was present",
         "Follow nextPageReference (as pageReference) until it is null, or the rest of the data is never seen."),
    Rule("webhook-receiver-failed", "warning", "Webhook receivers that answered non-2xx or not at all",
         "Answer 2xx quickly once the signature is verified and the notification stored; do the work afterwards."),
    Rule("webhook-receiver-slow", "info", f"Webhook receivers slower than {SLOW_MS} ms",
         "Acknowledge first (2xx), process later: a slow receiver risks timeouts and duplicate deliveries."),
    Rule("bad-signature-accepted", "error", "A notification with an invalid signature was acknowledged",
         "Verify webhook-signature (HMAC-SHA256 of id.timestamp.body with the webhook's secret) and answer 4xx "
         "when it does not match; see docs/webhooks.md."),
)}


def observe(store, world, rule, at, method, path, detail, operation=None, status=None):
    """Something the journal cannot show (a call to a removed path, a token in a page URL), kept bounded."""
    store.insert("report_observations", world=world, rule=rule, at=at, operation=operation, method=method,
                 path=path, status=status, detail=detail)
    store.execute("DELETE FROM report_observations WHERE world = ? AND seq <= (SELECT seq FROM report_observations "
                  "WHERE world = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)", (world, world, OBSERVATIONS_KEPT))


# --- evidence ----------------------------------------------------------------------------------------------

@dataclass
class Entry:
    """A journal entry with its world-clock instant as a number."""
    entry: dict
    at: int

    def __getattr__(self, name):
        return self.entry[name]

    @property
    def control(self):
        return self.entry["operationId"].startswith("Sandbox")

    @property
    def token_id(self):
        return (self.entry.get("token") or {}).get("id")

    @property
    def injected(self):
        return self.entry["marks"].get("injected")

    def params(self):
        return parse_qs(self.entry.get("query") or "")

    def evidence(self, **extra):
        return {"at": self.entry["at"], "requestId": self.entry["id"], "operationId": self.entry["operationId"],
                "method": self.entry["method"], "path": self.entry["path"], "status": self.entry["status"],
                "injected": bool(self.injected), **extra}


def finding(rule_id, message, evidence, **extra):
    rule = RULES[rule_id]
    return {"rule": rule.id, "severity": rule.severity, "title": rule.title, "message": message, "fix": rule.fix,
            "count": len(evidence), "evidence": evidence[:EVIDENCE_SHOWN], **extra}


# --- the rules ---------------------------------------------------------------------------------------------

def removed_paths(data):
    rows = data.observations.get("removed-path", [])
    if rows:
        yield finding("removed-path", f"{len(rows)} call(s) to removed paths, e.g. {rows[0]['method']} "
                      f"{rows[0]['path']}.", [observation_evidence(r) for r in rows])


def deprecated_operations(data):
    by_op = {}
    for call in data.api_calls:
        if call.operationId in data.deprecated:
            by_op.setdefault(call.operationId, []).append(call)
    for op, calls in by_op.items():
        yield finding("deprecated-operation", f"{op} is deprecated; called {len(calls)} time(s).",
                      [c.evidence() for c in calls], operationId=op)


# (operationId, body field) the spec calls deprecated in requests, and what replaces it.
DEPRECATED_FIELDS = {("CreateAccountUiSession", "accountTypeId"): "accountTypeIds"}


def deprecated_fields(data):
    by_field = {}
    for call in data.api_calls:
        body = call.entry["request"].get("body")
        for (op, name), replacement in DEPRECATED_FIELDS.items():
            if call.operationId == op and isinstance(body, dict) and name in body:
                by_field.setdefault((op, name, replacement), []).append(call)
    for (op, name, replacement), calls in by_field.items():
        yield finding("deprecated-field", f"{op} was sent the deprecated field `{name}` {len(calls)} time(s); use "
                      f"`{replacement}`.", [c.evidence() for c in calls], operationId=op, field=name)


def retry_after_ignored(data):
    calls = data.api_calls
    covered = -1
    for i, refused in enumerate(calls):
        wait = refused.entry["marks"].get("retryAfter")
        if wait is None and refused.injected:
            wait = refused.injected.get("retryAfter")
        if i <= covered or wait is None or refused.status not in (429, 503):
            continue
        until = refused.at + int(wait) * SECOND_US
        early = []
        for j in range(i + 1, len(calls)):
            if calls[j].at >= until:
                break
            early.append(calls[j])
            covered = j
        if early:
            yield finding("retry-after-ignored",
                          f"A {refused.status} at {refused.entry['at']} asked to wait {wait} s; {len(early)} "
                          f"request(s) followed within that time.",
                          [refused.evidence(retryAfter=int(wait))] + [c.evidence() for c in early])


def checks_result(check, failed):
    """A read after a failed write that could show whether the write happened (the collection or the item)."""
    return check.method == "GET" and (check.path.startswith(failed.path) or failed.path.startswith(check.path))


def failed(call):
    return call.status >= 500 or (call.injected or {}).get("type") == "drop"


def blind_retries(data):
    calls = data.api_calls
    for i, first in enumerate(calls):
        if first.method not in NON_IDEMPOTENT or not failed(first):
            continue
        for later in calls[i + 1:]:
            if later.token_id != first.token_id:
                continue
            if checks_result(later, first):
                break
            if (later.method, later.path) == (first.method, first.path) and \
                    later.entry["request"].get("body") == first.entry["request"].get("body"):
                yield finding("blind-retry", f"{first.method} {first.path} answered {first.status} at "
                              f"{first.entry['at']} and was sent again at {later.entry['at']} without reading "
                              "what the first one did.", [first.evidence(), later.evidence()])
                break


def initial_token(data):
    initial = data.initial_token
    if initial is None:
        return
    successors = [t for t in data.root_tokens if t["id"] != initial["id"] and t["created_at"] >= initial["created_at"]
                  and t["expires_in"] > initial["expires_in"] and ("partner:update" in t["scope"].split()
                                                                   or "partner:all" in t["scope"].split())]
    uses = [c for c in data.api_calls if c.token_id == initial["id"]]
    if successors:
        since = min(t["created_at"] for t in successors)
        made = next((c.id for c in data.api_calls if c.at == since and c.status == 201
                     and c.operationId in ("CreateOwnPartnerToken", "CreatePartnerToken")), 0)
        late = [c for c in uses if (c.at, c.id) > (since, made)]
        if late:
            yield finding("initial-token-in-use", f"The initial partner token made {len(late)} call(s) after a "
                          f"long-lived token existed (from {render(since)}).", [c.evidence() for c in late])
        if initial["revoked_at"] is None:
            yield finding("initial-token-not-revoked", "A long-lived partner token exists, and the initial token "
                          f"(id {initial['id']}) is still valid until {render(initial['expires_at'])}.",
                          [{"at": render(since), "tokenId": initial["id"]}])
    elif uses:
        yield finding("initial-token-in-use", f"All {len(uses)} API call(s) of the root partner use the initial "
                      "token, which expires after "
                      f"{initial['expires_in'] // 86400} day(s); no long-lived token was created.",
                      [c.evidence() for c in uses])


def partner_token_exposed(data):
    rows = data.observations.get("partner-token-exposed", [])
    if rows:
        yield finding("partner-token-exposed", f"A partner token reached an end-user page or URL {len(rows)} "
                      f"time(s): {rows[0]['detail']}", [observation_evidence(r) for r in rows])


def expired_user_tokens(data):
    late = {}
    for call in data.api_calls:
        token = data.tokens.get(call.token_id)
        if token and token["kind"] == "user" and call.at >= token["expires_at"]:
            late.setdefault(call.token_id, []).append(call)
    for token_id, calls in late.items():
        token = data.tokens[token_id]
        renewed = any(t["kind"] == "user" and t["user_id"] == token["user_id"]
                      and t["created_at"] >= token["expires_at"] for t in data.tokens.values())
        if len(calls) > 1 or not renewed:
            yield finding("expired-user-token", f"A user token of user {token['user_id']} expired at "
                          f"{render(token['expires_at'])} and was used {len(calls)} time(s) after"
                          + ("" if renewed else ", and no new user token was created") + ".",
                          [c.evidence() for c in calls])


ACCOUNT_IN_PATH = re.compile(r"/(?:accounts/([^/]+)/transactions|transactions/([^/]+))$")


def polling(data):
    if not data.import_hooks:
        return
    since = min(h["created_at"] for h in data.import_hooks)
    by_account = {}
    for call in data.api_calls:
        found = ACCOUNT_IN_PATH.search(call.path)
        if call.operationId in TRANSACTION_READS and found and call.at >= since \
                and "pageReference" not in call.params():
            by_account.setdefault(found.group(1) or found.group(2), []).append(call)
    for account_id, calls in by_account.items():
        imports = [at for at in data.imports.get(account_id, []) if calls[0].at <= at <= calls[-1].at]
        if len(calls) >= 3 and len(calls) > len(imports) + 1:
            yield finding("polling-instead-of-webhook", f"GetTransactions of account {account_id} was called "
                          f"{len(calls)} time(s) between {calls[0].entry['at']} and {calls[-1].entry['at']}, while "
                          f"{len(imports)} import(s) finished; a TransactionsImported webhook exists.",
                          [c.evidence() for c in calls], accountId=account_id)


def pagination(data):
    calls = data.api_calls
    for i, call in enumerate(calls):
        if not call.entry["marks"].get("nextPageReference"):
            continue
        followed = any(later.path == call.path and "pageReference" in later.params() for later in calls[i + 1:])
        if not followed:
            yield finding("pagination-ignored", f"{call.method} {call.path} at {call.entry['at']} answered a page "
                          "with nextPageReference, and no later request asked for the next page.", [call.evidence()])


def webhook_receivers(data):
    failed_by_hook, slow_by_hook = {}, {}
    for row in data.deliveries:
        effects = data.injected_deliveries.get(row["id"], [])
        if row["attempted_at"] is None or row["status"] not in ("succeeded", "failed") or "bad-signature" in effects:
            continue
        ok = row["response_status"] is not None and 200 <= row["response_status"] < 300
        if not ok:
            failed_by_hook.setdefault(row["webhook_id"], []).append(row)
        elif row["duration_ms"] is not None and row["duration_ms"] > data.slow_ms:
            slow_by_hook.setdefault(row["webhook_id"], []).append(row)
    for hook, rows in failed_by_hook.items():
        yield finding("webhook-receiver-failed", f"The receiver of webhook {hook} ({rows[0]['url']}) failed "
                      f"{len(rows)} attempt(s): {rows[0]['error'] or rows[0]['response_status']}.",
                      [delivery_evidence(r) for r in rows], webhookId=hook)
    for hook, rows in slow_by_hook.items():
        yield finding("webhook-receiver-slow", f"The receiver of webhook {hook} took over {data.slow_ms} ms on "
                      f"{len(rows)} attempt(s).", [delivery_evidence(r) for r in rows], webhookId=hook)


def bad_signature_accepted(data):
    rows = [r for r in data.deliveries if "bad-signature" in data.injected_deliveries.get(r["id"], [])
            and r["response_status"] is not None and 200 <= r["response_status"] < 300]
    for row in rows:
        yield finding("bad-signature-accepted", f"The receiver of webhook {row['webhook_id']} answered "
                      f"{row['response_status']} to a notification signed wrongly on purpose (a bad-signature "
                      "fault).", [delivery_evidence(row)], webhookId=row["webhook_id"])


RULE_CHECKS = (removed_paths, deprecated_operations, deprecated_fields, retry_after_ignored, blind_retries,
               initial_token, partner_token_exposed, expired_user_tokens, polling, pagination, webhook_receivers,
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
    api_calls: list
    observations: dict
    deprecated: set
    tokens: dict
    root_tokens: list
    initial_token: dict | None
    import_hooks: list
    imports: dict
    deliveries: list
    injected_deliveries: dict
    slow_ms: float


def gather(store, world, deprecated, since=None, slow_ms=SLOW_MS):
    """Everything the rules read, from the stores of the areas that keep it (read only)."""
    calls = [Entry(e, parse(e["at"])) for e in journal.entries(store, world, order="asc", limit=None, since=since)]
    observations = {}
    for row in store.all("SELECT * FROM report_observations WHERE world = ? AND at >= ? ORDER BY seq",
                         (world, since or 0)):
        observations.setdefault(row["rule"], []).append(row)
    tokens = {r["id"]: dict(r) for r in store.all("SELECT * FROM tokens WHERE world = ?", (world,))}
    root = partners.root_of(store, world)
    root_tokens = sorted((t for t in tokens.values() if root and t["partner_id"] == root
                          and t["kind"] == "partner"), key=lambda t: (t["created_at"], t["id"]))
    initial = next((t for t in root_tokens if t["name"] == "initial token"), root_tokens[0] if root_tokens else None)
    hooks = [dict(h) for h in store.all("SELECT * FROM webhooks WHERE world = ? AND is_active = 1", (world,))
             if "TransactionsImported" in json.loads(h["events"])]
    imports = {}
    for event in store.all("SELECT data, created_at FROM events WHERE world = ? AND kind = 'TransactionsImported' "
                           "AND test = 0", (world,)):
        account = (json.loads(event["data"]).get("account") or {}).get("id")
        imports.setdefault(account, []).append(event["created_at"])
    deliveries = [dict(r) for r in store.all("SELECT * FROM webhook_deliveries WHERE world = ? AND "
                                             "(attempted_at IS NULL OR attempted_at >= ?) ORDER BY seq",
                                             (world, since or 0))]
    return Traffic([c for c in calls if not c.control], observations, set(deprecated), tokens, root_tokens, initial,
                   hooks, imports, deliveries, faults.injected_deliveries(store, world), slow_ms)


def judge(traffic, now, world, since=None):
    """The report of one world: findings of every rule, worst first, and what was judged."""
    findings = [f for check in RULE_CHECKS for f in check(traffic)]
    order = {s: i for i, s in enumerate(reversed(SEVERITIES))}
    findings.sort(key=lambda f: (order[f["severity"]], f["rule"]))
    return {
        "world": world, "generatedAt": render(now), "since": render(since),
        "judged": {"requests": len(traffic.api_calls), "deliveries": len(traffic.deliveries),
                   "observations": sum(map(len, traffic.observations.values()))},
        "summary": {s: sum(f["severity"] == s for f in findings) for s in SEVERITIES},
        "rules": [{"id": r.id, "severity": r.severity, "title": r.title} for r in RULES.values()],
        "findings": findings,
    }


def at_or_above(findings, severity):
    floor = SEVERITIES.index(severity)
    return [f for f in findings if SEVERITIES.index(f["severity"]) >= floor]
