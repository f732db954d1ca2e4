"""Blind variants (issue 37): faithful deployments of the Payment Transactions Aggregation Service, each making
ONE choice the spec leaves open, other than the choices of tests/conformance/variants.py and
tests/profiles/variants.py. Each publishes its choice in its own /openapi.json, as a real deployment's document
would, and changes nothing the spec states.

Written without reading the profile learner or the profile layer.
"""

import json
import time
from email.utils import formatdate
from http import HTTPStatus
from urllib.parse import parse_qsl, urlencode

from tests.conformance.variants import SERVICE, Variant, json_of, operation_object

SIM_TYPE = "urn:ptas-sandbox:problem:"


def status_line(code):
    return f"{code} {HTTPStatus(code).phrase}"


def code_of(status):
    return int(status.split(" ", 1)[0])


def header(headers, name):
    return next((v for k, v in headers if k.lower() == name.lower()), None)


def without(headers, *names):
    lowered = {n.lower() for n in names}
    return [(k, v) for k, v in headers if k.lower() not in lowered]


def is_problem(headers):
    return "problem" in (header(headers, "Content-Type") or "")


def describe(document, operation_id, text):
    op = operation_object(document, operation_id)
    op["description"] = (op.get("description", "") + " " + text).strip()
    return op


def list_key(document, component):
    schema = document["components"]["schemas"].get(component, {})
    return next(iter(schema.get("properties", {})), None)


# -- 1. lists sorted by name ---------------------------------------------------------------------------------
NAMED_LISTS = ("GetUsers", "GetPartners", "GetAccounts")


class SortedByName(Variant):
    """Lists of users, child partners and accounts come sorted by name (case-insensitive, then id), not in
    creation order. Spec: the order of GetUsers / GetPartners / GetAccounts is not shown (§4.3, payloads not
    shown)."""

    name = "lists sorted by name"

    def publish(self, document):
        for op in NAMED_LISTS:
            describe(document, op, "Entries are sorted by name, case-insensitively.")
        return document

    def response(self, operation, environ, status, headers, data):
        body = json_of(data)
        if operation in NAMED_LISTS and status.startswith("200") and isinstance(body, dict):
            for key, value in body.items():
                if isinstance(value, list):
                    body[key] = sorted(value, key=lambda e: (str((e or {}).get("name") or "").lower(),
                                                             str((e or {}).get("id"))))
            return status, headers, json.dumps(body).encode()
        return status, headers, data


# -- 2. lists wrapped with a count ---------------------------------------------------------------------------
COUNTED = {"GetUsers": "UserList", "GetWebhooks": "WebhookList", "GetPartners": "PartnerList",
           "GetAccounts": "AccountList"}


class CountedLists(Variant):
    """Lists whose payload the spec does not show carry `count` (the number of entries) beside their array. The
    token list keeps spec §2's one field, `tokens`."""

    name = "lists with a count"

    def publish(self, document):
        for component in COUNTED.values():
            schema = document["components"]["schemas"].get(component)
            if schema:
                schema["properties"]["count"] = {"type": "integer", "minimum": 0,
                                                 "description": "the number of entries"}
                schema["required"] = list(schema.get("required", [])) + ["count"]
        return document

    def response(self, operation, environ, status, headers, data):
        body = json_of(data)
        if operation in COUNTED and status.startswith("200") and isinstance(body, dict):
            entries = next((v for v in body.values() if isinstance(v, list)), [])
            body["count"] = len(entries)
            return status, headers, json.dumps(body).encode()
        return status, headers, data


# -- 3. revocations answer 204 -------------------------------------------------------------------------------
REVOKES = ("RevokePartnerOwnToken", "RevokePartnerToken")


class Revoke204(Variant):
    """Revoking a token answers 204 No Content (spec §4.1: the revocation's body is not shown)."""

    name = "revocations answer 204"

    def publish(self, document):
        for name in REVOKES:
            op = operation_object(document, name)
            ok = op["responses"].pop("200", None)
            op["responses"]["204"] = {"description": "revoked" if not ok else "revoked; no content"}
        return document

    def response(self, operation, environ, status, headers, data):
        if operation in REVOKES and status.startswith("200"):
            return status_line(204), without(headers, "Content-Type"), b""
        return status, headers, data


# -- 4. test events answer 204 -------------------------------------------------------------------------------
class TestEvents204(Variant):
    """The test-event endpoints (POST /testevents/...) answer 204 No Content once the test notification is queued
    (spec §4.2 / §6: their response is not shown)."""

    name = "test events answer 204"

    def ops(self, document):
        return [op for path, item in document["paths"].items() if path.startswith(SERVICE + "/testevents/")
                for op in item.values() if isinstance(op, dict) and op.get("operationId")]

    def publish(self, document):
        for op in self.ops(document):
            for code in ("200", "201", "202"):
                op["responses"].pop(code, None)
            op["responses"]["204"] = {"description": "the test notification is queued"}
        return document

    def response(self, operation, environ, status, headers, data):
        if environ["PATH_INFO"].startswith(SERVICE + "/testevents/") and status[:1] == "2":
            return status_line(204), without(headers, "Content-Type"), b""
        return status, headers, data


# -- 5. Retry-After as an HTTP date --------------------------------------------------------------------------
class RetryAfterDate(Variant):
    """A 429 says when to come back as an HTTP-date in Retry-After (RFC 9110 §10.2.3 allows either form), not as
    seconds. Spec §7/§8: the response when a rate limit is exceeded is not shown. `config`: a per-operation limit
    low enough for a probe to meet, the same in the deployment, the profiled and the plain simulator."""

    name = "Retry-After as an HTTP date"
    config = {"OPERATION_LIMITS": {"GetTransactions": (9, 60)}}

    def publish(self, document):
        for item in document["paths"].values():
            for op in item.values():
                if isinstance(op, dict) and "429" in op.get("responses", {}):
                    response = op["responses"]["429"]
                    response.setdefault("headers", {})["Retry-After"] = {
                        "description": "when to retry, as an HTTP-date (IMF-fixdate)",
                        "schema": {"type": "string", "format": "http-date"}}
        return document

    def response(self, operation, environ, status, headers, data):
        wait = header(headers, "Retry-After")
        if status.startswith("429") and wait and wait.strip().isdigit():
            when = formatdate(time.time() + int(wait), usegmt=True)
            return status, without(headers, "Retry-After") + [("Retry-After", when)], data
        return status, headers, data


# -- 6. about:blank problems titled with the HTTP reason ----------------------------------------------------
class AboutBlankProblems(Variant):
    """ProblemDetails use RFC 9457's default: type `about:blank` and, as that RFC asks for it, the title is the
    HTTP reason phrase of the status (`Not Found`, `Unauthorized`, ...). Spec §7: ProblemDetails fields not
    shown."""

    name = "about:blank problems titled with the reason"

    def publish(self, document):
        schema = document["components"]["schemas"].get("ProblemDetails")
        if schema:
            schema["description"] = "RFC 9457: type is always about:blank; title is the HTTP reason phrase."
            schema.setdefault("properties", {}).setdefault("type", {})["default"] = "about:blank"
            schema["properties"]["type"]["enum"] = ["about:blank"]
        return document

    def response(self, operation, environ, status, headers, data):
        body = json_of(data)
        if is_problem(headers) and isinstance(body, dict):
            body["type"] = "about:blank"
            body["title"] = HTTPStatus(code_of(status)).phrase
            return status, headers, json.dumps(body).encode()
        return status, headers, data

    def __call__(self, environ, start_response):
        # also problems of routes the variant does not know (401 on an unknown operation, 404 paths)
        return super().__call__(environ, start_response)


# -- 7. 422 for a body that is not JSON ---------------------------------------------------------------------
class NotJson422(Variant):
    """A request body that cannot be parsed as JSON is 422 Unprocessable Content; a JSON body that breaks the
    schema stays 400. Spec: the list of error codes is not shown (§7)."""

    name = "422 for a non-JSON body"

    def publish(self, document):
        for item in document["paths"].values():
            for op in item.values():
                if isinstance(op, dict) and "requestBody" in op and op.get("operationId", "")[:7] != "Sandbox":
                    op["responses"]["422"] = {"description": "the body is not JSON",
                                              "content": {"application/problem+json": {
                                                  "schema": {"$ref": "#/components/schemas/ProblemDetails"}}}}
        return document

    def response(self, operation, environ, status, headers, data):
        body = json_of(data)
        if (status.startswith("400") and isinstance(body, dict) and body.get("type") == SIM_TYPE + "invalid-body"
                and "not valid JSON" in str(body.get("detail"))):
            body["status"] = 422
            return status_line(422), headers, json.dumps(body).encode()
        return status, headers, data


# -- 8. the page-size parameter is called `limit` ------------------------------------------------------------
PAGED = ("GetTransactions", "GetTransactionsDeprecated")


class LimitParameter(Variant):
    """The page size of GetTransactions is the query parameter `limit` (spec §4.3 names pageReference only; page
    sizes are not shown, §8). `pageSize` is not a parameter of this deployment: like any unknown parameter it
    is ignored."""

    name = "page size named limit"

    def publish(self, document):
        for name in PAGED:
            for parameter in operation_object(document, name).get("parameters", []):
                if parameter.get("in") == "query" and parameter.get("name") == "pageSize":
                    parameter["name"] = "limit"
        return document

    def request(self, operation, environ, body):
        if operation in PAGED:
            query = [(k, v) for k, v in parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)
                     if k != "pageSize"]
            environ["QUERY_STRING"] = urlencode([("pageSize" if k == "limit" else k, v) for k, v in query])
        return body


# -- 9. prefixed page references -----------------------------------------------------------------------------
class DirectedReferences(Variant):
    """Page references carry a prefix saying their direction: `next.` for nextPageReference, `prev.` for
    previousPageReference, before an opaque rest. A reference without one of those prefixes is invalid (spec
    §4.3: the form of page references is not shown)."""

    name = "page references prefixed next./prev."
    PREFIXES = {"nextPageReference": "next.", "previousPageReference": "prev."}

    def publish(self, document):
        describe(document, "GetTransactions", "Page references start with `next.` or `prev.`.")
        return document

    def request(self, operation, environ, body):
        if operation != "GetTransactions":
            return body
        query = parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)
        out = []
        for k, v in query:
            if k == "pageReference":
                prefix = next((p for p in self.PREFIXES.values() if v.startswith(p)), None)
                v = v[len(prefix):] if prefix else "~" + v          # the simulator refuses it as invalid
            out.append((k, v))
        environ["QUERY_STRING"] = urlencode(out)
        return body

    def response(self, operation, environ, status, headers, data):
        body = json_of(data)
        if operation != "GetTransactions" or not status.startswith("200") or not isinstance(body, dict):
            return status, headers, data
        for field, prefix in self.PREFIXES.items():
            if body.get(field):
                body[field] = prefix + str(body[field])
        return status, headers, json.dumps(body).encode()


# -- 10. problems served as application/json ------------------------------------------------------------------
class PlainJsonProblems(Variant):
    """ProblemDetails bodies are served with Content-Type application/json (the members are RFC 9457's; spec §7
    requires a ProblemDetails body for 401 and 403 but shows neither its fields nor its media type)."""

    name = "problems as application/json"

    def publish(self, document):
        for item in document["paths"].values():
            for op in item.values():
                for response in (op.get("responses", {}).values() if isinstance(op, dict) else []):
                    content = response.get("content") if isinstance(response, dict) else None
                    if content and "application/problem+json" in content:
                        content["application/json"] = content.pop("application/problem+json")
        for response in document.get("components", {}).get("responses", {}).values():
            content = response.get("content", {})
            if "application/problem+json" in content:
                content["application/json"] = content.pop("application/problem+json")
        return document

    def __call__(self, environ, start_response):
        def start(status, headers, exc_info=None):
            if is_problem(headers):
                headers = without(headers, "Content-Type") + [("Content-Type", "application/json")]
            return start_response(status, headers, exc_info) if exc_info else start_response(status, headers)
        return super().__call__(environ, start)


# -- 11. creates answer a Location header --------------------------------------------------------------------
class CreatedLocation(Variant):
    """A 201 from a create names the new record in a Location header (its path under /partner/v2, as the
    document's path of the record's read operation), as RFC 9110 §15.3.2 suggests. The spec shows no headers of
    create responses."""

    name = "creates answer Location"
    CREATES = {"CreateUser": "/users/", "CreatePartner": "/partners/", "CreateWebhook": "/webhooks/",
               "CreateAccount": "/accounts/", "CreateAccountUiSession": "/accountui/",
               "CreateUserUiSession": "/userui/"}

    def publish(self, document):
        for name in self.CREATES:
            op = operation_object(document, name)
            created = op["responses"].get("201")
            if isinstance(created, dict):
                created.setdefault("headers", {})["Location"] = {
                    "description": "the address of the new record", "schema": {"type": "string"}}
        return document

    def response(self, operation, environ, status, headers, data):
        body = json_of(data)
        where = self.CREATES.get(operation)
        if where and status.startswith("201") and isinstance(body, dict) and body.get("id"):
            return status, without(headers, "Location") + [("Location", SERVICE + where + str(body["id"]))], data
        return status, headers, data


# -- 12. PUT on a user clears what it leaves out --------------------------------------------------------------
class PutClearsAbsent(Variant):
    """UpdateUser is a replacement: a property left out of the PUT body (email, the one optional property) is
    cleared (null), not kept. Partial bodies are accepted (no 400). Spec: the user record beyond id, email,
    name is not shown and UpdateUser's payload is not shown (§4.3)."""

    name = "PUT /users clears absent email"

    def publish(self, document):
        describe(document, "UpdateUser", "PUT replaces the user: an optional property left out (email) is cleared.")
        return document

    def request(self, operation, environ, body):
        if operation == "UpdateUser" and isinstance(body, dict) and "email" not in body:
            return {**body, "email": None}
        return body


# -- 13. page sizes capped at 100 -----------------------------------------------------------------------------
class PageSizeMax100(Variant):
    """The largest page of transactions is 100 entries: a page size above 100 is a 400 (spec §8: maximum page
    sizes not shown). The document says maximum 100."""

    name = "page size at most 100"

    def publish(self, document):
        for name in PAGED:
            for parameter in operation_object(document, name).get("parameters", []):
                if parameter.get("in") == "query" and parameter.get("name") == "pageSize":
                    parameter.setdefault("schema", {})["maximum"] = 100
        return document

    def request(self, operation, environ, body):
        if operation in PAGED:
            query = parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)
            size = dict(query).get("pageSize", "")
            if size.isdigit() and int(size) > 100:
                # refused as the deployment refuses any bad page size: the simulator's own 400 for one
                environ["QUERY_STRING"] = urlencode([(k, "0" if k == "pageSize" else v) for k, v in query])
        return body


# -- 14. GetUsers' name filter ignores case -------------------------------------------------------------------
class NameFilterIgnoresCase(Variant):
    """GetUsers' `name` parameter matches the whole name ignoring case (`name=ALICE` finds "alice"); spec §4.3
    names the parameter, not how it matches."""

    name = "GetUsers name= ignores case"

    def publish(self, document):
        for parameter in operation_object(document, "GetUsers").get("parameters", []):
            if parameter.get("name") == "name":
                parameter["description"] = "the whole name, matched ignoring case"
        return document

    def request(self, operation, environ, body):
        if operation == "GetUsers":
            query = parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)
            wanted = dict(query).get("name")
            if wanted is not None:
                environ["ptas.name"] = wanted
                environ["QUERY_STRING"] = urlencode([("search" if k == "name" else k, v) for k, v in query])
        return body

    def response(self, operation, environ, status, headers, data):
        wanted = environ.get("ptas.name")
        body = json_of(data)
        if operation == "GetUsers" and wanted is not None and status.startswith("200") and isinstance(body, dict):
            for key, value in body.items():
                if isinstance(value, list):
                    body[key] = [e for e in value if str((e or {}).get("name", "")).lower() == wanted.lower()]
            return status, headers, json.dumps(body).encode()
        return status, headers, data


BLIND = (SortedByName, CountedLists, Revoke204, TestEvents204, RetryAfterDate, AboutBlankProblems, NotJson422,
         LimitParameter, DirectedReferences, PlainJsonProblems, CreatedLocation, PutClearsAbsent, PageSizeMax100,
         NameFilterIgnoresCase)
