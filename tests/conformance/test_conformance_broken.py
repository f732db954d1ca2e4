"""Proof the suites catch departures: the @contract suites against deliberately broken targets.

Each target is the simulator behind a WSGI middleware that breaks one rule of the spec; the scenario that
guards the rule must fail, and the suite must still pass against targets that bend nothing the spec fixes
(a server adding properties the spec does not name).
"""

import base64
import collections
import io
import json
import re

import pytest
from werkzeug.test import Client

from ptas_sandbox.conformance import runner
from ptas_sandbox.simulator import create_app


def six_digit_dates(environ, status, headers, body):
    """Dates as many servers render them by default: microseconds, six digits."""
    return status, headers, re.sub(rb"(\d{2}:\d{2}:\d{2}\.\d{6})\dZ", rb"\1Z", body)


def bare_403(environ, status, headers, body):
    """The earlier behaviour (spec §7 rule 2): a 403 with an empty body."""
    if status.startswith("403"):
        return status, [(k, v) for k, v in headers if k.lower() != "content-type"], b""


def bare_401(environ, status, headers, body):
    if status.startswith("401"):
        return status, [(k, v) for k, v in headers if k.lower() != "content-type"], b""


def self_revocation(environ, status, headers, body):
    """A token revoking itself is answered as a success (spec §3 says it cannot)."""
    path = environ["PATH_INFO"]
    if environ["REQUEST_METHOD"] == "DELETE" and "/partners/self/tokens/" in path:
        payload = environ.get("HTTP_AUTHORIZATION", "").split(" ")[-1].split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        if path.rsplit("/", 1)[-1] == claims.get("jti"):
            return "200 OK", [("Content-Type", "application/json")], b"{}"


def list_with_access_tokens(environ, status, headers, body):
    """Token lists that leak each token's JWT (spec §2: only the creating response carries it)."""
    data = json_of(body)
    if environ["REQUEST_METHOD"] == "GET" and isinstance(data, dict) and isinstance(data.get("tokens"), list):
        for token in data["tokens"]:
            token["accessToken"] = "eyJhbGciOiJIUzI1NiJ9.eyJsZWFrZWQiOnRydWV9.c2lnbmF0dXJl"
        return status, headers, json.dumps(data).encode()


def ids_for_short_tokens(environ, status, headers, body):
    """An id on every partner token, however short its life (spec §8: only over one hour)."""
    data = json_of(body)
    if environ["REQUEST_METHOD"] == "POST" and isinstance(data, dict) and "accessToken" in data and "id" not in data:
        data["id"] = "short-lived-token-id"
        return status, headers, json.dumps(data).encode()


def unknown_properties(environ, status, headers, body):
    """A newer server: every JSON object grows properties the spec does not name (spec §9 rule 2 allows it)."""
    data = json_of(body)
    if data is None or environ["PATH_INFO"] == "/openapi.json":
        return None

    def grow(node):
        if isinstance(node, dict):
            for value in node.values():
                grow(value)
            node["x-added-in-2-13"] = {"nested": [1, "2"], "when": None}
        elif isinstance(node, list):
            for value in node:
                grow(value)
    grow(data)
    return status, headers, json.dumps(data).encode()


def closed_schemas(environ, status, headers, body):
    """A document whose schemas forbid unknown properties: a strict client generated from it breaks on 2.13."""
    if environ["PATH_INFO"] == "/openapi.json":
        data = json.loads(body)
        for schema in data["components"]["schemas"].values():
            schema["additionalProperties"] = False
        return status, headers, json.dumps(data).encode()


def removed_path_served(environ, status, headers, body):
    """GET /users/{id}/token still answers (spec §4.2 note 6: removed)."""
    if re.search(r"/users/[^/]+/token$", environ["PATH_INFO"]):
        return "200 OK", [("Content-Type", "application/json")], b'{"accessToken": null}'


class MovedAndRenamed:
    """A deployment behind a gateway path (/gw, in the document's `servers`) whose document names the operations
    the spec leaves unnamed in its own way: nothing the spec fixes, so every @contract scenario still passes."""

    RENAMED = {"DeleteChildPartner": "RemoveChildPartner", "GetOwnPartner": "ReadOwnSettings",
               "UpdateChildPartner": "ChangeChildPartner"}

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        path = environ["PATH_INFO"]
        if path == "/openapi.json":
            return Rewrite(self.app, self.document)(environ, start_response)
        if path.startswith("/gw/"):
            environ = {**environ, "PATH_INFO": path[3:]}
        elif not path.startswith("/_sandbox/") and "/oauth/consent/" not in path:   # hosted pages: where they say
            start_response("404 Not Found", [("Content-Type", "application/problem+json")])
            return [b'{"status": 404}']
        return self.app(environ, start_response)

    def document(self, environ, status, headers, body):
        data = json.loads(body)
        data["servers"] = [{"url": "/gw"}]
        data["paths"] = {p: item for p, item in data["paths"].items() if not p.startswith("/_sandbox")}
        for item in data["paths"].values():
            for spec in item.values():
                spec["operationId"] = self.RENAMED.get(spec["operationId"], spec["operationId"])
        return status, headers, json.dumps(data).encode()


def no_statistics(environ, status, headers, body):
    """GetAccount without the statistics object that tells a client whether new transactions exist."""
    data = json_of(body)
    if environ["REQUEST_METHOD"] == "GET" and isinstance(data, dict) and "statistics" in data:
        del data["statistics"]
        return status, headers, json.dumps(data).encode()


def users_refresh_by_default(environ, status, headers, body):
    """A user token refreshing itself without user.token:create (spec §4.2 note 1: never granted by default)."""
    if environ["PATH_INFO"].endswith("/users/self/tokens") and status.startswith("403"):
        return "201 Created", [("Content-Type", "application/json")], json.dumps({
            "accessToken": "eyJhbGciOiJIUzI1NiJ9.eyJ1c2VyIjp0cnVlfQ.c2lnbmF0dXJl", "scope": "account:all"}).encode()


def pages_without_references(environ, status, headers, body):
    """A transaction list without previousPageReference and nextPageReference (spec §4.3)."""
    data = json_of(body)
    if isinstance(data, dict) and "nextPageReference" in data:
        data.pop("nextPageReference")
        data.pop("previousPageReference", None)
        return status, headers, json.dumps(data).encode()


@pytest.fixture
def simulator():
    app = create_app({"STATE": ":memory:", "START_SERVICES": False})
    yield app
    app.extensions["ptas"].close()


def run(app, tags, capsys):
    status = runner.run(app=app, tags_expression=tags)
    return status, capsys.readouterr().out


CAUGHT = [
    (six_digit_dates, "contract and versioning", "Token, partner and user responses"),
    (bare_403, "contract and auth", "A missing scope is answered 403 with ProblemDetails"),
    (bare_401, "contract and auth", "A call without a token is refused with ProblemDetails"),
    (self_revocation, "contract and tokens", "A token cannot revoke itself"),
    (list_with_access_tokens, "contract and tokens", "The token list never carries access tokens"),
    (ids_for_short_tokens, "contract and tokens",
     "A partner token gets an id only when it lives longer than one hour (600, has no id)"),
    (closed_schemas, "contract and versioning", "The documented schemas let responses grow new properties"),
    (removed_path_served, "contract and versioning", "An earlier path is no longer served: GET /users/{id}/token"),
    (no_statistics, "contract and accounts",
     "The partner creates an account for its user from the account type's fields"),
    (users_refresh_by_default, "contract and users", "user.token:create is never granted by default"),
    (pages_without_references, "contract and transactions", "Transactions carry what the spec names"),
]


@pytest.mark.parametrize("breakage, tags, scenario", CAUGHT, ids=[c[0].__name__ for c in CAUGHT])
def test_a_departure_from_the_spec_fails_the_scenario_guarding_it(simulator, capsys, breakage, tags, scenario):
    status, output = run(Rewrite(simulator, breakage), tags, capsys)
    assert status == 1, output[-3000:]
    failed = re.findall(r"\] FAILED +\w+ +(.+)", output)
    assert scenario in failed, f"{scenario!r} not among the failures {failed}\n{output[-3000:]}"
    assert output.strip().splitlines()[-1].startswith(
        f"{output.count('] PASSED ')} passed, {len(failed)} failed, {output.count('] SKIPPED ')} not checked")


def test_the_same_areas_pass_against_the_unbroken_simulator(simulator, capsys):
    status, output = run(simulator, "contract and (versioning or auth or tokens)", capsys)
    assert status == 0, output[-3000:]


def test_a_server_adding_unknown_properties_still_passes_every_contract_scenario(simulator, capsys):
    grown = Rewrite(simulator, unknown_properties)
    assert "x-added-in-2-13" in b"".join(Client(grown).get("/_sandbox/health").iter_encoded()).decode()
    status, output = run(grown, "contract", capsys)
    assert status == 0, output[-3000:]


def test_a_deployment_with_other_paths_and_names_passes_through_its_own_document(simulator, capsys):
    status, output = run(MovedAndRenamed(simulator), "contract", capsys)
    assert status == 0, output[-3000:]
    # RemoveChildPartner is the document's only DELETE …/partners/{id}: found by that shape, never guessed
    assert "not offered by the target" not in output
    assert re.search(r"\] PASSED +auth +partner:update allowed for UpdateChildPartner", output)


# -- the same breakages and more, in deployment mode (issue 9: a URL and a token, /_sandbox hidden) --------------
from tests.support import blind_deployments as blind  # noqa: E402
from tests.support import blind_deployments_c as blind_c  # noqa: E402
from tests.support import blind_deployments_e as blind_e  # noqa: E402
from tests.support import blind_deployments_f as blind_f  # noqa: E402
from tests.support import blind_deployments_g as blind_g  # noqa: E402
from tests.support import (  # noqa: E402
    blind_faithful,
    blind_faithful_c,
    blind_faithful_d,
    blind_faithful_e,
    blind_faithful_f,
)
from tests.support import broken_deployments as broken  # noqa: E402
from tests.support.deployments import Deployment, Rewrite, json_of  # noqa: E402

PAGING = "Paging shows every transaction once, as many as the account counts"
# (name, breakage, scenario that must fail); a breakage is a change of responses, a wrap of the app (DropQuery)
# or the simulator's own configuration (a dict).
DEPLOYMENT = [(c[0].__name__, c[0], c[2]) for c in CAUGHT] + [
    ("page_reference_ignored", broken.DropQuery({"pageReference"}), PAGING),
    ("last_page_unreachable", broken.last_page_loops, "Paging reaches the last page, which has no next page"),
    ("no_previous_page_reference", broken.no_previous_reference,
     "The second page refers back to the first"),
    ("statistics_miscounted", broken.statistics_miscounted, PAGING),
    ("exclude_deprecated_ignored", broken.DropQuery({"excludeDeprecatedFields"}, r"/transactions$"),
     "excludeDeprecatedFields removes deprecated fields"),
    ("exclude_mapped_ignored", broken.DropQuery({"excludeMappedFields"}, r"/transactions$"),
     "excludeMappedFields removes fields mapped to fixed transaction fields"),
    ("get_transaction_keeps_deprecated", broken.DropQuery({"excludeDeprecatedFields"}, r"/transactions/[^/]+$"),
     "GetTransaction honours the exclude flag for deprecated fields"),
    ("get_transaction_keeps_mapped", broken.DropQuery({"excludeMappedFields"}, r"/transactions/[^/]+$"),
     "GetTransaction honours the exclude flag for mapped fields"),
    ("created_at_search_ignored", broken.DropQuery({"createdAt"}),
     "The createdAt search narrows the account's transactions"),
    ("report_id_search_ignored", broken.DropQuery({"reportId"}),
     "The reportId search finds exactly the transactions that link to the report"),
    ("no_transaction_type", broken.no_transaction_type, "Transactions carry what the spec names"),
    ("expired_token_shown_valid", broken.expired_shown_valid, "A token expires when its lifetime has passed"),
    ("revoked_token_shown_valid", broken.revoked_shown_valid,
     "A revoked token is marked revoked and no longer accepted"),
    ("last_use_never_recorded", broken.last_use_never_recorded, "A token used for a call shows when it was last used"),
    ("child_tokens_for_a_year", broken.child_tokens_for_a_year, "A child partner's token lasts six months by default"),
    ("listing_with_update_only", broken.listing_with_update_only,
     "A token with partner:update creates tokens but cannot list them"),
    ("no_rate_limit", {"RATE_LIMIT": 1000}, "More than 100 requests within 60 seconds are not all served"),
    ("deploy_token_reads_parent", broken.deploy_token_reads_parent, "A deploy token cannot read its parent partner"),
    ("redirect_urls_dropped", broken.redirect_urls_dropped, "Several OAuth2 redirect URLs can be set"),
    ("deleted_users_without_deleted_at", broken.deleted_users_without_deleted_at,
     "A deleted user is listed with deletedAt"),
    ("user_email_dropped", broken.user_email_dropped, "A user's e-mail address is kept"),
    ("update_without_warning_details", broken.update_without_warning_details,
     "Updating an account answers warningDetails"),
    ("account_types_without_psp_reports", broken.account_types_without_psp_reports,
     "Every account type describes its fields, help, reports and provider status"),
    ("imports_without_errors", broken.imports_without_errors,
     "Data imports are listed and read with their errors and warnings"),
    ("sessions_without_type_ids", broken.sessions_without_type_ids,
     "A session carries the account types it was opened for"),
    ("oauth_without_reference", broken.oauth_without_reference,
     "Step 1 answers the provider's URL and the authentication reference"),
    ("test_events_not_served", broken.test_events_not_served,
     "The test endpoint for AccountCreated accepts a request"),
    ("patch_partners_served", broken.patch_partners_served, "An earlier path is no longer served: PATCH /partners"),
    ("old_test_paths_served", broken.old_test_paths_served,
     "An earlier path is no longer served: POST /webhooks/test-events"),
    ("test_events_never_sent", broken.Outgoing(broken.test_events_never_sent),
     "A test AccountCreated notification reaches the receiver"),
    ("notifications_without_errors", broken.Outgoing(broken.notifications_without_errors),
     "A test AccountUpdated notification reaches the receiver"),
    ("retired_kind_still_sent", broken.Outgoing(broken.retired_kind_still_sent),
     "The five test events arrive and no retired kind is sent"),
    # issue 22: statements no scenario checked before
    ("child_tokens_without_partner_create", broken.child_tokens_without_partner_create,
     "Creating a child partner's token needs partner:create"),
    ("child_lifetime_ignored", broken.child_lifetime_ignored,
     "A child partner's token lives the expiresIn it was given"),
    ("last_use_frozen", broken.LastUseFrozen(), "lastUsedAt moves with each use of the token"),
    ("settings_without_styling", broken.settings_without_styling, "The UI settings carry the Account UI styling"),
    ("patch_ignored", broken.PatchIgnored(), "PATCH changes a webhook"),
    ("statistics_swapped", broken.statistics_swapped,
     "The account's statistics give the dates of its first and last transaction"),
    ("no_shopper", broken.no_shopper, "Transactions carry Shopper information"),
    # the OAuth2 return step, answered through the provider's page the harness recognises
    ("return_without_headers", broken.return_without_headers,
     "An approved authorization returns to the partner and the account is created with the reference"),
    ("status_not_the_spec_values", broken.status_not_the_spec_values,
     "An approved authorization returns to the partner and the account is created with the reference"),
    ("request_redirect_ignored", broken.request_redirect_ignored,
     "An approved authorization returns to the partner and the account is created with the reference"),
    ("last_redirect_url_used", broken.last_redirect_url_used,
     "Without a redirect URL in the request the user returns to the partner's first redirect URL"),
    # the probe of breakages the suite missed
    ("user_token_by_user_read", broken.user_token_by_any_user_scope, "user:read forbidden for CreateUserToken"),
    ("self_refresh_refuses_user_token_all", broken.self_refresh_refuses_token_all,
     "A user token holding user.token:all allowed for CreateOwnUserToken"),
    ("get_transaction_without_transaction_scope", broken.get_transaction_without_transaction_scope,
     "GetTransaction with a token holding only account:all is forbidden"),
    ("other_users_transaction_readable", broken.other_users_transaction_readable,
     "Another user cannot read one of the account's transactions"),
    ("revoked_token_served_off_partner_paths", broken.StaleAnswersForRefusedTokens(),
     "A revoked token is refused outside the partner paths too"),
    ("user_requests_not_rate_limited", broken.UsersUnlimited(),
     "More than 100 requests within 60 seconds are not all served"),
    ("real_events_never_notified", broken.Outgoing(broken.real_events_never_sent),
     "Creating, updating and deleting an account notifies AccountCreated, AccountUpdated and AccountDeleted"),
    ("notifications_to_unsubscribed_webhooks", broken.EveryWebhookNotified(),
     "A webhook receives no notification of a kind it did not subscribe to"),
    ("token_scopes_comma_separated", broken.comma_separated_scopes,
     "A token's scopes are separated by a single space"),
    ("exclude_flags_first_page_only", broken.exclude_flags_first_page_only,
     "The exclude flag for deprecated fields holds on every page"),
    ("own_token_list_bare_array", broken.bare_token_list,
     "The token list is an object holding the tokens under tokens"),
    # user token lifetimes: the partner's userTokenExpirySeconds (spec §2 Partner, §5 rule 6)
    ("expired_user_token_accepted", broken.ExpiredUserTokensAccepted(),
     "A user token is refused once the partner's user token lifetime has passed"),
    ("refreshed_user_tokens_fixed_lifetime", broken.FixedUserTokenLifetime(),
     "A token the partner issues for its user lasts the partner's user token lifetime"),
    ("own_renewal_fixed_lifetime", broken.FixedUserTokenLifetime(),
     "A token a user issues for itself lasts the partner's user token lifetime"),
    # issue 38: both sides of every statement
    ("revocation_answers_access_token", broken.revocation_answers_access_token,
     "A revoked token is marked revoked and no longer accepted"),
    ("exclude_deprecated_false_read_as_true", broken.FlagByPresence({"excludeDeprecatedFields"}),
     "The exclude flag for deprecated fields removes only those, and nothing when false"),
    ("exclude_mapped_drops_every_field", broken.mapped_flag_drops_every_field,
     "The exclude flag for mapped fields removes only those, and nothing when false"),
    ("classification_spelled_otherwise", broken.classification_renamed({"Tax": "Taxes", "Donation": "donation"}),
     "Transactions name their PaymentClassification by the spec's values"),
    ("classification_renamed_in_document_too",
     broken.classification_renamed({"Adjustment": "Correction", "Donation": "Gift"}, document=True),
     "Transactions name their PaymentClassification by the spec's values"),
    ("classification_outside_the_document", broken.classification_renamed({"Fee": "ServiceCharge"}),
     "Transactions name their PaymentClassification by the spec's values"),
    ("rate_limit_of_80", {"RATE_LIMIT": 80}, "More than 100 requests within 60 seconds are not all served"),
    ("statistics_stay_zero", broken.statistics_stay_zero, "Transactions carry what the spec names"),
    ("transactions_imported_without_report", broken.Outgoing(broken.transactions_imported_without_report),
     "A test TransactionsImported notification reaches the receiver"),
    ("account_type_updated_without_account_type", broken.Outgoing(broken.account_type_updated_without_account_type),
     "A test AccountTypeUpdated notification reaches the receiver"),
    ("six_digit_notification_dates", broken.Outgoing(broken.six_digit_notification_dates),
     "A test AccountCreated notification reaches the receiver"),
    ("own_name_ignored", broken.own_name_ignored, "The partner's own name can be changed, and only the name"),
    ("update_resets_user_token_lifetime", broken.UpdateResetsUserTokenLifetime(),
     "The partner's own name can be changed, and only the name"),
    ("user_without_statistics", broken.user_without_statistics, "A user can be read back and renamed"),
]
# Written blind, from the spec alone (issue 38): each names the scenario that must fail. The first count against
# the harness before issue 38 killed 50 of these 58; the last eight (its survivors) are killed since.
BLIND = [(f"blind:{case.name}", case, scenario) for case, scenario in (
    (blind.six_digit_token_created, "Token, partner and user responses"),
    (blind.reports_zero_fraction_truncated, "Transaction and report responses"),
    (blind.transactions_with_offset, "Transaction and report responses"),
    (blind.statistics_six_digits, "Transaction and report responses"),
    (blind.list_leaks_access_token, "The token list never carries access tokens"),
    (blind.is_valid_ignores_revocation, "A revoked token is marked revoked and no longer accepted"),
    (blind.revoked_at_never_set, "A revoked token is marked revoked and no longer accepted"),
    (blind.token_id_threshold_a_day,
     "A partner token gets an id only when it lives longer than one hour (3601, has an id)"),
    (blind.token_id_for_exactly_one_hour,
     "A partner token gets an id only when it lives longer than one hour (3600, has no id)"),
    (blind.expires_at_shifted_an_hour, "A new token is valid and its access token is returned once"),
    (blind.default_user_scope_grants_refresh, "user.token:create is never granted by default"),
    (blind.default_user_scope_without_transactions,
     "The first user token holds account:all and transaction:all unless told otherwise"),
    (blind.update_partner_ignores_email, "The e-mail address can be changed"),
    (blind.child_partner_name_unchangeable, "A child partner's name can be changed"),
    (blind.create_account_without_warning_details,
     "The partner creates an account for its user from the account type's fields"),
    (blind.account_fields_without_deprecation_reason,
     "Every account type describes its fields, help, reports and provider status"),
    (blind.account_types_without_help_urls,
     "Every account type describes its fields, help, reports and provider status"),
    (blind.statistics_count_capped_at_page, "Paging shows every transaction once, as many as the account counts"),
    (blind.report_without_warnings, "Reports are listed and read with their errors and warnings"),
    (blind.account_errors_null_when_empty,
     "The partner creates an account for its user from the account type's fields"),
    (blind.revocation_not_persisted, "A revoked token is marked revoked and no longer accepted"),
    (blind.self_revocation_allowed, "A token cannot revoke itself"),
    (blind.expired_partner_token_accepted, "A token expires when its lifetime has passed"),
    (blind.get_transaction_ignores_exclude_mapped, "GetTransaction honours the exclude flag for mapped fields"),
    (blind.paging_skips_one_per_page, "Paging shows every transaction once, as many as the account counts"),
    (blind.accountui_requires_deprecated_type_id, "A session carries the account types it was opened for"),
    (blind.userui_create_without_scope, "userui:read forbidden for CreateUserUiSession"),
    (blind.removed_get_user_by_name_served, "A child partner cannot read its parent's users"),
    (blind.removed_get_user_token_served, "An earlier path is no longer served: GET /users/{id}/token"),
    (blind.create_user_token_refuses_user_tokens,
     "A user with user.token:create may also use CreateUserToken for itself"),
    (blind.create_user_token_refuses_user_create, "user:create allowed for CreateUserToken"),
    (blind.own_user_token_without_scope, "A user token holding account:all forbidden for CreateOwnUserToken"),
    (blind.deploy_token_reads_other_child, "A deploy token cannot read another child partner"),
    (blind.listing_refuses_partner_all, "partner:all allowed for GetOwnPartnerTokens"),
    (blind.own_token_refuses_partner_all, "A missing scope is answered 403 with ProblemDetails"),
    (blind.transaction_read_cannot_list, "transaction:read allowed for GetTransactions"),
    (blind.delete_account_with_update_scope, "A user token holding account:update forbidden for DeleteAccount"),
    (blind.notification_import_without_errors, "A test TransactionsImported notification reaches the receiver"),
    (blind.account_type_updated_misnamed, "A test AccountTypeUpdated notification reaches the receiver"),
    (blind.account_deleted_not_notified,
     "Creating, updating and deleting an account notifies AccountCreated, AccountUpdated and AccountDeleted"),
    (blind.report_imported_still_sent, "The five test events arrive and no retired kind is sent"),
    (blind.update_webhook_ignores_kinds, "A webhook is created, read, listed, changed and deleted"),
    (blind.forbidden_empty_body_on_users, "partner:all forbidden for GetUsers"),
    (blind.unauthorized_plain_text_on_accounts, "A revoked token is refused outside the partner paths too"),
    (blind.missing_scope_answered_401, "A missing scope is answered 403 with ProblemDetails"),
    (blind.oauth_not_found_status_renamed, "A failed authorization returns with the status NotFoundError"),
    (blind.oauth_other_error_header_wrong, "A failed authorization returns with the status OtherError"),
    (blind.token_lifetime_capped_30_days, "A one-year token is accepted as asked"),
    (blind.child_token_default_90_days, "A child partner's token lasts six months by default"),
    (blind.removed_delete_user_by_name_served, "An earlier path is no longer served: DELETE /users/{name}"),
    (blind.user_token_scope_double_space,
     "The first user token holds account:all and transaction:all unless told otherwise"),
    (blind.get_transaction_without_type, "GetTransaction reads one transaction"),
    (blind.child_token_list_without_read, "partner:update forbidden for GetPartnerTokens"),
    (blind.exclude_deprecated_false_read_as_true,
     "The exclude flag for deprecated fields removes only those, and nothing when false"),
    (blind.transactions_imported_without_report, "A test TransactionsImported notification reaches the receiver"),
    (blind.rate_limit_off_by_one, "More than 100 requests within 60 seconds are not all served"),
    (blind.rate_limit_per_operation, "More than 100 requests within 60 seconds are not all served"),
    (blind.partner_redirect_url_singular, "A new child partner can be read back"),
)]
DEPLOYMENT += BLIND
# The second blind round (tests/support/blind_deployments_c.py): the first count killed 26 of its 30; the four it
# missed (an e-mail address required, reportIds of a local day, no AccountUpdated on an update, a 30 s window)
# are killed since.
BLIND_C = [
    (blind_c.oauth_request_redirect_url_ignored,
     "An approved authorization returns to the partner and the account is created with the reference"),
    (blind_c.oauth_message_header_missing, "A failed authorization returns with the status OtherError"),
    (blind_c.auth_field_type_renamed, "The dummy account type dummy-auth is as spec §1 capability 6 describes it"),
    (blind_c.token_name_not_stored, "A token expires when its lifetime has passed"),
    (blind_c.expires_in_in_milliseconds, "A one-year token is accepted as asked"),
    (blind_c.last_used_at_set_at_creation, "A token used for a call shows when it was last used"),
    (blind_c.own_token_needs_read_too, "partner:update allowed for CreateOwnPartnerToken"),
    (blind_c.child_token_without_id, "A revoked child partner token is no longer accepted"),
    (blind_c.child_token_list_shows_own, "The child partner's token list never carries access tokens"),
    (blind_c.deploy_token_lists_children, "A deploy token cannot list the child partners"),
    (blind_c.short_token_lifetime_refused, "A token expires when its lifetime has passed"),
    (blind_c.create_user_requires_email, "Creating a user answers its id and its first user token"),
    (blind_c.create_user_ignores_scope, "The partner chooses the scope of the first user token"),
    (blind_c.user_token_refuses_partner_token_scope, "A partner token issues user tokens with user.token:create"),
    (blind_c.accountui_keeps_first_type_only, "A session carries the account types it was opened for"),
    (blind_c.userui_read_with_create_scope, "userui:create forbidden for GetUserUiSession"),
    (blind_c.user_sees_other_users_accounts, "A user sees only the accounts it created"),
    (blind_c.partner_token_refused_on_accounts, "account:read allowed for GetAccounts"),
    (blind_c.partner_read_updates_partner, "partner:read forbidden for UpdatePartner"),
    (blind_c.redirect_urls_truncated_to_one, "Several OAuth2 redirect URLs can be set"),
    (blind_c.get_users_hides_deleted, "A deleted user is listed with deletedAt"),
    (blind_c.account_types_list_omits_dummy_report, "The sandbox offers the three dummy account types"),
    (blind_c.transaction_fields_without_is_deprecated,
     "The dummy account type dummy is as spec §1 capability 6 describes it"),
    (blind_c.report_id_of_local_day, "The reportId search finds exactly the transactions that link to the report"),
    (blind_c.dataimport_detail_not_routed, "Data imports are listed and read with their errors and warnings"),
    (blind_c.webhook_delete_not_persisted, "A webhook is created, read, listed, changed and deleted"),
    (blind_c.test_account_created_sends_updated, "A test AccountCreated notification reaches the receiver"),
    (blind_c.account_updated_not_notified,
     "Creating, updating and deleting an account notifies AccountCreated, AccountUpdated and AccountDeleted"),
    (blind_c.notification_report_without_errors, "A test TransactionsImported notification reaches the receiver"),
    (blind_c.rate_limit_window_30s, "More than 100 requests within 60 seconds are not all served"),
]
assert {case.name for case, _ in BLIND_C} == {case.name for case in blind_c.CASES}
DEPLOYMENT += [(f"blind_c:{case.name}", case, scenario) for case, scenario in BLIND_C]
# The fourth blind round (tests/support/blind_deployments_e.py): the first count caught 10 of its 20. Seven of
# the misses are caught since (a rule on every path that serves it, a field in every read that shows the record,
# the `self` token paths, a deploy token and another child, fields spec §9 removed, §8's one-year token for every
# token that takes a lifetime); three are still missed (below).
BLIND_E = [
    (blind_e.oauth_query_reference_renamed,
     "An approved authorization returns to the partner and the account is created with the reference"),
    (blind_e.duplicate_account_per_provider, "A user has one account per provider"),
    (blind_e.dummy_report_detail_without_psp_reports,
     "The dummy account type dummy-report is as spec §1 capability 6 describes it"),
    (blind_e.revoked_at_six_digits, "Token, partner and user responses"),
    (blind_e.create_account_drops_deprecated_warnings,
     "The partner creates an account for its user from the account type's fields"),
    (blind_e.report_list_without_errors, "Reports are listed and read with their errors and warnings"),
    (blind_e.get_users_ignores_email, "Users are found by name, by e-mail address and by a search text"),
    (blind_e.delete_child_with_update_scope, "partner:update forbidden for DeleteChildPartner"),
    (blind_e.first_user_token_ignores_expiry_setting, "A user token lasts the partner's user token lifetime"),
    (blind_e.test_transactions_imported_sends_report_imported,
     "A test TransactionsImported notification reaches the receiver"),
    (blind_e.deprecated_transactions_other_users_account,
     "Another user cannot read the account's transactions in the deprecated form either"),
    (blind_e.get_user_without_deleted_at, "A deleted user is listed with deletedAt"),
    (blind_e.transaction_fields_keep_booking_date, "Transactions carry what the spec names"),
    (blind_e.deploy_token_issues_child_token, "A deploy token cannot issue a token for another child partner"),
    (blind_e.own_token_list_includes_child_tokens, "A partner's own token paths reach no other partner's tokens"),
    (blind_e.own_revoke_reaches_other_partner, "A partner's own token paths reach no other partner's tokens"),
    (blind_e.child_token_one_year_refused, "A child partner's token lives the expiresIn it was given"),
    (blind_e.oauth_redirect_refuses_account_create, "account:create allowed for CreateOauthRedirectUrl"),
    (blind_e.oauth_headers_missing_without_redirect,
     "Without any redirect URL the user ends on the service's own page, the result in its headers"),
    (blind_e.transactions_imported_only_with_report,
     "An import of an account without reports notifies TransactionsImported"),
]
DEPLOYMENT += [(f"blind_e:{case.name}", case, scenario) for case, scenario in BLIND_E]
# The fifth round (tests/support/blind_deployments_f.py), written blind after all the rules above: the first count
# caught 5 of 15. Five more are caught by rules stated after it (docs/conformance.md); five stay still missed.
BLIND_F = [
    (blind_f.revoked_token_accepted_for_five_minutes, "A revoked token is marked revoked and no longer accepted"),
    (blind_f.oauth_success_redirect_without_message,
     "An approved authorization returns to the partner and the account is created with the reference"),
    (blind_f.initial_import_not_notified, "An import of an account without reports notifies TransactionsImported"),
    (blind_f.user_token_reads_transactions_without_scope,
     "A user token holding account:all forbidden for GetTransactions"),
    (blind_f.rate_limit_refuses_the_100th, "More than 100 requests within 60 seconds are not all served"),
    (blind_f.create_account_accepts_failed_authorization,
     "A failed authorization returns with the status NotFoundError"),
    (blind_f.only_first_webhook_notified, "Every webhook subscribed to a kind gets its notification"),
    (blind_f.partner_tokens_of_non_child_listed, "A child partner cannot list its sibling's tokens"),
    (blind_f.create_partner_ignores_ui_settings, "A child partner is created with its Account UI styling"),
    (blind_f.user_reads_other_users_report, "Another user cannot read a report of the account"),
]
DEPLOYMENT += [(f"blind_f:{case.name}", case, scenario) for case, scenario in BLIND_F]
# Still missed, each a strict expected failure until a scenario guards it: the run passes against them.
STILL_MISSED = {
    blind_f.token_accepted_at_exact_expiry: "a token refused at the very instant of its expiresAt (§3): a deployment's "
                                            "clock cannot be stopped there",
    blind_f.accountui_account_created_not_notified: "AccountCreated for an account made through the account UI (§6)",
    blind_f.account_error_sent_for_credential_problems: "the retired AccountError sent after a real credentials "
                                                        "error (§6: no longer triggered)",
    blind_f.deleted_account_still_readable: "a deleted account still read by its id (§1 capability 3)",
    blind_f.lone_last_transaction_unreachable: "a last page holding one transaction, at a page size the spec's "
                                               "GetTransactions parameters do not choose (§4.3: page sizes not shown)",
}
assert {case.name for case, _ in BLIND_F} | {case.name for case in STILL_MISSED} == {c.name for c in blind_f.CASES}
# The sixth round (tests/support/blind_deployments_g.py), written blind after all the rules above: the first count
# caught 12 of 15 (faithful 5 of 5). Two more are caught by rules stated after it (docs/conformance.md): a scope a
# token type cannot hold is never satisfied for that type, and a parameter that removes fields removes only what it
# names. A third rule, a list shows every record of the caller whatever its state, is judged once the record
# certainly exists, so it catches a list that never shows the import (below) but not one hiding it while it runs.
BLIND_G = [
    (blind_g.report_id_search_ignored, "The reportId search finds exactly the transactions that link to the report"),
    (blind_g.previous_reference_is_current_page, "The second page refers back to the first"),
    (blind_g.own_token_list_needs_update, "Listing tokens needs partner:read or partner:all (partner:read)"),
    (blind_g.child_partner_list_needs_all, "partner:read allowed for GetPartners"),
    (blind_g.deploy_token_cannot_create_child, "A deploy token creates a child partner"),
    (blind_g.userui_read_refuses_read_scope, "userui:read allowed for GetUserUiSession"),
    (blind_g.oauth_refused_without_redirect_url,
     "Without any redirect URL the user ends on the service's own page, the result in its headers"),
    (blind_g.oauth_reference_header_is_consent_key,
     "An approved authorization returns to the partner and the account is created with the reference"),
    (blind_g.account_type_detail_without_errors,
     "Every account type describes its fields, help, reports and provider status"),
    (blind_g.update_account_without_errors, "Updating an account answers warningDetails"),
    (blind_g.test_account_type_updated_never_sent, "A test AccountTypeUpdated notification reaches the receiver"),
    (blind_g.rate_limit_per_token, "More than 100 requests within 60 seconds are not all served"),
    # caught by the rules stated after the first count
    (blind_g.users_listed_to_user_token, "A user token holding account:all forbidden for GetUsers"),
    (blind_g.exclude_mapped_drops_fixed_values,
     "The exclude flag for mapped fields removes only those, and nothing when false"),
]
DEPLOYMENT += [(f"blind_g:{case.name}", case, scenario) for case, scenario in BLIND_G]
# Still missed of the sixth round, each a strict expected failure until a scenario guards it.
STILL_MISSED_G = {
    blind_g.data_import_list_hides_running: "a data import left out of GET /dataimports while it runs (§4.2): a "
                                            "service may record an import only when it begins, which the spec does "
                                            "not time, so the import is judged once its transactions are there, "
                                            "and then it is listed",
}


def _leave_out_the_newest_import(data, environ):
    """An off-by-one in the list's paging: the last data import (the newest: the simulator lists oldest first) is
    never shown."""
    rows = data.get("dataImports") if isinstance(data, dict) else None
    if isinstance(rows, list) and rows:
        del rows[-1]


DATA_IMPORT_LIST_SKIPS_NEWEST = blind.Case(
    "data_import_list_skips_newest", "§4.2 GET /dataimports lists data imports: the newest of them is never shown",
    change=blind.json_change(lambda environ: blind.method(environ, "GET") and blind.path(
        environ, r"^/partner/v2/dataimports$"), _leave_out_the_newest_import))
DEPLOYMENT += [("data_import_list_skips_newest", DATA_IMPORT_LIST_SKIPS_NEWEST,
                "Data imports are listed and read with their errors and warnings")]
assert {case.name for case, _ in BLIND_G} | {case.name for case in STILL_MISSED_G} == {c.name for c in blind_g.CASES}


@pytest.mark.parametrize("case", [pytest.param(case, id=case.name, marks=pytest.mark.xfail(strict=True, reason=why))
                                  for case, why in {**STILL_MISSED, **STILL_MISSED_G}.items()])
def test_a_broken_deployment_still_missed_fails_a_default_run(capsys, case):
    status, output = run_blind_deployment(case, capsys)
    assert status == 1, output[-2000:]
# Every case of the round is caught: the three its first rules missed, by later ones (docs/conformance.md).
assert {case.name for case, _ in BLIND_E} == {c.name for c in blind_e.CASES}


# Notifications go to a receiver the harness runs, as `--receiver-listen 127.0.0.1:0` would, waiting on the
# deployment's clock (an arriving one ends the wait at once). A faithful deployment gets the default wait for a
# notification (a queue may hold one back: the spec sets no deadline). The waiting budget is the default one
# (--max-wait 600): the deployment's world holds two-day-old accounts, as a staging partner's does, which the run
# reuses.
RECEIVER = {"receiver_listen": "127.0.0.1:0"}
# A broken deployment's scenario must fail whether a notification it never sends is waited for 3 s or longer (of
# the deployment's clock: the receiver moves it a second every tenth of a second of real time).
BROKEN_RECEIVER = {**RECEIVER, "delivery_wait": 3}
# A faithful deployment sends no notification that must not come: a short watch for one gives the same verdict.
FAITHFUL_RECEIVER = {**RECEIVER, "stray_wait": 0.2}


def run_blind_deployment(case, capsys, only=None, receiver=FAITHFUL_RECEIVER):
    """A deployment written blind (tests/support/blind_deployments.py, blind_faithful.py), run by default: every
    @contract scenario, or `only` those."""
    from ptas_sandbox.simulator.tokens import models as token_models
    revoke = token_models.revoke        # self_revocation_allowed replaces it for the process: put back after
    deployment = Deployment(**{"START_SERVICES": True, **case.config}).with_history()
    try:
        if case.apply:
            case.apply(deployment.app)
        return deployment.run("contract", change=case.change, wrap=case.wrap, capsys=capsys, only=only, **receiver)
    finally:
        token_models.revoke = revoke
        deployment.close()


def run_broken_deployment(breakage, scenario, capsys):
    """Run the one named scenario against a fresh deployment broken this way (paced and waiting on its clock)."""
    if isinstance(breakage, blind.Case):
        return run_blind_deployment(breakage, capsys, only=[scenario], receiver=BROKEN_RECEIVER)
    outgoing = hasattr(breakage, "apply")      # Outgoing, UsersUnlimited: the service's own engine, changed
    config = breakage if isinstance(breakage, dict) else (breakage.config if outgoing else {})
    deployment = Deployment(**config).with_history()
    try:
        if outgoing:
            breakage.apply(deployment.app)
        wraps = (broken.DropQuery, broken.DropBodyField, broken.PatchIgnored, broken.Wrap)
        plain = callable(breakage) and not isinstance(breakage, wraps) and not outgoing
        change = breakage if plain else None
        wrap = breakage if isinstance(breakage, wraps) else None
        return deployment.run("contract", change=change, wrap=wrap, capsys=capsys, only=[scenario], **BROKEN_RECEIVER)
    finally:
        deployment.close()


class FixedMinuteWindows:
    """A faithful limiter many gateways keep: 100 requests per whole minute of the clock, windows beginning `phase`
    seconds after the deployment's clock began (the simulator's own limiter lifted), refused with 429 and a
    Retry-After to the window's end."""

    config = {"RATE_LIMIT": 10**9}

    def __init__(self, phase):
        self.name, self.phase = f"fixed_minute_windows_{phase}", phase

    def window(self, now):
        return divmod(now - self.origin, 60_000_000)

    def move_edge(self, at):
        """Windows from now on begin at `at` (no request is counted in the one before it)."""
        self.origin = at - 60_000_000

    def __call__(self, app):
        clock = app.config["SYSTEM_TIME"]
        self.origin, counts = clock() + int(self.phase * 1_000_000), collections.Counter()

        def limited(environ, start_response):
            if not environ["PATH_INFO"].startswith("/partner/v2"):
                return app(environ, start_response)
            window, into = self.window(clock())
            counts[window] += 1
            if counts[window] <= 100:
                return app(environ, start_response)
            start_response("429 Too Many Requests", [("Content-Type", "application/problem+json"),
                                                     ("Retry-After", str(60 - into // 1_000_000))])
            return [b'{"type": "about:blank", "title": "Too Many Requests", "status": 429}']
        return limited


class EdgeInTheBurst(FixedMinuteWindows):
    """Fixed minute windows whose edge falls a second into the first request after a quiet minute (the §8 burst),
    each request taking 20 ms of the clock: the burst crosses the edge, and all 101 are served, faithfully."""

    def __init__(self):
        super().__init__(0)
        self.name, self.crossed = "edge_in_the_burst", 0

    def __call__(self, app):
        limited, clock = super().__call__(app), app.config["SYSTEM_TIME"]
        last = [clock()]

        def crossing(environ, start_response):
            clock.sleep(0.02)
            now = clock()
            if now - last[0] >= 60_000_000 and not self.crossed:
                self.move_edge(now + 1_000_000)
            self.crossed += now - last[0] < 1_000_000 and self.window(now)[0] != self.window(last[0])[0]
            last[0] = now
            return limited(environ, start_response)
        return crossing


@pytest.mark.parametrize("limiter", [FixedMinuteWindows(0.5), FixedMinuteWindows(20), FixedMinuteWindows(40),
                                     FixedMinuteWindows(59.5), EdgeInTheBurst()], ids=lambda limiter: limiter.name)
def test_a_limit_kept_in_fixed_minute_windows_passes_the_rate_limit_scenario(capsys, limiter):
    """Windows of whole minutes serve up to 200 in a span crossing their edge: still 100 per 60 seconds (§8)."""
    case = blind.Case(limiter.name, "§8 kept in fixed windows", wrap=limiter, config=limiter.config)
    status, output = run_blind_deployment(case, capsys, only=["More than 100 requests within 60 seconds are not all "
                                                              "served"])
    assert status == 0 and "1 passed" in output, output[-3000:]
    assert getattr(limiter, "crossed", 1), "the burst never crossed a window's edge: the case tests nothing"


def _at_least_one_redirect_url(app):
    """A faithful choice: a partner keeps at least one redirect URL (§1 capability 1: "one or several")."""
    def served(environ, start_response):
        if blind.method(environ, "PUT", "PATCH") and blind.path(environ, r"/partners/self$"):
            raw, data = blind.read_body(environ)
            if isinstance(data, dict) and data.get("redirectUrls") == []:
                return blind.respond(start_response,
                                     *blind.problem("400 Bad Request", "a partner keeps at least one redirect URL"))
            environ = {**environ, "wsgi.input": io.BytesIO(raw), "CONTENT_LENGTH": str(len(raw))}
        return app(environ, start_response)
    return served


def test_a_deployment_keeping_at_least_one_redirect_url_is_not_judged_on_the_service_page(capsys):
    """Where the target makes the service's own page unreachable (a choice the spec allows), its promise does not
    apply: the run passes and counts the scenario not applicable, not failed nor unchecked."""
    case = blind.Case("at_least_one_redirect_url", "§1 'one or several' redirect URLs", wrap=_at_least_one_redirect_url)
    scenario = "Without any redirect URL the user ends on the service's own page, the result in its headers"
    beside = "Without a redirect URL in the request the user returns to the partner's first redirect URL"
    status, output = run_blind_deployment(case, capsys, only=[scenario, beside])    # a run that checks nothing fails
    assert status == 0, output[-3000:]
    assert "1 passed, 0 failed, 0 not checked, 1 not applicable to this target" in output, output[-3000:]


@pytest.mark.parametrize("name, breakage, scenario", DEPLOYMENT, ids=[d[0] for d in DEPLOYMENT])
def test_a_broken_deployment_fails_the_scenario_guarding_the_rule(capsys, name, breakage, scenario):
    status, output = run_broken_deployment(breakage, scenario, capsys)
    failed = re.findall(r"\] FAILED +\w+ +(.+)", output)
    assert scenario in failed, f"{scenario!r} not among the failures {failed}\n{output[-3000:]}"
    assert status == 1


def test_the_broken_deployments_break_at_least_30_rules_each_guarded_by_a_named_scenario():
    assert len({name for name, _, _ in DEPLOYMENT}) == len(DEPLOYMENT) >= 30


def test_every_guarding_scenario_passes_against_the_unbroken_deployment(capsys):
    """The other half of 'caught': the same scenarios pass where nothing is broken (no false failure)."""
    guarding = {s for _, _, s in DEPLOYMENT}
    deployment = Deployment(START_SERVICES=True).with_history()
    try:
        status, output = deployment.run("contract", capsys=capsys, only=guarding, **FAITHFUL_RECEIVER)
    finally:
        deployment.close()
    assert status == 0, output[-3000:]
    passed = set(re.findall(r"\] PASSED +\w+ +(.+)", output))
    assert passed >= guarding, sorted(guarding - passed)


class Counted:
    """Counts the requests that reach the target (`around`: wraps the target's app)."""

    def __init__(self):
        self.app, self.requests = None, 0

    def around(self, app):
        self.app = app
        return self

    def __call__(self, environ, start_response):
        self.requests += 1
        return self.app(environ, start_response)


def test_every_contract_scenario_passes_against_a_faithful_deployment(capsys):
    """A default `ptas conform --target URL --token T --receiver-listen ...` against the simulator with /_sandbox
    hidden: no false failure, @slow and delivery scenarios included (on the app's clock, no real waiting), in at
    most 970 requests (about 11 minutes at a pace of 90 per 60 s; about 200 of them are spec §8's bursts; the bound
    was 960 until the five user-token rows of the scope table's token types, one request each: docs/conformance.md)."""
    counted = Counted()
    deployment = Deployment(START_SERVICES=True).with_history()
    try:
        status, output = deployment.run("contract", capsys=capsys, wrap=counted.around, **FAITHFUL_RECEIVER)
    finally:
        deployment.close()
    assert status == 0, output[-4000:]
    assert counted.requests <= 970, counted.requests
    assert "(in-process deployment, token " in output
    assert not re.search(r"\] SKIPPED +\w+ +.*\n +.*(needs a simulator|only a simulator)", output)


def test_the_faithful_deployments_written_blind_pass_a_default_run_all_at_once(capsys):
    """The faithful deployments written blind choose what the spec leaves open as a real service might: a default
    run of one deployment making all their choices at once fails none of its scenarios."""
    status, output = run_blind_deployment(blind_faithful.every_choice_at_once(), capsys)
    assert status == 0, output[-4000:]


def test_the_sixth_round_of_faithful_deployments_written_blind_pass_a_default_run_all_at_once(capsys):
    """The sixth blind round's faithful deployments (tests/support/blind_faithful_f.py): 5 of 5 passed the first
    count, one at a time; all at once, too, after the rules the round's broken deployments asked for."""
    status, output = run_blind_deployment(blind_faithful.every_choice_at_once(blind_faithful_f.CASES), capsys)
    assert status == 0, output[-4000:]
    assert re.search(r"\d+ passed, 0 failed, \d+ not checked \(0 because of the target", output), output[-2000:]


def test_the_fourth_round_of_faithful_deployments_written_blind_pass_a_default_run_all_at_once(capsys):
    """The fourth blind round's faithful deployments (tests/support/blind_faithful_e.py): 5 of 5 passed the first
    count, one at a time; all at once, too."""
    status, output = run_blind_deployment(blind_faithful.every_choice_at_once(blind_faithful_e.CASES), capsys)
    assert status == 0, output[-4000:]
    assert re.search(r"\d+ passed, 0 failed, \d+ not checked \(0 because of the target", output), output[-2000:]


def test_the_third_round_of_faithful_deployments_written_blind_pass_a_default_run_all_at_once(capsys):
    """The third blind round's faithful deployments (tests/support/blind_faithful_d.py), each written to trip a
    harness assuming more than the spec says: 10 of 12 passed the first count. The two it failed asked for rules
    that hold beyond them: a notification a queue holds back is waited for on the deployment's clock (the spec sets
    no deadline), and an operation's own limit asking for a longer wait than the run makes leaves the scenarios
    needing it out, not failed (spec §8: additional limits, values not shown)."""
    status, output = run_blind_deployment(blind_faithful.every_choice_at_once(blind_faithful_d.CASES), capsys)
    assert status == 0, output[-4000:]
    assert re.search(r"\d+ passed, 0 failed, \d+ not checked \(0 because of the target", output), output[-2000:]


def test_the_second_round_of_faithful_deployments_written_blind_pass_a_default_run_all_at_once(capsys):
    """The second blind round's faithful deployments (tests/support/blind_faithful_c.py): 8 of 8 passed the first
    count; all at once, too."""
    status, output = run_blind_deployment(blind_faithful.every_choice_at_once(blind_faithful_c.CASES), capsys)
    assert status == 0, output[-4000:]
