"""HTTP layer of the webhook operations (spec §4.2 webhook and test-event rows, §6).

Scopes, where the spec is silent: partner:read to read subscriptions, partner:update to change them and to send
test events; partner tokens only (a webhook belongs to a partner, not to a user).
"""

from .. import events
from ..operations import PARTNER_ONLY, Answer, component, operation, ref
from ..partners.models import URL_FIELD
from ..timestamps import render
from ..worlds import next_in_sequence
from . import models, samples

KIND_NAMES = {"type": "string", "enum": list(models.KINDS)}
FIELDS = {
    "name": {"type": ["string", "null"], "maxLength": 200},
    "callbackUrl": {**URL_FIELD, "description": "absolute http(s) URL receiving the POSTs"},
    "events": {"type": "array", "items": KIND_NAMES, "minItems": 1,
               "description": "event kinds (spec §6); the retired kinds are accepted and never fire"},
    "isActive": {"type": "boolean"},
    "secret": {"type": "string", "pattern": models.SECRET.pattern,
               "description": "signing secret (whsec_<base64> or 16+ characters); generated when absent"},
}
WEBHOOK = component("Webhook", {
    "type": "object",
    "description": "A subscription; notifications are signed with `secret`.",
    "properties": {"id": {"type": "string"}, **FIELDS, "createdAt": {"type": "string", "format": "date-time"},
                   "updatedAt": {"type": "string", "format": "date-time"}},
    "required": ["id", "name", "callbackUrl", "events", "isActive", "secret", "createdAt", "updatedAt"],
})
component("WebhookList", {"type": "object", "properties": {"webhooks": {"type": "array", "items": WEBHOOK}},
                          "required": ["webhooks"]})
component("Notification", {
    "type": "object",
    "description": "The body POSTed to callback URLs; a test event answers with it.",
    "properties": {"id": {"type": "string"}, "eventType": {"type": "string"},
                   "createdAt": {"type": "string", "format": "date-time"}, "isTest": {"type": "boolean"},
                   "data": {"type": "object"}},
    "required": ["id", "eventType", "createdAt", "data"],
})
SIGNATURE_HEADERS = [
    {"name": "webhook-id", "in": "header", "required": True, "schema": {"type": "string"},
     "description": "the event id: the same on every retry, for deduplication"},
    {"name": "webhook-timestamp", "in": "header", "required": True, "schema": {"type": "string"},
     "description": "Unix seconds of the attempt, on the world clock"},
    {"name": "webhook-signature", "in": "header", "required": True, "schema": {"type": "string"},
     "description": "v1,<base64 HMAC-SHA256 of {webhook-id}.{webhook-timestamp}.{body} keyed by the secret>"},
]
# Spec §9 webhook 1.3.0: CreateWebhook describes the notifications it causes as an OpenAPI callback.
NOTIFICATION_CALLBACK = {"notification": {"{$request.body#/callbackUrl}": {"post": {
    "summary": "A notification of an event kind the webhook subscribes to (docs/webhooks.md)",
    "parameters": SIGNATURE_HEADERS,
    "requestBody": {"required": True, "content": {"application/json": {"schema": ref("Notification")}}},
    "responses": {"2XX": {"description": "Received; any other answer, or none within the timeout, is retried "
                                         "after 30 s, 2 min, 10 min and 1 h of world time"}},
}}}}
EXAMPLE = {"name": "order sync", "callbackUrl": "http://localhost/_sandbox/echo/my-bin",
           "events": ["AccountCreated", "AccountUpdated", "AccountDeleted", "TransactionsImported",
                      "AccountTypeUpdated"]}
READ, WRITE = ("partner:read",), ("partner:update",)


@operation("CreateWebhook", "POST", "/webhooks", tokens=PARTNER_ONLY, scopes=WRITE,
           body={"type": "object", "properties": FIELDS, "required": ["callbackUrl", "events"]},
           example=EXAMPLE, responses={201: "Webhook"}, callbacks=NOTIFICATION_CALLBACK)
def create_webhook(call):
    """Subscribe a callback URL to event kinds."""
    return Answer(201, models.create(call.ctx, call.principal.partner_id, call.body))


@operation("GetWebhooks", "GET", "/webhooks", tokens=PARTNER_ONLY, scopes=READ, responses={200: "WebhookList"})
def get_webhooks(call):
    """The calling partner's webhooks."""
    return {"webhooks": models.listing(call.ctx, call.principal.partner_id)}


@operation("GetWebhook", "GET", "/webhooks/{id}", tokens=PARTNER_ONLY, scopes=READ, responses={200: "Webhook"})
def get_webhook(call):
    """One webhook of the calling partner."""
    return models.record(models.get_owned(call.ctx, call.principal.partner_id, call.params["id"]))


@operation("UpdateWebhook", "PUT", "/webhooks/{id}", tokens=PARTNER_ONLY, scopes=WRITE,
           body={"type": "object", "properties": FIELDS, "required": ["callbackUrl", "events"]},
           example=EXAMPLE, responses={200: "Webhook"})
def update_webhook(call):
    """Replace a webhook's settings (the secret is kept unless given)."""
    return models.replace(call.ctx, call.principal.partner_id, call.params["id"], call.body)


@operation("PatchWebhook", "PATCH", "/webhooks/{id}", tokens=PARTNER_ONLY, scopes=WRITE,
           body={"type": "object", "properties": FIELDS, "minProperties": 1},
           example={"isActive": False}, responses={200: "Webhook"})
def patch_webhook(call):
    """Change only the fields given."""
    return models.change(call.ctx, call.principal.partner_id, call.params["id"], call.body)


@operation("DeleteWebhook", "DELETE", "/webhooks/{id}", tokens=PARTNER_ONLY, scopes=WRITE, responses={204: None})
def delete_webhook(call):
    """Unsubscribe; attempts not yet made are cancelled (the log keeps them)."""
    models.delete(call.ctx, call.principal.partner_id, call.params["id"])
    return Answer(204)


def send_test(call, kind):
    """Record a test event of `kind` in the outbox; the dispatcher sends it to the subscribed webhooks."""
    ctx = call.ctx
    data = samples.data_for(kind, ctx, next_in_sequence(ctx.store, ctx.world.id, "test-event"))
    event = events.emit(ctx, kind, call.principal.partner_id, data, test=True)
    return Answer(202, {"id": event["id"], "eventType": kind, "createdAt": render(event["created_at"]),
                       "isTest": True, "data": data})


# One operation per active kind (spec §4.2): POST /testevents/{kind in lower case}, in the order of events.ACTIVE.
TEST_EVENT = {"tokens": PARTNER_ONLY, "scopes": WRITE, "responses": {202: "Notification"}}


@operation("SendTestTransactionsImported", "POST", "/testevents/transactionsimported", **TEST_EVENT,
           summary="Send a test TransactionsImported notification to the webhooks subscribed to it.")
def send_test_transactionsimported(call):
    return send_test(call, "TransactionsImported")


@operation("SendTestAccountCreated", "POST", "/testevents/accountcreated", **TEST_EVENT,
           summary="Send a test AccountCreated notification to the webhooks subscribed to it.")
def send_test_accountcreated(call):
    return send_test(call, "AccountCreated")


@operation("SendTestAccountUpdated", "POST", "/testevents/accountupdated", **TEST_EVENT,
           summary="Send a test AccountUpdated notification to the webhooks subscribed to it.")
def send_test_accountupdated(call):
    return send_test(call, "AccountUpdated")


@operation("SendTestAccountDeleted", "POST", "/testevents/accountdeleted", **TEST_EVENT,
           summary="Send a test AccountDeleted notification to the webhooks subscribed to it.")
def send_test_accountdeleted(call):
    return send_test(call, "AccountDeleted")


@operation("SendTestAccountTypeUpdated", "POST", "/testevents/accounttypeupdated", **TEST_EVENT,
           summary="Send a test AccountTypeUpdated notification to the webhooks subscribed to it.")
def send_test_accounttypeupdated(call):
    return send_test(call, "AccountTypeUpdated")
