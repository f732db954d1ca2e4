"""Faithful deployments written blind, second round (after blind_faithful.py): each makes one choice the spec
leaves open the way a real service might, and stays faithful to everything the spec states. Where the choice
changes something the service's own /openapi.json describes, the document is changed with it (`document`)."""

import hashlib
import hmac
import io
import json
import re

from tests.support.blind_deployments import Case, answered, json_change, json_of, method, path, problem, respond


def document(edit):
    """A wrap: GET /openapi.json answers the simulator's document after `edit(doc)` (in place)."""
    def wrap(app):
        def served(environ, start_response):
            if method(environ, "GET") and environ["PATH_INFO"] == "/openapi.json":
                status, headers, body = answered(app, environ)
                doc = json_of(body)
                if isinstance(doc, dict):
                    edit(doc)
                    body = json.dumps(doc).encode()
                return respond(start_response, status, headers, body)
            return app(environ, start_response)
        return served
    return wrap


def wraps(*steps):
    """Wraps applied in turn (the first innermost)."""
    def wrap(app):
        for step in steps:
            app = step(app)
        return app
    return wrap


def operations(doc):
    for item in (doc.get("paths") or {}).values():
        for operation in item.values():
            if isinstance(operation, dict) and "responses" in operation:
                yield operation


# 1. ProblemDetails: its fields are not shown (§7), nor its media type. The ProblemDetails bodies (401, 403 and
#    every other error) go out as application/json rather than application/problem+json; the document says so.
def _plain_json_problem(environ, status, headers, body):
    if any(k.lower() == "content-type" and "problem+json" in v for k, v in headers):
        return status, [(k, "application/json" if k.lower() == "content-type" else v) for k, v in headers], body


def _problem_media_in_document(doc):
    for operation in operations(doc):
        for response in operation["responses"].values():
            content = response.get("content") if isinstance(response, dict) else None
            if isinstance(content, dict) and "application/problem+json" in content:
                content["application/json"] = content.pop("application/problem+json")


problems_as_application_json = Case(
    "problems_as_application_json",
    "§7: 'Fields of the ProblemDetails body ... not shown'; §7 rule 2 asks for a ProblemDetails body, not a media "
    "type: the ProblemDetails bodies are sent as application/json (the document says so)",
    change=_plain_json_problem, wrap=document(_problem_media_in_document))


# 2. Field names of the webhook subscription: not shown (§6). The callback URL is `url`, the kinds `eventTypes`;
#    the old names are unknown properties, ignored (as §9.2's open schemas allow). The document says so.
NEW_NAMES = {"callbackUrl": "url", "events": "eventTypes"}
OLD_NAMES = {new: old for old, new in NEW_NAMES.items()}


def _renamed(data, names):
    return {names.get(k, k): v for k, v in data.items()} if isinstance(data, dict) else data


def _webhook_names(app):
    def served(environ, start_response):
        if not path(environ, r"^/partner/v2/webhooks(/[^/]+)?$"):
            return app(environ, start_response)
        raw = b""
        if method(environ, "POST", "PUT", "PATCH"):
            length = int(environ.get("CONTENT_LENGTH") or 0)
            raw = environ["wsgi.input"].read(length) if length else b""
            data = json_of(raw) if raw else None
            if isinstance(data, dict):
                data = {k: v for k, v in data.items() if k not in NEW_NAMES}     # the old names mean nothing
                raw = json.dumps(_renamed(data, OLD_NAMES)).encode()
        status, headers, body = answered(app, {**environ, "wsgi.input": io.BytesIO(raw),
                                               "CONTENT_LENGTH": str(len(raw))})
        data = json_of(body) if body else None
        if status.startswith("2") and isinstance(data, dict):
            if isinstance(data.get("webhooks"), list):
                data["webhooks"] = [_renamed(w, NEW_NAMES) for w in data["webhooks"]]
            else:
                data = _renamed(data, NEW_NAMES)
            body = json.dumps(data).encode()
        elif isinstance(data, dict):        # a problem naming a field names it as the client knows it
            text = json.dumps(data)
            for old, new in NEW_NAMES.items():
                text = text.replace(f"/{old}", f"/{new}").replace(f"`{old}`", f"`{new}`")
            body = text.encode()
        return respond(start_response, status, headers, body)
    return served


def _webhook_names_in_document(doc):
    def walk(node):
        if isinstance(node, dict):
            if "callbackUrl" in node and "events" in node:      # a schema's properties, or an example
                renamed = _renamed(node, NEW_NAMES)
                node.clear()
                node.update(renamed)
            if isinstance(node.get("required"), list) and "callbackUrl" in node["required"]:
                node["required"] = [NEW_NAMES.get(n, n) for n in node["required"]]
            for key in list(node):
                if "#/callbackUrl" in key:
                    node[key.replace("#/callbackUrl", "#/url")] = node.pop(key)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
    for name, item in (doc.get("paths") or {}).items():
        if "/webhooks" in name:
            walk(item)
    walk((doc.get("components") or {}).get("schemas", {}).get("Webhook"))


webhook_fields_renamed = Case(
    "webhook_fields_renamed",
    "§2 Webhook / §6: 'Its field names: not shown', 'Field names and allowed values of the webhook subscription: "
    "not shown': the callback URL is `url` and the event kinds `eventTypes` (requests, answers and the document)",
    wrap=wraps(_webhook_names, document(_webhook_names_in_document)))


# 3. The order of lists: not shown. Token, partner, user, account, webhook, data-import and report lists come newest
#    first. (Transactions keep their order: their pages are references into it; redirectUrls keep the partner's.)
LISTS = {"tokens", "partners", "users", "accounts", "webhooks", "dataImports", "reports"}


def _newest_first(data, environ):
    if isinstance(data, dict):
        for key in LISTS & set(data):
            if isinstance(data[key], list):
                data[key] = data[key][::-1]


lists_newest_first = Case(
    "lists_newest_first",
    "Order of list answers: not shown anywhere in the spec (§4.1 token list, §4.2/§4.3 lists): every list of "
    "tokens, partners, users, accounts, webhooks, data imports and reports comes newest first",
    change=json_change(lambda e: method(e, "GET") and path(
        e, r"^/partner/v2/(partners(/[^/]+/tokens)?|users|accounts|webhooks|dataimports|accounts/[^/]+/reports)$"),
        _newest_first))


# 4. Status codes of successful creations: not shown (§4 tables give none). Every creation answers 200 OK with
#    the created record instead of 201 Created; the document says so.
def _created_as_ok(environ, status, headers, body):
    if status.startswith("201"):
        return "200 OK", headers, body


def _ok_in_document(doc):
    for operation in operations(doc):
        responses = operation["responses"]
        if "201" in responses:
            responses["200"] = responses.pop("201")


creations_answer_200 = Case(
    "creations_answer_200",
    "§4: request and response payloads (and so their status codes) not shown; no creation's status is stated: "
    "creations answer 200 OK with the record rather than 201 (the document says so)",
    change=_created_as_ok, wrap=document(_ok_in_document))


# 5. 'Additional rate limits apply to some methods; their values: not shown' (§8). TriggerAccountRefresh: at most
#    10 per partner per hour, on top of the global 100 per 60 s; refused as the simulator refuses the global limit.
refresh_rate_limited = Case(
    "refresh_rate_limited",
    "§8: 'Additional rate limits apply to some methods; their values: not shown' (and §7: the response when one is "
    "exceeded not shown): TriggerAccountRefresh is limited to 10 per hour",
    config={"OPERATION_LIMITS": {"TriggerAccountRefresh": (10, 3600)}})


# 6. Headers and signature of notifications: not shown (§6). Signed as `X-Service-Signature: t=<unix s>,
#    v1=<hex HMAC-SHA256 of "t.body">` with the webhook's secret, the event id in X-Service-Event-Id; no webhook-*
#    headers. The document's callback describes these headers.
class _SignedOtherwise:
    config = {"START_SERVICES": True}

    def __call__(self, app):
        def sign(store, row, headers):
            stamp = headers.get("webhook-timestamp", "0")
            body = row["request_body"]
            body = body if isinstance(body, bytes) else str(body).encode()
            digest = hmac.new(str(row["secret"]).encode(), stamp.encode() + b"." + body, hashlib.sha256).hexdigest()
            kept = {k: v for k, v in headers.items() if not k.lower().startswith("webhook-")}
            return {**kept, "X-Service-Event-Id": str(row["event_id"]),
                    "X-Service-Signature": f"t={stamp},v1={digest}"}
        app.extensions["ptas"].hooks.signing.append(sign)


HEADERS = [
    {"name": "X-Service-Event-Id", "in": "header", "required": True, "schema": {"type": "string"},
     "description": "the event id, the same on every retry"},
    {"name": "X-Service-Signature", "in": "header", "required": True, "schema": {"type": "string"},
     "description": "t=<Unix seconds>,v1=<hex HMAC-SHA256 of '<t>.<body>' keyed by the webhook's secret>"},
]


def _signature_in_document(doc):
    for operation in operations(doc):
        for callback in (operation.get("callbacks") or {}).values():
            for item in callback.values():
                for request in item.values():
                    if isinstance(request, dict) and "parameters" in request:
                        request["parameters"] = HEADERS


notification_signature_scheme = Case(
    "notification_signature_scheme",
    "§6: 'Payload shape, headers, signature and retry behaviour of notifications: not shown': notifications are "
    "signed with X-Service-Signature (t=..., v1=hex HMAC) and X-Service-Event-Id instead of webhook-* headers",
    config=_SignedOtherwise.config, apply=_SignedOtherwise(), wrap=document(_signature_in_document))


# 7. Method and path of TriggerAccountRefresh: not shown (§4.3). POST /accounts/{id}/refreshes; the simulator's
#    /refresh is no path of this deployment. The document says so.
def _refreshes(app):
    def routed(environ, start_response):
        if path(environ, r"^/partner/v2/accounts/[^/]+/refresh$"):
            return respond(start_response, *problem("404 Not Found", "No operation has this path."))
        if path(environ, r"^/partner/v2/accounts/[^/]+/refreshes$"):
            environ = {**environ, "PATH_INFO": environ["PATH_INFO"][:-len("es")]}
        return app(environ, start_response)
    return routed


def _refreshes_in_document(doc):
    paths = doc.get("paths") or {}
    for name in [n for n in paths if re.search(r"/accounts/\{id\}/refresh$", n)]:
        paths[name + "es"] = paths.pop(name)


refresh_path_renamed = Case(
    "refresh_path_renamed",
    "§4.3: 'Method, path and payload of every operation in this list: not shown' (TriggerAccountRefresh): POST "
    "/accounts/{id}/refreshes (the document says so)",
    wrap=wraps(_refreshes, document(_refreshes_in_document)))


# 8. Other fields of the partner, user and account records: not shown (§2). This service does not show their
#    createdAt and updatedAt (tokens and transactions keep createdAt: the spec names it there). The document
#    says so.
AUDIT = ("createdAt", "updatedAt")


def _without_audit(data, environ):
    if not isinstance(data, dict):
        return
    listed = [data[k] for k in ("partners", "users", "accounts") if isinstance(data.get(k), list)]
    records = [r for rows in listed for r in rows] if listed else [data]
    for record in records:
        if isinstance(record, dict):
            for key in AUDIT:
                record.pop(key, None)


def _audit_in_document(doc):
    schemas = (doc.get("components") or {}).get("schemas", {})
    for name in ("Partner", "User", "Account", "AccountChanged"):
        schema = schemas.get(name) or {}
        for key in AUDIT:
            (schema.get("properties") or {}).pop(key, None)
        if isinstance(schema.get("required"), list):
            schema["required"] = [k for k in schema["required"] if k not in AUDIT]


records_without_audit_times = Case(
    "records_without_audit_times",
    "§2: 'Other fields of the partner record / user record / account record: not shown': partner, user and "
    "account records carry no createdAt or updatedAt (the document says so)",
    change=json_change(lambda e: path(e, r"^/partner/v2/(partners|users|accounts)(/[^/]+)?$"), _without_audit),
    wrap=document(_audit_in_document))


CASES = [value for value in list(globals().values()) if isinstance(value, Case)]
assert len(CASES) == 8, len(CASES)
