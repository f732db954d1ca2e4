"""Probe B (written blind with blind_variants_b.py): blind_probe.py's requests and observations, and a few more
that the second round's choices show in: the order of the transactions in a page, the JSON types of a transaction's
members, a page size above 250, a single GetTransaction, the form of a 400's `errors` member, and two removed paths
(spec §4.2 note 6).

A target is either a base URL (http://host:port, the API under /partner/v2) or a WSGI app in this process. The
probe needs a partner token of a fresh world holding user:all, partner:all, account:all, transaction:all (the
sandbox's initial token); it moves the world clock through /_sandbox/clock when there is one (every target here
is a simulator underneath).

What is recorded per request: the status, the content type, the headers a client may act on (Location,
Retry-After, WWW-Authenticate, RateLimit-*), and the body's observable shape: for ProblemDetails its members,
type, title and status; for success bodies their keys, list keys, counts, orders of names, the form of page
references. Ids, JWTs and instants stand for their kind.

`python probe.py BASE_URL TOKEN` prints the observations as JSON.
"""

import json
import re
import sys
import urllib.error
import urllib.request
from urllib.parse import parse_qsl, urlencode, urlsplit

API = "/partner/v2"
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
JWT = re.compile(r"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")
INSTANT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")
HTTP_DATE = re.compile(r"^[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT$")
KEPT_HEADERS = ("location", "retry-after", "www-authenticate", "ratelimit-limit", "ratelimit-remaining",
                "ratelimit-reset", "ratelimit", "ratelimit-policy", "x-ratelimit-limit", "x-ratelimit-remaining")
KNOWN_QUERY = {"pageReference", "createdAt", "reportId", "excludeDeprecatedFields", "excludeMappedFields"}


def normal(value):
    if isinstance(value, str):
        return INSTANT.sub("<instant>", JWT.sub("<jwt>", UUID.sub("<uuid>", value)))
    return value


# -- transports ----------------------------------------------------------------------------------------------
class HttpTransport:
    def __init__(self, base):
        self.base = base.rstrip("/")

    def send(self, method, path, headers, data):
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as reply:
                return reply.status, {k.lower(): v for k, v in reply.headers.items()}, reply.read()
        except urllib.error.HTTPError as error:
            return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


class WsgiTransport:
    def __init__(self, app):
        from werkzeug.test import Client
        self.client = Client(app)

    def send(self, method, path, headers, data):
        url = urlsplit(path)
        reply = self.client.open(url.path, method=method, headers=headers, data=data, query_string=url.query)
        try:
            return reply.status_code, {k.lower(): v for k, v in reply.headers.items()}, reply.get_data()
        finally:
            reply.close()


def transport_for(target):
    return HttpTransport(target) if isinstance(target, str) else WsgiTransport(target)


# -- what a client observes ----------------------------------------------------------------------------------
def reference_form(reference):
    if reference is None:
        return None
    text = str(reference)
    if text.isdigit():
        return {"digits": text}
    if text.startswith(("http://", "https://", "/")):
        return {"link": sorted(k for k, _ in parse_qsl(urlsplit(text).query))}
    prefix = re.match(r"^([A-Za-z]{1,12}[._:-])", text)
    return {"prefix": prefix.group(1)} if prefix else "opaque"


def retry_after_form(value):
    if value is None:
        return None
    if value.strip().isdigit():
        return "seconds"
    return "http-date" if HTTP_DATE.match(value.strip()) else "other"


def errors_form(errors):
    """The form of a problem's `errors` member: a list of objects (with their keys) or an object of lists."""
    if isinstance(errors, list):
        return {"list of": sorted({k for e in errors if isinstance(e, dict) for k in e})}
    if isinstance(errors, dict):
        return {"object of": sorted({type(v).__name__ for v in errors.values()})}
    return type(errors).__name__


def member_types(entry):
    """The JSON type of each member of a record (null, bool, int, float, str, list, dict)."""
    return {k: type(v).__name__ for k, v in sorted(entry.items())} if isinstance(entry, dict) else None


def order_of(entries):
    """Whether a page's transactions come oldest first or newest first (by createdAt)."""
    stamps = [e.get("createdAt") for e in entries if isinstance(e, dict)]
    if len(stamps) < 2 or None in stamps:
        return None
    if stamps == sorted(stamps):
        return "oldest first"
    return "newest first" if stamps == sorted(stamps, reverse=True) else "other"


def shape(body):
    """The observable shape of a success body."""
    if isinstance(body, list):
        return {"array": len(body), "entry keys": sorted(body[0]) if body and isinstance(body[0], dict) else []}
    if not isinstance(body, dict):
        return normal(body)
    out = {"keys": sorted(body)}
    for key, value in body.items():
        if isinstance(value, list):
            out[key] = {"n": len(value), "entry keys": sorted(value[0]) if value and isinstance(value[0], dict) else [],
                        "names": [e.get("name") for e in value if isinstance(e, dict) and "name" in e]}
        elif key.endswith("PageReference"):
            out[key] = reference_form(value)
        elif key in ("count", "total", "totalCount"):
            out[key] = value
        elif isinstance(value, dict):
            out[key] = {"keys": sorted(value)}
        elif isinstance(value, str) and key not in ("name", "email"):
            out[key] = "<str>"
        else:
            out[key] = normal(value)
    return out


class Probe:
    def __init__(self, target, token):
        self.transport = transport_for(target)
        self.token = token
        self.seen = []

    # raw call ---------------------------------------------------------------------------------------------
    def send(self, method, path, json_body=None, raw=None, token="default", query=None, content_type=None):
        headers = {}
        token = self.token if token == "default" else token
        if token:
            headers["Authorization"] = f"Bearer {token}"
        data = None
        if json_body is not None:
            data = json.dumps(json_body).encode()
        if raw is not None:
            data = raw
        if data is not None:
            headers["Content-Type"] = content_type or "application/json"
        if query:
            path = path + "?" + urlencode(query)
        status, reply_headers, content = self.transport.send(method, path, headers, data)
        try:
            body = json.loads(content) if content else None
        except ValueError:
            body = None
        return status, reply_headers, body, content

    def call(self, label, method, path, **kw):
        status, headers, body, content = self.send(method, path, **kw)
        ctype = (headers.get("content-type") or "").split(";")[0].strip() or None
        kept = {k: normal(v) for k, v in headers.items() if k in KEPT_HEADERS}
        if "retry-after" in kept:
            kept["retry-after"] = retry_after_form(headers["retry-after"])
        if status >= 400:
            b = body if isinstance(body, dict) else {}
            observed = {"members": sorted(b), "type": b.get("type"), "title": b.get("title"),
                        "status": b.get("status")} if b else ("<empty>" if not content else "<not json>")
            if b and "errors" in b:
                observed["errors form"] = errors_form(b["errors"])
        elif status == 204 or not content:
            observed = "<empty>"
        else:
            observed = shape(body)
        self.seen.append({"label": label, "status": status, "content-type": ctype, "headers": kept,
                          "body": observed})
        return status, headers, body

    # the document ---------------------------------------------------------------------------------------
    def document(self):
        status, _, body, _ = self.send("GET", "/openapi.json", token=None)
        return body if status == 200 and isinstance(body, dict) else {}

    def page_size_name(self, document):
        for path, item in document.get("paths", {}).items():
            op = item.get("get") if isinstance(item, dict) else None
            if isinstance(op, dict) and op.get("operationId") == "GetTransactions":
                names = [p.get("name") for p in op.get("parameters", []) if p.get("in") == "query"]
                extra = [n for n in names if n not in KNOWN_QUERY]
                return extra[0] if extra else "pageSize"
        return "pageSize"

    # the requests ---------------------------------------------------------------------------------------
    def run(self):
        document = self.document()
        size = self.page_size_name(document)
        u = API + "/users"
        s, _, cara = self.call("create user Cara (with email)", "POST", u,
                               json_body={"name": "Cara", "email": "cara@partner.example"})
        s, _, alice = self.call("create user alice", "POST", u, json_body={"name": "alice"})
        s, _, bob = self.call("create user Bob", "POST", u, json_body={"name": "Bob", "email": "bob@partner.example"})
        cara_id, alice_id, bob_id = (x.get("id") if isinstance(x, dict) else None for x in (cara, alice, bob))
        self.call("list users", "GET", u)
        self.call("list users name=ALICE", "GET", u, query={"name": "ALICE"})
        self.call("list users name=alice", "GET", u, query={"name": "alice"})
        self.call("PUT user with name only", "PUT", f"{u}/{cara_id}", json_body={"name": "Cara B"})
        status, _, after, _ = self.send("GET", f"{u}/{cara_id}")
        self.seen.append({"label": "user's email after a name-only PUT", "status": status,
                          "email": normal((after or {}).get("email")) if isinstance(after, dict) else None})
        self.call("read a malformed user id", "GET", f"{u}/not-an-id")
        self.call("read an unknown user id", "GET", f"{u}/00000000-0000-4000-8000-000000000001")
        self.call("list users without a token", "GET", u, token=None)
        self.call("list users with a forged token", "GET", u, token="eyJhbGciOiJIUzI1NiJ9.e30.c2ln")
        self.call("create user with a body that is not JSON", "POST", u, raw=b"{not json")
        self.call("create user with a schema-invalid body", "POST", u, json_body={"name": 5})
        self.call("create user with two schema-invalid members", "POST", u,
                  json_body={"name": "Dora", "email": "not an address", "scope": 7})
        self.call("removed path: GET /users/{id}/token", "GET", f"{u}/{alice_id}/token")
        self.call("removed path: PATCH /partners", "PATCH", API + "/partners", json_body={"name": "x"})

        t = API + "/partners/self/tokens"
        s, _, token = self.call("create own token", "POST", t,
                                json_body={"name": "probe", "expiresIn": 7200, "scope": "partner:read"})
        narrow = (token or {}).get("accessToken") if isinstance(token, dict) else None
        self.call("list own tokens with partner:read only token... (allowed)", "GET", t, token=narrow)
        self.call("revoke own token", "DELETE", f"{t}/{(token or {}).get('id')}")
        self.call("revoke it again", "DELETE", f"{t}/{(token or {}).get('id')}")

        p = API + "/partners"
        s, _, zed = self.call("create child partner Zed", "POST", p,
                              json_body={"name": "Zed", "email": "zed@partner.example"})
        self.call("create child partner amy", "POST", p, json_body={"name": "amy", "email": "amy@partner.example"})
        self.call("list child partners", "GET", p)
        zed_id = zed.get("id") if isinstance(zed, dict) else None
        s, _, ct = self.call("create a child partner token", "POST", f"{p}/{zed_id}/tokens",
                             json_body={"name": "child", "expiresIn": 7200, "scope": "partner:read"})
        self.call("revoke the child partner token", "DELETE", f"{p}/{zed_id}/tokens/{(ct or {}).get('id')}")

        w = API + "/webhooks"
        s, _, hook = self.call("create a webhook", "POST", w,
                               json_body={"callbackUrl": "https://partner.example/hooks", "events": ["AccountCreated"]})
        self.call("list webhooks", "GET", w)
        self.call("send a test AccountCreated", "POST", API + "/testevents/accountcreated", json_body={})
        self.call("send a test TransactionsImported", "POST", API + "/testevents/transactionsimported", json_body={})
        self.call("delete the webhook", "DELETE", f"{w}/{(hook or {}).get('id')}")

        a = API + "/accounts"
        creds = {"username": "jane", "password": "s3cret"}
        s, _, acc = self.call("create account Zeta (alice)", "POST", a,
                              json_body={"userId": alice_id, "accountTypeId": "dummy", "name": "Zeta",
                                         "credentials": creds})
        self.call("create account alpha (Bob)", "POST", a,
                  json_body={"userId": bob_id, "accountTypeId": "dummy", "name": "alpha", "credentials": creds})
        self.call("list accounts", "GET", a)
        account_id = acc.get("id") if isinstance(acc, dict) else None
        self.send("POST", "/_sandbox/clock", json_body={"advance": 2 * 86400})

        tx = f"{a}/{account_id}/transactions"
        s, _, first = self.call("transactions: the first page (default size)", "GET", tx)
        entries = (first or {}).get("transactions") if isinstance(first, dict) else None
        entries = entries if isinstance(entries, list) else []
        self.seen.append({"label": "transactions: order of the first page", "order": order_of(entries)})
        self.seen.append({"label": "transactions: member types of the first page's first entry",
                          "types": member_types(entries[0]) if entries else None})
        one = entries[0].get("id") if entries and isinstance(entries[0], dict) else None
        s, _, single = self.call("transactions: one transaction (GetTransaction)", "GET", f"{tx}/{one}")
        self.seen.append({"label": "transactions: member types of GetTransaction",
                          "types": member_types(single) if s == 200 else None})
        self.seen.append({"label": "the document's page-size parameter", "name": size})
        s, _, small = self.call("transactions: pages of 2 (by the document's page-size parameter)", "GET", tx,
                                query={size: "2"})
        ref = (small or {}).get("nextPageReference") if isinstance(small, dict) else None
        self.seen.append({"label": "transactions: order of the pages of 2",
                          "order": order_of((small or {}).get("transactions") or [] if isinstance(small, dict)
                                            else [])})
        if ref is not None:
            s, _, second = self.call("transactions: the next page of 2", "GET", tx,
                                     query={size: "2", "pageReference": ref})
            back = (second or {}).get("previousPageReference") if isinstance(second, dict) else None
            s, _, again = self.call("transactions: back again", "GET", tx, query={size: "2", "pageReference": back})
            ids = lambda page: [e.get("id") for e in page.get("transactions", [])]  # noqa: E731
            same = isinstance(again, dict) and isinstance(small, dict) and ids(again) == ids(small)
            self.seen.append({"label": "back again is the first page", "same": same})
        self.call("transactions: a reference never given", "GET", tx, query={"pageReference": "9999"})
        self.call("transactions: page size 150", "GET", tx, query={size: "150"})
        self.call("transactions: page size 400", "GET", tx, query={size: "400"})
        self.call("transactions: pageSize=3 (the simulator's name)", "GET", tx, query={"pageSize": "3"})
        self.call("transactions: limit=3", "GET", tx, query={"limit": "3"})
        for i in range(3):
            status, headers, body = self.call(f"transactions: once more ({i + 1})", "GET", tx, query={size: "1"})
            if status == 429:
                break
        self.call("delete user Bob", "DELETE", f"{u}/{bob_id}")
        return self.seen


def observe(target, token):
    return Probe(target, token).run()


def compare(want, have):
    """The observations that differ, by label: [(label, wanted, got)]."""
    out = []
    for index in range(max(len(want), len(have))):
        w = want[index] if index < len(want) else None
        h = have[index] if index < len(have) else None
        if w != h:
            out.append(((w or h or {}).get("label"), w, h))
    return out


# -- the documents' observable parts ---------------------------------------------------------------------------
def document_summary(document):
    """What a client generated from the document would rely on: per operation its method and path, its query
    parameters (and their maximum), its response codes with their headers and media types; and the list schemas'
    properties."""
    out = {}
    for path, item in document.get("paths", {}).items():
        if path.startswith("/_sandbox"):
            continue
        for method, op in item.items():
            if not isinstance(op, dict) or "operationId" not in op:
                continue
            params = sorted((p.get("name"), p.get("in"), (p.get("schema") or {}).get("maximum"))
                            for p in op.get("parameters", []))
            responses = {code: {"headers": sorted((r or {}).get("headers", {})),
                                "media": sorted((r or {}).get("content", {}))}
                         for code, r in op.get("responses", {}).items() if isinstance(r, dict)}
            out[op["operationId"]] = {"method": method, "path": path, "parameters": params,
                                      "responses": responses}
    schemas = document.get("components", {}).get("schemas", {})
    for name in ("UserList", "WebhookList", "PartnerList", "AccountList", "TokenList", "ProblemDetails"):
        if name in schemas:
            out["schema " + name] = {"properties": sorted(schemas[name].get("properties", {})),
                                     "type enum": (schemas[name].get("properties", {}).get("type") or {}).get("enum")}
    return out


def compare_documents(want, have):
    a, b = document_summary(want), document_summary(have)
    return [(key, a.get(key), b.get(key)) for key in sorted(set(a) | set(b)) if a.get(key) != b.get(key)]


if __name__ == "__main__":
    print(json.dumps(observe(sys.argv[1], sys.argv[2]), indent=1))
