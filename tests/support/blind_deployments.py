"""Broken deployments written blind (issue 38): each breaks exactly one statement of the interface spec, in a way a
real service might, written from the spec alone by someone who had not read the features or the steps. Forms as
in tests/support/broken_deployments.py: `change(environ, status, headers, body)`, `wrap(app)`, `config`
(simulator configuration) or `apply(app)` (the service's own engine, changed).

Every case is a `Case`: name, the statement it breaks (docstring / `statement`), and its form.
"""

import dataclasses
import io
import json
import re
from urllib.parse import parse_qsl, urlencode

from tests.support.broken_deployments import Outgoing, answered, changed, claims_of, get, problem, respond, scopes_of
from tests.support.deployments import json_of

FAKE_JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"


class Case:
    def __init__(self, name, statement, change=None, wrap=None, config=None, apply=None):
        self.name, self.statement = name, statement
        self.change, self.wrap, self.config, self.apply = change, wrap, dict(config or {}), apply


def method(environ, *names):
    return environ["REQUEST_METHOD"] in names


def path(environ, pattern):
    return re.search(pattern, environ["PATH_INFO"])


def read_body(environ):
    length = int(environ.get("CONTENT_LENGTH") or 0)
    raw = environ["wsgi.input"].read(length) if length else b""
    data = json_of(raw) if raw else None
    return raw, data


def with_body(environ, data):
    raw = json.dumps(data).encode()
    return {**environ, "wsgi.input": io.BytesIO(raw), "CONTENT_LENGTH": str(len(raw)),
            "CONTENT_TYPE": "application/json"}


def body_edit(methods, pattern, edit):
    """A wrap: the JSON body of requests matching (`methods`, `pattern`) goes through `edit(data)` (in place)."""
    def wrap(app):
        def edited(environ, start_response):
            if environ["REQUEST_METHOD"] in methods and re.search(pattern, environ["PATH_INFO"]):
                raw, data = read_body(environ)
                if isinstance(data, dict):
                    edit(data)
                    environ = with_body(environ, data)
                else:
                    environ = {**environ, "wsgi.input": io.BytesIO(raw), "CONTENT_LENGTH": str(len(raw))}
            return app(environ, start_response)
        return edited
    return wrap


def query_edit(pattern, edit, methods=("GET",)):
    """A wrap: the query of requests matching `pattern` goes through `edit(list of pairs) -> list of pairs`."""
    def wrap(app):
        def edited(environ, start_response):
            if environ["REQUEST_METHOD"] in methods and re.search(pattern, environ["PATH_INFO"]):
                pairs = parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)
                environ = {**environ, "QUERY_STRING": urlencode(edit(pairs))}
            return app(environ, start_response)
        return edited
    return wrap


def json_change(predicate, edit):
    """A change: a 2xx JSON answer to a request matching `predicate(environ)` goes through `edit(data, environ)`;
    `edit` returns the new data (or None to keep the edited one)."""
    def change(environ, status, headers, body):
        if not status.startswith("2") or not predicate(environ):
            return None
        data = json_of(body)
        if data is None:
            return None
        new = edit(data, environ)
        return changed(status, headers, data if new is None else new)
    return change


def token_records(data):
    if isinstance(data, dict) and isinstance(data.get("tokens"), list):
        return [t for t in data["tokens"] if isinstance(t, dict)]
    if isinstance(data, list):
        return [t for t in data if isinstance(t, dict)]
    return [data] if isinstance(data, dict) else []


SIX = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6})\dZ")


def six_digits(value):
    return SIX.sub(r"\1Z", value) if isinstance(value, str) else value


# ============================================================================ §2 fields and timestamps
def _six_digit_token_times(data, environ):
    for key in ("createdAt", "expiresAt"):
        data[key] = six_digits(data.get(key))


six_digit_token_created = Case(
    "six_digit_token_created", "§2 timestamps: exactly seven fractional digits (here: six in the record "
    "CreateOwnPartnerToken answers; lists still show seven)",
    change=json_change(lambda e: method(e, "POST") and path(e, r"/partners/self/tokens$"), _six_digit_token_times))


def _truncate_zero_fraction(data, environ):
    rows = data.get("reports", [data]) if isinstance(data, dict) else []
    for row in rows:
        for key in ("periodStart", "periodEnd"):
            if isinstance(row.get(key), str):
                row[key] = row[key].replace(".0000000Z", "Z")


reports_zero_fraction_truncated = Case(
    "reports_zero_fraction_truncated", "§2/§9.3: zero fractions are not truncated (report periodStart/periodEnd at "
    "midnight written as ...T00:00:00Z)",
    change=json_change(lambda e: method(e, "GET") and path(e, r"/reports(/[^/]+)?$"), _truncate_zero_fraction))


def _offset_times(data, environ):
    rows = data.get("transactions", [data]) if isinstance(data, dict) else []
    for row in rows:
        if isinstance(row, dict) and isinstance(row.get("createdAt"), str):
            row["createdAt"] = row["createdAt"][:-1] + "+00:00"


transactions_with_offset = Case(
    "transactions_with_offset", "§2 timestamps: UTC with a trailing Z (transactions' createdAt written +00:00)",
    change=json_change(lambda e: method(e, "GET") and path(e, r"/transactions(/[^/]+)?$"), _offset_times))


def _statistics_six(data, environ):
    rows = data.get("accounts", [data]) if isinstance(data, dict) else []
    for row in rows:
        stats = row.get("statistics") if isinstance(row, dict) else None
        if isinstance(stats, dict):
            stats["first"], stats["last"] = six_digits(stats.get("first")), six_digits(stats.get("last"))


statistics_six_digits = Case(
    "statistics_six_digits", "§9.3 date-times always have seven fractional digits (account statistics "
    "first/last with six)",
    change=json_change(lambda e: method(e, "GET") and path(e, r"/accounts(/[^/]+)?$"), _statistics_six))


def _leak_access_token(data, environ):
    for record in token_records(data):
        record["accessToken"] = FAKE_JWT


list_leaks_access_token = Case(
    "list_leaks_access_token", "§2 Token record: accessToken returned only at creation, absent from list responses",
    change=json_change(lambda e: method(e, "GET") and path(e, r"/tokens$"), _leak_access_token))


def _valid_despite_revoked(data, environ):
    for record in token_records(data):
        if record.get("isRevoked"):
            record["isValid"] = not record.get("isExpired")


is_valid_ignores_revocation = Case(
    "is_valid_ignores_revocation", "§2 isValid: true only when the token is neither revoked nor expired "
    "(isValid computed from expiry alone; isRevoked itself is right)",
    change=json_change(lambda e: method(e, "GET") and path(e, r"/tokens$"), _valid_despite_revoked))


def _no_revoked_at(data, environ):
    for record in token_records(data):
        record["revokedAt"] = None


revoked_at_never_set = Case(
    "revoked_at_never_set", "§3 Token: DELETE by id -> revoked, 'Also: revokedAt set' (revokedAt stays null)",
    change=json_change(lambda e: path(e, r"/tokens(/[^/]+)?$"), _no_revoked_at))


def _id_only_past_a_day(data, environ):
    for record in token_records(data):
        if isinstance(record.get("expiresIn"), int) and record["expiresIn"] <= 86400:
            record.pop("id", None)


token_id_threshold_a_day = Case(
    "token_id_threshold_a_day", "§5 rule 3 / §8: partner tokens with a lifetime over one hour get an id (here only "
    "over one day)",
    change=json_change(lambda e: path(e, r"/partners/[^/]+/tokens$"), _id_only_past_a_day))


def _id_for_one_hour(data, environ):
    for record in token_records(data):
        if record.get("expiresIn") == 3600 and "id" not in record:
            record["id"] = "3a1f0c52-0000-4000-8000-000000003600"


token_id_for_exactly_one_hour = Case(
    "token_id_for_exactly_one_hour", "§8: partner tokens get an id only when the lifetime exceeds one hour "
    "(off by one: a lifetime of exactly 3600 s gets one)",
    change=json_change(lambda e: path(e, r"/partners/[^/]+/tokens$"), _id_for_one_hour))


def _expires_at_local_time(data, environ):
    for record in token_records(data):
        value = record.get("expiresAt")
        if isinstance(value, str) and len(value) > 19:
            hour = int(value[11:13])
            if hour >= 1:       # expiresAt written in CET but labelled Z (hours past midnight only, to stay simple)
                record["expiresAt"] = f"{value[:11]}{hour - 1:02d}{value[13:]}"


expires_at_shifted_an_hour = Case(
    "expires_at_shifted_an_hour", "§2 Token record expiresAt / expiresIn: expiresAt is one hour off "
    "createdAt + expiresIn (local time labelled Z) in partner token records",
    change=json_change(lambda e: path(e, r"/partners/[^/]+/tokens$"), _expires_at_local_time))


def _double_space_user_scope(data, environ):
    token = data.get("token") if isinstance(data, dict) else None
    if isinstance(token, dict) and isinstance(token.get("scope"), str):
        token["scope"] = "  ".join(token["scope"].split())


user_token_scope_double_space = Case(
    "user_token_scope_double_space", "§2 Token record scope: separated by a single space (CreateUser's first "
    "user token record joins them with two)",
    change=json_change(lambda e: method(e, "POST") and path(e, r"/users$"), _double_space_user_scope))


def _default_scope_with_refresh(data):
    if not data.get("scope"):
        data["scope"] = "account:all transaction:all user.token:create"


default_user_scope_grants_refresh = Case(
    "default_user_scope_grants_refresh", "§4.2 note 1: user.token:create is never granted by default (a CreateUser "
    "without scope grants it)",
    wrap=body_edit(("POST",), r"/users$", _default_scope_with_refresh))


def _default_scope_accounts_only(data):
    if not data.get("scope"):
        data["scope"] = "account:all"


default_user_scope_without_transactions = Case(
    "default_user_scope_without_transactions", "§4.2 note 1: default scope when absent is account:all "
    "transaction:all (here account:all only)",
    wrap=body_edit(("POST",), r"/users$", _default_scope_accounts_only))


def _drop_email(data):
    data.pop("email", None)


update_partner_ignores_email = Case(
    "update_partner_ignores_email", "§1 capability 1: UpdatePartner changes the partner's e-mail address (PUT "
    "/partners/self drops email)",
    wrap=body_edit(("PUT",), r"/partners/self$", _drop_email))


def _drop_name(data):
    data.pop("name", None)


child_partner_name_unchangeable = Case(
    "child_partner_name_unchangeable", "§2 Partner: name changeable, including for child partners (PUT "
    "/partners/{id} ignores name)",
    wrap=body_edit(("PUT",), r"/partners/(?!self$)[^/]+$", _drop_name))


def _no_warning_details(data, environ):
    if isinstance(data, dict):
        data.pop("warningDetails", None)


create_account_without_warning_details = Case(
    "create_account_without_warning_details", "§2 Account / 2.8.2: warningDetails in CreateAccount responses",
    change=json_change(lambda e: method(e, "POST") and path(e, r"/accounts$"), _no_warning_details))


def _account_types(data):
    if isinstance(data, dict) and isinstance(data.get("accountTypes"), list):
        return [t for t in data["accountTypes"] if isinstance(t, dict)]
    if isinstance(data, list):
        return [t for t in data if isinstance(t, dict)]
    return [data] if isinstance(data, dict) else []


def _no_deprecation_reason(data, environ):
    for entry in _account_types(data):
        for field in entry.get("accountFields") or []:
            if isinstance(field, dict):
                field.pop("deprecationReason", None)


account_fields_without_deprecation_reason = Case(
    "account_fields_without_deprecation_reason", "§2 Account type: accountFields each with Type, isDeprecated, "
    "deprecationReason (2.8.1); deprecationReason missing",
    change=json_change(lambda e: method(e, "GET") and path(e, r"/accounttypes(/[^/]+)?$"), _no_deprecation_reason))


def _no_help_urls(data, environ):
    for entry in _account_types(data):
        entry.pop("helpUrls", None)


account_types_without_help_urls = Case(
    "account_types_without_help_urls", "§2 Account type: has helpUrls (2.1.3)",
    change=json_change(lambda e: method(e, "GET") and path(e, r"/accounttypes/[^/]+$"), _no_help_urls))


def _count_capped(data, environ):
    stats = data.get("statistics") if isinstance(data, dict) else None
    if isinstance(stats, dict) and isinstance(stats.get("count"), int):
        stats["count"] = min(stats["count"], 100)


statistics_count_capped_at_page = Case(
    "statistics_count_capped_at_page", "§1 capability 5: statistics count = number of transactions (counted over "
    "the first page of 100 only)",
    change=json_change(lambda e: method(e, "GET") and path(e, r"/accounts/[^/]+$"), _count_capped))


def _report_without_warnings(data, environ):
    if isinstance(data, dict):
        data.pop("warnings", None)


report_without_warnings = Case(
    "report_without_warnings", "§2 Report: has errors and warnings; §7 rule 4 (GetReport drops warnings)",
    change=json_change(lambda e: method(e, "GET") and path(e, r"/reports/[^/]+$"), _report_without_warnings))


def _null_empty_errors(data, environ):
    rows = data.get("accounts", [data]) if isinstance(data, dict) else []
    for row in rows:
        if isinstance(row, dict):
            for key in ("errors", "warnings"):
                if row.get(key) == []:
                    row[key] = None


account_errors_null_when_empty = Case(
    "account_errors_null_when_empty", "§7 rule 4: account objects report problems in errors and warnings arrays "
    "(null instead of an empty array)",
    change=json_change(lambda e: method(e, "GET") and path(e, r"/accounts(/[^/]+)?$"), _null_empty_errors))


def _single_without_type(data, environ):
    if isinstance(data, dict):
        data.pop("transactionType", None)


get_transaction_without_type = Case(
    "get_transaction_without_type", "§9 2.12.1: TransactionType in GetTransactions AND GetTransaction responses "
    "(missing from GetTransaction only)",
    change=json_change(lambda e: method(e, "GET") and path(e, r"/transactions/[^/]+$"), _single_without_type))


# ============================================================================ §3 transitions
def _revoke_does_nothing(app):
    def lazy(environ, start_response):
        if method(environ, "DELETE") and path(environ, r"/partners/[^/]+/tokens/[^/]+$"):
            status, headers, body = answered(app, {**environ, "REQUEST_METHOD": "GET",
                                                   "PATH_INFO": re.sub(r"/[^/]+$", "", environ["PATH_INFO"]),
                                                   "CONTENT_LENGTH": "0", "wsgi.input": io.BytesIO()})
            if status.startswith("200"):     # the caller may list: answer as if revoked, revoke nothing
                return respond(start_response, "204 No Content", [], b"")
        return app(environ, start_response)
    return lazy


revocation_not_persisted = Case(
    "revocation_not_persisted", "§3 Token: DELETE token by id -> revoked (isRevoked true, isValid false): the "
    "service answers 204 and revokes nothing",
    wrap=_revoke_does_nothing)


def _self_revoke(app):
    from ptas_sandbox.simulator.tokens import models
    revoke = models.revoke

    def lenient(ctx, partner_id, token_id, caller_token_id):
        return revoke(ctx, partner_id, token_id, None)
    models.revoke = lenient


self_revocation_allowed = Case(
    "self_revocation_allowed", "§3 / §5 rule 2: a token cannot revoke itself (the check is missing: it revokes "
    "itself)",
    apply=_self_revoke)


def _expired_partner_accepted(app):
    from ptas_sandbox.simulator.auth import Principal
    from ptas_sandbox.simulator.problems import Unauthorized
    hooks = app.extensions["ptas"].hooks
    authenticate, read_token = hooks.tokens.authenticate, hooks.tokens.read

    def lenient(ctx, claims, row=None):
        try:
            return authenticate(ctx, claims, row)
        except Unauthorized:
            found = row if row is not None else read_token(ctx, claims)
            if found is None or found["kind"] != "partner" or found["revoked_at"] is not None \
                    or ctx.now < found["expires_at"]:
                raise
            return Principal(found["id"], found["kind"], found["partner_id"], found["user_id"],
                             frozenset(found["scope"].split()))
    hooks.tokens = dataclasses.replace(hooks.tokens, authenticate=lenient)


expired_partner_token_accepted = Case(
    "expired_partner_token_accepted", "§3 Token: expiresAt reached -> expired, isValid false (an expired partner "
    "token is still accepted; records still say expired)",
    apply=_expired_partner_accepted)


# ============================================================================ §4 endpoints and notes
def _child_list_unchecked(environ, status, headers, body):
    if get(environ, r"/partners/(?!self/)[^/]+/tokens$") and status.startswith("403"):
        return changed("200 OK", [("Content-Type", "application/json")], {"tokens": []})


child_token_list_without_read = Case(
    "child_token_list_without_read", "§4.1 rule 3 / §7 rule 1: listing tokens needs partner:read or partner:all "
    "(GetPartnerTokens of a child served without it)",
    change=_child_list_unchecked)


def _single_read_ignores_mapped(app):
    def dropped(environ, start_response):
        if method(environ, "GET") and path(environ, r"/transactions/[^/]+$"):
            kept = [(k, v) for k, v in parse_qsl(environ.get("QUERY_STRING", "")) if k != "excludeMappedFields"]
            environ = {**environ, "QUERY_STRING": urlencode(kept)}
        return app(environ, start_response)
    return dropped


get_transaction_ignores_exclude_mapped = Case(
    "get_transaction_ignores_exclude_mapped", "§4.3: GetTransaction accepts excludeMappedFields (ignored on the "
    "single read)",
    wrap=_single_read_ignores_mapped)


def _false_is_true(pairs):
    return [(k, "true" if k == "excludeDeprecatedFields" and v.lower() == "false" else v) for k, v in pairs]


exclude_deprecated_false_read_as_true = Case(
    "exclude_deprecated_false_read_as_true", "§4.3: excludeDeprecatedFields is a boolean, true removes deprecated "
    "fields (the string 'false' is read as truthy)",
    wrap=query_edit(r"/transactions(/[^/]+)?$", _false_is_true))


def _later_pages_lose_first(data, environ):
    if "pageReference" in dict(parse_qsl(environ.get("QUERY_STRING", ""))) and isinstance(data, dict) \
            and isinstance(data.get("transactions"), list) and data["transactions"]:
        data["transactions"] = data["transactions"][1:]


paging_skips_one_per_page = Case(
    "paging_skips_one_per_page", "§1 capability 5 / §4.3: GetTransactions returns all transactions (keyset off by "
    "one: each later page loses its first transaction)",
    change=json_change(lambda e: method(e, "GET") and path(e, r"/transactions$"), _later_pages_lose_first))


def _accountui_needs_single(app):
    def strict(environ, start_response):
        if method(environ, "POST") and path(environ, r"/accountui$"):
            raw, data = read_body(environ)
            if isinstance(data, dict) and "accountTypeId" not in data and "accountId" not in data:
                return respond(start_response, *problem("400 Bad Request", "accountTypeId is required."))
            environ = {**environ, "wsgi.input": io.BytesIO(raw), "CONTENT_LENGTH": str(len(raw))}
        return app(environ, start_response)
    return strict


accountui_requires_deprecated_type_id = Case(
    "accountui_requires_deprecated_type_id", "§4.2 note 4: POST /accountui request carries accountTypeIds "
    "(array); accountTypeId is deprecated (here accountTypeId is still required)",
    wrap=_accountui_needs_single)


def _userui_unchecked(environ, status, headers, body):
    if method(environ, "POST") and path(environ, r"/userui$") and status.startswith("403"):
        return changed("201 Created", [("Content-Type", "application/json")], {
            "id": "5b3c1c7e-0000-4000-8000-00000000a001", "url": "https://ui.example/userui/a001",
            "status": "Pending", "userId": None})


userui_create_without_scope = Case(
    "userui_create_without_scope", "§4.2 note 4: POST /userui needs the scope userui:create (served without it)",
    change=_userui_unchecked)


def _users_by_name(environ, status, headers, body):
    match = path(environ, r"/users/([^/]+)$")
    if method(environ, "GET") and match and status[:3] in ("400", "404") and match.group(1) != "self":
        return changed("200 OK", [("Content-Type", "application/json")], {
            "id": "0d7e2a9b-0000-4000-8000-00000000b002", "name": match.group(1), "email": None})


removed_get_user_by_name_served = Case(
    "removed_get_user_by_name_served", "§4.2 note 6: GET /users/{name} is removed (a legacy route still answers "
    "what the new route does not find)",
    change=_users_by_name)


def _user_token_path(environ, status, headers, body):
    if method(environ, "GET") and path(environ, r"/users/[^/]+/token$"):
        return changed("200 OK", [("Content-Type", "application/json")], {"accessToken": FAKE_JWT,
                                                                          "expiresIn": 86400})


removed_get_user_token_served = Case(
    "removed_get_user_token_served", "§4.2 note 6: GET /users/{id}/token is removed (still answers)",
    change=_user_token_path)


def _user_tokens_partner_only(environ, status, headers, body):
    if method(environ, "POST") and path(environ, r"/users/(?!self/)[^/]+/tokens$") \
            and claims_of(environ).get("knd") == "user":
        return problem("403 Forbidden", "CreateUserToken needs a partner token.")


create_user_token_refuses_user_tokens = Case(
    "create_user_token_refuses_user_tokens", "§4.2 note 2 / 2.11.0: POST /users/{id}/tokens accepts user tokens "
    "with user.token:create or user.token:all (refused as before 2.11)",
    change=_user_tokens_partner_only)


def _user_create_not_enough(environ, status, headers, body):
    if method(environ, "POST") and path(environ, r"/users/(?!self/)[^/]+/tokens$") \
            and claims_of(environ).get("knd") == "partner":
        held = scopes_of(environ)
        if "user:create" in held and not held & {"user:all", "user.token:create", "user.token:all"}:
            return problem("403 Forbidden", "CreateUserToken needs user:all.")


create_user_token_refuses_user_create = Case(
    "create_user_token_refuses_user_create", "§4.2 note 2 / §5 scope table: a partner token with user:create "
    "creates user tokens (refused unless user:all)",
    change=_user_create_not_enough)


def _own_user_token_unchecked(environ, status, headers, body):
    if method(environ, "POST") and path(environ, r"/users/self/tokens$") and status.startswith("403"):
        return changed("201 Created", [("Content-Type", "application/json")], {
            "accessToken": FAKE_JWT, "scope": "account:all", "expiresIn": 86400, "isValid": True})


own_user_token_without_scope = Case(
    "own_user_token_without_scope", "§4.2 note 3: POST /users/self/tokens requires user.token:create or "
    "user.token:all (served without)",
    change=_own_user_token_unchecked)


# ============================================================================ §5 authentication and scopes
def _deploy_reads_sibling(environ, status, headers, body):
    match = path(environ, r"/partners/((?!self$)[^/]+)$")
    if method(environ, "GET") and match and status[:3] in ("403", "404") \
            and scopes_of(environ) == {"partner:create"}:
        return changed("200 OK", [("Content-Type", "application/json")], {
            "id": match.group(1), "name": "another child", "email": None, "redirectUrls": []})


deploy_token_reads_other_child = Case(
    "deploy_token_reads_other_child", "§5 rule 4: a deploy token cannot access the parent partner or other child "
    "partners (GetPartner of a child served to it)",
    change=_deploy_reads_sibling)


def _partner_all_cannot_list(environ, status, headers, body):
    held = scopes_of(environ)
    if get(environ, r"/partners/self/tokens$") and "partner:all" in held and "partner:read" not in held:
        return problem("403 Forbidden", "GetOwnPartnerTokens needs partner:read.")


listing_refuses_partner_all = Case(
    "listing_refuses_partner_all", "§4.1 GetOwnPartnerTokens: needs partner:read or partner:all (partner:all "
    "alone is refused)",
    change=_partner_all_cannot_list)


def _partner_all_cannot_create(environ, status, headers, body):
    held = scopes_of(environ)
    if method(environ, "POST") and path(environ, r"/partners/self/tokens$") and "partner:all" in held \
            and "partner:update" not in held:
        return problem("403 Forbidden", "CreateOwnPartnerToken needs partner:update.")


own_token_refuses_partner_all = Case(
    "own_token_refuses_partner_all", "§5 scope table: partner:all = all actions on the partner (own-token creation "
    "refused without the literal partner:update)",
    change=_partner_all_cannot_create)


def _transaction_read_refused(environ, status, headers, body):
    held = scopes_of(environ)
    if get(environ, r"/transactions$") and "transaction:read" in held and "transaction:all" not in held:
        return problem("403 Forbidden", "GetTransactions needs transaction:all.")


transaction_read_cannot_list = Case(
    "transaction_read_cannot_list", "§5 scope table: transaction:read reads and lists transactions (GetTransactions "
    "refuses it)",
    change=_transaction_read_refused)


def _delete_with_update(environ, status, headers, body):
    held = scopes_of(environ)
    if method(environ, "DELETE") and path(environ, r"/accounts/[^/]+$") and status.startswith("403") \
            and "account:update" in held:
        return "204 No Content", [], b""


delete_account_with_update_scope = Case(
    "delete_account_with_update_scope", "§5 scope table / §7 rule 1: deleting accounts needs account:delete or "
    "account:all (account:update is taken)",
    change=_delete_with_update)


# ============================================================================ §6 events
class NotificationShape:
    """The notification body, changed in the service's own `notification` hook stage."""

    config = {"START_SERVICES": True}

    def __init__(self, shape):
        self.shape = shape

    def __call__(self, app):
        app.extensions["ptas"].hooks.notification.append(lambda store, world, body: self.shape(body))


def _imported_without_report(body):
    if body.get("eventType") == "TransactionsImported" and isinstance(body.get("data"), dict):
        body["data"].pop("report", None)
    return body


transactions_imported_without_report = Case(
    "transactions_imported_without_report", "§6 TransactionsImported: carries report information (the report is "
    "left out)",
    config={"START_SERVICES": True}, apply=NotificationShape(_imported_without_report))


def _import_object_without_warnings(body):
    data = body.get("data")
    if isinstance(data, dict) and isinstance(data.get("dataImport"), dict):
        data["dataImport"].pop("warnings", None)
        data["dataImport"].pop("errors", None)
    return body


notification_import_without_errors = Case(
    "notification_import_without_errors", "§6: data-import objects in notifications carry errors and warnings",
    config={"START_SERVICES": True}, apply=NotificationShape(_import_object_without_warnings))


def _type_update_kind_typo(body):
    if body.get("eventType") == "AccountTypeUpdated":
        body["eventType"] = "AccountTypeUpdate"
    return body


account_type_updated_misnamed = Case(
    "account_type_updated_misnamed", "§6 event kinds: AccountTypeUpdated (sent as AccountTypeUpdate)",
    config={"START_SERVICES": True}, apply=NotificationShape(_type_update_kind_typo))


def _no_real_deleted(payload):
    if payload.get("eventType") == "AccountDeleted" and not payload.get("isTest"):
        return []
    return [payload]


account_deleted_not_notified = Case(
    "account_deleted_not_notified", "§6 AccountDeleted: an account was deleted (a real deletion sends nothing; "
    "the test event still does)",
    config=Outgoing.config, apply=Outgoing(_no_real_deleted).apply)


def _report_imported_too(payload):
    if payload.get("eventType") == "TransactionsImported":
        return [payload, {**payload, "eventType": "ReportImported"}]
    return [payload]


report_imported_still_sent = Case(
    "report_imported_still_sent", "§6 ReportImported: no longer triggered (sent beside each TransactionsImported)",
    config=Outgoing.config, apply=Outgoing(_report_imported_too).apply)


def _put_keeps_events(app):
    def kept(environ, start_response):
        if method(environ, "PUT") and path(environ, r"/webhooks/[^/]+$"):
            raw, data = read_body(environ)
            current = answered(app, {**environ, "REQUEST_METHOD": "GET", "CONTENT_LENGTH": "0",
                                     "wsgi.input": io.BytesIO()})
            old = json_of(current[2])
            if isinstance(data, dict) and isinstance(old, dict):
                for key, value in old.items():
                    if isinstance(value, list) and key in data:
                        data[key] = value         # the subscribed kinds are not replaced
                environ = with_body(environ, data)
            else:
                environ = {**environ, "wsgi.input": io.BytesIO(raw), "CONTENT_LENGTH": str(len(raw))}
        return app(environ, start_response)
    return kept


update_webhook_ignores_kinds = Case(
    "update_webhook_ignores_kinds", "§4.2 PUT /webhooks/{id} updates a webhook / §6 a webhook subscribes to event "
    "kinds (the kinds are never replaced by PUT)",
    wrap=_put_keeps_events)


# ============================================================================ §7 errors
def _forbidden_empty(environ, status, headers, body):
    if status.startswith("403") and path(environ, r"/users"):
        return status, [("Content-Type", "application/json")], b""


forbidden_empty_body_on_users = Case(
    "forbidden_empty_body_on_users", "§7 rule 2: 403 responses carry a ProblemDetails body (empty body on the "
    "users paths, the earlier behaviour)",
    change=_forbidden_empty)


def _unauthorized_text(environ, status, headers, body):
    if status.startswith("401") and path(environ, r"/accounts"):
        return status, [("Content-Type", "text/plain"), ("WWW-Authenticate", "Bearer")], b"Unauthorized"


unauthorized_plain_text_on_accounts = Case(
    "unauthorized_plain_text_on_accounts", "§7 rule 2: 401 responses carry a ProblemDetails body (plain text on "
    "the account paths)",
    change=_unauthorized_text)


def _scope_as_401(environ, status, headers, body):
    if status.startswith("403") and path(environ, r"/partners/self/tokens$"):
        data = json_of(body) or {}
        data.update(status=401, title="Unauthorized")
        return "401 Unauthorized", headers, json.dumps(data).encode()


missing_scope_answered_401 = Case(
    "missing_scope_answered_401", "§7 rule 1 / §4.1 rule 3: a token lacking a required scope gets 403 (the token "
    "endpoints answer 401)",
    change=_scope_as_401)


def _not_found_renamed(environ, status, headers, body):
    if method(environ, "POST") and "/oauth/consent/" in environ["PATH_INFO"]:
        swap = {"NotFoundError": "NotFound"}
        headers = [(k, swap.get(v, v) if k.lower() == "x-service-authstatus" else
                    v.replace("status=NotFoundError", "status=NotFound") if k.lower() == "location" else v)
                   for k, v in headers]
        return status, headers, body.replace(b"NotFoundError", b"NotFound")


oauth_not_found_status_renamed = Case(
    "oauth_not_found_status_renamed", "§7 rule 3 / §1 step 2: status values Success, NotFoundError or OtherError "
    "(NotFoundError sent as NotFound)",
    change=_not_found_renamed)


def _other_error_header_only(environ, status, headers, body):
    if method(environ, "POST") and "/oauth/consent/" in environ["PATH_INFO"]:
        return status, [(k, "Error" if k.lower() == "x-service-authstatus" and v == "OtherError" else v)
                        for k, v in headers], body


oauth_other_error_header_wrong = Case(
    "oauth_other_error_header_wrong", "§1 'in every case the headers carry the same data': X-Service-AuthStatus "
    "says Error where the query says OtherError",
    change=_other_error_header_only)


# ============================================================================ §8 limits
rate_limit_off_by_one = Case(
    "rate_limit_off_by_one", "§8: global rate limit 100 requests per 60 s (101 served)",
    config={"RATE_LIMIT": 101})


def _per_operation_limit(app):
    limiter = app.extensions["ptas"].limiter
    limiter.rules = lambda operation_id: [(operation_id or "", limiter.global_rule)]


rate_limit_per_operation = Case(
    "rate_limit_per_operation", "§8: one global limit for all requests (counted per operation instead)",
    apply=_per_operation_limit)


def _cap_lifetime(data):
    if isinstance(data.get("expiresIn"), int) and data["expiresIn"] > 2592000:
        data["expiresIn"] = 2592000


token_lifetime_capped_30_days = Case(
    "token_lifetime_capped_30_days", "§8: token lifetime is any value the caller sends; a one-year token uses "
    "31536000 (own tokens silently capped at 30 days)",
    wrap=body_edit(("POST",), r"/partners/self/tokens$", _cap_lifetime))


def _child_default_90_days(data):
    if "expiresIn" not in data or data.get("expiresIn") is None:
        data["expiresIn"] = 7776000


child_token_default_90_days = Case(
    "child_token_default_90_days", "§4.1 rule 2 / §8: default lifetime of a child partner's tokens is 6 months "
    "(here 90 days)",
    wrap=body_edit(("POST",), r"/partners/(?!self/)[^/]+/tokens$", _child_default_90_days))


# ============================================================================ §9 versioning
def _delete_by_name(environ, status, headers, body):
    match = path(environ, r"/users/([^/]+)$")
    if method(environ, "DELETE") and match and status[:3] in ("400", "404"):
        return "204 No Content", [], b""


removed_delete_user_by_name_served = Case(
    "removed_delete_user_by_name_served", "§4.2 note 6: DELETE /users/{name} removed (answers 204 for anything not "
    "found by id)",
    change=_delete_by_name)


def _redirect_url_singular(data, environ):
    if isinstance(data, dict) and isinstance(data.get("redirectUrls"), list):
        urls = data.pop("redirectUrls")
        data["redirectUrl"] = urls[0] if urls else None


partner_redirect_url_singular = Case(
    "partner_redirect_url_singular", "§2 Partner / 2.0.0-beta2: redirectUrls replaced the single redirectUrl "
    "(GetPartner of a child answers the old singular field)",
    change=json_change(lambda e: method(e, "GET") and path(e, r"/partners/(?!self$)[^/]+$"), _redirect_url_singular))


CASES = [value for value in list(globals().values()) if isinstance(value, Case)]
