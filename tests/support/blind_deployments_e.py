"""Broken deployments written blind, fourth round (after blind_deployments.py and blind_deployments_c.py): each
breaks exactly one statement of the interface spec, the way a real service might, written from the spec alone by
someone who had not read the features or the steps. Forms as in tests/support/blind_deployments.py: `change`,
`wrap`, `config` or `apply`; `served_as` (blind_deployments_c.py) changes how this one app serves one operation.

Favoured here: a rule kept on one path and lost on another (the deprecated transactions form, a list against its
detail read, the return step without a redirect URL), scope-table cells one step too loose or too strict, a
partner reaching another partner's tokens, and what the version history removed or retired still served.
"""

import dataclasses
import re

from tests.support.blind_deployments import (
    Case,
    NotificationShape,
    json_change,
    method,
    path,
    problem,
    query_edit,
    read_body,
    respond,
    six_digits,
)
from tests.support.blind_deployments_c import applies, restored, served_as, token_dicts
from tests.support.broken_deployments import Outgoing, changed
from tests.support.deployments import json_of


# ============================================================================ §1 OAuth2 account creation flow
def _consent_answer(environ):
    return method(environ, "POST") and path(environ, r"/oauth/consent/[^/]+$")


def _service_page_without_headers(environ, status, headers, body):
    if _consent_answer(environ) and status.startswith("200"):
        return status, [(k, v) for k, v in headers if not k.lower().startswith("x-service-auth")], body


oauth_headers_missing_without_redirect = Case(
    "oauth_headers_missing_without_redirect",
    "§1 OAuth2 flow: 'When the partner has none, the user ends on a simple service page ...' and 'In every case "
    "the HTTP response headers of the return step carry the same data ... X-Service-AuthReference, "
    "X-Service-AuthStatus, X-Service-AuthMessage'. The headers are sent with the redirect only: the service page "
    "shown when no redirect URL applies carries none of them",
    change=_service_page_without_headers)


def _reference_renamed_in_query(environ, status, headers, body):
    if _consent_answer(environ) and status.startswith("3"):
        return status, [(k, re.sub(r"([?&])reference=", r"\1authReference=", v) if k.lower() == "location" else v)
                        for k, v in headers], body


oauth_query_reference_renamed = Case(
    "oauth_query_reference_renamed",
    "§1 OAuth2 flow step 2: the service 'redirects the user to that URL with query parameters: reference (the "
    "authReference from step 1), status ... and message'. The query parameter is named authReference instead of "
    "reference (the X-Service-AuthReference header is right)",
    change=_reference_renamed_in_query)


# ============================================================================ §1 terms: accounts and users
class _NoDuplicateCheck:
    """The store as CreateAccount's rules see it: the look-up of an account of the same type for the user finds
    nothing (a check written against a column that is never filled)."""

    def __init__(self, store):
        self._store = store

    def __getattr__(self, name):
        return getattr(self._store, name)

    def one(self, sql, *args, **kwargs):
        if sql.startswith("SELECT 1 FROM accounts WHERE world = ? AND user_id = ? AND type_id = ?"):
            return None
        return self._store.one(sql, *args, **kwargs)


def _duplicates_allowed(original):
    def handler(call):
        ctx = dataclasses.replace(call.ctx, store=_NoDuplicateCheck(call.ctx.store))
        return original(dataclasses.replace(call, ctx=ctx))
    return handler


def _accounts_table_without_unique(app):
    """The service's accounts table has no unique key on (user, account type): it is made anew without one."""
    from ptas_sandbox.simulator.accounts.models import SCHEMA
    store = app.extensions["ptas"].store
    loose = SCHEMA.replace(",\n    UNIQUE (world, user_id, type_id)", "")
    assert loose != SCHEMA
    with store.transaction():
        store.execute("ALTER TABLE accounts RENAME TO accounts_strict")
        for statement in loose.split(";"):
            if statement.strip().startswith("CREATE TABLE"):
                store.execute(statement)
        store.execute("INSERT INTO accounts SELECT * FROM accounts_strict")
        store.execute("DROP TABLE accounts_strict")
        for statement in loose.split(";"):
            if statement.strip().startswith("CREATE INDEX"):
                store.execute(statement)


duplicate_account_per_provider = Case(
    "duplicate_account_per_provider",
    "§1 Terms, Account: 'One account per provider per user'. CreateAccount accepts (201) a second account of the "
    "same account type for the same user; both are listed",
    apply=applies(_accounts_table_without_unique, served_as("CreateAccount", handler=_duplicates_allowed)))


def _deprecated_form_unowned(original):
    def handler(call):
        from ptas_sandbox.simulator.problems import not_found
        from ptas_sandbox.simulator.transactions.http import page_of
        account_id = call.params["accountId"]
        row = call.ctx.store.one("SELECT * FROM accounts WHERE id = ? AND world = ? AND partner_id = ?",
                                 (account_id, call.ctx.world.id, call.principal.partner_id))
        if row is None:
            raise not_found("account", account_id)
        return page_of(call, row)
    return handler


deprecated_transactions_other_users_account = Case(
    "deprecated_transactions_other_users_account",
    "§1 Terms, User: 'Users see only the accounts they created'. GetTransactionsDeprecated (the old form, still "
    "served) checks only the partner: a user token reads the transactions of another user's account there "
    "(GetTransactions and GetTransaction still refuse it)",
    apply=served_as("GetTransactionsDeprecated", handler=_deprecated_form_unowned))


# ============================================================================ §1 cap. 6 / §2 account types
def _dummy_report_without_reports(data, environ):
    if isinstance(data, dict):
        data["hasPspReports"] = False


dummy_report_detail_without_psp_reports = Case(
    "dummy_report_detail_without_psp_reports",
    "§1 cap. 6: 'dummy-report (with reports)'; §2 Account type: hasPspReports (2.9.1: in GetAccountType). "
    "GetAccountType of dummy-report answers hasPspReports false (GetAccountTypes still says true)",
    change=json_change(lambda e: method(e, "GET") and path(e, r"/accounttypes/dummy-report$"),
                       _dummy_report_without_reports))


# ============================================================================ §2 token records, users, accounts
def _revoked_at_six(data, environ):
    for record in token_dicts(data):
        if isinstance(record.get("revokedAt"), str):
            record["revokedAt"] = six_digits(record["revokedAt"])


revoked_at_six_digits = Case(
    "revoked_at_six_digits",
    "§2 Timestamp format / §9.3: 'exactly seven fractional digits ... Date-times always have seven fractional "
    "digits'. revokedAt is written with six (the revocation's answer and every token list); the other times "
    "have seven",
    change=json_change(lambda e: path(e, r"/tokens(/[^/]+)?$"), _revoked_at_six))


def _deleted_at_dropped(data, environ):
    if isinstance(data, dict):
        data.pop("deletedAt", None)


get_user_without_deleted_at = Case(
    "get_user_without_deleted_at",
    "§2 User: 'has an id, an optional email, a user token, a name, and for deleted users deletedAt'. GetUser (GET "
    "/users/{id}) of a deleted user answers without deletedAt (GetUsers still carries it)",
    change=json_change(lambda e: method(e, "GET") and path(e, r"/users/(?!self$)[^/]+$"), _deleted_at_dropped))


def _deprecated_warnings_dropped(data, environ):
    if isinstance(data, dict):
        data.pop("warnings", None)


create_account_drops_deprecated_warnings = Case(
    "create_account_drops_deprecated_warnings",
    "§4.3: 'CreateAccount (... response has errors, warnings, warningDetails)'; §2 Account: warnings "
    "'deprecated in create and update responses' (2.8.2: deprecated, not removed). CreateAccount answers "
    "without warnings (warningDetails only)",
    change=json_change(lambda e: method(e, "POST") and path(e, r"/accounts$"), _deprecated_warnings_dropped))


def _report_list_without_problems(data, environ):
    reports = data.get("reports") if isinstance(data, dict) else data
    for report in reports if isinstance(reports, list) else []:
        if isinstance(report, dict):
            report.pop("errors", None)
            report.pop("warnings", None)


report_list_without_errors = Case(
    "report_list_without_errors",
    "§2 Report: 'each has errors and warnings'; §7 rule 4: report objects report problems in errors and "
    "warnings arrays. The reports of GetReports (the list) carry neither (GetReport, one report, has both)",
    change=json_change(lambda e: method(e, "GET") and path(e, r"/accounts/[^/]+/reports$"),
                       _report_list_without_problems))


# ============================================================================ §4.1 token endpoints / §3
def _children_tokens_listed_too(original):
    def handler(call):
        from ptas_sandbox.simulator.partners import models as partners
        from ptas_sandbox.simulator.tokens import models as tokens
        own = call.principal.partner_id
        ids = [own] + [child["id"] for child in partners.children(call.ctx, own)]
        return {"tokens": [record for each in ids for record in tokens.partner_tokens(call.ctx, each)]}
    return handler


own_token_list_includes_child_tokens = Case(
    "own_token_list_includes_child_tokens",
    "§4.1 GetOwnPartnerTokens GET /partner/v2/partners/self/tokens: the token list of the calling partner (its "
    "own tokens; a child's are GetPartnerTokens). The list also holds the tokens of the partner's child partners",
    apply=served_as("GetOwnPartnerTokens", handler=_children_tokens_listed_too))


def _revoke_any_partners_token(original):
    def handler(call):
        from ptas_sandbox.simulator.tokens import models as tokens
        token_id = call.params["tokenId"]
        row = call.ctx.store.one("SELECT partner_id FROM tokens WHERE world = ? AND id = ? AND kind = 'partner'",
                                 (call.ctx.world.id, token_id))
        owner = row["partner_id"] if row is not None else call.principal.partner_id
        return tokens.revoke(call.ctx, owner, token_id, call.principal.token_id)
    return handler


own_revoke_reaches_other_partner = Case(
    "own_revoke_reaches_other_partner",
    "§4.1 RevokePartnerOwnToken DELETE /partner/v2/partners/self/tokens/{tokenId} revokes one of the caller's own "
    "tokens. The token is looked up by id alone: a child partner's token revokes its parent's (or a sibling's) "
    "token through its own /partners/self/tokens path",
    apply=served_as("RevokePartnerOwnToken", handler=_revoke_any_partners_token))


# ============================================================================ §4.3 GetUsers
get_users_ignores_email = Case(
    "get_users_ignores_email",
    "§4.3: 'GetUsers (parameters name, email, search; ...)' (2.5.0). The email parameter is not wired: GetUsers "
    "?email=... lists every user of the partner",
    wrap=query_edit(r"/users$", lambda pairs: [(k, v) for k, v in pairs if k != "email"]))


# ============================================================================ §5 scopes, deploy and user tokens
delete_child_with_update_scope = Case(
    "delete_child_with_update_scope",
    "§5 scope table: partner:delete 'Delete child partners' (partner:update: 'Update partner information "
    "including child partners'); §7 rule 1: lacking a required scope gets 403. Deleting a child partner (DELETE "
    "/partners/{id}) is served to a token holding partner:update without partner:delete or partner:all",
    apply=served_as("DeleteChildPartner", scopes=("partner:delete", "partner:update")))


oauth_redirect_refuses_account_create = Case(
    "oauth_redirect_refuses_account_create",
    "§5 scope table: account:create 'Create and authorize accounts'. CreateOauthRedirectUrl (POST /oauth, the "
    "authorization step of creating an OAuth2 account) refuses (403) a token holding account:create; it wants "
    "account:update (account:all passes)",
    apply=served_as("CreateOauthRedirectUrl", scopes=("account:update",)))


def _deploy_token_check_missing(original):
    def handler(call):
        if call.principal.is_deploy_token:     # the check of who created the child is skipped
            principal = dataclasses.replace(call.principal, scopes=call.principal.scopes | {"partner:read"})
            call = dataclasses.replace(call, principal=principal)
        return original(call)
    return handler


deploy_token_issues_child_token = Case(
    "deploy_token_issues_child_token",
    "§5 rule 4: a deploy token (only partner:create) 'can only create child partners and cannot access the parent "
    "partner or other child partners ... If such a system loses its token, only the main partner can issue a new "
    "child-partner token'. CreatePartnerToken serves a deploy token for any child partner of the main partner, "
    "not only one it created",
    apply=served_as("CreatePartnerToken", handler=_deploy_token_check_missing))


def _first_token_a_day(original):
    def handler(call):
        from ptas_sandbox.simulator.operations import Answer
        from ptas_sandbox.simulator.partners import models as partners
        from ptas_sandbox.simulator.users import models as users
        partner = {**dict(partners.require(call.ctx, call.principal.partner_id)), "user_token_expiry": 86400}
        return Answer(201, users.create(call.ctx, partner, call.body or {}))
    return handler


first_user_token_ignores_expiry_setting = Case(
    "first_user_token_ignores_expiry_setting",
    "§5 rule 6: 'User tokens: returned when a user is created; validity in seconds is the partner setting "
    "userTokenExpirySeconds'. CreateUser's first user token always lives 86400 s (a fixed day) whatever the "
    "setting; CreateUserToken's renewals follow it",
    apply=served_as("CreateUser", handler=_first_token_a_day))


# ============================================================================ §6 events
def _imports_without_report_not_sent(payload):
    data = payload.get("data") or {}
    if payload.get("eventType") == "TransactionsImported" and not payload.get("isTest") and not data.get("report"):
        return []
    return [payload]


transactions_imported_only_with_report = Case(
    "transactions_imported_only_with_report",
    "§6 TransactionsImported: 'Transactions were imported, with or without a report' (active). Only imports that "
    "brought a report are notified: an import of an account without reports (dummy) sends nothing",
    config=Outgoing.config, apply=Outgoing(_imports_without_report_not_sent).apply)


def _test_import_as_report_imported(body):
    if body.get("isTest") and body.get("eventType") == "TransactionsImported":
        body["eventType"] = "ReportImported"
    return body


def _test_answer_as_report_imported(original):
    def handler(call):
        answer = original(call)
        if isinstance(getattr(answer, "body", None), dict):
            answer.body["eventType"] = "ReportImported"
        return answer
    return handler


test_transactions_imported_sends_report_imported = Case(
    "test_transactions_imported_sends_report_imported",
    "§4.2 'POST /testevents/transactionsimported: send a test TransactionsImported notification'; §6 "
    "ReportImported 'no longer triggered; TransactionsImported replaces it'. The test endpoint still uses the old "
    "template: its notification (and answer) has the kind ReportImported",
    config={"START_SERVICES": True},
    apply=applies(NotificationShape(_test_import_as_report_imported),
                  served_as("SendTestTransactionsImported", handler=_test_answer_as_report_imported)))


# ============================================================================ §8 limits
def _one_year_refused_for_children(app):
    def refused(environ, start_response):
        if method(environ, "POST") and path(environ, r"/partners/(?!self/)[^/]+/tokens$"):
            raw, data = read_body(environ)
            lifetime = data.get("expiresIn") if isinstance(data, dict) else None
            if isinstance(lifetime, int) and not isinstance(lifetime, bool) and lifetime >= 31536000:
                return respond(start_response, *problem("400 Bad Request",
                                                        "expiresIn must be less than one year (31536000)."))
            environ = restored(environ, raw)
        return app(environ, start_response)
    return refused


child_token_one_year_refused = Case(
    "child_token_one_year_refused",
    "§8: token lifetime is set per token with expiresIn, 'any value the caller sends; a one-year token uses "
    "31536000'. CreatePartnerToken (child partners) refuses expiresIn 31536000 or more with 400 (an exclusive "
    "maximum); own tokens still take it",
    wrap=_one_year_refused_for_children)


# ============================================================================ §9 version history
def _legacy_fields(environ, status, headers, body):
    if not status.startswith("2") or not method(environ, "GET"):
        return None
    data = json_of(body)
    if path(environ, r"/transactions(/[^/]+)?$") and isinstance(data, dict):
        for row in data.get("transactions", [data]):
            if isinstance(row, dict) and isinstance(row.get("fields"), list) and isinstance(row.get("createdAt"), str):
                day = row["createdAt"][:10]
                row["fields"] += [{"name": name, "value": day, "isDeprecated": False, "deprecationReason": None,
                                   "isMapped": False, "mappedTo": None} for name in ("bookingDate", "valueDate")]
    elif path(environ, r"/accounttypes(/[^/]+)?$") and isinstance(data, dict):
        for entry in data.get("accountTypes", [data]):
            if isinstance(entry, dict) and isinstance(entry.get("transactionFields"), list):
                entry["transactionFields"] += [{"name": name, "label": label, "type": "Date", "isDeprecated": False,
                                                "deprecationReason": None, "mappedTo": None}
                                               for name, label in (("bookingDate", "Booking date"),
                                                                   ("valueDate", "Value date"))]
    else:
        return None
    return changed(status, headers, data)


transaction_fields_keep_booking_date = Case(
    "transaction_fields_keep_booking_date",
    "§9 2.5.0: '... bookingDate and valueDate removed from transaction fields'. They are still served: every "
    "transaction's fields list carries bookingDate and valueDate (not deprecated), and the account types' "
    "transactionFields still list them",
    change=_legacy_fields)


CASES = [
    oauth_headers_missing_without_redirect,
    oauth_query_reference_renamed,
    duplicate_account_per_provider,
    deprecated_transactions_other_users_account,
    dummy_report_detail_without_psp_reports,
    revoked_at_six_digits,
    get_user_without_deleted_at,
    create_account_drops_deprecated_warnings,
    report_list_without_errors,
    own_token_list_includes_child_tokens,
    own_revoke_reaches_other_partner,
    get_users_ignores_email,
    delete_child_with_update_scope,
    oauth_redirect_refuses_account_create,
    deploy_token_issues_child_token,
    first_user_token_ignores_expiry_setting,
    transactions_imported_only_with_report,
    test_transactions_imported_sends_report_imported,
    child_token_one_year_refused,
    transaction_fields_keep_booking_date,
]
