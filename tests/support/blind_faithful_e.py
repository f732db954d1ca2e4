"""Faithful deployments written blind, fifth round (after blind_faithful.py, blind_faithful_c.py and
blind_faithful_d.py): each makes ONE choice the interface spec leaves open, the way a production service behind
an API gateway plausibly would, and stays faithful to everything the spec states. Where the choice changes
something the service's own /openapi.json describes, the document says so (`document`, blind_faithful_d.py).

Forms as in tests/support/blind_deployments.py: `change(environ, status, headers, body)`, `wrap(app)`, `config`
(simulator configuration) and `apply(app)` (the service's own engine, changed); `served_as`
(blind_deployments_c.py) changes how this one app serves one operation.
"""

import calendar
import dataclasses
import gzip
import re
import uuid
from datetime import datetime, timedelta, timezone
from decimal import Decimal

from tests.support.blind_deployments import Case, answered, json_change, method, path, respond
from tests.support.blind_deployments_c import served_as
from tests.support.blind_faithful_d import describe, document, operation_named

PREFIX = "/partner/v2"
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


# ============================================================================ 1. "6 months" as calendar months
# §4.1 rule 2 and §8: "The default lifetime of a child partner's tokens is 6 months". How many seconds six months
# are is not shown. This service adds six calendar months to the creation instant (the day clamped to the end of a
# shorter month, as DateTime.AddMonths does): a token created on 31 August expires on the last day of February.
# expiresIn is that lifetime in seconds (181 to 184 days), expiresAt = createdAt + expiresIn as always.
def six_calendar_months_s(now_us):
    start = EPOCH + timedelta(microseconds=now_us)
    month0 = start.month - 1 + 6
    year, month = start.year + month0 // 12, month0 % 12 + 1
    day = min(start.day, calendar.monthrange(year, month)[1])
    return int((start.replace(year=year, month=month, day=day) - start).total_seconds())


def _calendar_default(original):
    def handler(call):
        body = call.body if isinstance(call.body, dict) else {}
        if body.get("expiresIn") is None:
            body = {**body, "expiresIn": six_calendar_months_s(call.ctx.now)}
            call = dataclasses.replace(call, body=body)
        return original(call)
    return handler


def _calendar_default_in_document(doc):
    describe(doc, "CreatePartnerToken", "Without expiresIn the token lives six calendar months from its creation "
                                        "(181 to 184 days; the day is clamped to the end of a shorter month).")


child_token_six_calendar_months = Case(
    "child_token_six_calendar_months",
    "§4.1 rule 2 / §8: 'default lifetime of child-partner tokens: 6 months', without a number of seconds: six "
    "calendar months from the creation (181 to 184 days, e.g. 15897600 s from 1 March), not 15768000 s; "
    "expiresAt = createdAt + expiresIn (the document says so)",
    apply=served_as("CreatePartnerToken", handler=_calendar_default),
    wrap=document(_calendar_default_in_document))


# ============================================================================ 2. gzip when the client accepts it
# Nothing in the spec is about content codings. The gateway compresses answers of 1 KiB or more with gzip when the
# request's Accept-Encoding accepts it (RFC 9110 12.5.3: q=0 refuses), with Vary: Accept-Encoding; a client that
# sends no Accept-Encoding (or refuses gzip) gets the answers as before.
def gzip_accepted(header):
    accepted, refused = False, False
    for item in (header or "").split(","):
        name, _, params = item.strip().partition(";")
        quality = 1.0
        match = re.search(r"q\s*=\s*([0-9.]+)", params)
        if match:
            try:
                quality = float(match.group(1))
            except ValueError:
                quality = 0.0
        if name.strip().lower() == "gzip":
            return quality > 0
        if name.strip() == "*":
            accepted, refused = quality > 0, quality <= 0
    return accepted and not refused


def _gzip(app):
    def served(environ, start_response):
        if environ["REQUEST_METHOD"] == "HEAD" or not gzip_accepted(environ.get("HTTP_ACCEPT_ENCODING")):
            return app(environ, start_response)
        status, headers, body = answered(app, environ)
        names = {k.lower(): v for k, v in headers}
        kind = names.get("content-type", "")
        vary = [v for k, v in headers if k.lower() == "vary"]
        headers = [(k, v) for k, v in headers if k.lower() != "vary"]
        headers.append(("Vary", ", ".join(vary + ["Accept-Encoding"])))
        if len(body) >= 1024 and "content-encoding" not in names and status[:3] not in ("204", "304") \
                and ("json" in kind or kind.startswith("text/")):
            body = gzip.compress(body, mtime=0)
            headers.append(("Content-Encoding", "gzip"))
        return respond(start_response, status, headers, body)
    return served


gzip_when_accepted = Case(
    "gzip_when_accepted",
    "Content codings are not in the spec: answers of 1 KiB or more are gzip-compressed (Content-Encoding: gzip, "
    "Vary: Accept-Encoding) when the request's Accept-Encoding accepts gzip; without it nothing changes",
    wrap=_gzip)


# ============================================================================ 3. amounts as decimal strings
# §2 Transaction: 'Other classification values and other transaction fields: not shown'. The amount is money, so
# this service writes it as a decimal string with two fraction digits ("1317.53", "-12.00"), as payment APIs do to
# keep binary floating point out of it; the field of `fields` mapped to it says the same. The document says so.
TRANSACTIONS = rf"^{PREFIX}/(accounts/[^/]+/transactions(/[^/]+)?|transactions/[^/]+)$"


def money(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    return str(Decimal(repr(value)).quantize(Decimal("0.01")))


def _amounts(data, environ):
    rows = data.get("transactions") if isinstance(data, dict) and isinstance(data.get("transactions"), list) \
        else [data]
    for row in rows:
        if not isinstance(row, dict) or "amount" not in row:
            continue
        row["amount"] = money(row["amount"])
        for field in row.get("fields") or []:
            if isinstance(field, dict) and field.get("mappedTo") == "amount":
                field["value"] = money(field.get("value"))


def _amounts_in_document(doc):
    schema = (doc.get("components") or {}).get("schemas", {}).get("Transaction", {})
    if isinstance(schema.get("properties"), dict):
        schema["properties"]["amount"] = {"type": "string", "pattern": r"^-?[0-9]+\.[0-9]{2}$",
                                          "description": "the amount as a decimal string, two fraction digits"}


amounts_as_decimal_strings = Case(
    "amounts_as_decimal_strings",
    "§2 Transaction: 'other transaction fields: not shown': a transaction's amount (and the field of `fields` "
    "mapped to it) is a decimal string with two fraction digits ('1317.53'), not a JSON number (the document "
    "says so)",
    change=json_change(lambda e: method(e, "GET") and path(e, TRANSACTIONS), _amounts),
    wrap=document(_amounts_in_document))


# ============================================================================ 4. the gateway's own headers
# Additional response headers are not excluded anywhere. The gateway in front of the service adds what it adds to
# every answer: a request id (the caller's X-Request-Id when it sent one), HSTS, nosniff, and no-store for the
# API's answers (they hold personal and financial data). A header the service set itself is left as it is.
def _gateway_headers(app):
    def served(environ, start_response):
        def start(status, headers, exc_info=None):
            present = {k.lower() for k, _ in headers}
            extra = [("X-Request-Id", environ.get("HTTP_X_REQUEST_ID") or str(uuid.uuid4())),
                     ("Strict-Transport-Security", "max-age=31536000; includeSubDomains"),
                     ("X-Content-Type-Options", "nosniff")]
            if environ.get("PATH_INFO", "").startswith(PREFIX + "/"):
                extra.append(("Cache-Control", "no-store"))
            headers = list(headers) + [(k, v) for k, v in extra if k.lower() not in present]
            return start_response(status, headers, exc_info) if exc_info else start_response(status, headers)
        return app(environ, start)
    return served


gateway_headers = Case(
    "gateway_headers",
    "Additional response headers (the spec fixes only X-Service-Auth* on the OAuth2 return step): every answer "
    "carries X-Request-Id, Strict-Transport-Security and X-Content-Type-Options: nosniff, the API's answers "
    "Cache-Control: no-store; headers the service sets itself are kept",
    wrap=_gateway_headers)


# ============================================================================ 5. the webhook secret shown once
# §6: 'Field names and allowed values of the webhook subscription: not shown', nor which of them a read returns.
# The signing secret is shown once, in CreateWebhook's answer (as API keys are); GetWebhooks, GetWebhook and the
# answers of PUT and PATCH leave it out. It still signs every notification, and PUT or PATCH may replace it.
WEBHOOK_PATHS = rf"^{PREFIX}/webhooks(/[^/]+)?$"


def _secret_hidden(data, environ):
    if method(environ, "POST"):
        return None
    rows = data.get("webhooks") if isinstance(data, dict) and isinstance(data.get("webhooks"), list) else [data]
    for row in rows:
        if isinstance(row, dict):
            row.pop("secret", None)
    return None


def _secret_in_document(doc):
    schema = (doc.get("components") or {}).get("schemas", {}).get("Webhook", {})
    if isinstance(schema.get("required"), list):
        schema["required"] = [name for name in schema["required"] if name != "secret"]
    secret = (schema.get("properties") or {}).get("secret")
    if isinstance(secret, dict):
        secret["description"] = (secret.get("description", "") + "; shown only in CreateWebhook's answer").lstrip("; ")
    for operation_id in ("GetWebhooks", "GetWebhook", "UpdateWebhook", "PatchWebhook"):
        describe(doc, operation_id, "The answer leaves out the signing secret (CreateWebhook's answer shows it).")
    if operation_named(doc, "CreateWebhook"):
        describe(doc, "CreateWebhook", "The answer shows the signing secret; later reads do not.")


webhook_secret_shown_once = Case(
    "webhook_secret_shown_once",
    "§6: field names and values of the webhook subscription not shown: the signing secret is in CreateWebhook's "
    "answer only; GetWebhooks, GetWebhook, PUT and PATCH answers leave it out (notifications are still signed "
    "with it; the document says so)",
    change=json_change(lambda e: path(e, WEBHOOK_PATHS), _secret_hidden),
    wrap=document(_secret_in_document))


CASES = [child_token_six_calendar_months, gzip_when_accepted, amounts_as_decimal_strings, gateway_headers,
         webhook_secret_shown_once]
assert len(CASES) == 5, len(CASES)
