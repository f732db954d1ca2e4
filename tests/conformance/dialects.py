"""Faithful deployments that speak another dialect on the wire: how they write JSON, dress HTTP answers, show ids,
lay out lists and their pages, and read the createdAt search. None of it is fixed by the spec, and none of it may
fail a @contract scenario. Unlike variants.py they change no route, status or name, so a profile has nothing to
learn from them (tests/profiles); test_variants.py runs the suites against all of them at once.
"""

import hashlib
import json
import re
from urllib.parse import parse_qsl, urlencode

from .variants import Variant, json_of

UUID_LOWER = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
UUID_ANY = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
UUID_IN_TEXT = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
LISTS = ("GetUsers", "GetPartners", "GetAccounts", "GetAccountTypes", "GetWebhooks", "GetDataImports", "GetReports",
         "GetTransactions")


def of_the_service(operation):
    return bool(operation) and not operation.startswith("Sandbox")


def content_type(headers):
    return next((v for k, v in headers if k.lower() == "content-type"), "")


def with_header(headers, name, value):
    return [(k, v) for k, v in headers if k.lower() != name.lower()] + [(name, value)]


def mapped(value, change):
    """`value` with `change` applied to every string in it, at any depth."""
    if isinstance(value, dict):
        return {k: mapped(v, change) for k, v in value.items()}
    if isinstance(value, list):
        return [mapped(v, change) for v in value]
    return change(value) if isinstance(value, str) else value


class UpperCaseGuids(Variant):
    """Ids are GUIDs shown in upper case (as .NET and SQL Server show them) in answers, Location headers and
    notifications, and read in any case. Spec §2: an id is a string; its form is not shown. Wraps the simulator
    itself (it changes the notifications the simulator sends)."""

    name = "upper-case GUIDs"

    def __init__(self, app):
        super().__init__(app)
        upper = lambda text: text.upper() if UUID_LOWER.match(text) else text    # noqa: E731
        app.extensions["ptas"].hooks.notification.append(lambda store, world, body: mapped(body, upper))

    def request(self, operation, environ, body):
        lower = lambda text: text.lower() if UUID_ANY.match(text) else text     # noqa: E731
        environ["PATH_INFO"] = "/".join(map(lower, environ["PATH_INFO"].split("/")))
        query = parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)
        environ["QUERY_STRING"] = urlencode([(k, lower(v)) for k, v in query])
        return mapped(body, lower) if isinstance(body, (dict, list)) else body

    def response(self, operation, environ, status, headers, data):
        headers = [(k, UUID_IN_TEXT.sub(lambda m: m.group(0).upper(), v))
                   if k.lower() in ("location", "x-service-authreference") else (k, v) for k, v in headers]
        body = json_of(data)
        if body is None or "json" not in content_type(headers):
            return status, headers, data
        return status, headers, json.dumps(mapped(body, lambda t: t.upper() if UUID_LOWER.match(t) else t)).encode()


class ListLinks(Variant):
    """Every list answer carries a `links` array of navigation links as its first member, beside the entries
    (`{"links": [{"rel": "self", ...}], "users": [...]}`), published in the document. Spec §4 does not show the
    lists' payloads and §9 rule 2 lets answers grow properties. Token lists stay as §2 fixes them."""

    name = "list answers with a links array first"

    def publish(self, document):
        link = {"type": "array", "items": {"type": "object", "properties": {
            "rel": {"type": "string"}, "href": {"type": "string", "format": "uri"}}}}
        for item in document["paths"].values():
            for op in item.values():
                if isinstance(op, dict) and op.get("operationId") in LISTS:
                    ref = op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
                    schema = document["components"]["schemas"][ref.rsplit("/", 1)[-1]]
                    schema["properties"] = {"links": link, **schema["properties"]}
        return document

    def response(self, operation, environ, status, headers, data):
        body = json_of(data)
        if operation not in LISTS or not status.startswith("200") or not isinstance(body, dict):
            return status, headers, data
        query = environ.get("QUERY_STRING", "")
        href = f"http://{environ.get('HTTP_HOST', 'localhost')}{environ['PATH_INFO']}" + (f"?{query}" if query else "")
        return status, headers, json.dumps({"links": [{"rel": "self", "href": href}], **body}).encode()


class DatedBookingTexts(Variant):
    """Booking texts come as the provider writes them, starting with its own date and time ("2026-10-27 13:02
    Direct sale: ..."). bookingText is free text (spec §2); the service's own timestamps keep seven digits."""

    name = "booking texts that begin with a date"

    def response(self, operation, environ, status, headers, data):
        body = json_of(data)
        if operation not in ("GetTransactions", "GetTransaction") or not status.startswith("200") \
                or not isinstance(body, dict):
            return status, headers, data
        for row in body.get("transactions", [body]):
            if isinstance(row.get("bookingText"), str) and row.get("createdAt"):
                text = f"{row['createdAt'][:10]} {row['createdAt'][11:16]} {row['bookingText']}"
                row["bookingText"] = text
                for entry in row.get("fields") or []:
                    if isinstance(entry, dict) and entry.get("name") == "bookingText":
                        entry["value"] = text
        return status, headers, json.dumps(body).encode()


class CreatedAtDay(Variant):
    """GetTransactions' createdAt search finds the transactions of that date (UTC), as the document says. Spec
    §4.3 names the search ("createdAt (search)") and nothing more."""

    name = "the createdAt search matches a day"

    def publish(self, document):
        for item in document["paths"].values():
            op = item.get("get")
            if isinstance(op, dict) and op.get("operationId") == "GetTransactions":
                for parameter in op.get("parameters", []):
                    if parameter.get("name") == "createdAt":
                        parameter["description"] = "Finds the transactions created on this date (UTC)."
        return document

    def request(self, operation, environ, body):
        query = parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)
        day = next((v[:10] for k, v in query if k == "createdAt"), None) if operation == "GetTransactions" else None
        if day:
            environ["ptas.day"] = day
            environ["QUERY_STRING"] = urlencode([(k, f"{day}T00:00:00.0000000Z" if k == "createdAt" else v)
                                                 for k, v in query])
        return body

    def response(self, operation, environ, status, headers, data):
        day, body = environ.get("ptas.day"), json_of(data)
        if not day or not status.startswith("200") or not isinstance(body, dict):
            return status, headers, data
        kept = [t for t in body["transactions"] if t["createdAt"][:10] == day]
        if len(kept) < len(body["transactions"]):
            body["nextPageReference"] = None        # the day ended on this page
        body["transactions"] = kept
        return status, headers, json.dumps(body).encode()


class FirstPageLooksBack(Variant):
    """The first page of transactions carries a previousPageReference too: it names an empty page before it,
    whose next page is the first again. Spec §4.3 says the answer carries both references, not that the first
    page's previous one is null."""

    name = "a previous page reference on the first page"
    BEFORE, FIRST = "before-the-first-page", "the-first-page"

    def request(self, operation, environ, body):
        if operation != "GetTransactions":
            return body
        query = parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)
        reference = dict(query).get("pageReference")
        if reference == self.BEFORE:
            page = {"transactions": [], "previousPageReference": None, "nextPageReference": self.FIRST}
            return "200 OK", [("Content-Type", "application/json")], json.dumps(page).encode()
        if reference == self.FIRST:
            environ["QUERY_STRING"] = urlencode([(k, v) for k, v in query if k != "pageReference"])
        return body

    def response(self, operation, environ, status, headers, data):
        body = json_of(data)
        first = "pageReference" not in dict(parse_qsl(environ.get("QUERY_STRING", "")))
        if operation == "GetTransactions" and first and status.startswith("200") and isinstance(body, dict) \
                and body.get("previousPageReference") is None:
            body["previousPageReference"] = self.BEFORE
            return status, headers, json.dumps(body).encode()
        return status, headers, data


class HttpDressing(Variant):
    """What an API gateway adds: `; charset=utf-8` on JSON media types, caching and tracing headers, a weak
    ETag on reads, an RFC 6750 challenge with realm and error on a 401, and ProblemDetails extension members.
    Spec §7: the members of a ProblemDetails body are not shown; §9 rule 2: answers may grow."""

    name = "HTTP dressing of an API gateway"

    def response(self, operation, environ, status, headers, data):
        if not of_the_service(operation):
            return status, headers, data
        kind, body = content_type(headers), json_of(data)
        if "problem+json" in kind and isinstance(body, dict):
            body["errors"] = {"request": [body.get("detail") or body.get("title") or "refused"]}
            data = json.dumps(body).encode()
        if "json" in kind and "charset" not in kind:
            headers = with_header(headers, "Content-Type", kind + "; charset=utf-8")
        for name, value in (("Cache-Control", "no-store"), ("Vary", "Accept, Authorization"),
                            ("X-Request-Id", hashlib.sha1(data).hexdigest()),
                            ("Strict-Transport-Security", "max-age=9")):
            headers = with_header(headers, name, value)
        if environ["REQUEST_METHOD"] == "GET" and status.startswith("200"):
            headers = with_header(headers, "ETag", 'W/"' + hashlib.sha1(data).hexdigest() + '"')
        if status.startswith("401"):
            headers = with_header(headers, "WWW-Authenticate", 'Bearer realm="partner-api", error="invalid_token"')
        return status, headers, data


ESCAPES = {"/": "\\/", "<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "'": "\\u0027", "+": "\\u002b"}


def escaped(value):
    """JSON as PHP's json_encode (`\\/`) and .NET's default encoder (`\\uXXXX`) write it, keys sorted, pretty."""
    if isinstance(value, dict):
        return "{\r\n" + ",\r\n".join(f"  {escaped(str(k))}: {escaped(v)}" for k, v in sorted(value.items())) + "\r\n}"
    if isinstance(value, list):
        return "[" + ", ".join(escaped(v) for v in value) + "]"
    if isinstance(value, str):
        text = json.dumps(value)
        for char, escape in ESCAPES.items():
            text = text.replace(char, escape)
        return text
    return json.dumps(value)


class OtherJsonWriter(Variant):
    """JSON answers written by another library: `/` and HTML-sensitive characters escaped, keys in alphabetical
    order, indented with CRLF line ends. RFC 8259: the same JSON value (any character may be escaped, members
    have no order, whitespace means nothing)."""

    name = "another JSON writer"

    def response(self, operation, environ, status, headers, data):
        body = json_of(data)
        if not of_the_service(operation) or body is None or "json" not in content_type(headers):
            return status, headers, data
        return status, headers, escaped(body).encode("ascii")


# Innermost first: UpperCaseGuids wraps the simulator itself; the JSON writer rewrites every byte last.
DIALECTS = (UpperCaseGuids, ListLinks, DatedBookingTexts, CreatedAtDay, FirstPageLooksBack, HttpDressing,
            OtherJsonWriter)
