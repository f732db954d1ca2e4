"""Blind variants, second round: faithful deployments of the Payment Transactions Aggregation Service, each making
ONE choice the spec leaves open, other than the choices of tests/conformance/variants.py, tests/conformance/
dialects.py, tests/profiles/variants.py and tests/profiles/blind_variants.py. Each publishes its choice in its own
/openapi.json, as a real deployment's document would, and changes nothing the spec states.

Written without reading the profile learner or the profile layer. The probe that shows every choice here is
tests/profiles/blind_probe_b.py.
"""

import hashlib
import hmac
import json
import secrets
from urllib.parse import parse_qsl, urlencode

from werkzeug.test import Client

from tests.conformance.variants import SERVICE, Variant, json_of, operation_object
from tests.profiles.blind_variants import SIM_TYPE, describe, header, is_problem, status_line, without

PAGED = ("GetTransactions", "GetTransactionsDeprecated")
TRANSACTION_READS = PAGED + ("GetTransaction",)
REVOKES = ("RevokePartnerOwnToken", "RevokePartnerToken")
TOKEN_OPERATIONS = ("GetOwnPartnerTokens", "CreateOwnPartnerToken", "RevokePartnerOwnToken", "GetPartnerTokens",
                    "CreatePartnerToken", "RevokePartnerToken", "CreateUserToken", "CreateOwnUserToken")


def service_operations(document):
    """(path, operation object) of every operation of the service (not the sandbox's own)."""
    return [(path, op) for path, item in document["paths"].items() if path.startswith(SERVICE)
            for op in item.values() if isinstance(op, dict) and op.get("operationId")]


def query_of(environ):
    return parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)


def problem_answer(code, kind, title, detail, instance):
    """A ProblemDetails answer with the members the deployment's other problems have."""
    body = {"type": SIM_TYPE + kind, "title": title, "status": code, "detail": detail, "instance": instance,
            "traceId": secrets.token_hex(8)}
    return status_line(code), [("Content-Type", "application/problem+json")], json.dumps(body).encode()


# -- 1. transactions newest first ---------------------------------------------------------------------------
class NewestTransactionsFirst(Variant):
    """GetTransactions pages the transactions newest first: the first page holds the newest, nextPageReference
    leads to older ones, previousPageReference back to newer ones. Spec §1/§4.3: GetTransactions "returns all
    transactions downloaded so far" in pages; their order is not shown. References stay opaque keyset cursors
    bound to the account and the search (a reference of another search is refused as any bad reference is)."""

    name = "transactions newest first"
    DEFAULT = 100       # the deployment's default page size, as the simulator's
    MOST = 1000         # the largest page size it serves

    def __init__(self, app):
        self.key = secrets.token_bytes(16)
        super().__init__(app)

    def publish(self, document):
        for name in PAGED:
            describe(document, name, "Transactions come newest first: nextPageReference leads to older "
                                     "transactions, previousPageReference to newer ones.")
        return document

    # references: hex(JSON [direction, createdAt, id, search]) "." signature
    def make(self, direction, key, search):
        payload = json.dumps([direction, key[0], key[1], search]).encode().hex()
        return payload + "." + hmac.new(self.key, payload.encode(), hashlib.sha256).hexdigest()[:20]

    def read(self, reference, search):
        payload, _, signature = reference.partition(".")
        good = hmac.new(self.key, payload.encode(), hashlib.sha256).hexdigest()[:20]
        if not signature or not hmac.compare_digest(signature, good):
            return None
        try:
            direction, created, ident, bound = json.loads(bytes.fromhex(payload))
        except ValueError:
            return None
        return (direction, (created, ident)) if bound == search else None

    def request(self, operation, environ, body):
        if operation not in PAGED:
            return body
        query = query_of(environ)
        values = dict(query)
        size = values.get("pageSize")
        rest = [(k, v) for k, v in query if k not in ("pageReference", "pageSize")]
        if size is not None and not (size.isdigit() and 1 <= int(size) <= self.MOST):
            environ["QUERY_STRING"] = urlencode(rest + [("pageSize", size)])      # the simulator's own 400
            return body
        search = [environ["PATH_INFO"], values.get("createdAt"), values.get("reportId")]
        position = None
        if "pageReference" in values:
            position = self.read(values["pageReference"], search)
            if position is None:        # refused as the simulator refuses a reference it never gave
                environ["QUERY_STRING"] = urlencode(rest + [("pageReference", "~" + values["pageReference"])])
                return body
        environ["QUERY_STRING"] = urlencode(rest + [("pageSize", str(self.MOST))])
        environ["ptas.newest"] = (int(size) if size else self.DEFAULT, position, search, urlencode(rest))
        return body

    def more(self, environ, query, reference):
        response = Client(self.app).open(environ["PATH_INFO"], method="GET",
                                         query_string=query + "&" + urlencode([("pageSize", str(self.MOST)),
                                                                               ("pageReference", reference)]),
                                         headers={"Authorization": environ.get("HTTP_AUTHORIZATION", "")})
        try:
            return json_of(response.get_data()) if response.status_code == 200 else None
        finally:
            response.close()

    def response(self, operation, environ, status, headers, data):
        state = environ.get("ptas.newest")
        body = json_of(data)
        if state is None or not status.startswith("200") or not isinstance(body, dict):
            return status, headers, data
        size, position, search, rest = state
        entries = list(body.get("transactions") or [])
        reference = body.get("nextPageReference")
        while reference:
            page = self.more(environ, rest, reference)
            if not isinstance(page, dict):
                break
            entries += page.get("transactions") or []
            reference = page.get("nextPageReference")
        entries.sort(key=lambda e: (e["createdAt"], e["id"]), reverse=True)
        keys = [(e["createdAt"], e["id"]) for e in entries]
        if position is None:
            start = 0
            end = min(len(keys), size)
        elif position[0] == "older":        # the page just after (older than) the entry named
            start = sum(1 for k in keys if k >= tuple(position[1]))
            end = min(len(keys), start + size)
        else:                               # the page just before (newer than) the entry named
            end = sum(1 for k in keys if k > tuple(position[1]))
            start = max(0, end - size)
        page = entries[start:end]
        body["transactions"] = page
        body["previousPageReference"] = self.make("newer", keys[start], search) if page and start > 0 else None
        body["nextPageReference"] = self.make("older", keys[end - 1], search) if page and end < len(keys) else None
        return status, headers, json.dumps(body).encode()


# -- 2. null members the spec does not name are left out ---------------------------------------------------
# Members spec §2-§4 names (kept, null or not): the token record's, the account's statistics, the account type's
# and the transaction's named fields, the page references, the partner's e-mail address.
NAMED = frozenset(("id", "createdAt", "deletedAt", "errors", "warnings", "warningDetails", "statistics", "count",
                   "first", "last", "accountFields", "transactionFields", "isDeprecated", "deprecationReason",
                   "helpUrls", "hasPspReports", "state", "orderNumber", "bookingText", "classification",
                   "transactionType", "shopper", "reportId", "fields", "previousPageReference", "nextPageReference",
                   "redirectUrls", "uiSettings", "userTokenExpirySeconds", "accountTypeIds", "authReference"))
PARTNER_OPERATIONS = ("GetOwnPartner", "UpdatePartner", "CreatePartner", "GetPartner", "GetPartners",
                      "UpdateChildPartner")


def without_nulls(value, keep):
    if isinstance(value, dict):
        return {k: without_nulls(v, keep) for k, v in value.items() if v is not None or k in keep}
    if isinstance(value, list):
        return [without_nulls(v, keep) for v in value]
    return value


def not_nullable(schema, keep):
    """A schema's properties that may be null become optional and non-null (except those in `keep`)."""
    if isinstance(schema, list):
        for each in schema:
            not_nullable(each, keep)
        return
    if not isinstance(schema, dict):
        return
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for name, prop in properties.items():
            kinds = prop.get("type") if isinstance(prop, dict) else None
            if isinstance(kinds, list) and "null" in kinds and name not in keep:
                rest = [k for k in kinds if k != "null"]
                prop["type"] = rest[0] if len(rest) == 1 else rest
                if isinstance(schema.get("required"), list):
                    schema["required"] = [r for r in schema["required"] if r != name]
    for key, value in schema.items():
        if key != "required":
            not_nullable(value, keep)


class OmitNulls(Variant):
    """Response bodies leave out members whose value is null when the spec does not name the member (a serializer
    told to skip nulls, with the spec's fields marked to be written always): a webhook without a name has no
    `name` member, a user without an e-mail (spec §4.2 note 1: an "optional email") no `email`, a transaction
    field without a mapping no `mappedTo`. Members the spec names keep their nulls: the token record (§2), the
    partner's e-mail address, the account's statistics, the account type's and the transaction's named fields
    and both page references (§4.3: the response carries them). Spec §2: the other fields are not shown; §9 rule
    2. The test-event answers echo the notification as it is sent (its payload is not shown, §6)."""

    name = "null members the spec does not name left out"

    def publish(self, document):
        schemas = document["components"]["schemas"]
        for name, schema in schemas.items():
            if name in ("Token", "TokenList", "UserCreated", "Notification", "ProblemDetails"):
                continue
            not_nullable(schema, NAMED | ({"email"} if name in ("Partner", "PartnerList") else set()))
        return document

    def response(self, operation, environ, status, headers, data):
        if (operation in TOKEN_OPERATIONS or environ["PATH_INFO"].startswith(SERVICE + "/testevents/")
                or "json" not in (header(headers, "Content-Type") or "") or is_problem(headers)):
            return status, headers, data
        body = json_of(data)
        if not isinstance(body, (dict, list)):
            return status, headers, data
        keep = NAMED | ({"email"} if operation in PARTNER_OPERATIONS else set())
        token = body.pop("token", None) if operation == "CreateUser" and isinstance(body, dict) else None
        body = without_nulls(body, keep)
        if token is not None:
            body["token"] = token
        return status, headers, json.dumps(body).encode()


# -- 3. every answer states the rate-limit policy --------------------------------------------------------------
class RateLimitPolicyHeader(Variant):
    """Every answer of the service carries `RateLimit-Policy: 100;w=60` (draft-ietf-httpapi-ratelimit-headers):
    the global limit of spec §8, stated on each response. Spec: no response headers are shown, and the response
    when a limit is exceeded is not shown (§7)."""

    name = "RateLimit-Policy on every answer"
    POLICY = "100;w=60"

    def publish(self, document):
        for _, op in service_operations(document):
            for response in op.get("responses", {}).values():
                if isinstance(response, dict):
                    response.setdefault("headers", {})["RateLimit-Policy"] = {
                        "description": "the global rate limit: 100 requests per 60 seconds",
                        "schema": {"type": "string", "example": self.POLICY}}
        return document

    def __call__(self, environ, start_response):
        def start(status, headers, exc_info=None):
            if environ.get("PATH_INFO", "").startswith(SERVICE + "/"):
                headers = without(headers, "RateLimit-Policy") + [("RateLimit-Policy", self.POLICY)]
            return start_response(status, headers, exc_info) if exc_info else start_response(status, headers)
        return super().__call__(environ, start)


# -- 4. deleting a user is accepted, not done --------------------------------------------------------------
class DeleteUserAccepted(Variant):
    """DeleteUser answers 202 Accepted without a body: the user is marked deleted at once (GetUsers shows its
    deletedAt) and its accounts and their data are removed in the background. Spec §4.3 names DeleteUser without
    its status or payload."""

    name = "DeleteUser answers 202"

    def publish(self, document):
        op = operation_object(document, "DeleteUser")
        op["responses"].pop("204", None)
        op["responses"]["202"] = {"description": "the user is deleted; its accounts go in the background"}
        return document

    def response(self, operation, environ, status, headers, data):
        if operation == "DeleteUser" and status.startswith("204"):
            return status_line(202), without(headers, "Content-Type"), b""
        return status, headers, data


# -- 5. amounts as decimal strings ----------------------------------------------------------------------------
class DecimalStringAmounts(Variant):
    """A transaction's `amount` is a decimal string with the currency's two minor digits ("1317.50"), never a JSON
    number (no binary floating point for money). Spec §2: the transaction fields beyond those named are not
    shown; `amount` is not named."""

    name = "amounts as decimal strings"

    def publish(self, document):
        schema = document["components"]["schemas"]["Transaction"]
        schema["properties"]["amount"] = {"type": "string", "format": "decimal", "pattern": r"^-?[0-9]+\.[0-9]{2}$",
                                          "description": "the amount in the currency, two decimals"}
        return document

    @staticmethod
    def written(entry):
        if isinstance(entry, dict) and isinstance(entry.get("amount"), (int, float)) \
                and not isinstance(entry["amount"], bool):
            entry["amount"] = f"{entry['amount']:.2f}"
        return entry

    def response(self, operation, environ, status, headers, data):
        body = json_of(data)
        if operation not in TRANSACTION_READS or not status.startswith("200") or not isinstance(body, dict):
            return status, headers, data
        if operation == "GetTransaction":
            body = self.written(body)
        else:
            body["transactions"] = [self.written(e) for e in body.get("transactions") or []]
        return status, headers, json.dumps(body).encode()


# -- 6. GetTransactions has its own rate limit -------------------------------------------------------------
class TransactionsOwnLimit(Variant):
    """GetTransactions has an additional limit of its own: 10 requests per 60 seconds (per world, on its clock),
    beside the global 100 per 60 s; the 11th in a window is a 429 with Retry-After, as the global limit's. Spec
    §8: "Additional rate limits apply to some methods; their values: not shown." The deployment runs the
    simulator with that operation limit (its own configuration, not the profiled simulator's)."""

    name = "GetTransactions limited to 10 per minute"
    LIMIT = (10, 60)

    def __init__(self, app):
        super().__init__(app)
        app.extensions["ptas"].limiter.per_operation["GetTransactions"] = self.LIMIT

    def publish(self, document):
        op = describe(document, "GetTransactions", "At most 10 requests per 60 seconds (beside the global "
                                                   "limit); more answer 429 with Retry-After.")
        op["x-rate-limit"] = {"limit": self.LIMIT[0], "windowSeconds": self.LIMIT[1]}
        return document


# -- 7. removed paths answer 410 ------------------------------------------------------------------------------
class RemovedPathsGone(Variant):
    """The paths spec §4.2 note 6 says are removed (GET /users/{id}/token, PATCH /partners, the old test paths under
    /webhooks) answer 410 Gone, with the same ProblemDetails, rather than 404: the spec says they are removed,
    not with which status. (GET and DELETE /users/{name} stay 404: a name is looked up as an id.)"""

    name = "removed paths answer 410"

    def publish(self, document):
        document["info"]["description"] = (document["info"].get("description", "") + " Paths removed from the "
                                           "interface answer 410 Gone.").strip()
        return document

    def __call__(self, environ, start_response):
        seen = {}

        def start(status, headers, exc_info=None):
            seen["status"], seen["headers"] = status, headers
            return lambda chunk: None
        data = b"".join(super().__call__(environ, start))
        status, headers = seen["status"], seen["headers"]
        body = json_of(data)
        if (status.startswith("404") and isinstance(body, dict) and is_problem(headers)
                and str(body.get("type", "")).endswith(":removed")):
            body["status"] = 410
            status, data = status_line(410), json.dumps(body).encode()
        return self.answer(start_response, status, headers, data)


# -- 8. page sizes above 250 are served as 250 ---------------------------------------------------------------
class PageSizeClamped(Variant):
    """A page holds at most 250 transactions: a larger pageSize is served as 250 (clamped, not refused); the default
    stays 100. Spec §8: page sizes are not shown."""

    name = "page size clamped to 250"
    MOST = 250

    def publish(self, document):
        for name in PAGED:
            for parameter in operation_object(document, name).get("parameters", []):
                if parameter.get("in") == "query" and parameter.get("name") == "pageSize":
                    schema = parameter.setdefault("schema", {})
                    schema.pop("maximum", None)
                    schema["description"] = "default 100; at most 250 are served, a larger value is served as 250"
        return document

    def request(self, operation, environ, body):
        if operation in PAGED:
            query = query_of(environ)
            size = dict(query).get("pageSize", "")
            if size.isdigit() and int(size) > self.MOST:
                environ["QUERY_STRING"] = urlencode([(k, str(self.MOST) if k == "pageSize" else v)
                                                     for k, v in query])
        return body


# -- 9. validation errors keyed by member -------------------------------------------------------------------
def member_path(pointer):
    """A JSON pointer as a member path: /redirectUrls/0 -> redirectUrls[0], /uiSettings/styling -> uiSettings.styling;
    the body itself is `$`."""
    out = ""
    for part in [p.replace("~1", "/").replace("~0", "~") for p in str(pointer or "").split("/")[1:]]:
        out += f"[{part}]" if part.isdigit() else ("." if out else "") + part
    return out or "$"


class ValidationErrorsByMember(Variant):
    """The 400 for a body that breaks the schema lists its errors as ASP.NET Core's ValidationProblemDetails does:
    `errors` is an object whose keys are the members at fault (`name`, `redirectUrls[0]`, `$` for the body) and
    whose values are arrays of messages. Spec §7: the fields of the ProblemDetails body are not shown."""

    name = "validation errors keyed by member"

    def publish(self, document):
        schema = document["components"]["schemas"].get("ProblemDetails")
        if schema is not None:
            schema.setdefault("properties", {})["errors"] = {
                "type": "object", "description": "validation errors: member path -> messages",
                "additionalProperties": {"type": "array", "items": {"type": "string"}}}
        return document

    def response(self, operation, environ, status, headers, data):
        body = json_of(data)
        if not (status.startswith("400") and is_problem(headers) and isinstance(body, dict)
                and isinstance(body.get("errors"), list)):
            return status, headers, data
        errors = {}
        for error in body["errors"]:
            if isinstance(error, dict):
                errors.setdefault(member_path(error.get("pointer")), []).append(str(error.get("detail", "")))
        body["errors"] = errors
        return status, headers, json.dumps(body).encode()


# -- 10. revoking a revoked token is a conflict --------------------------------------------------------------
class RevokeTwice409(Variant):
    """Revoking a token that is already revoked is a 409 Conflict (a ProblemDetails), not a second 200: spec §3's
    revocation moves a *valid* token to revoked; what a DELETE of a revoked token answers is not shown."""

    name = "revoking a revoked token is 409"

    def __init__(self, app):
        self.revoked = set()        # (token id, revokedAt) of the revocations answered
        super().__init__(app)

    def publish(self, document):
        for name in REVOKES:
            op = describe(document, name, "A token already revoked cannot be revoked again (409).")
            op["responses"]["409"] = {"description": "the token is already revoked", "content": {
                "application/problem+json": {"schema": {"$ref": "#/components/schemas/ProblemDetails"}}}}
        return document

    def response(self, operation, environ, status, headers, data):
        body = json_of(data)
        if operation not in REVOKES or not status.startswith("200") or not isinstance(body, dict):
            return status, headers, data
        key = (body.get("id"), body.get("revokedAt"))
        if key in self.revoked:
            return problem_answer(409, "conflict", "Conflict with the current state",
                                  f"The token {body.get('id')!r} was revoked already (at {body.get('revokedAt')}).",
                                  environ["PATH_INFO"])
        self.revoked.add(key)
        return status, headers, data


BLIND = (NewestTransactionsFirst, OmitNulls, RateLimitPolicyHeader, DeleteUserAccepted, DecimalStringAmounts,
         TransactionsOwnLimit, RemovedPathsGone, PageSizeClamped, ValidationErrorsByMember, RevokeTwice409)
