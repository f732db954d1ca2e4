"""Deployments that each break one rule the spec states: the simulator behind a change of its responses (or of
the requests it sees), run by the harness in deployment mode (a URL and a token, `/_sandbox` hidden).

A breakage is `change(environ, status, headers, body)` (see `deployments.Rewrite`), `wrap(app)` for one that
must alter the request, simulator configuration (`config`) for a rule the service itself enforces, or
`apply(app)` for one that changes the service's own engine at run time (its webhook sender, its rate limiter).
"""

import base64
import io
import json
import re
from urllib.parse import parse_qsl, urlencode

from werkzeug.test import run_wsgi_app

from tests.support.deployments import json_of


def changed(status, headers, data):
    return status, headers, json.dumps(data).encode()


def get(environ, pattern):
    return environ["REQUEST_METHOD"] == "GET" and re.search(pattern, environ["PATH_INFO"])


def claims_of(environ):
    """The claims of the request's bearer JWT, unverified ({} for anything else)."""
    try:
        payload = environ.get("HTTP_AUTHORIZATION", "").split(" ")[-1].split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (IndexError, ValueError):
        return {}
    return claims if isinstance(claims, dict) else {}


def scopes_of(environ):
    return set(str(claims_of(environ).get("scope", "")).split())


def problem(status, detail):
    return status, [("Content-Type", "application/problem+json")], json.dumps(
        {"type": "about:blank", "title": status.split(" ", 1)[1], "status": int(status[:3]), "detail": detail}).encode()


class DropQuery:
    """A service that ignores a query parameter on the paths matching `pattern` (spec §4.3 parameters)."""

    def __init__(self, names, pattern=r"/transactions"):
        self.names, self.pattern = set(names), pattern

    def __call__(self, app):
        def dropped(environ, start_response):
            if re.search(self.pattern, environ["PATH_INFO"]):
                kept = [(k, v) for k, v in parse_qsl(environ.get("QUERY_STRING", "")) if k not in self.names]
                environ = {**environ, "QUERY_STRING": urlencode(kept)}
            return app(environ, start_response)
        return dropped


# -- transactions (spec §1 capability 5, §2, §4.3, §9 2.12.1) -------------------------------------------------------
def last_page_loops(environ, status, headers, body):
    """The last page's nextPageReference leads back instead of being absent: the last page is never reached."""
    data = json_of(body)
    if get(environ, r"/transactions$") and isinstance(data, dict) and data.get("previousPageReference") \
            and not data.get("nextPageReference"):
        data["nextPageReference"] = data["previousPageReference"]
        return changed(status, headers, data)


def no_previous_reference(environ, status, headers, body):
    """previousPageReference always null (spec §4.3: the response carries it)."""
    data = json_of(body)
    if get(environ, r"/transactions$") and isinstance(data, dict) and data.get("previousPageReference"):
        data["previousPageReference"] = None
        return changed(status, headers, data)


def transactions_without(field):
    """A deployment whose transactions (in pages and read one by one) lack `field`."""
    def broken(environ, status, headers, body):
        data = json_of(body)
        if get(environ, r"/transactions") and isinstance(data, dict):
            for row in data.get("transactions", [data]):
                if isinstance(row, dict):
                    row.pop(field, None)
            return changed(status, headers, data)
    return broken


no_transaction_type = transactions_without("transactionType")     # spec §9 2.12.1


def statistics_miscounted(environ, status, headers, body):
    """statistics.count is not the number of transactions (spec §1 capability 5)."""
    data = json_of(body)
    if get(environ, r"/accounts/[^/]+$") and isinstance(data, dict) and isinstance(data.get("statistics"), dict):
        data["statistics"]["count"] += 1
        return changed(status, headers, data)


# -- tokens (spec §2, §3, §8) ---------------------------------------------------------------------------------------
def expired_shown_valid(environ, status, headers, body):
    """Token lists that never show a token expired (spec §3: expiresAt reached -> isExpired true, isValid false)."""
    data = json_of(body)
    if get(environ, r"/tokens$") and isinstance(data, dict) and isinstance(data.get("tokens"), list):
        for token in data["tokens"]:
            if token.get("isExpired"):
                token["isExpired"], token["isValid"] = False, not token.get("isRevoked")
        return changed(status, headers, data)


def revoked_shown_valid(environ, status, headers, body):
    """Token lists that never show a revocation (spec §3: isRevoked true, revokedAt set)."""
    data = json_of(body)
    if get(environ, r"/tokens$") and isinstance(data, dict) and isinstance(data.get("tokens"), list):
        for token in data["tokens"]:
            if token.get("isRevoked"):
                token.update(isRevoked=False, revokedAt=None, isValid=not token.get("isExpired"))
        return changed(status, headers, data)


def last_use_never_recorded(environ, status, headers, body):
    """lastUsedAt stays null after use (spec §2)."""
    data = json_of(body)
    if get(environ, r"/tokens$") and isinstance(data, dict) and isinstance(data.get("tokens"), list):
        for token in data["tokens"]:
            token["lastUsedAt"] = None
        return changed(status, headers, data)


def child_tokens_for_a_year(environ, status, headers, body):
    """A child partner's token without expiresIn lives a year, not 6 months (spec §4.1 rule 2, §8)."""
    data = json_of(body)
    if environ["REQUEST_METHOD"] == "POST" and re.search(r"/partners/[^/]+/tokens$", environ["PATH_INFO"]) \
            and isinstance(data, dict) and data.get("expiresIn") == 15768000:
        data["expiresIn"] = 31536000
        return changed(status, headers, data)


def listing_with_update_only(environ, status, headers, body):
    """Token lists served to a token that holds neither partner:read nor partner:all (spec §4.1 rule 3, §7)."""
    if get(environ, r"/partners/self/tokens$") and status.startswith("403"):
        return "200 OK", [("Content-Type", "application/json")], b'{"tokens": []}'


# -- partners, users, accounts -----------------------------------------------------------------------------------
def deploy_token_reads_parent(environ, status, headers, body):
    """A deploy token reads its parent partner (spec §5 rule 4: it cannot)."""
    if get(environ, r"/partners/self$") and status.startswith("403"):
        return "200 OK", [("Content-Type", "application/json")], b'{"name": "parent", "redirectUrls": []}'


def redirect_urls_dropped(environ, status, headers, body):
    """Own settings keep only the first OAuth2 redirect URL (spec §1 capability 1, §2: several)."""
    data = json_of(body)
    if get(environ, r"/partners/self$") and isinstance(data, dict) and isinstance(data.get("redirectUrls"), list):
        data["redirectUrls"] = data["redirectUrls"][:1]
        return changed(status, headers, data)


def deleted_users_without_deleted_at(environ, status, headers, body):
    """GetUsers lists deleted users without deletedAt (spec §4.3, §9 2.1.5)."""
    data = json_of(body)
    if get(environ, r"/users$") and isinstance(data, dict) and isinstance(data.get("users"), list):
        for user in data["users"]:
            user.pop("deletedAt", None)
        return changed(status, headers, data)


def user_email_dropped(environ, status, headers, body):
    """CreateUser answers without the e-mail address it was given (spec §4.2 note 1)."""
    data = json_of(body)
    if environ["REQUEST_METHOD"] == "POST" and environ["PATH_INFO"].endswith("/users") and isinstance(data, dict):
        data.pop("email", None)
        return changed(status, headers, data)


def update_without_warning_details(environ, status, headers, body):
    """UpdateAccount answers without warningDetails (spec §2, §9 2.8.2)."""
    data = json_of(body)
    if environ["REQUEST_METHOD"] in ("PUT", "PATCH") and re.search(r"/accounts/[^/]+$", environ["PATH_INFO"]) \
            and isinstance(data, dict):
        data.pop("warningDetails", None)
        return changed(status, headers, data)


def account_types_without_psp_reports(environ, status, headers, body):
    """Account types without hasPspReports (spec §2, §9 2.9.1)."""
    data = json_of(body)
    if get(environ, r"/accounttypes") and data is not None:
        for entry in (data.get("accountTypes", [data]) if isinstance(data, dict) else data):
            if isinstance(entry, dict):
                entry.pop("hasPspReports", None)
        return changed(status, headers, data)


def imports_without_errors(environ, status, headers, body):
    """Data imports without errors (spec §2, §7 rule 4)."""
    data = json_of(body)
    if get(environ, r"/dataimports") and data is not None:
        rows = data.get("dataImports", [data]) if isinstance(data, dict) else data
        for row in rows if isinstance(rows, list) else [rows]:
            if isinstance(row, dict):
                row.pop("errors", None)
        return changed(status, headers, data)


def sessions_without_type_ids(environ, status, headers, body):
    """Account UI sessions answer only the deprecated accountTypeId (spec §4.2 note 4)."""
    data = json_of(body)
    if re.search(r"/accountui(/[^/]+)?$", environ["PATH_INFO"]) and isinstance(data, dict) \
            and "accountTypeIds" in data:
        ids = data.pop("accountTypeIds")
        data["accountTypeId"] = (ids or [None])[0]
        return changed(status, headers, data)


# -- OAuth2, webhooks, versioning -------------------------------------------------------------------------------------
def oauth_without_reference(environ, status, headers, body):
    """CreateOauthRedirectUrl answers no authReference (spec §1 OAuth2 flow, step 1)."""
    data = json_of(body)
    if environ["REQUEST_METHOD"] == "POST" and environ["PATH_INFO"].endswith("/oauth") and isinstance(data, dict):
        data.pop("authReference", None)
        return changed(status, headers, data)


def test_events_not_served(environ, status, headers, body):
    """The /testevents endpoints are missing (spec §4.2, webhooks 1.1.1)."""
    if environ["REQUEST_METHOD"] == "POST" and "/testevents/" in environ["PATH_INFO"]:
        return "404 Not Found", [("Content-Type", "application/problem+json")], b'{"status": 404}'


def patch_partners_served(environ, status, headers, body):
    """PATCH /partners still answers (spec §4.2 note 6: removed)."""
    if environ["REQUEST_METHOD"] == "PATCH" and environ["PATH_INFO"].endswith("/partners"):
        return "200 OK", [("Content-Type", "application/json")], b"{}"


def old_test_paths_served(environ, status, headers, body):
    """The test paths under /webhooks still answer (spec §4.2 note 6: removed, moved to /testevents)."""
    if re.search(r"/webhooks/test-", environ["PATH_INFO"]):
        return "200 OK", [("Content-Type", "application/json")], b"{}"


# -- notifications (spec §6): the deployment's outgoing side -------------------------------------------------------
class Outgoing:
    """A deployment whose notifications change on their way out: `change(payload)` gives the payloads to send
    instead (none, one, or more). Applied to the simulator's webhook sender; needs its dispatcher running."""

    config = {"START_SERVICES": True}

    def __init__(self, change):
        self.change = change
        self.__name__ = change.__name__

    def apply(self, app):
        from ptas_sandbox.simulator.webhooks.dispatcher import Dispatcher
        dispatcher = next(s for s in app.extensions["ptas"].services if isinstance(s, Dispatcher))
        send = dispatcher.sender.send

        def changed_send(url, body, headers):
            outcome = None
            for payload in self.change(json.loads(body)):
                outcome = send(url, json.dumps(payload).encode(), headers)
            if outcome is None:         # nothing sent, yet the service records a success
                from ptas_sandbox.simulator.webhooks.sender import Outcome
                outcome = Outcome(204, {}, "")
            return outcome
        dispatcher.sender.send = changed_send


def test_events_never_sent(payload):
    """The test endpoints answer, but no test notification leaves (spec §4.2, §6)."""
    return [] if payload.get("isTest") or (payload.get("data") or {}).get("isTest") else [payload]


def notifications_without_errors(payload):
    """Account objects in notifications without errors and warnings (spec §6)."""
    account = (payload.get("data") or {}).get("account")
    if isinstance(account, dict):
        account.pop("errors", None)
        account.pop("warnings", None)
    return [payload]


def retired_kind_still_sent(payload):
    """Every AccountUpdated is also sent as the retired AccountError (spec §6: no longer triggered)."""
    if payload.get("eventType") == "AccountUpdated":
        return [payload, {**payload, "eventType": "AccountError"}]
    return [payload]


# -- issue 22: statements no scenario checked before -----------------------------------------------------------
def child_tokens_without_partner_create(environ, status, headers, body):
    """CreatePartnerToken served to a token without partner:create (spec §4.1, §7 rule 1: 403)."""
    if environ["REQUEST_METHOD"] == "POST" and re.search(r"/partners/[^/]+/tokens$", environ["PATH_INFO"]) \
            and status.startswith("403"):
        return changed("201 Created", [("Content-Type", "application/json")], {
            "accessToken": "eyJhbGciOiJIUzI1NiJ9.eyJjaGlsZCI6dHJ1ZX0.c2lnbmF0dXJl", "name": "store",
            "scope": "partner:read", "expiresIn": 15768000})


class DropBodyField:
    """A service that ignores a property of a `method` (POST) body on the paths matching `pattern`."""

    def __init__(self, name, pattern, method="POST"):
        self.name, self.pattern, self.method = name, pattern, method

    def __call__(self, app):
        def dropped(environ, start_response):
            if environ["REQUEST_METHOD"] == self.method and re.search(self.pattern, environ["PATH_INFO"]):
                length = int(environ.get("CONTENT_LENGTH") or 0)
                data = json.loads(environ["wsgi.input"].read(length) or b"{}")
                data.pop(self.name, None)
                raw = json.dumps(data).encode()
                environ = {**environ, "wsgi.input": io.BytesIO(raw), "CONTENT_LENGTH": str(len(raw))}
            return app(environ, start_response)
        return dropped


# A child partner's token lives 6 months whatever expiresIn it was given (spec §8: the value sent).
child_lifetime_ignored = DropBodyField("expiresIn", r"/partners/[^/]+/tokens$")


class LastUseFrozen:
    """lastUsedAt keeps the time of the first use (spec §2: the last use)."""

    def __init__(self):
        self.first = {}

    def __call__(self, environ, status, headers, body):
        data = json_of(body)
        if get(environ, r"/tokens$") and isinstance(data, dict) and isinstance(data.get("tokens"), list):
            for token in data["tokens"]:
                key = token.get("id") or token.get("name")
                if token.get("lastUsedAt"):
                    token["lastUsedAt"] = self.first.setdefault(key, token["lastUsedAt"])
            return changed(status, headers, data)


def settings_without_styling(environ, status, headers, body):
    """The partner record's uiSettings without styling (spec §2, 2.5.0)."""
    data = json_of(body)
    if get(environ, r"/partners/self$") and isinstance(data, dict) and isinstance(data.get("uiSettings"), dict):
        data["uiSettings"].pop("styling", None)
        return changed(status, headers, data)


class PatchIgnored:
    """PATCH /webhooks/{id} answers the webhook unchanged (spec §4.2: it patches the webhook)."""

    def __call__(self, app):
        def ignored(environ, start_response):
            if environ["REQUEST_METHOD"] == "PATCH" and re.search(r"/webhooks/[^/]+$", environ["PATH_INFO"]):
                environ = {**environ, "REQUEST_METHOD": "GET", "CONTENT_LENGTH": "0", "wsgi.input": io.BytesIO()}
            return app(environ, start_response)
        return ignored


def statistics_swapped(environ, status, headers, body):
    """statistics.first and last swapped (spec §1 capability 5: first is the date of the first transaction)."""
    data = json_of(body)
    statistics = data.get("statistics") if isinstance(data, dict) else None
    if get(environ, r"/accounts/[^/]+$") and isinstance(statistics, dict) and statistics.get("first"):
        statistics["first"], statistics["last"] = statistics["last"], statistics["first"]
        return changed(status, headers, data)


no_shopper = transactions_without("shopper")       # spec §2, 2.7.0: Shopper information


# -- the OAuth2 return step (spec §1 "OAuth2 account creation flow", step 2) -----------------------------------
def consent_answer(environ):
    return environ["REQUEST_METHOD"] == "POST" and "/oauth/consent/" in environ["PATH_INFO"]


def return_without_headers(environ, status, headers, body):
    """The return step without X-Service-AuthReference, -AuthStatus, -AuthMessage (spec §1: in every case)."""
    if consent_answer(environ):
        return status, [(k, v) for k, v in headers if not k.lower().startswith("x-service-auth")], body


def status_not_the_spec_values(environ, status, headers, body):
    """The return step's status as `OK` instead of Success (spec §1: Success, NotFoundError or OtherError)."""
    if consent_answer(environ):
        swap = {"Success": "OK"}
        headers = [(k, swap.get(v, v) if k.lower() == "x-service-authstatus" else
                    v.replace("status=Success", "status=OK") if k.lower() == "location" else v) for k, v in headers]
        return status, headers, body


# CreateOauthRedirectUrl's redirect URL for this request is ignored (spec §1 step 1: it applies).
request_redirect_ignored = DropBodyField("redirectUrl", r"/oauth$")


def last_redirect_url_used(environ, status, headers, body):
    """Without a redirect URL in the request, the partner's last redirect URL is used, not the first (spec §1)."""
    if consent_answer(environ):
        return status, [(k, v.replace("https://acme.example/oauth/done", "https://acme.example/oauth/again")
                         if k.lower() == "location" else v) for k, v in headers], body


# -- the probe of broken deployments the suite missed: scopes, notifications, paging, token records -----------
def user_token_by_any_user_scope(environ, status, headers, body):
    """CreateUserToken served to a partner token holding only user:read, user:update or user:delete (spec §4.2
    note 2: user:create, user:all, user.token:create or user.token:all)."""
    if environ["REQUEST_METHOD"] == "POST" and re.search(r"/users/[^/]+/tokens$", environ["PATH_INFO"]) \
            and status.startswith("403") and scopes_of(environ) & {"user:read", "user:update", "user:delete"}:
        return changed("201 Created", [("Content-Type", "application/json")], {
            "accessToken": "eyJhbGciOiJIUzI1NiJ9.eyJ1c2VyIjp0cnVlfQ.c2lnbmF0dXJl", "scope": "account:all"})


def self_refresh_refuses_token_all(environ, status, headers, body):
    """POST /users/self/tokens refuses a user token holding user.token:all without user.token:create (spec §4.2
    note 3: either scope)."""
    if environ["REQUEST_METHOD"] == "POST" and environ["PATH_INFO"].endswith("/users/self/tokens"):
        held = scopes_of(environ)
        if "user.token:all" in held and "user.token:create" not in held:
            return problem("403 Forbidden", "CreateOwnUserToken needs user.token:create.")


class Wrap:
    """A breakage that changes what the service does with a request (`wrap(app)`), not only its answer."""


def answered(app, environ):
    chunks, status, reply = run_wsgi_app(app, environ, buffered=True)
    return status, reply.to_wsgi_list(), b"".join(chunks)


def respond(start_response, status, headers, body):
    headers = [(k, v) for k, v in headers if k.lower() != "content-length"]
    start_response(status, headers + [("Content-Length", str(len(body)))])
    return [body]


class SingleReadUnchecked(Wrap):
    """GetTransaction forgets a check the list makes: a refusal (`statuses`) of GET .../transactions/{id} is
    answered as the caller last served that account's transaction list would be answered. `callers`: "any" token,
    or "user" tokens only."""

    LIST, ONE = r"/accounts/[^/]+/transactions$", r"(/accounts/[^/]+/transactions)/[^/]+$"

    def __init__(self, statuses, callers="any"):
        self.statuses, self.callers, self.listers = statuses, callers, {}

    def __call__(self, app):
        def served(environ, start_response):
            status, headers, body = answered(app, environ)
            path, caller = environ["PATH_INFO"], environ.get("HTTP_AUTHORIZATION")
            one = re.search(self.ONE, path) if environ["REQUEST_METHOD"] == "GET" else None
            if get(environ, self.LIST) and status.startswith("200"):
                self.listers[path] = caller
            elif one and status[:3] in self.statuses and self.listers.get(path[:one.end(1)]) \
                    and (self.callers == "any" or claims_of(environ).get("knd") == self.callers):
                status, headers, body = answered(app, {**environ,
                                                       "HTTP_AUTHORIZATION": self.listers[path[:one.end(1)]]})
            return respond(start_response, status, headers, body)
        return served


# GetTransaction served to a token without a transaction scope (spec §5 rule 7: transaction:read reads
# transactions; §7 rule 1: a missing scope is 403).
get_transaction_without_transaction_scope = SingleReadUnchecked({"403"})
# GetTransaction served to another user's token (spec §1: users see only the accounts they created).
other_users_transaction_readable = SingleReadUnchecked({"403", "404"}, callers="user")


class StaleAnswersForRefusedTokens:
    """A cache before the service keeps each token's GET answers outside /partners and answers a 401 there with
    the token's earlier answer: a revoked token still reads (spec §3: revoked, isValid false)."""

    def __init__(self):
        self.kept = {}

    def __call__(self, environ, status, headers, body):
        if environ["REQUEST_METHOD"] != "GET" or "/partners" in environ["PATH_INFO"]:
            return None
        key = (environ.get("HTTP_AUTHORIZATION"), environ["PATH_INFO"], environ.get("QUERY_STRING", ""))
        if status.startswith("200"):
            self.kept[key] = (status, headers, body)
        elif status.startswith("401") and key in self.kept:
            return self.kept[key]


def comma_separated_scopes(environ, status, headers, body):
    """Partner token records give their scopes comma-separated (spec §2: separated by a single space)."""
    data = json_of(body)
    if not re.search(r"/partners/[^/]+/tokens(/[^/]+)?$", environ["PATH_INFO"]):
        return None
    records = [data] if isinstance(data, dict) else data if isinstance(data, list) else []
    if isinstance(data, dict) and isinstance(data.get("tokens"), list):
        records = data["tokens"]
    for record in records:
        if isinstance(record, dict) and isinstance(record.get("scope"), str):
            record["scope"] = ",".join(record["scope"].split())
    return changed(status, headers, data) if records else None


def bare_token_list(environ, status, headers, body):
    """GetOwnPartnerTokens answers a bare array (spec §2 Token list response: an object with the field tokens)."""
    data = json_of(body)
    if get(environ, r"/partners/self/tokens$") and isinstance(data, dict) and isinstance(data.get("tokens"), list):
        return changed(status, headers, data["tokens"])


class DropQueryOnLaterPages(DropQuery):
    """The exclude flags honoured on the first page only: dropped from a request that carries a pageReference
    (spec §4.3: parameters of GetTransactions, as pageReference is)."""

    def __call__(self, app):
        dropped = super().__call__(app)

        def later_pages(environ, start_response):
            if any(k == "pageReference" for k, _ in parse_qsl(environ.get("QUERY_STRING", ""))):
                return dropped(environ, start_response)
            return app(environ, start_response)
        return later_pages


exclude_flags_first_page_only = DropQueryOnLaterPages({"excludeDeprecatedFields", "excludeMappedFields"},
                                                      r"/transactions$")


def real_events_never_sent(payload):
    """Only test notifications leave; an event that occurs is recorded as delivered, never sent (spec §6)."""
    return [payload] if payload.get("isTest") or (payload.get("data") or {}).get("isTest") else []


class EveryWebhookNotified(Outgoing):
    """Each notification also goes to every other active webhook of the service, whatever kinds they subscribed
    to (spec §2, §6: a webhook subscribes to event kinds)."""

    def __init__(self):
        super().__init__(lambda payload: [payload])
        self.__name__ = "notifications_to_unsubscribed_webhooks"

    def apply(self, app):
        from ptas_sandbox.simulator.webhooks.dispatcher import Dispatcher
        sandbox = app.extensions["ptas"]
        dispatcher = next(s for s in sandbox.services if isinstance(s, Dispatcher))
        send = dispatcher.sender.send

        def every_send(url, body, headers):
            outcome = send(url, body, headers)
            for row in sandbox.store.all("SELECT DISTINCT callback_url FROM webhooks WHERE is_active = 1"):
                if row["callback_url"] != url:
                    send(row["callback_url"], body, headers)
            return outcome
        dispatcher.sender.send = every_send


class UsersUnlimited:
    """Requests made with user tokens are not counted by the global rate limit (spec §8: all requests from
    partners and users). The service's own limiter, changed; `apply(app)` as for `Outgoing`."""

    config = {}
    __name__ = "user_requests_not_rate_limited"

    def apply(self, app):
        from flask import request
        limiter = app.extensions["ptas"].limiter
        hit = limiter.hit

        def partners_only(world_id, now, operation_id, frozen=False):
            if claims_of({"HTTP_AUTHORIZATION": request.headers.get("Authorization", "")}).get("knd") == "user":
                return None
            return hit(world_id, now, operation_id, frozen=frozen)
        limiter.hit = partners_only


# -- user token lifetimes (spec §2 Partner userTokenExpirySeconds, §5 rule 6) ---------------------------------
class ExpiredUserTokensAccepted:
    """A user token is still accepted once the partner's userTokenExpirySeconds have passed: the service refuses
    an expired partner token but lets an expired, unrevoked user token through (spec §5 rule 6: user tokens are
    valid for userTokenExpirySeconds; §3: expiresAt reached -> expired, isValid false). The service's own
    authentication stage, changed; `apply(app)` as for `Outgoing`."""

    config = {}
    __name__ = "expired_user_token_accepted"

    def apply(self, app):
        import dataclasses

        from ptas_sandbox.simulator.auth import Principal
        from ptas_sandbox.simulator.problems import Unauthorized
        hooks = app.extensions["ptas"].hooks
        authenticate, read_token = hooks.tokens.authenticate, hooks.tokens.read

        def lenient(ctx, claims, row):
            try:
                return authenticate(ctx, claims, row)
            except Unauthorized:
                found = row if row is not None else read_token(ctx, claims)
                if found is None or found["kind"] != "user" or claims.get("knd") != "user" \
                        or found["revoked_at"] is not None or ctx.now < found["expires_at"]:
                    raise
                return Principal(found["id"], found["kind"], found["partner_id"], found["user_id"],
                                 frozenset(found["scope"].split()))
        hooks.tokens = dataclasses.replace(hooks.tokens, authenticate=lenient)


class FixedUserTokenLifetime(Wrap):
    """Renewals ignore the partner's userTokenExpirySeconds: a request to POST /users/{id}/tokens or
    /users/self/tokens that asks for no lifetime is served as one asking for 30 days (spec §5 rule 6: the tokens
    CreateUserToken issues afterwards are valid for that setting too; §2 Partner). The first token, from
    CreateUser, keeps the setting. A partner's renewal then lasts 30 days; a user's own renewal asks for more
    than the setting, which this service refuses to a user token, so it fails instead."""

    DAYS_30 = 2_592_000

    def __call__(self, app):
        def fixed(environ, start_response):
            if environ["REQUEST_METHOD"] == "POST" and re.search(r"/users/[^/]+/tokens$", environ["PATH_INFO"]):
                length = int(environ.get("CONTENT_LENGTH") or 0)
                data = json_of(environ["wsgi.input"].read(length)) if length else None
                data = data if isinstance(data, dict) else {}
                data.setdefault("expiresIn", self.DAYS_30)
                raw = json.dumps(data).encode()
                environ = {**environ, "wsgi.input": io.BytesIO(raw), "CONTENT_LENGTH": str(len(raw)),
                           "CONTENT_TYPE": "application/json"}
            return app(environ, start_response)
        return fixed


# -- issue 38: the other side of statements checked from one side only ------------------------------------------
def revocation_answers_access_token(environ, status, headers, body):
    """A revocation that answers the revoked token's record with its JWT (spec §2: only the creating response
    carries accessToken)."""
    if environ["REQUEST_METHOD"] == "DELETE" and "/tokens/" in environ["PATH_INFO"] and status[:1] == "2":
        record = json_of(body) if body else None
        record = record if isinstance(record, dict) else {"id": environ["PATH_INFO"].rsplit("/", 1)[-1]}
        record.update(isRevoked=True, accessToken="eyJhbGciOiJIUzI1NiJ9.eyJyZXZva2VkIjp0cnVlfQ.c2lnbmF0dXJl")
        return changed("200 OK", [("Content-Type", "application/json")], record)


class FlagByPresence(DropQuery):
    """A service that reads an exclude flag by its presence: `false` excludes as `true` does (spec §4.3: true
    removes the fields)."""

    def __call__(self, app):
        def present(environ, start_response):
            if re.search(self.pattern, environ["PATH_INFO"]):
                query = [(k, "true" if k in self.names else v) for k, v in parse_qsl(environ.get("QUERY_STRING", ""))]
                environ = {**environ, "QUERY_STRING": urlencode(query)}
            return app(environ, start_response)
        return present


def mapped_flag_drops_every_field(environ, status, headers, body):
    """excludeMappedFields=true answered with no fields at all, mapped or not (spec §4.3: it removes the fields
    mapped to fixed transaction fields)."""
    data = json_of(body)
    if "excludemappedfields=true" in environ.get("QUERY_STRING", "").lower() and isinstance(data, dict):
        for row in data.get("transactions") or [data]:
            if isinstance(row, dict) and isinstance(row.get("fields"), list):
                row["fields"] = []
        return changed(status, headers, data)


def classification_renamed(renames, document=False):
    """PaymentClassification values renamed in transactions (and, with `document`, in the OpenAPI document's enum
    too): spec §2 names Donation, Tax and Adjustment."""
    def rename(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "classification" and isinstance(value, str):
                    node[key] = renames.get(value, value)
                elif key == "classification" and isinstance(value, dict) and isinstance(value.get("enum"), list):
                    value["enum"] = [renames.get(v, v) for v in value["enum"]]
                else:
                    rename(value)
        elif isinstance(node, list):
            for value in node:
                rename(value)

    def change(environ, status, headers, body):
        if environ["PATH_INFO"].endswith("openapi.json") and not document:
            return None
        data = json_of(body)
        if data is None or b"classification" not in body:
            return None
        rename(data)
        return changed(status, headers, data)
    return change


def statistics_stay_zero(environ, status, headers, body):
    """Statistics that never move (count 0, no first or last date) while GetTransactions lists the account's
    transactions (spec §1 capability 5: count is the number of transactions)."""
    data = json_of(body)
    if environ["REQUEST_METHOD"] == "GET" and re.search(r"/accounts(/[^/]+)?$", environ["PATH_INFO"]) and data:
        for record in data if isinstance(data, list) else data.get("accounts") or [data]:
            if isinstance(record, dict) and isinstance(record.get("statistics"), dict):
                record["statistics"].update(count=0, first=None, last=None)
        return changed(status, headers, data)


def transactions_imported_without_report(payload):
    """TransactionsImported notifications that say nothing of a report (spec §6: carries report information)."""
    if payload.get("eventType") == "TransactionsImported":
        data = payload.get("data") or {}
        data.pop("report", None)
        for value in data.values():
            if isinstance(value, dict):
                value.pop("reportIds", None)
    return [payload]


def account_type_updated_without_account_type(payload):
    """AccountTypeUpdated notifications that name the event but carry no account type (spec §6: gives the current
    state of the corresponding provider)."""
    if payload.get("eventType") == "AccountTypeUpdated":
        payload["data"] = {}
    return [payload]


def six_digit_notification_dates(payload):
    """Notifications whose date-times carry six fractional digits (spec §9.3: always seven)."""
    return [json.loads(re.sub(r'(\d{2}:\d{2}:\d{2}\.\d{6})\dZ', r"\1Z", json.dumps(payload)))]


# The partner's own name is not changeable (spec §2: a name, changeable, including for child partners).
own_name_ignored = DropBodyField("name", r"/partners/self$", method="PUT")


class UpdateResetsUserTokenLifetime(Wrap):
    """Every update of the partner's settings puts userTokenExpirySeconds back to an hour, whatever was sent."""

    def __call__(self, app):
        def reset(environ, start_response):
            if environ["REQUEST_METHOD"] == "PUT" and environ["PATH_INFO"].endswith("/partners/self"):
                length = int(environ.get("CONTENT_LENGTH") or 0)
                data = json.loads(environ["wsgi.input"].read(length) or b"{}")
                data["userTokenExpirySeconds"] = 3600
                raw = json.dumps(data).encode()
                environ = {**environ, "wsgi.input": io.BytesIO(raw), "CONTENT_LENGTH": str(len(raw))}
            return app(environ, start_response)
        return reset


def user_without_statistics(environ, status, headers, body):
    """GetUser answers the user's information without its statistics (spec §1 capability 2)."""
    data = json_of(body)
    if get(environ, r"/users/[^/]+$") and isinstance(data, dict) and "statistics" in data:
        data.pop("statistics")
        return changed(status, headers, data)

