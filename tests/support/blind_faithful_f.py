"""Faithful deployments written blind, sixth round (after blind_faithful.py, blind_faithful_c.py,
blind_faithful_d.py and blind_faithful_e.py): each makes ONE choice the interface spec leaves open (or permits),
the way a production service plausibly would, and stays faithful to everything the spec states.

Forms as in tests/support/blind_deployments.py: `change(environ, status, headers, body)`, `wrap(app)`, `config`
(simulator configuration) and `apply(app)` (the service's own engine, changed); `served_as`
(blind_deployments_c.py) changes how this one app serves one operation.
"""

import io
import json
import re
from urllib.parse import parse_qsl, urlencode

from tests.support.blind_deployments import Case, answered, json_change, method, path, problem, respond
from tests.support.blind_deployments_c import applies, served_as, token_dicts
from tests.support.deployments import json_of

PREFIX = "/partner/v2"


# ============================================================================ 1. scopes in a canonical order
# §2 Token record: scope is 'Scopes separated by a single space'; their order is not shown. This service keeps a
# token's scopes as a set and writes them sorted (and each once): a token asked for "user:all account:all" shows
# "account:all user:all". Every token record (own and child tokens, their lists and revocations, CreateUser's
# first user token, CreateUserToken) says the same set the request asked for.
def _token_answer(environ):
    return path(environ, rf"^{PREFIX}/partners/[^/]+/tokens(/[^/]+)?$") or \
        (method(environ, "POST") and path(environ, rf"^{PREFIX}/users(/[^/]+/tokens)?$"))


def _sorted_scopes(data, environ):
    for record in token_dicts(data):
        if isinstance(record.get("scope"), str):
            record["scope"] = " ".join(sorted(set(record["scope"].split())))


scopes_sorted = Case(
    "scopes_sorted",
    "§2 Token record scope: 'Scopes separated by a single space', in no stated order: every token record writes "
    "its scopes sorted alphabetically, each once ('user:all account:all' is shown 'account:all user:all')",
    change=json_change(_token_answer, _sorted_scopes))


# ============================================================================ 2. 100-nanosecond ticks
# §2: 'ISO 8601 UTC with exactly seven fractional digits'. Seven digits are 100 ns ticks (.NET's DateTime); this
# service keeps real ticks, so the seventh digit is not always 0. The tick of an instant is a function of its
# fraction alone (one instant is written the same everywhere, expiresAt - createdAt stays expiresIn exactly, zero
# fractions stay .0000000). A date-time the client sends (the createdAt search, a refresh's startDate) is read to
# the tick: one a tick after an instant the service wrote is later than that instant.
STAMP = re.compile(r'"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.)(\d{6})0Z"')
SENT = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.)(\d{6})(\d)Z$")


def tick(micro):
    return sum(int(d) for d in micro) % 10


def with_ticks(text):
    return STAMP.sub(lambda m: f'"{m.group(1)}{m.group(2)}{tick(m.group(2))}Z"', text)


def read_to_the_tick(value):
    """The microsecond instant the service compares a sent date-time as: rounded up when its tick is after the
    tick the service writes for that microsecond (so 'at or after' stays exact to the tick)."""
    match = SENT.match(value) if isinstance(value, str) else None
    if not match or int(match.group(3)) <= tick(match.group(2)):
        return value
    from ptas_sandbox.simulator.timestamps import parse, render
    return render(parse(value[:-2] + "Z") + 1)


def _ticks_out(environ, status, headers, body):
    if not environ["PATH_INFO"].startswith(PREFIX + "/") or b'0Z"' not in body:
        return None
    if not any(k.lower() == "content-type" and "json" in v for k, v in headers):
        return None
    return status, headers, with_ticks(body.decode("utf-8")).encode("utf-8")


def _ticks_in(app):
    def served(environ, start_response):
        if path(environ, rf"^{PREFIX}/accounts/[^/]+/transactions$"):
            pairs = parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)
            environ = {**environ, "QUERY_STRING": urlencode(
                [(k, read_to_the_tick(v) if k == "createdAt" else v) for k, v in pairs])}
        elif method(environ, "POST") and path(environ, rf"^{PREFIX}/accounts/[^/]+/refresh$"):
            length = int(environ.get("CONTENT_LENGTH") or 0)
            raw = environ["wsgi.input"].read(length) if length else b""
            data = json_of(raw) if raw else None
            if isinstance(data, dict) and "startDate" in data:
                data["startDate"] = read_to_the_tick(data["startDate"])
                raw = json.dumps(data).encode()
            environ = {**environ, "wsgi.input": io.BytesIO(raw), "CONTENT_LENGTH": str(len(raw))}
        return app(environ, start_response)
    return served


def _ticks_in_notifications(app):
    app.extensions["ptas"].hooks.notification.append(
        lambda store, world, body: json.loads(with_ticks(json.dumps(body))))


hundred_nanosecond_ticks = Case(
    "hundred_nanosecond_ticks",
    "§2 / §9.3: date-times have exactly seven fractional digits; which instants they name is the service's: real "
    "100 ns ticks, so the seventh digit is often not 0 ('...20.0745243Z'), one instant written alike everywhere "
    "(answers and notifications), zero fractions kept; date-times sent back are read to the tick",
    change=_ticks_out, wrap=_ticks_in, apply=_ticks_in_notifications)


# ============================================================================ 3. deleted records: 410 Gone
# §7 names 401 and 403 only; how a deleted record answers is not shown. This service remembers what was deleted
# through the API (accounts, webhooks) and answers a later request to it, or below it (its transactions, reports,
# OAuth2 reconnection), 410 Gone with a ProblemDetails body where it would answer 404. Other unknown ids stay 404.
GONE_PATHS = rf"^{PREFIX}/(accounts|webhooks)/[^/]+$"


def _gone(app):
    deleted = set()

    def served(environ, start_response):
        here = environ["PATH_INFO"]
        status, headers, body = answered(app, environ)
        if method(environ, "DELETE") and re.search(GONE_PATHS, here) and status.startswith("204"):
            deleted.add(here)
        elif status.startswith("404") and any(here == d or here.startswith(d + "/") for d in deleted):
            status, headers, body = problem("410 Gone", f"{here[len(PREFIX):]} was deleted.")
        return respond(start_response, status, headers, body)
    return served


deleted_records_gone = Case(
    "deleted_records_gone",
    "§7: statuses other than 401/403 not shown: a record deleted through the API (an account, a webhook) "
    "answers 410 Gone (ProblemDetails) to later requests to it or below it, where the simulator says 404",
    wrap=_gone)


# ============================================================================ 4. revoking twice: 409
# §3 Token: the revocation moves a *valid* token to revoked; what a second revocation of a revoked token answers is
# not shown. This service refuses it 409 Conflict (ProblemDetails): the token stays revoked, revokedAt unchanged.
def _revoke_once(original):
    def handler(call):
        from ptas_sandbox.simulator.problems import Conflict
        row = call.ctx.store.one("SELECT revoked_at FROM tokens WHERE world = ? AND id = ? AND kind = 'partner'",
                                 (call.ctx.world.id, call.params["tokenId"]))
        answer = original(call)             # what the service checks first (owner, self-revocation) comes first
        if row is not None and row["revoked_at"] is not None:
            raise Conflict("This token is already revoked.")
        return answer
    return handler


revoke_again_conflict = Case(
    "revoke_again_conflict",
    "§3 Token: only 'valid -> DELETE token by id -> revoked' is shown; revoking an already revoked token is not: "
    "it answers 409 Conflict (ProblemDetails) and changes nothing, where the simulator answers the record again",
    apply=applies(served_as("RevokePartnerOwnToken", handler=_revoke_once),
                  served_as("RevokePartnerToken", handler=_revoke_once)))


# ============================================================================ 5. user tokens live an hour
# §2 Partner: userTokenExpirySeconds is 'validity in seconds of user tokens'; §5 rule 6: user tokens are valid for
# it. Its value for a new partner is not shown. This service starts every partner (the one support issues and
# every child) at 3600 s: user tokens, which end users hold, live an hour unless the partner says otherwise.
user_tokens_hour_by_default = Case(
    "user_tokens_hour_by_default",
    "§2 Partner userTokenExpirySeconds / §5 rule 6: the default of the setting is not shown: a new partner's "
    "userTokenExpirySeconds is 3600 (user tokens live an hour until the partner changes it), not 86400",
    config={"USER_TOKEN_LIFETIME": 3600})


CASES = [scopes_sorted, hundred_nanosecond_ticks, deleted_records_gone, revoke_again_conflict,
         user_tokens_hour_by_default]
assert len(CASES) == 5, len(CASES)
