"""Broken deployments written blind, second round (after blind_deployments.py): each breaks exactly one statement
of the interface spec, the way a real service might, written from the spec alone by someone who had not read the
features or the steps; the first count caught 26 of the 30. Forms as in
tests/support/blind_deployments.py: `change`, `wrap`, `config` or `apply`.

`served_as(op_id, ...)` is an `apply` that changes how this one app serves one operation (its token kinds, its
scopes, its handler): the app's own route is replaced, the shared operation registry is left as it is, so one case
never leaks into the next.
"""

import dataclasses
import io

from tests.support.blind_deployments import (
    Case,
    NotificationShape,
    answered,
    body_edit,
    json_change,
    method,
    path,
    problem,
    read_body,
    respond,
    scopes_of,
)


def served_as(op_id, handler=None, **changes):
    """An `apply`: this app serves `op_id` with `changes` (tokens, scopes); `handler(original)` gives its handler."""
    def apply(app):
        from ptas_sandbox.simulator.operations import REGISTRY
        from ptas_sandbox.simulator.pipeline import handle
        original = REGISTRY[op_id]
        if handler is not None:
            changes["handler"] = handler(original.handler)
        op = dataclasses.replace(original, **changes)
        app.view_functions[op_id] = lambda **params: handle(app.extensions["ptas"], op, params)
    return apply


def applies(*steps):
    def apply(app):
        for step in steps:
            step(app)
    return apply


def restored(environ, raw):
    return {**environ, "wsgi.input": io.BytesIO(raw), "CONTENT_LENGTH": str(len(raw))}


def token_dicts(data):
    """The token records of an answer: a token list, a user with its first token, or one record."""
    if not isinstance(data, dict):
        return []
    if isinstance(data.get("tokens"), list):
        return [t for t in data["tokens"] if isinstance(t, dict)]
    if isinstance(data.get("token"), dict):
        return [data["token"]]
    return [data] if "expiresIn" in data else []


def token_answer(environ):
    return path(environ, r"/tokens(/[^/]+)?$") or (method(environ, "POST") and path(environ, r"/users$"))


# ============================================================================ §1 OAuth2 account creation flow
oauth_request_redirect_url_ignored = Case(
    "oauth_request_redirect_url_ignored",
    "§1 OAuth2 flow step 1 / §4.2 note 5: 'An optional parameter carries a redirect URL for this request' (POST "
    "/oauth redirectUrl). The service ignores it: the user always returns to the partner's first redirect URL (or "
    "the service page)",
    wrap=body_edit(("POST",), r"/partner/v2/oauth$", lambda data: data.pop("redirectUrl", None)))


def _no_message_header(environ, status, headers, body):
    if method(environ, "POST") and "/oauth/consent/" in environ["PATH_INFO"]:
        return status, [(k, v) for k, v in headers if k.lower() != "x-service-authmessage"], body


oauth_message_header_missing = Case(
    "oauth_message_header_missing",
    "§1 OAuth2 flow: 'In every case the HTTP response headers of the return step carry the same data ... "
    "X-Service-AuthMessage (message text)'. The return step sends X-Service-AuthReference and X-Service-AuthStatus "
    "but never X-Service-AuthMessage",
    change=_no_message_header)


def _auth_type_renamed(data, environ):
    types = data.get("accountTypes") if isinstance(data.get("accountTypes"), list) else [data]
    for account_type in types:
        for field in account_type.get("accountFields") or []:
            if isinstance(field, dict) and field.get("Type") == "Auth":
                field["Type"] = "OAuth2"


auth_field_type_renamed = Case(
    "auth_field_type_renamed",
    "§1 OAuth2 flow: 'An account type uses OAuth2 authentication when the accountFields array of GetAccountType "
    "contains an element whose Type equals Auth' (§1 cap. 6: dummy-auth has OAuth2). GetAccountType(s) show the "
    "field's Type as OAuth2, while CreateAccount still demands an authReference",
    change=json_change(lambda e: method(e, "GET") and path(e, r"/accounttypes(/[^/]+)?$"), _auth_type_renamed))


# ============================================================================ §2 token record
def _names_lost(data, environ):
    for record in token_dicts(data):
        record["name"] = None


token_name_not_stored = Case(
    "token_name_not_stored",
    "§2 Token record: name 'Free label given at creation'. The creating answer echoes the name, but it is never "
    "stored: every token list shows name null",
    change=json_change(lambda e: method(e, "GET") and path(e, r"/tokens$"), _names_lost))


def _milliseconds(data, environ):
    for record in token_dicts(data):
        if isinstance(record.get("expiresIn"), int):
            record["expiresIn"] *= 1000


expires_in_in_milliseconds = Case(
    "expires_in_in_milliseconds",
    "§2 Token record: expiresIn 'integer, Lifetime in seconds'. Token records show the lifetime in milliseconds "
    "(expiresAt itself is right)",
    change=json_change(token_answer, _milliseconds))


def _used_at_creation(data, environ):
    for record in token_dicts(data):
        if record.get("lastUsedAt") is None:
            record["lastUsedAt"] = record.get("createdAt")


last_used_at_set_at_creation = Case(
    "last_used_at_set_at_creation",
    "§2 Token record: lastUsedAt 'Null when never used'. The column defaults to the creation time, so a token "
    "never used shows lastUsedAt = createdAt",
    change=json_change(token_answer, _used_at_creation))


# ============================================================================ §4.1 token endpoints, §5 rules 3 and 4
def _create_needs_read(app):
    def checked(environ, start_response):
        if method(environ, "POST") and path(environ, r"/partners/self/tokens$") \
                and not scopes_of(environ) & {"partner:read", "partner:all"}:
            return respond(start_response, *problem("403 Forbidden",
                                                    "Creating a token needs partner:read as well as partner:update."))
        return app(environ, start_response)
    return checked


own_token_needs_read_too = Case(
    "own_token_needs_read_too",
    "§4.1 rule 3: 'A partner token with at least partner:update creates new tokens; listing tokens additionally "
    "needs partner:read or partner:all'. CreateOwnPartnerToken refuses (403) a token holding partner:update "
    "without partner:read",
    wrap=_create_needs_read)


def _child_without_id(data, environ):
    for record in token_dicts(data):
        record.pop("id", None)


child_token_without_id = Case(
    "child_token_without_id",
    "§5 rule 3 / §8: 'Partner tokens with a lifetime over one hour get an id used for revocation'. Tokens of child "
    "partners (6 months by default) are shown without id in CreatePartnerToken and GetPartnerTokens",
    change=json_change(lambda e: path(e, r"/partners/(?!self/)[^/]+/tokens$"), _child_without_id))


def _own_list_for_child(app):
    def listed(environ, start_response):
        if method(environ, "GET") and path(environ, r"/partners/(?!self/)[^/]+/tokens$"):
            environ = {**environ, "PATH_INFO": "/partner/v2/partners/self/tokens"}
        return app(environ, start_response)
    return listed


child_token_list_shows_own = Case(
    "child_token_list_shows_own",
    "§4.1 GetPartnerTokens GET /partners/{id}/tokens: 'list of tokens of the child partner'. The handler lists the "
    "calling partner's own tokens whatever the id",
    wrap=_own_list_for_child)


deploy_token_lists_children = Case(
    "deploy_token_lists_children",
    "§5 rule 4: a deploy token (only partner:create) 'can only create child partners and cannot access the parent "
    "partner or other child partners'; §5 table: partner:read lists child partners. GetPartners is served to "
    "partner:create as well",
    apply=served_as("GetPartners", scopes=("partner:read", "partner:create")))


def _short_lifetimes_refused(app):
    def checked(environ, start_response):
        if method(environ, "POST") and path(environ, r"/(partners|users)/[^/]+/tokens$"):
            raw, data = read_body(environ)
            if isinstance(data, dict) and isinstance(data.get("expiresIn"), int) and data["expiresIn"] < 300:
                return respond(start_response, *problem("400 Bad Request",
                                                        "`expiresIn` must be at least 300 seconds."))
            environ = restored(environ, raw)
        return app(environ, start_response)
    return checked


short_token_lifetime_refused = Case(
    "short_token_lifetime_refused",
    "§8: token lifetime is set per token with expiresIn in seconds, 'any value the caller sends'. Lifetimes under "
    "five minutes are refused with 400",
    wrap=_short_lifetimes_refused)


# ======================================================== §4.2 notes: users, user tokens, UI sessions
def _email_required(app):
    def checked(environ, start_response):
        if method(environ, "POST") and path(environ, r"/partner/v2/users$"):
            raw, data = read_body(environ)
            if not (isinstance(data, dict) and data.get("email")):
                return respond(start_response, *problem("400 Bad Request", "`email` is required."))
            environ = restored(environ, raw)
        return app(environ, start_response)
    return checked


create_user_requires_email = Case(
    "create_user_requires_email",
    "§4.2 note 1 / §2 User: 'Request and response include an optional email'. CreateUser refuses (400) a request "
    "without email",
    wrap=_email_required)


create_user_ignores_scope = Case(
    "create_user_ignores_scope",
    "§4.2 note 1: POST /users 'request has an optional scope ... for the initial user token' (2.11.0). The scope "
    "sent is ignored: the first token always has account:all transaction:all",
    wrap=body_edit(("POST",), r"/partner/v2/users$", lambda data: data.pop("scope", None)))


user_token_refuses_partner_token_scope = Case(
    "user_token_refuses_partner_token_scope",
    "§4.2 note 2: POST /users/{id}/tokens 'accepts partner tokens (scope user:create, user:all, user.token:create or "
    "user.token:all)'. A partner token holding user.token:create or user.token:all (without user:create/user:all) "
    "is refused 403",
    apply=served_as("CreateUserToken", scopes={"partner": ("user:create",), "user": ("user.token:create",)}))


def _first_type_only(data):
    if isinstance(data.get("accountTypeIds"), list) and len(data["accountTypeIds"]) > 1:
        data["accountTypeIds"] = data["accountTypeIds"][:1]


accountui_keeps_first_type_only = Case(
    "accountui_keeps_first_type_only",
    "§4.2 note 4: POST /accountui 'request and response carry accountTypeIds (array)'. Only the first account type "
    "of the array is kept: the session (and its answers) offer one type",
    wrap=body_edit(("POST",), r"/accountui$", _first_type_only))


userui_read_with_create_scope = Case(
    "userui_read_with_create_scope",
    "§4.2 note 4 / §5 table: 'GET /userui/{id} needs userui:read'. A token holding userui:create but not userui:read "
    "is served",
    apply=served_as("GetUserUiSession", scopes=("userui:read", "userui:create")))


# ============================================================================ §1 / §5 rule 5: accounts
def _partner_wide(original):
    def handler(call):
        if call.principal.kind == "user":
            partner_view = dataclasses.replace(call.principal, kind="partner", user_id=None)
            call = dataclasses.replace(call, principal=partner_view)
        return original(call)
    return handler


user_sees_other_users_accounts = Case(
    "user_sees_other_users_accounts",
    "§1 Terms, User: 'Users see only the accounts they created'. GetAccounts with a user token lists the accounts "
    "of every user of the partner",
    apply=served_as("GetAccounts", handler=_partner_wide))


partner_token_refused_on_accounts = Case(
    "partner_token_refused_on_accounts",
    "§5 rule 5: 'A partner token may directly access or manage accounts' (§5 table: account scopes for Partner). "
    "GetAccounts and GetAccount refuse partner tokens with 403",
    apply=applies(served_as("GetAccounts", tokens=("user",)), served_as("GetAccount", tokens=("user",))))


# ============================================================================ §2 / §5: partner settings
partner_read_updates_partner = Case(
    "partner_read_updates_partner",
    "§5 table: partner:update 'Update partner information'; partner:read only reads; §7 rule 1: lacking a required "
    "scope gets 403. UpdatePartner (PUT /partners/self) is served to a token holding only partner:read",
    apply=served_as("UpdatePartner", scopes=("partner:update", "partner:read")))


def _one_redirect_url(data):
    if isinstance(data.get("redirectUrls"), list):
        data["redirectUrls"] = data["redirectUrls"][:1]


redirect_urls_truncated_to_one = Case(
    "redirect_urls_truncated_to_one",
    "§1 cap. 1 / §2 Partner: settings hold 'one or several OAuth2 redirect URLs' (redirectUrls). Only the first URL "
    "of the list sent is stored",
    wrap=body_edit(("POST", "PUT"), r"/partners(/[^/]+)?$", _one_redirect_url))


# ============================================================================ §4.3 GetUsers
def _live_users_only(data, environ):
    if isinstance(data.get("users"), list):
        data["users"] = [u for u in data["users"] if not (isinstance(u, dict) and u.get("deletedAt"))]


get_users_hides_deleted = Case(
    "get_users_hides_deleted",
    "§4.3 / 2.1.5: GetUsers '... deleted users carry deletedAt' (they stay listed). GetUsers leaves deleted users out",
    change=json_change(lambda e: method(e, "GET") and path(e, r"/users$"), _live_users_only))


# ============================================================================ §1 cap. 6, §2 account types
def _without_dummy_report(data, environ):
    if isinstance(data.get("accountTypes"), list):
        data["accountTypes"] = [t for t in data["accountTypes"] if not (isinstance(t, dict)
                                                                       and t.get("id") == "dummy-report")]


account_types_list_omits_dummy_report = Case(
    "account_types_list_omits_dummy_report",
    "§1 cap. 6: dummy account types (dummy, dummy-auth, dummy-report) are 'also returned by GetAccountTypes and "
    "GetAccountType'. GetAccountTypes leaves dummy-report out (GetAccountType still answers it)",
    change=json_change(lambda e: method(e, "GET") and path(e, r"/accounttypes$"), _without_dummy_report))


def _fields_without_flag(data, environ):
    types = data.get("accountTypes") if isinstance(data.get("accountTypes"), list) else [data]
    for account_type in types:
        for field in account_type.get("transactionFields") or []:
            if isinstance(field, dict):
                field.pop("isDeprecated", None)


transaction_fields_without_is_deprecated = Case(
    "transaction_fields_without_is_deprecated",
    "§2 Account type: 'transactionFields (each with isDeprecated, deprecationReason)' (2.5.0). transactionFields "
    "carry deprecationReason but no isDeprecated",
    change=json_change(lambda e: method(e, "GET") and path(e, r"/accounttypes(/[^/]+)?$"), _fields_without_flag))


# ============================================================================ §2 transactions and reports
def _local_day_reports(data, environ):
    from ptas_sandbox.simulator.reports.models import report_id
    from ptas_sandbox.simulator.timestamps import DAY_US, parse
    rows = data.get("transactions") if isinstance(data.get("transactions"), list) else [data]
    for row in rows:
        if isinstance(row, dict) and row.get("reportId") and row.get("accountId") and row.get("createdAt"):
            local_day = (parse(row["createdAt"]) + 2 * 3600 * 1_000_000) // DAY_US   # the day in UTC+2
            row["reportId"] = report_id(row["accountId"], local_day)


report_id_of_local_day = Case(
    "report_id_of_local_day",
    "§2 Transaction: 'reportId link' (the report holding the transaction; §4.3 reportId search). A transaction's "
    "reportId names the report of its day in UTC+2, so transactions after 22:00 UTC link to the next day's report, "
    "which does not hold them",
    change=json_change(lambda e: method(e, "GET") and path(e, r"/accounts/[^/]+/transactions(/[^/]+)?$"),
                       _local_day_reports))


# ============================================================================ §4.2 data imports
def _import_detail_missing(environ, status, headers, body):
    if method(environ, "GET") and path(environ, r"/dataimports/[^/]+$") and status.startswith("200"):
        return problem("404 Not Found", "No route for this path.")


dataimport_detail_not_routed = Case(
    "dataimport_detail_not_routed",
    "§4.2: 'GET /dataimports/{id} one data import' (2.6.0). The route is missing: 404 for every id, also the ids "
    "GET /dataimports lists",
    change=_import_detail_missing)


# ============================================================================ §4.2 webhooks, §6 events
def _delete_keeps_webhook(app):
    def lazy(environ, start_response):
        if method(environ, "DELETE") and path(environ, r"/webhooks/[^/]+$"):
            status, headers, body = answered(app, {**environ, "REQUEST_METHOD": "GET", "CONTENT_LENGTH": "0",
                                                   "QUERY_STRING": "", "wsgi.input": io.BytesIO()})
            if status.startswith("200"):       # answered as deleted, deleted never
                return respond(start_response, "204 No Content", [], b"")
        return app(environ, start_response)
    return lazy


webhook_delete_not_persisted = Case(
    "webhook_delete_not_persisted",
    "§4.2: 'DELETE /webhooks/{id} delete a webhook'. The service answers 204 and deletes nothing: the webhook is "
    "still listed, read and notified",
    wrap=_delete_keeps_webhook)


def _created_route_sends_updated(app):
    def routed(environ, start_response):
        if method(environ, "POST") and path(environ, r"/testevents/accountcreated$"):
            environ = {**environ, "PATH_INFO": environ["PATH_INFO"].replace("accountcreated", "accountupdated")}
        return app(environ, start_response)
    return routed


test_account_created_sends_updated = Case(
    "test_account_created_sends_updated",
    "§4.2: 'POST /testevents/accountcreated send a test AccountCreated notification' (§6). The route is wired to "
    "the AccountUpdated test event",
    wrap=_created_route_sends_updated)


def _update_without_event(original):
    def handler(call):
        from ptas_sandbox.simulator.context import Ctx

        class Quiet(Ctx):           # the update's own event is forgotten; the imports' still go out
            def emit(self, kind, partner_id, data):
                return None if kind == "AccountUpdated" else super().emit(kind, partner_id, data)
        quiet = Quiet(**{f.name: getattr(call.ctx, f.name) for f in dataclasses.fields(call.ctx)})
        return original(dataclasses.replace(call, ctx=quiet))
    return handler


account_updated_not_notified = Case(
    "account_updated_not_notified",
    "§6 AccountUpdated: 'An account was updated' (active). UpdateAccount sends no AccountUpdated notification "
    "(an import's change of the account still does; the test endpoint too)",
    config={"START_SERVICES": True}, apply=served_as("UpdateAccount", handler=_update_without_event))


def _report_without_problems(body):
    data = body.get("data")
    if isinstance(data, dict) and isinstance(data.get("report"), dict):
        data["report"].pop("errors", None)
        data["report"].pop("warnings", None)
    return body


notification_report_without_errors = Case(
    "notification_report_without_errors",
    "§6: 'Account, report and data-import objects in notifications carry errors and warnings'. The report object "
    "in TransactionsImported notifications has neither",
    config={"START_SERVICES": True}, apply=NotificationShape(_report_without_problems))


# ============================================================================ §8 limits
rate_limit_window_30s = Case(
    "rate_limit_window_30s",
    "§8: 'Global rate limit, all requests from partners and users: 100 requests per 60 seconds'. The window is "
    "30 s: 100 requests per 30 s (up to 200 per 60 s) are served",
    config={"RATE_WINDOW_SECONDS": 30})


CASES = [value for value in list(globals().values()) if isinstance(value, Case)]
assert len(CASES) == 30, len(CASES)
