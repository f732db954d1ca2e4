"""Faithful deployments written blind, fourth round (after blind_faithful.py and blind_faithful_c.py): each makes
ONE choice the interface spec leaves open, the way a production service behind an API gateway, with a real
database and a real queue, plausibly would, and stays faithful to everything the spec states. Where the choice
changes something the service's own /openapi.json describes, the document says so (`document`).

Forms as in tests/support/blind_deployments.py: `change(environ, status, headers, body)`, `wrap(app)`, `config`
(simulator configuration) and `apply(app)` (the service's own engine, changed).
"""

import base64
import hashlib
import io
import json
import math
import re
import threading
from email.utils import formatdate
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from tests.support.blind_deployments import (
    Case,
    answered,
    body_edit,
    claims_of,
    json_of,
    method,
    path,
    problem,
    query_edit,
    read_body,
    respond,
    with_body,
)

SECOND_US = 1_000_000
PREFIX = "/partner/v2"


# ---------------------------------------------------------------------------------------------------- helpers
def document(edit):
    """A wrap: GET /openapi.json answers the deployment's document after `edit(doc)` (in place)."""
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


def operation_named(doc, operation_id):
    return next((op for op in operations(doc) if op.get("operationId") == operation_id), {})


def describe(doc, operation_id, text):
    operation = operation_named(doc, operation_id)
    if operation:
        operation["description"] = (operation.get("description", "") + " " + text).strip()


def inner_middleware(app, middleware):
    """Put `middleware(wsgi_app)` around the service's own WSGI app (inside Flask's error handling stays as is)."""
    app.wsgi_app = middleware(app.wsgi_app)


# ============================================================================ 1. §8 rate limit kept in fixed windows
# §8 gives the limit as "100 requests per 60 seconds" and nothing about how the 60 s are counted. This gateway
# keeps it as most do: fixed windows aligned to the clock's minutes (12:00:00-12:00:59.999...), at most 100 per
# window; a refusal's Retry-After is the time to the next window. A client staying within 100 requests in every
# 60 s is never refused; the 101st request of a clock minute always is.
class _FixedWindows:
    """The simulator's rate windows (ratelimit.RateLimiter.windows), counted per aligned window instead."""

    def __init__(self):
        self.counts, self.lock = {}, threading.Lock()

    def hit(self, world_id, now, operation_id, rules, frozen=False):
        from ptas_sandbox.simulator.ratelimit import refusal
        with self.lock:
            keys = []
            for rule, (limit, window) in rules:
                size = window * SECOND_US
                start = now - now % size
                key = (world_id, rule, start, size)
                if self.counts.get(key, 0) >= limit:
                    raise refusal(limit, window, start, now, rule, operation_id, frozen)
                keys.append(key)
            for key in keys:
                self.counts[key] = self.counts.get(key, 0) + 1
            if len(self.counts) > 64:
                self.counts = {k: v for k, v in self.counts.items() if k[2] + k[3] > now}

    def forget(self, world_id=None, deleted=False):
        with self.lock:
            self.counts = {k: v for k, v in self.counts.items() if world_id is not None and k[0] != world_id}


def _fixed_windows(app):
    app.extensions["ptas"].limiter.windows = _FixedWindows()


def _fixed_windows_in_document(doc):
    for operation in operations(doc):
        refused = operation["responses"].get("429")
        if isinstance(refused, dict):
            refused["description"] = ("Rate limit exceeded: 100 requests per clock minute (fixed windows aligned "
                                      "to the minute, UTC); Retry-After gives the seconds to the next window")


rate_limit_fixed_minutes = Case(
    "rate_limit_fixed_minutes",
    "§8: '100 requests per 60 seconds', with no word on how the 60 s are counted: fixed windows aligned to the "
    "clock's minutes, 100 per window (Retry-After: to the next minute); §7 'the response when a rate limit is "
    "exceeded: not shown'",
    apply=_fixed_windows, wrap=document(_fixed_windows_in_document))


# ============================================================================ 2. §7 the 429's Retry-After as a date
# §7: "The response when a rate limit is exceeded: not shown". The refusal (the simulator's 429 ProblemDetails)
# carries Retry-After in its other RFC 9110 form, an HTTP-date (rounded up to the second), with a Date header.
def _retry_after_date(app):
    clock = app.config["SYSTEM_TIME"]

    def middleware(inner):
        def served(environ, start_response):
            def start(status, headers, exc_info=None):
                if status.startswith("429"):
                    now_us = clock()
                    kept = []
                    for name, value in headers:
                        if name.lower() == "retry-after" and value.strip().isdigit():
                            at = math.ceil((now_us + int(value) * SECOND_US) / SECOND_US)
                            value = formatdate(at, usegmt=True)
                        if name.lower() != "date":
                            kept.append((name, value))
                    headers = kept + [("Date", formatdate(now_us // SECOND_US, usegmt=True))]
                return start_response(status, headers, exc_info) if exc_info else start_response(status, headers)
            return inner(environ, start)
        return served
    inner_middleware(app, middleware)


def _retry_after_date_in_document(doc):
    for operation in operations(doc):
        refused = operation["responses"].get("429")
        if isinstance(refused, dict):
            refused.setdefault("headers", {})["Retry-After"] = {
                "description": "an HTTP-date (RFC 9110 10.2.3): the instant from which the request may be sent "
                               "again", "schema": {"type": "string"}}


rate_limit_retry_after_date = Case(
    "rate_limit_retry_after_date",
    "§7: 'The response when a rate limit is exceeded: not shown': the 429 says when to retry with Retry-After as "
    "an HTTP-date (RFC 9110 allows either form), not as seconds; a Date header comes with it",
    apply=_retry_after_date, wrap=document(_retry_after_date_in_document))


# ============================================================================ 3. §8 additional per-method limits
# §8: "Additional rate limits apply to some methods; their values: not shown". Token creation is limited as
# sensitive operations are (10 an hour), polling reads as a backend protects its database: GetAccount 20 and
# GetTransactions 30 a minute, on top of the global 100 per 60 s. Refused as the global limit is.
METHOD_LIMITS = {"CreateOwnPartnerToken": (10, 3600), "GetAccount": (20, 60), "GetTransactions": (30, 60)}


def _method_limits_in_document(doc):
    for operation_id, (limit, window) in METHOD_LIMITS.items():
        describe(doc, operation_id, f"Rate limited: at most {limit} calls per {window} s (429 with Retry-After "
                                    "beyond), besides the global limit.")


method_limits = Case(
    "method_limits",
    "§8: 'Additional rate limits apply to some methods; their values: not shown': CreateOwnPartnerToken 10 per "
    "hour, GetAccount 20 and GetTransactions 30 per 60 s (refused like the global limit)",
    config={"OPERATION_LIMITS": METHOD_LIMITS}, wrap=document(_method_limits_in_document))


# ============================================================================ 4. §6 notifications through a queue
# §6: "Payload shape, headers, signature and retry behaviour of notifications: not shown", and nothing on when or
# in which order they go out. Events go through a queue with parallel consumers: each notification leaves 1 to
# 15 s after its event (a spread fixed by its event id), so notifications of events close in time may arrive in
# another order than the events happened.
class _QueuedDelivery:
    config = {"START_SERVICES": True}

    def __call__(self, app):
        def delay(store, row, insert):
            spread = 1 + int(hashlib.sha256(str(row["event_id"]).encode()).hexdigest(), 16) % 15
            store.execute("UPDATE webhook_deliveries SET due_at = ? WHERE id = ?",
                          (row["due_at"] + spread * SECOND_US, row["id"]))
        app.extensions["ptas"].hooks.fan_out.append(delay)


def _queue_in_document(doc):
    describe(doc, "CreateWebhook", "Notifications go out through a queue, 1 to 15 s after their event, not "
                                   "necessarily in the order of the events.")


notifications_via_queue = Case(
    "notifications_via_queue",
    "§6: when and in which order notifications are sent is not stated ('Payload shape, headers, signature and "
    "retry behaviour of notifications: not shown'): each goes out 1-15 s after its event, so close events may "
    "be notified out of order",
    config=_QueuedDelivery.config, apply=_QueuedDelivery(), wrap=document(_queue_in_document))


# ============================================================================ 5. §4.3 paging: a cursor past the end
# §4.3: the GetTransactions response "carries previousPageReference and nextPageReference"; when either is empty
# is not shown. Like a database cursor (a key-set scan that cannot tell it has reached the end), the last page
# that holds transactions still carries a nextPageReference; it leads to an empty page whose nextPageReference
# is null and whose previousPageReference leads back to that last page.
TX_PAGES = rf"^{PREFIX}/(accounts/[^/]+/transactions|transactions/[^/]+)$"
PAST_END, FIRST = "end.", "first."


def _encoded(value):
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


def _decoded(text):
    try:
        value = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    except ValueError:
        return False
    return value if value is None or isinstance(value, str) else False


def _cursor_past_end(app):
    def served(environ, start_response):
        if not (method(environ, "GET") and path(environ, TX_PAGES)):
            return app(environ, start_response)
        pairs = parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)
        others = [(k, v) for k, v in pairs if k != "pageReference"]
        reference = dict(pairs).get("pageReference") or None
        if reference and reference.startswith(FIRST):
            reference, environ = None, {**environ, "QUERY_STRING": urlencode(others)}
        elif reference and reference.startswith(PAST_END):
            last = _decoded(reference[len(PAST_END):])
            if last is not False:       # the last page is read again (one request): the caller may still see it
                status, headers, body = answered(app, {**environ, "QUERY_STRING": urlencode(
                    others + ([("pageReference", last)] if last else []))})
                if status.startswith("200"):
                    body = json.dumps({"transactions": [], "previousPageReference": last or FIRST + "page",
                                       "nextPageReference": None}).encode()
                return respond(start_response, status, headers, body)
        status, headers, body = answered(app, environ)
        data = json_of(body) if status.startswith("200") else None
        if isinstance(data, dict) and data.get("transactions") and not data.get("nextPageReference"):
            data["nextPageReference"] = PAST_END + _encoded(reference)
            body = json.dumps(data).encode()
        return respond(start_response, status, headers, body)
    return served


def _past_end_in_document(doc):
    for operation_id in ("GetTransactions", "GetTransactionsDeprecated"):
        describe(doc, operation_id, "The last page with transactions has a nextPageReference too; it leads to an "
                                    "empty page, whose nextPageReference is null.")


last_page_points_past_end = Case(
    "last_page_points_past_end",
    "§4.3: the response 'carries previousPageReference and nextPageReference', not when they are null: the last "
    "page with transactions still has a nextPageReference, to an empty page whose nextPageReference is null",
    wrap=wraps(_cursor_past_end, document(_past_end_in_document)))


# ============================================================================ 6. §8 page size fixed by the service
# §8: "page sizes: not shown", and §4.3 names the GetTransactions parameters (pageReference, createdAt, reportId,
# the two exclude flags): no page size among them. Pages hold 250 transactions; a pageSize parameter means
# nothing here (unknown query parameters are ignored) and the document does not list it.
def _fixed_size(pairs):
    return [(k, v) for k, v in pairs if k != "pageSize"] + [("pageSize", "250")]


def _fixed_size_in_document(doc):
    for operation_id in ("GetTransactions", "GetTransactionsDeprecated"):
        operation = operation_named(doc, operation_id)
        operation["parameters"] = [p for p in operation.get("parameters", []) if p.get("name") != "pageSize"]
        describe(doc, operation_id, "Pages hold 250 transactions.")


pages_of_250_fixed = Case(
    "pages_of_250_fixed",
    "§8 'page sizes: not shown'; §4.3 lists GetTransactions' parameters, with no page size: pages of 250, and a "
    "pageSize query parameter is ignored like any unknown parameter (the document lists none)",
    wrap=wraps(query_edit(TX_PAGES, _fixed_size), document(_fixed_size_in_document)))


# ============================================================================ 7. PUT replaces the settings
# §4.2: the payloads of PUT /partners/self, PUT /partners/{id} and of UpdateUser are not shown, nor what a PUT does
# with properties it leaves out. Here PUT replaces (RFC 9110 9.3.4): an optional setting left out of the body
# takes its default (email null, no redirect URLs, default uiSettings, the default userTokenExpirySeconds);
# name, which has no default, keeps its value when left out.
PARTNER_DEFAULTS = {"email": None, "redirectUrls": [], "uiSettings": {"styling": {}}, "userTokenExpirySeconds": 86400}
USER_DEFAULTS = {"email": None}


def _defaults(defaults):
    def fill(data):
        for key, value in defaults.items():
            data.setdefault(key, json.loads(json.dumps(value)))
    return fill


def _put_replaces_in_document(doc):
    text = ("PUT replaces: a setting left out of the body takes its default ({}); name is kept when left out.")
    for operation_id, defaults in (("UpdatePartner", PARTNER_DEFAULTS), ("UpdateChildPartner", PARTNER_DEFAULTS),
                                   ("UpdateUser", USER_DEFAULTS)):
        operation = operation_named(doc, operation_id)
        if operation:
            operation["description"] = operation.get("description", "").replace(
                "settings left out of the body keep their value", "settings left out of the body take defaults")
            describe(doc, operation_id, text.format(json.dumps(defaults)))


put_replaces_settings = Case(
    "put_replaces_settings",
    "§4.2: payloads of PUT /partners/self, PUT /partners/{id} and UpdateUser not shown, nor the treatment of "
    "absent properties: PUT replaces, an absent optional setting takes its default (email null, redirectUrls "
    "empty, uiSettings default, userTokenExpirySeconds default); name is kept (the document says so)",
    wrap=wraps(body_edit(("PUT",), rf"^{PREFIX}/partners/[^/]+$", _defaults(PARTNER_DEFAULTS)),
               body_edit(("PUT",), rf"^{PREFIX}/users/[^/]+$", _defaults(USER_DEFAULTS)),
               document(_put_replaces_in_document)))


# ============================================================================ 8. GetUsers: how `name` matches
# §4.3: GetUsers has the parameters name, email and search; how they match is not shown. `name` matches as a
# database's case-insensitive collation with a prefix search does (LIKE 'name%'): "earlier" finds "Earlier
# shop". email and search keep their matching.
def _name_prefix(app):
    def served(environ, start_response):
        if not (method(environ, "GET") and environ["PATH_INFO"] == f"{PREFIX}/users"):
            return app(environ, start_response)
        pairs = parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)
        names = [v for k, v in pairs if k == "name"]
        if not names:
            return app(environ, start_response)
        status, headers, body = answered(app, {**environ, "QUERY_STRING": urlencode(
            [(k, v) for k, v in pairs if k != "name"])})
        data = json_of(body) if status.startswith("200") else None
        if isinstance(data, dict) and isinstance(data.get("users"), list):
            wanted = names[-1].casefold()
            data["users"] = [u for u in data["users"] if isinstance(u, dict)
                             and str(u.get("name") or "").casefold().startswith(wanted)]
            body = json.dumps(data).encode()
        return respond(start_response, status, headers, body)
    return served


def _name_prefix_in_document(doc):
    for parameter in operation_named(doc, "GetUsers").get("parameters", []):
        if parameter.get("name") == "name":
            parameter["description"] = "users whose name starts with this text, in any case"


users_name_prefix = Case(
    "users_name_prefix",
    "§4.3: GetUsers takes name, email and search; their matching rules are not shown: name matches a prefix of "
    "the user's name, case-insensitively (the document says so)",
    wrap=wraps(_name_prefix, document(_name_prefix_in_document)))


# ============================================================================ 9. ids of another form: ULIDs
# §2: an id is a string; its form is not shown anywhere. This database keys its records with ULIDs: every id the
# service shows (records, references, notifications) is 26 characters of Crockford base32, and ids are read in
# that form in paths, queries and bodies.
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
GUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
ULID = re.compile(r"[0-7][0-9A-HJKMNP-TV-Z]{25}")
ID_KEYS = re.compile(r"^(id|.*Id|.*Ids|authReference|reference)$")


def to_ulid(guid):
    number = int(guid.replace("-", ""), 16)
    return "".join(CROCKFORD[(number >> (5 * i)) & 31] for i in reversed(range(26)))


def to_guid(ulid):
    number = 0
    for char in ulid:
        number = number * 32 + CROCKFORD.index(char)
    text = f"{number:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def _ids_out(node, key=None):
    """Ids under id-named keys (id, ...Id, ...Ids, authReference) in ULID form."""
    if isinstance(node, dict):
        return {k: _ids_out(v, k) for k, v in node.items()}
    if isinstance(node, list):
        return [_ids_out(v, key) for v in node]
    if isinstance(node, str) and key is not None and ID_KEYS.match(key) and GUID.fullmatch(node):
        return to_ulid(node)
    return node


def _ids_in(node):
    if isinstance(node, dict):
        return {k: _ids_in(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_ids_in(v) for v in node]
    return to_guid(node) if isinstance(node, str) and ULID.fullmatch(node) else node


def _in_text(text):
    return GUID.sub(lambda m: to_ulid(m.group(0)), text)


def _location(value):
    parts = urlsplit(value)
    query = [(k, to_ulid(v) if k == "reference" and GUID.fullmatch(v) else v) for k, v in parse_qsl(
        parts.query, keep_blank_values=True)]
    return urlunsplit(parts._replace(query=urlencode(query))) if parts.query else value


def _ulid_http(app):
    def served(environ, start_response):
        if environ["PATH_INFO"] == "/openapi.json" or not environ["PATH_INFO"].startswith(PREFIX):
            return app(environ, start_response)
        segments = [to_guid(s) if ULID.fullmatch(s) else s for s in environ["PATH_INFO"].split("/")]
        pairs = [(k, to_guid(v) if ULID.fullmatch(v) else v)
                 for k, v in parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)]
        environ = {**environ, "PATH_INFO": "/".join(segments), "QUERY_STRING": urlencode(pairs)}
        if "json" in environ.get("CONTENT_TYPE", ""):
            raw, data = read_body(environ)
            environ = with_body(environ, _ids_in(data)) if data is not None else {
                **environ, "wsgi.input": io.BytesIO(raw), "CONTENT_LENGTH": str(len(raw))}
        status, headers, body = answered(app, environ)
        kinds = " ".join(v for k, v in headers if k.lower() == "content-type")
        if "problem+json" in kinds:
            body = _in_text(body.decode()).encode()
        elif "json" in kinds and body:
            data = json_of(body)
            if data is not None:
                body = json.dumps(_ids_out(data)).encode()
        headers = [(k, _location(v) if k.lower() == "location" else
                    to_ulid(v) if k.lower() == "x-service-authreference" and GUID.fullmatch(v) else v)
                   for k, v in headers]
        return respond(start_response, status, headers, body)
    return served


class _UlidNotifications:
    config = {"START_SERVICES": True}

    def __call__(self, app):
        from ptas_sandbox.simulator.webhooks.signatures import sign

        def shaped(store, world, body):
            return _ids_out(body)

        def signed(store, row, headers):
            event = headers.get("webhook-id")
            if event and GUID.fullmatch(event) and row.get("secret") is not None:
                stamp = int(headers.get("webhook-timestamp", "0"))
                headers = {**headers, "webhook-id": to_ulid(event),
                           "webhook-signature": sign(row["secret"], to_ulid(event), stamp, row["request_body"])}
            return headers
        hooks = app.extensions["ptas"].hooks
        hooks.notification.append(shaped)
        hooks.signing.append(signed)


def _ulids_in_document(doc):
    def walk(node):
        if isinstance(node, dict):
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return _in_text(node) if isinstance(node, str) else node
    paths = walk(doc.get("paths") or {})
    doc["paths"] = paths
    doc["components"] = walk(doc.get("components") or {})
    info = doc.setdefault("info", {})
    info["description"] = (info.get("description", "") + " Ids are ULIDs: 26 characters of Crockford base32.")


ulid_ids = Case(
    "ulid_ids",
    "§2: ids are strings whose form is not shown: every id is a ULID (26 characters of Crockford base32), in "
    "answers, references, the OAuth2 return step and notifications, and is read so (the document says so)",
    config=_UlidNotifications.config, apply=_UlidNotifications(), wrap=wraps(_ulid_http, document(_ulids_in_document)))


# ============================================================================ 10. another's record: 403, not 404
# Which status a caller gets for a record that exists but is not its own is not fixed: §7 gives 403 for a missing
# scope and says nothing of ownership. An account of another user (or of another partner's user), or a user of
# another partner, is refused 403 Forbidden; only what does not exist (or was deleted) is 404.
ACCOUNT_PATH = re.compile(rf"^{PREFIX}/accounts/([^/]+)(/.*)?$")
USER_PATH = re.compile(rf"^{PREFIX}/users/([^/]+)(/tokens)?$")


def _others_forbidden(app):
    store = app.extensions["ptas"].store

    def others(environ):
        claims = claims_of(environ)
        kind, subject, world = claims.get("knd"), claims.get("sub"), claims.get("wld")
        account, user = ACCOUNT_PATH.match(environ["PATH_INFO"]), USER_PATH.match(environ["PATH_INFO"])
        if account and account.group(1) != "self":
            row = store.one("SELECT a.partner_id, a.user_id FROM accounts a JOIN users u ON u.id = a.user_id "
                            "WHERE a.id = ? AND a.world = ? AND u.deleted_at IS NULL", (account.group(1), world))
            owner = row and (row["user_id"] if kind == "user" else row["partner_id"])
            return bool(row) and owner != subject, "account"
        if user and user.group(1) != "self" and kind == "partner":
            row = store.one("SELECT partner_id FROM users WHERE id = ? AND world = ? AND deleted_at IS NULL",
                            (user.group(1), world))
            return bool(row) and row["partner_id"] != subject, "user"
        return False, None

    def middleware(inner):
        def served(environ, start_response):
            status, headers, body = answered(inner, environ)
            if status.startswith("404"):
                forbidden, what = others(environ)
                if forbidden:
                    status, headers, body = problem("403 Forbidden", f"This {what} is not the caller's.")
            return respond(start_response, status, headers, body)
        return served
    inner_middleware(app, middleware)


def _others_in_document(doc):
    for operation in operations(doc):
        responses = operation["responses"]
        if isinstance(responses.get("404"), dict):
            responses["404"]["description"] = "Not found"
        if isinstance(responses.get("403"), dict):
            responses["403"]["description"] = "Not allowed to the caller, or the record is another caller's"


others_records_403 = Case(
    "others_records_403",
    "§7 fixes 403 for a missing scope and no status for a record of someone else: an account of another user "
    "or partner, or another partner's user, is refused 403 (not 404); what does not exist stays 404",
    apply=_others_forbidden, wrap=document(_others_in_document))


# ============================================================================ 11. the first import takes half an hour
# §1 capability 5: fetching transactions after an account is created "takes from a few seconds up to hours
# depending on account type and volume". Here the first import of every new account waits in the import queue:
# it completes 30 minutes after the account was created (later polls and refreshes as before).
FIRST_IMPORT_S = 30 * 60


def _slow_first_import(app):
    sandbox = app.extensions["ptas"]

    def queued(request, response):
        with sandbox.store.transaction():
            sandbox.store.execute(
                "UPDATE data_imports SET due_at = started_at + ? WHERE kind = 'Initial' AND status = 'Running' "
                "AND due_at < started_at + ?", (FIRST_IMPORT_S * SECOND_US, FIRST_IMPORT_S * SECOND_US))
    sandbox.hooks.after.append(queued)


def _slow_import_in_document(doc):
    describe(doc, "CreateAccount", "The first import of a new account completes about 30 minutes after it.")


slow_first_import = Case(
    "slow_first_import",
    "§1 capability 5: fetching 'takes from a few seconds up to hours depending on account type and volume': the "
    "first import of every new account (dummy types too) completes 30 minutes after its creation",
    apply=_slow_first_import, wrap=document(_slow_import_in_document))


# ============================================================================ 12. the OAuth2 return step: 303
# §1 step 2: the service "redirects the user to that URL with query parameters"; which redirect status is not
# shown. The return step answers a form POST, so it redirects with 303 See Other (RFC 9110 15.4.4), as
# POST-redirect-GET does; Location and the X-Service-* headers as before.
def _see_other(environ, status, headers, body):
    if method(environ, "POST") and path(environ, rf"^{PREFIX}/oauth/consent/[^/]+$") and status.startswith("302"):
        return "303 See Other", headers, body
    return None


def _see_other_in_document(doc):
    responses = operation_named(doc, "CompleteOauthConsent").get("responses", {})
    if "302" in responses:
        responses["303"] = responses.pop("302")


oauth_return_303 = Case(
    "oauth_return_303",
    "§1 OAuth2 step 2: the service 'redirects the user to that URL with query parameters'; the redirect status is "
    "not shown: 303 See Other after the consent form's POST (the document says so)",
    change=_see_other, wrap=document(_see_other_in_document))


CASES = [rate_limit_fixed_minutes, rate_limit_retry_after_date, method_limits, notifications_via_queue,
         last_page_points_past_end, pages_of_250_fixed, put_replaces_settings, users_name_prefix, ulid_ids,
         others_records_403, slow_first_import, oauth_return_303]
assert len(CASES) == 12, len(CASES)
