"""Webhooks: the kinds subscribed to, and how the client's receivers answered notifications."""

from ....events import RETIRED
from .base import HOOK_WRITES, SLOW_MS, Rule, delivery_evidence, finding, judges, listing, strings


@judges(
    Rule("retired-event-subscribed", "warning", "Webhooks subscribed to retired event kinds",
         "Subscribe to the current kinds only (spec §6): retired ones are accepted and never fire."),
)
def retired_events(data):
    def kinds_of(call):
        body = call.body()
        return strings(body.get("events")) if isinstance(body, dict) else set()
    calls = [c for c in data.api_calls if c.operationId in HOOK_WRITES and kinds_of(c) & set(RETIRED)]
    if calls:
        kinds = set().union(*(kinds_of(c) & set(RETIRED) for c in calls))
        yield finding("retired-event-subscribed", f"{len(calls)} webhook write(s) subscribed to retired kinds "
                      f"({listing(kinds)}), which never fire.", [c.evidence() for c in calls])


RECEIVER_FAULTS = (("webhook-receiver-unreachable", lambda r: r["response_status"] is None),
                   ("webhook-receiver-refused", lambda r: r["response_status"] is not None
                    and 400 <= r["response_status"] < 500),
                   ("webhook-receiver-redirected", lambda r: r["response_status"] is not None
                    and 300 <= r["response_status"] < 400),
                   ("webhook-receiver-failed", lambda r: r["response_status"] is not None
                    and not 200 <= r["response_status"] < 400 and not 400 <= r["response_status"] < 500))


@judges(
    Rule("webhook-receiver-unreachable", "warning", "Webhook receivers that could not be reached or timed out",
         "Keep the receiver reachable while its webhook is active; pause (isActive false) or delete the webhook "
         "before the receiver goes away."),
    Rule("webhook-receiver-refused", "warning", "Webhook receivers that refused correctly signed notifications",
         "A 4xx to a notification signed with the webhook's secret loses it: check the signature with the "
         "secret of that webhook (id.timestamp.body) and accept every event kind you subscribed to."),
    Rule("webhook-receiver-redirected", "warning", "Webhook receivers that answered with a redirect",
         "Register the receiver's final URL: a notification is not sent on to where a 3xx points "
         "(docs/webhooks.md), so a redirect loses it."),
    Rule("webhook-receiver-failed", "warning", "Webhook receivers that answered with a server error",
         "Answer 2xx once the notification is stored; do the work afterwards, and never let it fail the answer."),
    Rule("webhook-receiver-slow", "info", f"Webhook receivers slower than {SLOW_MS} ms",
         "Acknowledge first (2xx), process later: a slow receiver risks timeouts and duplicate deliveries."),
)
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


@judges(
    Rule("bad-signature-accepted", "error", "A notification with an invalid signature was acknowledged",
         "Verify webhook-signature (HMAC-SHA256 of id.timestamp.body with the webhook's secret) and answer 4xx "
         "when it does not match; see docs/webhooks.md."),
)
def bad_signature_accepted(data):
    rows = [r for r in data.deliveries if "bad-signature" in data.injected_deliveries.get(r["id"], [])
            and r["response_status"] is not None and 200 <= r["response_status"] < 300]
    if rows:
        yield finding("bad-signature-accepted", f"{len(rows)} notification(s) signed wrongly on purpose (a "
                      f"bad-signature fault) were answered 2xx, e.g. {rows[0]['response_status']} from webhook "
                      f"{rows[0]['webhook_id']}.", [delivery_evidence(r) for r in rows])
