"""Broken deployments written blind, sixth round (after blind_deployments.py, blind_deployments_c.py,
blind_deployments_e.py and blind_deployments_f.py): each breaks exactly one statement of the interface spec, the
way a real service might, written from the spec alone by someone who had not read the features or the steps.
Forms as in tests/support/blind_deployments.py: `change`, `wrap`, `config` or `apply`; `served_as`
(blind_deployments_c.py) changes how this one app serves one operation.

Favoured here: the search and paging parameters of GetTransactions taken wrongly (a search ignored, a previous
page that is the page itself, an exclusion that takes the fixed fields with it), scope-table cells one step too
strict or too loose on rows the earlier rounds left alone (listing own tokens, listing child partners, the deploy
token's one job, user UI reads, GetUsers for a user token), the OAuth2 flow without a redirect URL and its
reference header, the errors and warnings of account types and updated accounts, a data-import list, a test
endpoint that never enqueues, and a rate limit kept per token instead of globally.
"""

import re
from urllib.parse import parse_qsl

from tests.support.blind_deployments import Case, json_change, method, path, query_edit
from tests.support.blind_deployments_c import applies, served_as

PREFIX = "/partner/v2"
TRANSACTIONS = rf"^{PREFIX}/accounts/[^/]+/transactions$"
ONE_OR_MANY_TRANSACTIONS = rf"^{PREFIX}/accounts/[^/]+/transactions(/[^/]+)?$"


def query_of(environ):
    return dict(parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True))


def flag(environ, name):
    return str(query_of(environ).get(name, "")).lower() in ("true", "1")


# ============================================================================ §4.3 GetTransactions parameters
report_id_search_ignored = Case(
    "report_id_search_ignored",
    "§4.3: 'GetTransactions parameters: ... reportId (search)' (2.1.6: reportId search parameter). The search is "
    "not wired: GetTransactions ?reportId=R answers every transaction of the account, those of other reports "
    "(and without a report) included; the transactions' own reportId links are right",
    wrap=query_edit(TRANSACTIONS, lambda pairs: [(k, v) for k, v in pairs if k != "reportId"]))


def _previous_is_current(data, environ):
    reference = query_of(environ).get("pageReference")
    if reference and isinstance(data, dict) and data.get("previousPageReference"):
        data["previousPageReference"] = reference


previous_reference_is_current_page = Case(
    "previous_reference_is_current_page",
    "§4.3: 'Response carries previousPageReference and nextPageReference' (2.2.2). On every page reached with a "
    "pageReference, previousPageReference is that page's own reference (the one the request sent): following it "
    "answers the same page again, never the page before it; the first page and every nextPageReference are right",
    change=json_change(lambda e: method(e, "GET") and path(e, TRANSACTIONS), _previous_is_current))


FIXED = ("orderNumber", "bookingText", "amount", "currency")


def _fixed_values_dropped(data, environ):
    if not flag(environ, "excludeMappedFields") or not isinstance(data, dict):
        return
    rows = data["transactions"] if isinstance(data.get("transactions"), list) else [data]
    for row in rows:
        if isinstance(row, dict):
            for key in FIXED:
                row.pop(key, None)


exclude_mapped_drops_fixed_values = Case(
    "exclude_mapped_drops_fixed_values",
    "§4.3: 'excludeMappedFields (boolean; true removes fields mapped to fixed transaction fields such as "
    "orderNumber or bookingText)' from the list of fields; §2 Transaction: has orderNumber, bookingText. With "
    "excludeMappedFields=true the mapped entries leave `fields` as they should, and the fixed fields they map to "
    "(orderNumber, bookingText, amount, currency) leave the transaction with them (GetTransactions and "
    "GetTransaction)",
    change=json_change(lambda e: method(e, "GET") and path(e, ONE_OR_MANY_TRANSACTIONS), _fixed_values_dropped))


# ============================================================================ §4.1 / §5 scope table cells
def _listing_needs_update(original):
    def handler(call):
        from ptas_sandbox.simulator.problems import Forbidden
        from ptas_sandbox.simulator.scopes import holds
        if not holds(call.principal.scopes, "partner:update"):
            raise Forbidden("GetOwnPartnerTokens needs partner:update as well as partner:read.",
                            requiredScopes=["partner:update"])
        return original(call)
    return handler


own_token_list_needs_update = Case(
    "own_token_list_needs_update",
    "§4.1 GetOwnPartnerTokens: 'token list response; needs partner:read or partner:all' (rule 3: 'listing tokens "
    "additionally needs partner:read or partner:all'). The list also demands partner:update: a token holding "
    "partner:read without partner:update (or partner:all) is refused 403",
    apply=served_as("GetOwnPartnerTokens", handler=_listing_needs_update))


child_partner_list_needs_all = Case(
    "child_partner_list_needs_all",
    "§5 scope table: partner:read 'Read partner information including list of child partners'; §1 cap. 1 "
    "GetPartners. GetPartners is guarded by partner:all only: a token holding partner:read (without partner:all) "
    "is refused 403; GetPartner and GET /partners/self still take partner:read",
    apply=served_as("GetPartners", scopes=("partner:all",)))


deploy_token_cannot_create_child = Case(
    "deploy_token_cannot_create_child",
    "§5 rule 4: a deploy token, 'a partner token with only the partner:create scope. It can only create child "
    "partners'; §5 table partner:create 'Create child partners and tokens for child partners'. CreatePartner "
    "(POST /partners) is guarded by partner:update: the deploy token (and any token with partner:create but "
    "without partner:update or partner:all) is refused 403",
    apply=served_as("CreatePartner", scopes=("partner:update",)))


users_listed_to_user_token = Case(
    "users_listed_to_user_token",
    "§5 scope table: user:read 'Read and list users', token types 'Partner, Child-Partner' (a user token holds "
    "none of the user:* scopes); §1 Terms: users see only the accounts they created. GetUsers (GET /users) checks "
    "only the token's partner: a user token lists every user of its partner, with names and e-mail addresses",
    apply=served_as("GetUsers", tokens=("partner", "user"), scopes={"partner": ("user:read",), "user": ()}))


userui_read_refuses_read_scope = Case(
    "userui_read_refuses_read_scope",
    "§4.2 note 4: 'GET /userui/{id} needs userui:read' (§5 table userui:read 'Read user UI session status'; "
    "2.12.0). GET /userui/{id} is guarded by userui:create instead: a token holding userui:read without "
    "userui:create is refused 403 (a token holding both, like the first token, sees nothing wrong)",
    apply=served_as("GetUserUiSession", scopes=("userui:create",)))


# ============================================================================ §1 OAuth2 account creation flow
def _redirect_url_required(original):
    def handler(call):
        from ptas_sandbox.simulator.partners import models as partners
        from ptas_sandbox.simulator.problems import BadRequest
        given = call.body.get("redirectUrl") if isinstance(call.body, dict) else None
        settings = partners.record(partners.require(call.ctx, call.principal.partner_id))
        if not given and not settings.get("redirectUrls"):
            raise BadRequest("No redirect URL: send `redirectUrl` or set redirectUrls in the partner settings.")
        return original(call)
    return handler


oauth_refused_without_redirect_url = Case(
    "oauth_refused_without_redirect_url",
    "§1 OAuth2 flow step 1: 'When it is absent, the first redirect URL of the partner settings is used. When the "
    "partner has none, the user ends on a simple service page showing a success or an error message' (step 2: "
    "'Without a redirect URL the partner software must let the user start the next step manually'). "
    "CreateOauthRedirectUrl and CreateAccountOauthRedirectUrl answer 400 when neither the request nor the partner "
    "settings give a redirect URL",
    apply=applies(served_as("CreateOauthRedirectUrl", handler=_redirect_url_required),
                  served_as("CreateAccountOauthRedirectUrl", handler=_redirect_url_required)))


def _reference_header_is_key(environ, status, headers, body):
    match = path(environ, rf"^{PREFIX}/oauth/consent/([^/]+)$")
    if not (method(environ, "POST") and match):
        return None
    return status, [(k, match.group(1) if k.lower() == "x-service-authreference" else v) for k, v in headers], body


oauth_reference_header_is_consent_key = Case(
    "oauth_reference_header_is_consent_key",
    "§1 OAuth2 flow: 'In every case the HTTP response headers of the return step carry the same data ... "
    "X-Service-AuthReference (the authReference)'. The header carries the provider-side key of the consent page "
    "(the state of the provider's URL) instead of the authReference; the redirect's reference query parameter "
    "and the other two headers are right",
    change=_reference_header_is_key)


# ============================================================================ §2 account types, accounts
def _type_without_problems(data, environ):
    if isinstance(data, dict):
        data.pop("errors", None)
        data.pop("warnings", None)


account_type_detail_without_errors = Case(
    "account_type_detail_without_errors",
    "§2 Account type: 'has ... state, errors, warnings (current status of the provider)'; §9 2.7.1 / 2.8.0: "
    "'state, errors, warnings in GetAccountType'. GetAccountType (one type) answers state but neither errors nor "
    "warnings (GetAccountTypes still carries both)",
    change=json_change(lambda e: method(e, "GET") and path(e, rf"^{PREFIX}/accounttypes/[^/]+$"),
                       _type_without_problems))


def _update_without_errors(data, environ):
    if isinstance(data, dict):
        data.pop("errors", None)


update_account_without_errors = Case(
    "update_account_without_errors",
    "§9 2.7.0: 'errors on CreateAccount and UpdateAccount'; §2 Account: has errors; §7 rule 4: account objects "
    "report problems in errors and warnings arrays. UpdateAccount's answer has no errors (warnings and "
    "warningDetails are there; CreateAccount and GetAccount still carry errors)",
    change=json_change(lambda e: method(e, "PUT", "PATCH") and path(e, rf"^{PREFIX}/accounts/[^/]+$"),
                       _update_without_errors))


# ============================================================================ §4.2 data imports
def _finished_only(data, environ):
    if isinstance(data, dict) and isinstance(data.get("dataImports"), list):
        data["dataImports"] = [d for d in data["dataImports"] if not (isinstance(d, dict)
                                                                      and d.get("status") == "Running")]


data_import_list_hides_running = Case(
    "data_import_list_hides_running",
    "§4.2: 'GET /dataimports list data imports' (2.6.0). The list is read from the finished-imports view: an "
    "import still running (the first import right after CreateAccount, a refresh under way) is not listed, "
    "though GET /dataimports/{id} answers it",
    change=json_change(lambda e: method(e, "GET") and path(e, rf"^{PREFIX}/dataimports$"), _finished_only))


# ============================================================================ §4.2 / §6 test events
def _test_never_enqueued(original):
    def handler(call):
        from ptas_sandbox.simulator.operations import Answer
        from ptas_sandbox.simulator.timestamps import render
        from ptas_sandbox.simulator.webhooks import samples
        from ptas_sandbox.simulator.worlds import next_in_sequence
        ctx = call.ctx
        data = samples.data_for("AccountTypeUpdated", ctx, next_in_sequence(ctx.store, ctx.world.id, "test-event"))
        # the sample is built and answered; the event is never written to the outbox
        return Answer(202, {"id": ctx.new_id("event"), "eventType": "AccountTypeUpdated",
                            "createdAt": render(ctx.now), "isTest": True, "data": data})
    return handler


test_account_type_updated_never_sent = Case(
    "test_account_type_updated_never_sent",
    "§4.2: 'POST /testevents/accounttypeupdated send a test AccountTypeUpdated notification'; §6: 'The test "
    "endpoints of section 4.2 send a test notification of the corresponding kind'. The endpoint answers 202 with "
    "the sample notification, but never enqueues it: no webhook subscribed to AccountTypeUpdated receives "
    "anything (the other four test endpoints, and real AccountTypeUpdated events, are sent)",
    config={"START_SERVICES": True},
    apply=served_as("SendTestAccountTypeUpdated", handler=_test_never_enqueued))


# ============================================================================ §8 limits
def _per_token_limit(app):
    from flask import request

    from ptas_sandbox.simulator.pipeline import bearer_claims
    sandbox = app.extensions["ptas"]
    limiter = sandbox.limiter
    hit = limiter.hit

    def per_token(world_id, now, operation_id, frozen=False):
        claims = bearer_claims(sandbox, request.environ) or {}
        token_id = claims.get("jti")
        key = f"{world_id}/token/{token_id}" if token_id else world_id
        return hit(key, now, operation_id, frozen=frozen)
    limiter.hit = per_token


rate_limit_per_token = Case(
    "rate_limit_per_token",
    "§8: 'Global rate limit, all requests from partners and users: 100 requests per 60 seconds'. The limiter is "
    "keyed by the bearer token (as an API gateway keys by API key): each token has its own 100 per 60 s, so a "
    "partner with two tokens (or a partner and its users) makes 200 and more requests in 60 s; one token alone "
    "is limited as before",
    apply=_per_token_limit)


CASES = [
    report_id_search_ignored,
    previous_reference_is_current_page,
    exclude_mapped_drops_fixed_values,
    own_token_list_needs_update,
    child_partner_list_needs_all,
    deploy_token_cannot_create_child,
    users_listed_to_user_token,
    userui_read_refuses_read_scope,
    oauth_refused_without_redirect_url,
    oauth_reference_header_is_consent_key,
    account_type_detail_without_errors,
    update_account_without_errors,
    data_import_list_hides_running,
    test_account_type_updated_never_sent,
    rate_limit_per_token,
]
assert len(CASES) == 15, len(CASES)
assert all(re.fullmatch(r"[a-z0-9_]+", case.name) for case in CASES)
