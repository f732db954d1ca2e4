"""More faithful deployments, beyond the matrix of tests/conformance/variants.py: each makes one more choice the
spec leaves open, says so in its own document, and must be learned and served by a profile like the others."""

import collections
import json
from urllib.parse import parse_qsl, urlencode, urlsplit

from ptas_sandbox import openapi_reading
from ptas_sandbox import profile as profiles
from tests.conformance.variants import SERVICE, UUID, Variant, json_of

SIM_TYPE = "urn:ptas-sandbox:problem:"


def status_line(code):
    return {200: "200 OK", 201: "201 Created", 204: "204 No Content", 422: "422 Unprocessable Content"}[code]


class Creates200(Variant):
    """A successful create answers 200, not 201."""

    name = "creates answer 200"

    def publish(self, document):
        for item in document["paths"].values():
            for op in item.values():
                if isinstance(op, dict) and "201" in op.get("responses", {}):
                    op["responses"]["200"] = op["responses"].pop("201")
        return document

    def response(self, operation, environ, status, headers, data):
        created = status.startswith("201") and not operation.startswith("Sandbox")
        return (status_line(200) if created else status), headers, data


class DeleteWithBody(Variant):
    """A successful DELETE answers 200 with the record as it was."""

    name = "DELETE answers 200 with the record"

    def request(self, operation, environ, body):
        if environ["REQUEST_METHOD"] == "DELETE" and not operation.startswith("Sandbox"):
            status, record = self.inner("GET", environ["PATH_INFO"], environ.get("HTTP_AUTHORIZATION", ""))
            environ["ptas.before"] = record if status == 200 else None
        return body

    def __call__(self, environ, start_response):
        return super().__call__(environ, start_response)

    def response(self, operation, environ, status, headers, data):
        record = environ.get("ptas.before")
        if status.startswith("204") and record is not None:
            headers = [(k, v) for k, v in headers if k.lower() != "content-type"]
            return status_line(200), headers + [("Content-Type", "application/json")], json.dumps(record).encode()
        return status, headers, data


class Invalid422(Variant):
    """A request body that breaks the schema is 422 Unprocessable Content, not 400."""

    name = "422 for an invalid body"

    def response(self, operation, environ, status, headers, data):
        body = json_of(data)
        if status.startswith("400") and isinstance(body, dict) and body.get("type") == SIM_TYPE + "invalid-body":
            body["status"] = 422
            return status_line(422), headers, json.dumps(body).encode()
        return status, headers, data


class AbsoluteTypes(Variant):
    """ProblemDetails types are absolute URLs, without a trace id member."""

    name = "absolute problem type URIs"

    def response(self, operation, environ, status, headers, data):
        body = json_of(data)
        if isinstance(body, dict) and str(body.get("type", "")).startswith(SIM_TYPE):
            body["type"] = "https://problems.partner-api.example/" + body["type"][len(SIM_TYPE):]
            body.pop("traceId", None)
            return status, headers, json.dumps(body).encode()
        return status, headers, data


LISTS = ("GetUsers", "GetWebhooks", "GetPartners", "GetAccounts", "GetAccountTypes")
CREATED = ("GetUsers", "GetWebhooks", "GetPartners", "GetAccounts", "GetOwnPartnerTokens", "GetPartnerTokens")


class NewestFirst(Variant):
    """Lists of what a partner creates show the newest entry first (the account type catalogue keeps its order)."""

    name = "lists newest first"

    def response(self, operation, environ, status, headers, data):
        body = json_of(data)
        if operation in CREATED and isinstance(body, dict):
            for key, value in body.items():
                if isinstance(value, list):
                    body[key] = value[::-1]
            return status, headers, json.dumps(body).encode()
        return status, headers, data


class ItemsLists(Variant):
    """Lists the spec does not show carry their entries under `items` (token lists keep spec §2's `tokens`)."""

    name = "lists under items"

    def publish(self, document):
        for name in ("UserList", "WebhookList", "PartnerList", "AccountList", "AccountTypeList"):
            schema = document["components"]["schemas"].get(name)
            if schema:
                (key, value), = schema["properties"].items()
                schema["properties"] = {"items": value}
                schema["required"] = ["items"]
        return document

    def response(self, operation, environ, status, headers, data):
        body = json_of(data)
        if operation in LISTS and isinstance(body, dict) and len(body) == 1:
            (value,) = body.values()
            return status, headers, json.dumps({"items": value}).encode()
        return status, headers, data


MORE = (Creates200, DeleteWithBody, Invalid422, AbsoluteTypes, NewestFirst, ItemsLists)


class Pages25(Variant):
    """A page of transactions holds 25 when the client names no page size, and page references are offsets: the
    next page starts after this page's entries, the previous one 25 before it (a string of digits)."""

    name = "pages of 25 at offsets"

    def __init__(self, app):
        super().__init__(app)
        self.offsets = {}            # (account path, offset) -> the simulator's reference there

    def request(self, operation, environ, body):
        if operation != "GetTransactions":
            return body
        query = dict(parse_qsl(environ.get("QUERY_STRING", "")))
        query.setdefault("pageSize", "25")
        offset = query.get("pageReference", "")
        environ["ptas.start"] = 0
        if offset.isdigit() and (environ["PATH_INFO"], int(offset)) in self.offsets:   # else refused as invalid
            query["pageReference"] = self.offsets[(environ["PATH_INFO"], int(offset))]
            environ["ptas.start"] = int(offset)
        environ["QUERY_STRING"] = urlencode(query)
        environ["ptas.size"] = int(query["pageSize"])
        return body

    def response(self, operation, environ, status, headers, data):
        body = json_of(data)
        if operation != "GetTransactions" or not status.startswith("200") or not isinstance(body, dict):
            return status, headers, data
        start, size = environ["ptas.start"], environ["ptas.size"]
        for field, offset in (("nextPageReference", start + len(body["transactions"])),
                              ("previousPageReference", max(0, start - size))):
            if body[field]:
                self.offsets[(environ["PATH_INFO"], offset)] = body[field]
                body[field] = str(offset)
        return status, headers, json.dumps(body).encode()


class DeleteAcknowledged(Variant):
    """A successful DELETE answers 200 with an acknowledgement naming the id, not the record."""

    name = "DELETE answers 200 with an acknowledgement"

    def response(self, operation, environ, status, headers, data):
        if status.startswith("204") and not operation.startswith("Sandbox"):
            ids = environ["ptas.params"]
            record_id = ids.get("tokenId") or ids.get("id") or next(iter(ids.values()), "")
            body = json.dumps({"deleted": True, "id": record_id}).encode()
            headers = [(k, v) for k, v in headers if k.lower() != "content-type"]
            return status_line(200), headers + [("Content-Type", "application/json")], body
        return status, headers, data


MORE = MORE + (Pages25, DeleteAcknowledged)


class RateLimitHeaders(Variant):
    """A 429 says its window in RateLimit-Limit, -Remaining and -Reset beside Retry-After, and its body holds the
    members of RFC 9457 only. `config`: the limit the deployment and its profiled simulator both run with, low
    enough that reading three pages of transactions meets it."""

    name = "429 with RateLimit-* headers"
    config = {"OPERATION_LIMITS": {"GetTransactions": (2, 60)}}

    def response(self, operation, environ, status, headers, data):
        body = json_of(data)
        if not status.startswith("429") or not isinstance(body, dict):
            return status, headers, data
        wait = next(v for k, v in headers if k.lower() == "retry-after")
        headers = headers + [("RateLimit-Limit", str(body["limit"])), ("RateLimit-Remaining", "0"),
                             ("RateLimit-Reset", wait)]
        body = {k: v for k, v in body.items() if k in ("type", "title", "status", "detail", "instance")}
        return status, headers, json.dumps(body).encode()


class NoRetryAfter(RateLimitHeaders):
    """A 429 says nothing of when to come back (the spec does not show the 429's response): no Retry-After, no
    rate-limit headers, a body of RFC 9457's members only. Same limit as RateLimitHeaders."""

    name = "429 without Retry-After"

    def response(self, operation, environ, status, headers, data):
        body = json_of(data)
        if not status.startswith("429") or not isinstance(body, dict):
            return status, headers, data
        headers = [(k, v) for k, v in headers if k.lower() != "retry-after"]
        body = {k: v for k, v in body.items() if k in ("type", "title", "status", "detail", "instance")}
        return status, headers, json.dumps(body).encode()


NO_RECORD = "00000000-0000-4000-8000-00000000dead"


class IntegerIds(Variant):
    """Records are numbered per kind, 1, 2, 3..., in the order the deployment first shows them (a string of
    digits: the spec's ids are strings), in its answers, its paths, its query parameters, the bodies it takes
    and the notifications it sends; a number it never gave, or an id of another form, is unknown (404)."""

    name = "integer ids"

    def __init__(self, app):
        super().__init__(app)
        self.numbers, self.uuids, self.counts = {}, {}, collections.Counter()     # counts: numbers given per kind
        self.answers = {op.get("operationId"): openapi_reading.success(op)[1]
                        for item in self.original["paths"].values() for op in item.values() if isinstance(op, dict)}
        app.extensions["ptas"].hooks.notification.append(
            lambda store, world, body: {**body, "data": self.shown(body["data"], None)})

    def show(self, kind, value):
        if not (isinstance(value, str) and UUID.match(value)):
            return value
        if (kind, value) not in self.numbers:
            self.counts[kind] += 1
            number = self.counts[kind]
            self.numbers[(kind, value)], self.uuids[(kind, number)] = number, value
        return self.shown_form(self.numbers[(kind, value)], kind)

    def shown_form(self, number, kind):
        return str(number)

    def taken(self, kind, value):
        text = str(value)
        number = self.number_of(text, kind)
        return self.uuids.get((kind, number), NO_RECORD) if number is not None else NO_RECORD

    def number_of(self, text, kind):
        return int(text) if text.isdigit() else None

    def shown(self, value, kind):
        if isinstance(value, dict):
            return {k: self.show(kind, v) if k == "id" and kind else
                    self.show(profiles.KEY_KIND[k], v) if k.endswith("Id") and k in profiles.KEY_KIND else
                    self.shown(v, profiles.KEY_KIND.get(k) or profiles.SEGMENT_KIND.get(k.lower()) or
                               (kind if isinstance(v, list) else None)) for k, v in value.items()}
        if isinstance(value, list):
            return [self.shown(v, kind) for v in value]
        return value

    def request(self, operation, environ, body):
        parts = environ["PATH_INFO"].split("/")
        for i, part in enumerate(parts if environ["PATH_INFO"].startswith(SERVICE) else []):
            kind = profiles.SEGMENT_KIND.get(parts[i - 1]) if i else None
            if parts[i - 1] == "transactions" and parts[i - 2] == "v2":
                kind = "account"             # the deprecated transactions path names the account
            if kind and part != "self" and operation and not operation.startswith(("GetAccountType", "Validate")):
                parts[i] = self.taken(kind, part)
        environ["PATH_INFO"] = "/".join(parts)
        query = [(k, self.taken(profiles.KEY_KIND[k], v) if k in profiles.KEY_KIND and k.endswith("Id") else v)
                 for k, v in parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)]
        environ["QUERY_STRING"] = urlencode(query)
        if isinstance(body, dict):
            return {k: self.taken(profiles.KEY_KIND[k], v) if k in profiles.KEY_KIND and k.endswith("Id")
                    and isinstance(v, (int, str)) else v for k, v in body.items()}
        return body

    def response(self, operation, environ, status, headers, data):
        body = json_of(data)
        kind_of = next((v for k, v in headers if k.lower() == "content-type"), "")
        if body is None or "problem" in kind_of:
            return status, headers, data
        component = (self.answers.get(operation) or {}).get("$ref", "").rsplit("/", 1)[-1]
        return status, headers, json.dumps(self.shown(body, profiles.COMPONENT_KIND.get(component))).encode()

    def publish(self, document):
        for name, kind in profiles.COMPONENT_KIND.items():
            schema = document["components"]["schemas"].get(name)
            if schema and "id" in schema.get("properties", {}):
                schema["properties"]["id"] = {"type": "string", "pattern": "^[1-9][0-9]*$",
                                              "description": f"the {kind}'s number"}
        return document


class SharedNumbers(IntegerIds):
    """One sequence numbers every kind of record, so no two records share an id (user 1, webhook 2, ...)."""

    name = "one sequence for every kind of id"

    def show(self, kind, value):
        return super().show("*", value)

    def taken(self, kind, value):
        return super().taken("*", value)


class PrefixedIds(IntegerIds):
    """Ids are a kind's prefix and 20 base-36 characters (`usr_0000000000000000000b`): a number underneath, shown
    in the deployment's own alphabet."""

    name = "prefixed ids"
    PREFIXES = {"user": "usr_", "account": "acc_", "partner": "ptn_", "webhook": "whk_", "token": "tok_",
                "report": "rpt_", "dataimport": "imp_", "transaction": "txn_", "accountuisession": "aus_",
                "useruisession": "uus_"}
    DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"

    def shown_form(self, number, kind):
        text = ""
        while number:
            number, digit = divmod(number, 36)
            text = self.DIGITS[digit] + text
        return self.PREFIXES[kind] + text.rjust(20, "0")

    def number_of(self, text, kind):
        prefix = self.PREFIXES[kind]
        rest = text[len(prefix):]
        if not text.startswith(prefix) or len(rest) != 20 or any(c not in self.DIGITS for c in rest):
            return None
        return int(rest, 36)

    def publish(self, document):
        for name in profiles.COMPONENT_KIND:
            schema = document["components"]["schemas"].get(name)
            if schema and "id" in schema.get("properties", {}):
                schema["properties"]["id"] = {"type": "string", "pattern": "^[a-z]{3}_[0-9a-z]{20}$"}
        return document


MORE = MORE + (IntegerIds, SharedNumbers, PrefixedIds)


class PageNumbers(Variant):
    """Page references are page numbers counting from 1: the next page of the first one is "2", its previous
    one "1" (a number never given is an invalid reference)."""

    name = "page numbers"

    def __init__(self, app):
        super().__init__(app)
        self.pages = {}             # (account path, the other parameters, page number) -> the simulator's reference

    def request(self, operation, environ, body):
        if operation != "GetTransactions":
            return body
        query = parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)
        rest = sorted((k, v) for k, v in query if k != "pageReference")
        given = dict(query).get("pageReference")
        environ["ptas.key"], environ["ptas.page"] = (environ["PATH_INFO"], urlencode(rest)), 1
        if given is not None and given.isdigit() and (*environ["ptas.key"], int(given)) in self.pages:
            given, environ["ptas.page"] = self.pages[(*environ["ptas.key"], int(given))], int(given)
        environ["QUERY_STRING"] = urlencode(rest + ([("pageReference", given)] if given is not None else []))
        return body

    def response(self, operation, environ, status, headers, data):
        body = json_of(data)
        if operation != "GetTransactions" or not status.startswith("200") or not isinstance(body, dict):
            return status, headers, data
        page = environ["ptas.page"]
        for field, number in (("nextPageReference", page + 1), ("previousPageReference", page - 1)):
            if body[field]:
                self.pages[(*environ["ptas.key"], number)] = body[field]
                body[field] = str(number)
        return status, headers, json.dumps(body).encode()


class LinkReferences(Variant):
    """Page references are absolute links to the page (the account's transactions with the reference in the
    query); a client follows the link, or sends it back as its pageReference."""

    name = "page references as links"

    def request(self, operation, environ, body):
        if operation != "GetTransactions":
            return body
        query = parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)
        given = dict(query).get("pageReference", "")
        if given.startswith(("http://", "https://")):
            inner = dict(parse_qsl(urlsplit(given).query)).get("pageReference", "")
            query = [(k, inner if k == "pageReference" else v) for k, v in query]
        environ["QUERY_STRING"] = urlencode(query)
        return body

    def response(self, operation, environ, status, headers, data):
        body = json_of(data)
        if operation != "GetTransactions" or not status.startswith("200") or not isinstance(body, dict):
            return status, headers, data
        rest = [(k, v) for k, v in parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)
                if k != "pageReference"]
        base = f"{environ['wsgi.url_scheme']}://{environ['HTTP_HOST']}{environ['PATH_INFO']}"
        for field in ("nextPageReference", "previousPageReference"):
            if body[field]:
                body[field] = f"{base}?{urlencode(rest + [('pageReference', body[field])])}"
        return status, headers, json.dumps(body).encode()


MORE = MORE + (PageNumbers, LinkReferences)


class TokenFirstIds400(Variant):
    """A path id that is not a UUID is a bad request (400), but only once the token and its scope are checked:
    without a token it is 401, with a token lacking the scope 403 (the order of the checks is the spec's
    silence; MalformedIds400 of the conformance matrix checks the id first)."""

    name = "400 for malformed ids, after the token and its scope"

    def response(self, operation, environ, status, headers, data):
        path = environ["PATH_INFO"].split("/")
        if operation == "GetUser" and len(path) == 5 and not UUID.match(path[4]) and path[4] != "self" \
                and status.startswith("404"):
            return "400 Bad Request", headers, json.dumps({
                "type": SIM_TYPE + "invalid-parameter", "title": "Bad Request", "status": 400,
                "detail": f"{path[4]!r} is not an id"}).encode()
        return status, headers, data
