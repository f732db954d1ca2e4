"""Broken deployments written blind, fifth round (after blind_deployments.py, blind_deployments_c.py and
blind_deployments_e.py): each breaks exactly one statement of the interface spec, the way a real service might,
written from the spec alone by someone who had not read the features or the steps. Forms as in
tests/support/blind_deployments.py: `change`, `wrap`, `config` or `apply`; `served_as` (blind_deployments_c.py)
changes how this one app serves one operation.

Favoured here: a state transition applied to the records but not to what the service does (a revocation an
authentication cache ignores, an expiry compared with `>`, a deletion the detail read ignores, an authorization
that failed redeemed anyway), an ownership check missing on a less common path (a report by id, the token list of
a partner that is not a child), an event that a real operation should cause going out wrongly or not at all (an
account the account UI created, a first import, a second webhook, the retired AccountError), and edges of a limit
and of a page (the 100th request, a last page holding one transaction).
"""

import dataclasses
import json
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from tests.support.blind_deployments import Case, NotificationShape, body_edit, method, path
from tests.support.blind_deployments_c import served_as

SECOND_US = 1_000_000


# ============================================================================ §3 token transitions
def _revocation_cached(app):
    """Authentication keeps a positive answer for a token for five minutes: a revocation inside that time does
    not reach it. The records (isRevoked, isValid, revokedAt) are right."""
    from ptas_sandbox.simulator.auth import Principal
    from ptas_sandbox.simulator.problems import Unauthorized
    hooks = app.extensions["ptas"].hooks
    authenticate, read_token = hooks.tokens.authenticate, hooks.tokens.read

    def cached(ctx, claims, row=None):
        try:
            return authenticate(ctx, claims, row)
        except Unauthorized:
            found = row if row is not None else read_token(ctx, claims)
            if found is None or found["kind"] != claims.get("knd") or found["revoked_at"] is None \
                    or ctx.now >= found["expires_at"] or ctx.now >= found["revoked_at"] + 300 * SECOND_US:
                raise
            return Principal(found["id"], found["kind"], found["partner_id"], found["user_id"],
                             frozenset(found["scope"].split()))
    hooks.tokens = dataclasses.replace(hooks.tokens, authenticate=cached)


revoked_token_accepted_for_five_minutes = Case(
    "revoked_token_accepted_for_five_minutes",
    "§3 Token: 'valid -> DELETE token by id -> revoked: isRevoked true, isValid false' (§2 isValid: 'True only "
    "when the token is neither revoked nor expired'). An authentication cache keeps accepting a revoked token for "
    "five minutes after its revocation; the token records say revoked",
    apply=_revocation_cached)


def _expiry_exclusive(app):
    """The authentication compares `now > expiresAt`: at the very instant expiresAt the token still passes."""
    from ptas_sandbox.simulator.auth import Principal
    from ptas_sandbox.simulator.problems import Unauthorized
    hooks = app.extensions["ptas"].hooks
    authenticate, read_token = hooks.tokens.authenticate, hooks.tokens.read

    def off_by_one(ctx, claims, row=None):
        try:
            return authenticate(ctx, claims, row)
        except Unauthorized:
            found = row if row is not None else read_token(ctx, claims)
            if found is None or found["kind"] != claims.get("knd") or found["revoked_at"] is not None \
                    or ctx.now != found["expires_at"]:
                raise
            return Principal(found["id"], found["kind"], found["partner_id"], found["user_id"],
                             frozenset(found["scope"].split()))
    hooks.tokens = dataclasses.replace(hooks.tokens, authenticate=off_by_one)


token_accepted_at_exact_expiry = Case(
    "token_accepted_at_exact_expiry",
    "§3 Token: 'valid -> passage of time: expiresAt reached -> expired: isExpired true, isValid false'. The "
    "authentication compares now > expiresAt: at the exact instant expiresAt (createdAt + expiresIn) the token "
    "is still accepted, though its record already says isExpired true",
    apply=_expiry_exclusive)


# ============================================================ §1 / §4.1 ownership on the less common paths
def _report_partner_check_only(original):
    def handler(call):
        from ptas_sandbox.simulator.problems import not_found
        from ptas_sandbox.simulator.reports import models as reports
        from ptas_sandbox.simulator.users import models as users
        row = reports.get(call.ctx, call.params["id"])
        if row is None or row["partner_id"] != call.principal.partner_id or users.is_deleted(call.ctx, row["user_id"]):
            raise not_found("report", call.params["id"])
        return reports.record(row)          # the user token's own user is never compared
    return handler


user_reads_other_users_report = Case(
    "user_reads_other_users_report",
    "§1 Terms, User: 'Users see only the accounts they created'. GetReport (a report by its id) checks the "
    "partner only: a user token reads the report of another user's account (GetReports and the transactions of "
    "that account still refuse it)",
    apply=served_as("GetReport", handler=_report_partner_check_only))


def _tokens_of_any_partner(original):
    def handler(call):
        from ptas_sandbox.simulator.problems import not_found
        from ptas_sandbox.simulator.tokens import models as tokens
        row = call.ctx.store.one("SELECT id FROM partners WHERE id = ? AND world = ? AND deleted_at IS NULL",
                                 (call.params["id"], call.ctx.world.id))
        if row is None:
            raise not_found("partner", call.params["id"])
        return {"tokens": tokens.partner_tokens(call.ctx, row["id"])}      # no check that it is a child
    return handler


partner_tokens_of_non_child_listed = Case(
    "partner_tokens_of_non_child_listed",
    "§4.1 GetPartnerTokens GET /partners/{id}/tokens: 'list of tokens of the child partner'. The partner is "
    "looked up by id alone: a child partner's token lists its parent's or a sibling's tokens there (GetPartner "
    "and the other child-partner paths still check the relation)",
    apply=served_as("GetPartnerTokens", handler=_tokens_of_any_partner))


# ============================================================================ §1 OAuth2 account creation flow
def _failed_reference_redeemed(original):
    def handler(call):
        reference = call.body.get("authReference") if isinstance(call.body, dict) else None
        if isinstance(reference, str) and reference:
            # the redemption checks that the return step ended, not how it ended
            call.ctx.store.execute("UPDATE auth_references SET status = 'Success' WHERE id = ? AND world = ? "
                                   "AND status IN ('NotFoundError', 'OtherError')", (reference, call.ctx.world.id))
        return original(call)
    return handler


create_account_accepts_failed_authorization = Case(
    "create_account_accepts_failed_authorization",
    "§1 OAuth2 flow step 2: status Success, NotFoundError or OtherError; 'On Success the partner software may "
    "continue without user action; otherwise the error must be fixed and the process repeated'. CreateAccount "
    "accepts (201) an authReference whose return step ended with NotFoundError or OtherError",
    apply=served_as("CreateAccount", handler=_failed_reference_redeemed))


def _no_message_on_success(environ, status, headers, body):
    if not (method(environ, "POST") and path(environ, r"/oauth/consent/[^/]+$") and status.startswith("3")):
        return None
    kept = []
    for name, value in headers:
        if name.lower() == "location":
            parts = urlsplit(value)
            pairs = parse_qsl(parts.query, keep_blank_values=True)
            if ("status", "Success") in pairs:
                value = urlunsplit(parts._replace(query=urlencode([(k, v) for k, v in pairs if k != "message"])))
        kept.append((name, value))
    return status, kept, body


oauth_success_redirect_without_message = Case(
    "oauth_success_redirect_without_message",
    "§1 OAuth2 flow step 2: the service 'redirects the user to that URL with query parameters: reference ..., "
    "status ... and message (text to show the user)'. On Success the redirect's query carries reference and "
    "status only (nothing to show, the service thinks); NotFoundError and OtherError carry message, and the "
    "X-Service-AuthMessage header is always sent",
    change=_no_message_on_success)


# ============================================================================ §6 events after real operations
def _fan_out_drop(decide):
    """An `apply`: attempt-1 delivery rows for which `decide(store, row, body)` is true are not kept (the event is
    recorded, its notification never written)."""
    def apply(app):
        def dropped(store, row, insert):
            body = json.loads(row["request_body"])
            if decide(store, row, body):
                store.execute("DELETE FROM webhook_deliveries WHERE id = ?", (row["id"],))
        app.extensions["ptas"].hooks.fan_out.append(dropped)
    return apply


def _created_by_account_ui(store, row, body):
    account = (body.get("data") or {}).get("account") or {}
    return row["event_type"] == "AccountCreated" and not row["test"] and bool(account.get("id")) and \
        store.one("SELECT 1 AS found FROM accountui_sessions WHERE account_id = ?", (account["id"],)) is not None


accountui_account_created_not_notified = Case(
    "accountui_account_created_not_notified",
    "§6 AccountCreated: 'An account was created' (active); 'When an event occurs, the service sends an HTTP POST "
    "notification'. An account created through an account UI session (POST /accountui, then the hosted form) "
    "sends no AccountCreated; CreateAccount's accounts and the test endpoint still do",
    config={"START_SERVICES": True}, apply=_fan_out_drop(_created_by_account_ui))


def _initial_import(store, row, body):
    data_import = (body.get("data") or {}).get("dataImport") or {}
    return row["event_type"] == "TransactionsImported" and not row["test"] and data_import.get("kind") == "Initial"


initial_import_not_notified = Case(
    "initial_import_not_notified",
    "§6 TransactionsImported: 'Transactions were imported, with or without a report' (active). The first import "
    "of a new account (which brings its history) sends no TransactionsImported; the later scheduled imports and "
    "refreshes do",
    config={"START_SERVICES": True}, apply=_fan_out_drop(_initial_import))


def _second_webhook(store, row, body):
    return store.one("SELECT 1 AS found FROM webhook_deliveries WHERE event_id = ? AND webhook_id <> ? "
                     "AND attempt = 1", (row["event_id"], row["webhook_id"])) is not None


only_first_webhook_notified = Case(
    "only_first_webhook_notified",
    "§6: 'When an event occurs, the service sends an HTTP POST notification to the callback URL configured for "
    "the webhook' (each webhook subscribing to the kind). When two webhooks of a partner subscribe to a kind, "
    "only the oldest is notified; a partner with one webhook sees nothing wrong",
    config={"START_SERVICES": True}, apply=_fan_out_drop(_second_webhook))


def _error_kind_for_problems(body):
    account = (body.get("data") or {}).get("account") if isinstance(body.get("data"), dict) else None
    if body.get("eventType") == "AccountUpdated" and not body.get("isTest") and isinstance(account, dict) \
            and account.get("errors"):
        body["eventType"] = "AccountError"
    return body


account_error_sent_for_credential_problems = Case(
    "account_error_sent_for_credential_problems",
    "§6 AccountError: 'no longer triggered; AccountUpdated replaces it' (AccountUpdated: 'replaces AccountError'). "
    "An account update that records errors (an import refused by the provider, e.g. a credentials validation "
    "error) is still notified as AccountError, as before webhooks 1.0.4; other updates go out as AccountUpdated",
    config=NotificationShape.config, apply=NotificationShape(_error_kind_for_problems))


# ============================================================================ §1 cap. 3 deletion
class _SoftDeleted:
    """DeleteAccount marks the account deleted; the list leaves it out, the read by id does not look at the
    mark: GetAccount still answers the account as it was when deleted (its owner only)."""

    def __init__(self):
        self.kept = {}

    def delete(self, original):
        def handler(call):
            from ptas_sandbox.simulator.accounts import models as accounts
            row = accounts.get_owned(call.ctx, call.principal, call.params["id"])
            record = accounts.record(call.ctx, row)
            answer = original(call)
            self.kept[(call.ctx.world.id, row["id"])] = (row["partner_id"], row["user_id"], record)
            return answer
        return handler

    def get(self, original):
        def handler(call):
            from ptas_sandbox.simulator.problems import NotFound
            try:
                return original(call)
            except NotFound:
                kept = self.kept.get((call.ctx.world.id, call.params["id"]))
                if kept is None or kept[0] != call.principal.partner_id or \
                        (call.principal.kind == "user" and kept[1] != call.principal.user_id):
                    raise
                return kept[2]
        return handler

    def __call__(self, app):
        served_as("DeleteAccount", handler=self.delete)(app)
        served_as("GetAccount", handler=self.get)(app)


def _soft_delete(app):
    _SoftDeleted()(app)


deleted_account_still_readable = Case(
    "deleted_account_still_readable",
    "§1 capability 3: 'Account management on behalf of a user: ... DeleteAccount'. DeleteAccount answers 204 and "
    "GetAccounts no longer lists the account, but GetAccount still answers it (200) by its id: the deletion is a "
    "mark the read by id ignores",
    apply=_soft_delete)


# ============================================================================ §5 scopes on one token kind
user_token_reads_transactions_without_scope = Case(
    "user_token_reads_transactions_without_scope",
    "§5 scope table: transaction:read / transaction:all 'Read and list transactions' (token types Partner, "
    "Child-Partner, User); §7 rule 1: a token lacking a required scope gets 403. GetTransactions checks the "
    "transaction scope of partner tokens only: a user token without one (e.g. account:all alone) lists its "
    "accounts' transactions",
    apply=served_as("GetTransactions", scopes={"partner": ("transaction:read",), "user": ()}))


# ============================================================================ §2 / 2.3.0 partner settings
create_partner_ignores_ui_settings = Case(
    "create_partner_ignores_ui_settings",
    "§9 2.3.0: 'uiSettings on CreatePartner and UpdatePartner'; §2 Partner: 'uiSettings (including "
    "uiSettings.styling for customizing the Account UI)'. CreatePartner ignores the uiSettings it is given (the "
    "child starts with the defaults); UpdatePartner and the update of a child still store them",
    wrap=body_edit(("POST",), r"/partner/v2/partners$", lambda data: data.pop("uiSettings", None)))


# ============================================================================ §1 cap. 5 / §4.3 paging
def _lone_last_transaction_dropped(original):
    def handler(call):
        from ptas_sandbox.simulator.transactions import models as transactions
        from ptas_sandbox.simulator.users import models as users
        answer = original(call)
        following = answer.get("nextPageReference") if isinstance(answer, dict) else None
        if following:
            # "more pages" is computed as more than one transaction left: a last page of one is never offered
            account = users.get_owned_row(call.ctx, call.principal, "accounts", call.params["id"], "account")
            q = call.query
            found = transactions.page(call.ctx, account, created_at=q.get("createdAt"), report_id=q.get("reportId"),
                                      reference=following, size=q.get("pageSize", transactions.DEFAULT_PAGE))
            if len(found["rows"]) == 1 and found["nextPageReference"] is None:
                answer["nextPageReference"] = None
        return answer
    return handler


lone_last_transaction_unreachable = Case(
    "lone_last_transaction_unreachable",
    "§1 capability 5: 'GetTransactions returns all transactions downloaded so far'; §4.3 nextPageReference. The "
    "service offers a next page only when more than one transaction is left: when the last page would hold "
    "exactly one transaction, the page before it has nextPageReference null and that transaction is never listed "
    "(GetTransaction still reads it by id; statistics count it)",
    apply=served_as("GetTransactions", handler=_lone_last_transaction_dropped))


# ============================================================================ §8 limits
rate_limit_refuses_the_100th = Case(
    "rate_limit_refuses_the_100th",
    "§8: 'Global rate limit, all requests from partners and users: 100 requests per 60 seconds'. The limiter "
    "counts the request before comparing (>= instead of >): the 100th request of a window is refused with 429, "
    "so only 99 are served",
    config={"RATE_LIMIT": 99})


CASES = [
    revoked_token_accepted_for_five_minutes,
    token_accepted_at_exact_expiry,
    user_reads_other_users_report,
    partner_tokens_of_non_child_listed,
    create_account_accepts_failed_authorization,
    oauth_success_redirect_without_message,
    accountui_account_created_not_notified,
    initial_import_not_notified,
    only_first_webhook_notified,
    account_error_sent_for_credential_problems,
    deleted_account_still_readable,
    user_token_reads_transactions_without_scope,
    create_partner_ignores_ui_settings,
    lone_last_transaction_unreachable,
    rate_limit_refuses_the_100th,
]
assert len(CASES) == 15, len(CASES)
