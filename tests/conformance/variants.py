"""Faithful variants: the simulator behind WSGI middlewares that each make another choice the spec allows.

Each variant changes only what the spec leaves open (a name it does not show, the shape of a payload it does
not show, how a PUT treats absent properties, ...) and says so in its own `/openapi.json`, as a real
deployment would. The `@contract` suites must pass against every one of them (test_variants.py).
"""

import copy
import io
import json
import re

from werkzeug.test import Client, run_wsgi_app

SERVICE = "/partner/v2"
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def problem(status, detail):
    body = json.dumps({"type": "about:blank", "title": detail, "status": status, "detail": detail}).encode()
    reason = {400: "Bad Request", 403: "Forbidden", 404: "Not Found"}[status]
    return f"{status} {reason}", [("Content-Type", "application/problem+json")], body


class Route:
    def __init__(self, method, template, operation):
        self.method, self.template, self.operation = method, template, operation
        self.names = re.findall(r"{(\w+)}", template)
        self.regex = re.compile("^" + re.sub(r"\\{\w+\\}", "([^/]+)", re.escape(template)) + "$")
        self.literal = template.count("{")

    def match(self, method, path):
        found = self.regex.match(path) if method == self.method else None
        return dict(zip(self.names, found.groups())) if found else None


class Variant:
    """Base: the wrapped app, its own document, hooks for the request body, the response and the document."""

    name = "variant"

    def __init__(self, app):
        self.app = app
        response = Client(app).get("/openapi.json")
        self.original = json.loads(response.get_data(as_text=True))
        response.close()
        self.routes = sorted((Route(m.upper(), p, op.get("operationId"))
                              for p, item in self.original["paths"].items() for m, op in item.items()
                              if isinstance(op, dict) and m in ("get", "put", "post", "patch", "delete")),
                             key=lambda r: r.literal)
        self.published = self.publish(copy.deepcopy(self.original))

    # -- hooks ----------------------------------------------------------------------------------------------
    def publish(self, document):
        return document

    def request(self, operation, environ, body):
        """Return the body to pass on, or a (status, headers, body) answer of the variant's own."""
        return body

    def response(self, operation, environ, status, headers, body):
        return status, headers, body

    # -- plumbing -------------------------------------------------------------------------------------------
    def route(self, environ):
        for route in self.routes:
            params = route.match(environ["REQUEST_METHOD"], environ["PATH_INFO"])
            if params is not None:
                return route.operation, params
        return None, {}

    def __call__(self, environ, start_response):
        if environ["PATH_INFO"] == "/openapi.json":
            data = json.dumps(self.published).encode()
            start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
            return [data]
        operation, params = self.route(environ)
        environ = {**environ, "ptas.params": params}
        length = int(environ.get("CONTENT_LENGTH") or 0)
        raw = environ["wsgi.input"].read(length) if length else b""
        body = json_of(raw) if raw and "json" in environ.get("CONTENT_TYPE", "") else None
        outcome = self.request(operation, environ, body) if operation else body
        if isinstance(outcome, tuple):
            return self.answer(start_response, *outcome)
        if outcome is not body:
            raw = json.dumps(outcome).encode()
        environ = {**environ, "wsgi.input": io.BytesIO(raw), "CONTENT_LENGTH": str(len(raw))}
        chunks, status, answered = run_wsgi_app(self.app, environ, buffered=True)
        data, headers = b"".join(chunks), answered.to_wsgi_list()
        if operation:
            status, headers, data = self.response(operation, environ, status, headers, data)
        return self.answer(start_response, status, headers, data)

    @staticmethod
    def answer(start_response, status, headers, data):
        headers = [(k, v) for k, v in headers if k.lower() != "content-length"]
        start_response(status, headers + [("Content-Length", str(len(data)))])
        return [data]

    def inner(self, method, path, authorization):
        """A call straight to the wrapped simulator (what the variant's own logic needs to know)."""
        response = Client(self.app).open(path, method=method, headers={"Authorization": authorization})
        try:
            return response.status_code, json_of(response.get_data())
        finally:
            response.close()


def json_of(data):
    try:
        return json.loads(data)
    except (TypeError, ValueError):
        return None


def operation_object(document, operation_id):
    for item in document["paths"].values():
        for method, op in item.items():
            if isinstance(op, dict) and op.get("operationId") == operation_id:
                return op
    raise KeyError(operation_id)


def request_schema(document, operation_id):
    op = operation_object(document, operation_id)
    schema = op["requestBody"]["content"]["application/json"]["schema"]
    while "$ref" in schema:
        target = document
        for part in schema["$ref"][2:].split("/"):
            target = target[part]
        schema = target
    return schema


def rename_properties(schema, renames):
    """Rename properties (and their `required` and conditional mentions) everywhere in a schema."""
    if isinstance(schema, dict):
        out = {}
        for key, value in schema.items():
            if key == "properties" and isinstance(value, dict):
                out[key] = {renames.get(k, k): rename_properties(v, renames) for k, v in value.items()}
            elif key == "required" and isinstance(value, list):
                out[key] = [renames.get(k, k) for k in value]
            else:
                out[key] = rename_properties(value, renames)
        return out
    if isinstance(schema, list):
        return [rename_properties(v, renames) for v in schema]
    return schema


# -- 1. PUT replaces the whole record ---------------------------------------------------------------------
class FullReplacePut(Variant):
    """PUT replaces the record, as this deployment's document says: a PUT that leaves out a property the
    record has is refused (400) rather than merged. Read-modify-write passes; a partial PUT does not."""

    name = "full-replace PUT"

    def publish(self, document):
        for item in document["paths"].values():
            put = item.get("put")
            if isinstance(put, dict) and not put.get("operationId", "").startswith("Sandbox"):
                put["description"] = (put.get("description", "") + " PUT replaces the whole record: send every "
                                      "property of the record, changed or not.").strip()
        return document

    def request(self, operation, environ, body):
        if environ["REQUEST_METHOD"] != "PUT" or operation.startswith("Sandbox") or not isinstance(body, dict):
            return body
        schema = request_schema(self.original, operation)
        status, record = self.inner("GET", environ["PATH_INFO"], environ.get("HTTP_AUTHORIZATION", ""))
        if status != 200 or not isinstance(record, dict):
            return body
        missing = sorted(k for k in schema.get("properties", {})
                         if record.get(k) is not None and k not in body)
        if missing:
            return problem(400, f"PUT replaces the record: {', '.join(missing)} missing from the body")
        return body


# -- 2. other operationIds and other request field names, published in the document --------------------
FIELD_RENAMES = {
    "CreateAccount": {"accountTypeId": "accountType", "userId": "ownerId", "credentials": "settings",
                      "name": "label"},
    "UpdateAccount": {"name": "label", "credentials": "settings"},
    "TriggerAccountRefresh": {"startDate": "fromDate"},
    "CreateAccountUiSession": {"userId": "customerId"},
    "CreateUserUiSession": {"redirectUrl": "returnUrl"},
    "CreateOauthRedirectUrl": {"accountTypeId": "accountType", "userId": "ownerId"},
    "CreatePartner": {"name": "displayName", "email": "contactEmail"},
    "UpdateChildPartner": {"name": "displayName", "email": "contactEmail"},
    "UpdatePartner": {"name": "displayName", "email": "contactEmail"},
    "CreateUser": {"name": "fullName"},
    "UpdateUser": {"name": "fullName"},
    "CreatePartnerToken": {"name": "label"},
    "CreateUserToken": {"name": "label"},
    "CreateOwnUserToken": {"name": "label"},
    "CreateWebhook": {"callbackUrl": "targetUrl", "events": "eventTypes"},
    "UpdateWebhook": {"callbackUrl": "targetUrl", "events": "eventTypes"},
    "PatchWebhook": {"callbackUrl": "targetUrl", "events": "eventTypes"},
}
# Webhook field names are not shown (spec §6): this deployment names them otherwise both ways.
WEBHOOK_RENAMES = {"callbackUrl": "targetUrl", "events": "eventTypes"}
# The spec names these only by operation (§4.3): a renamed one is found through an --operation override.
PATHLESS = ("GetUsers", "UpdateUser", "DeleteUser", "DeleteChildPartner", "GetPartners",
            "CreateAccountOauthRedirectUrl", "CreateAccount", "UpdateAccount", "DeleteAccount", "GetAccounts",
            "GetAccount", "GetAccountTypes", "GetAccountType", "TriggerAccountRefresh", "GetTransactions",
            "GetTransaction", "GetTransactionsDeprecated", "GetReport", "GetReports")


def renamed_id(operation_id):
    return "svc" + operation_id[0].upper() + operation_id[1:] + "V2"


class OtherNames(Variant):
    """Every service operation has another operationId; the request properties the spec does not show have
    other names; an accountFields element calls its credential key `key`. All of it in the document."""

    name = "other operationIds and field names"

    def publish(self, document):
        for operation, renames in FIELD_RENAMES.items():
            op = operation_object(document, operation)
            content = op["requestBody"]["content"]["application/json"]
            content["schema"] = rename_properties(request_schema(document, operation), renames)
        hook = document["components"]["schemas"].get("Webhook", {})
        hook.update(rename_properties({k: v for k, v in hook.items() if k in ("properties", "required")},
                                      WEBHOOK_RENAMES))
        field = document["components"]["schemas"].get("AccountField", {})
        field["properties"] = {("key" if k == "name" else k): v for k, v in field.get("properties", {}).items()}
        field["required"] = [("key" if k == "name" else k) for k in field.get("required", [])]
        for path, item in document["paths"].items():
            if path.startswith("/_sandbox"):
                continue
            for op in item.values():
                if isinstance(op, dict) and op.get("operationId"):
                    op["operationId"] = renamed_id(op["operationId"])
        return document

    def overrides(self):
        """The runner's --operation flags a QA engineer would pass for this deployment."""
        out = []
        for path, item in self.original["paths"].items():
            for method, op in item.items():
                if isinstance(op, dict) and op.get("operationId") in PATHLESS:
                    out.append(f"{op['operationId']}={method.upper()} {path}")
        return out

    def request(self, operation, environ, body):
        renames = FIELD_RENAMES.get(operation)
        if renames and isinstance(body, dict):
            back = {v: k for k, v in renames.items()}
            return {back.get(k, k): v for k, v in body.items()}
        return body

    def response(self, operation, environ, status, headers, data):
        if environ["PATH_INFO"].startswith(SERVICE + "/webhooks") and status.startswith("2"):
            body = json_of(data)
            records = [body] if isinstance(body, dict) else []
            records += [e for v in (body.values() if isinstance(body, dict) else []) if isinstance(v, list) for e in v]
            for record in records:
                for old, new in WEBHOOK_RENAMES.items():
                    if isinstance(record, dict) and old in record:
                        record[new] = record.pop(old)
            return status, headers, json.dumps(body).encode()
        if operation in ("GetAccountType", "GetAccountTypes"):
            body = json_of(data)
            for entry in [body] + list((body or {}).get("accountTypes", []) if isinstance(body, dict) else []):
                for field in (entry or {}).get("accountFields", []) if isinstance(entry, dict) else []:
                    if "name" in field:
                        field["key"] = field.pop("name")
            return status, headers, json.dumps(body).encode()
        return status, headers, data


# -- 3. the first user token as a bare string ------------------------------------------------------------
class StringUserToken(Variant):
    """CreateUser answers the first user token as the JWT itself (`"token": "eyJ..."`): spec §4.2 note 1 says
    the response includes the user token, not in what shape."""

    name = "first user token as a string"

    def publish(self, document):
        schema = document["components"]["schemas"].get("UserCreated", {})
        if "token" in schema.get("properties", {}):
            schema["properties"]["token"] = {"type": "string", "description": "the first user token (a JWT)"}
        return document

    def response(self, operation, environ, status, headers, data):
        body = json_of(data)
        if operation == "CreateUser" and isinstance(body, dict) and isinstance(body.get("token"), dict):
            body["token"] = body["token"].get("accessToken")
            return status, headers, json.dumps(body).encode()
        return status, headers, data


# -- 4. lists of summaries --------------------------------------------------------------------------------
SUMMARY = {"GetAccountTypes": ("id", "name"), "GetPartners": ("id", "name"), "GetAccounts": ("id", "name")}


class ListSummaries(Variant):
    """List operations answer summaries (id and name); the detail is the single-record operation's (spec §1
    capability 4 calls GetAccountType the detail)."""

    name = "list summaries"

    def response(self, operation, environ, status, headers, data):
        keep = SUMMARY.get(operation)
        body = json_of(data)
        if not keep or not isinstance(body, (dict, list)):
            return status, headers, data
        entries = body if isinstance(body, list) else next((v for v in body.values() if isinstance(v, list)), [])
        for index, entry in enumerate(entries):
            if isinstance(entry, dict):
                entries[index] = {k: v for k, v in entry.items() if k in keep}
        return status, headers, json.dumps(body).encode()


# -- 5. 400 for malformed ids -----------------------------------------------------------------------------
class MalformedIds400(Variant):
    """Ids are GUIDs; a path id that is not one is a bad request (400), before any lookup (a removed path such
    as GET /users/{name} then answers 400, not 404)."""

    name = "400 for malformed ids"

    def __call__(self, environ, start_response):
        path = environ["PATH_INFO"]
        match = re.match(r"^/partner/v2/(users|partners|accounts|dataimports|reports|webhooks|accountui|userui)"
                         r"/([^/]+)", path)
        if match and match.group(2) not in ("self", "pages") and not UUID.match(match.group(2)):
            return self.answer(start_response, *problem(400, f"{match.group(2)!r} is not an id"))
        return super().__call__(environ, start_response)


# -- 6. strict deploy tokens ------------------------------------------------------------------------------
class StrictDeployTokens(Variant):
    """A token holding only partner:create (a deploy token) creates child partners and nothing else: no tokens
    for child partners (spec §5 rule 4 read strictly; rule 7's table says partner:create may)."""

    name = "strict deploy tokens"

    def __init__(self, app):
        super().__init__(app)
        self.scopes = {}

    def response(self, operation, environ, status, headers, data):
        body = json_of(data)
        if isinstance(body, dict) and isinstance(body.get("accessToken"), str):
            self.scopes[body["accessToken"]] = body.get("scope")
        return status, headers, data

    def request(self, operation, environ, body):
        token = environ.get("HTTP_AUTHORIZATION", "").partition(" ")[2].strip()
        if operation == "CreatePartnerToken" and self.scopes.get(token) == "partner:create":
            return problem(403, "a deploy token creates child partners only")
        return body


# -- 7. no `id` where the spec shows none -----------------------------------------------------------------
ID_NAMES = {"accounts": "accountId", "partners": "partnerId", "accounttypes": "accountTypeId",
            "accountui": "sessionId", "userui": "sessionId", "dataimports": "importId", "reports": "reportRef",
            "transactions": "transactionId", "webhooks": "webhookId"}


def collection_of(path):
    parts = [p for p in path[len(SERVICE):].split("/") if p and not p.startswith("{")]
    tail = parts[-1] if parts else ""
    return tail if tail in ID_NAMES or tail in ("tokens", "self") else (parts[-2] if len(parts) > 1 else tail)


class NoIds(Variant):
    """Records the spec shows no `id` for carry their id under another name (accountId, partnerId, ...), and
    the document's path parameters say so ({accountId}); users and tokens keep `id` (spec §2)."""

    name = "no id where the spec shows none"

    def publish(self, document):
        paths = {}
        for path, item in document["paths"].items():
            renamed = path
            if path.startswith(SERVICE):
                segments = path.split("/")
                for i, segment in enumerate(segments):
                    if segment == "{id}" and segments[i - 1] in ID_NAMES:
                        segments[i] = "{" + ID_NAMES[segments[i - 1]] + "}"
                renamed = "/".join(segments)
                for op in item.values():
                    for parameter in op.get("parameters", []) if isinstance(op, dict) else []:
                        if parameter.get("in") == "path" and parameter.get("name") == "id":
                            parameter["name"] = re.findall(r"{(\w+)}", renamed)[0]
            paths[renamed] = item
        document["paths"] = paths
        for schema_name, key in (("Account", "accountId"), ("Partner", "partnerId"), ("AccountType", "accountTypeId"),
                                 ("DataImport", "importId"), ("Report", "reportRef"), ("Webhook", "webhookId"),
                                 ("Transaction", "transactionId"), ("AccountUiSession", "sessionId"),
                                 ("UserUiSession", "sessionId")):
            schema = document["components"]["schemas"].get(schema_name)
            if schema and "id" in schema.get("properties", {}):
                schema["properties"][key] = schema["properties"].pop("id")
                schema["required"] = [key if r == "id" else r for r in schema.get("required", [])]
        return document

    def response(self, operation, environ, status, headers, data):
        route = next((r for r in self.routes if r.operation == operation), None)
        key = ID_NAMES.get(collection_of(route.template)) if route and route.template.startswith(SERVICE) else None
        body = json_of(data)
        if not key or not isinstance(body, (dict, list)) or not status.startswith("2"):
            return status, headers, data
        entries = [body] if isinstance(body, dict) else []
        lists = body if isinstance(body, list) else next((v for v in body.values() if isinstance(v, list)), None)
        entries += [e for e in lists or [] if isinstance(e, dict)]
        for entry in entries:
            if "id" in entry and not ("accessToken" in entry or "expiresIn" in entry):
                entry[key] = entry.pop("id")
        return status, headers, json.dumps(body).encode()


# -- 8. a deployment: no control API ----------------------------------------------------------------------
class HiddenSandbox(Variant):
    """What a deployment looks like to the harness: `/_sandbox` is not there, nor in the document."""

    name = "control API hidden"

    def publish(self, document):
        document["paths"] = {p: i for p, i in document["paths"].items() if not p.startswith("/_sandbox")}
        return document

    def __call__(self, environ, start_response):
        if environ["PATH_INFO"].startswith("/_sandbox"):
            return self.answer(start_response, *problem(404, "no such path"))
        return super().__call__(environ, start_response)


def stack(app, *layers):
    """Wrap `app` in several variants (the last one outermost)."""
    for layer in layers:
        app = layer(app)
    return app


VARIANTS = (FullReplacePut, OtherNames, StringUserToken, ListSummaries, MalformedIds400, StrictDeployTokens, NoIds)
