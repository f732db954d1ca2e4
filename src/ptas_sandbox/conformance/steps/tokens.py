"""Steps of the token features (spec §2 token record, §3 token states, §4.1 token endpoints, §5 rules 2-3)."""

from pytest_bdd import given, then, when

from .. import checks
from ..scene import check, listed_tokens
from . import acting, phrase

DAY_S = 86400
# A token the run's scenarios share lasts an hour: spec §8 gives it no id, so it needs no revocation at the run's
# end (one request less for each) and expires by itself soon after; the summary counts it as left.
SHARED_S = 3600


def create_own(scene, name, scope, lifetime, by="I"):
    body = {"name": scene.name(name), "scope": scope, "expiresIn": lifetime}
    reply = scene.call("CreateOwnPartnerToken", by, json=body)
    if reply.status in (200, 201) and isinstance(reply.body, dict) and reply.body.get("accessToken"):
        scene.remember_token(name, reply.body)
    return reply


@given(phrase('a token "{name}" with scope "{scope}"'))
def given_token(scene, name, scope):
    """A token the scenario only calls with is shared by the run's scenarios on a deployment (Scene.pooled)."""
    def make(lifetime=DAY_S):
        scene.must(create_own(scene, name, scope, lifetime), f"create a token with scope {scope!r}")
        return scene.tokens[name]
    if scene.only_acts(name, f'a token "{name}" with scope "{scope}"'):
        scene.tokens[name] = scene.pooled(("token", scope), lambda: make(SHARED_S), lasting=SHARED_S)
    else:
        make()


@given(phrase('a token "{name}" with scope "{scope}" lasting {seconds:d} seconds'))
def given_token_lasting(scene, name, scope, seconds):
    scene.must(create_own(scene, name, scope, seconds), f"create a token lasting {seconds} s")


@when(acting('{actor} creates a token "{name}" with scope "{scope}" lasting {seconds:d} seconds'))
def create_token(scene, actor, name, scope, seconds):
    create_own(scene, name, scope, seconds, by=actor)


@when(acting("{actor} lists the partner's tokens"))
def list_tokens(scene, actor):
    scene.call("GetOwnPartnerTokens", actor)


@when(acting('{actor} revokes the token "{name}"'))
def revoke(scene, actor, name):
    scene.call("RevokePartnerOwnToken", actor, params={"tokenId": scene.token_id(name)})


@when(acting("{actor} revokes my initial token"))
def revoke_initial(scene, actor):
    """Only on a simulator: the initial token is the world's own; a deployment's given token is never revoked."""
    check(scene.target.simulator, "the harness never revokes the token it was given")
    scene.call("RevokePartnerOwnToken", actor, params={"tokenId": scene.world["token"]["id"]})


@when(acting("{actor} tries to revoke itself"))
def revoke_itself(scene, actor):
    scene.call("RevokePartnerOwnToken", actor, params={"tokenId": scene.token_id(actor)})


@then("the answer carries no access token")
def answer_without_access_token(scene):
    """Spec §2: accessToken is returned only in the response that creates the token; a revocation's answer
    (its body is not shown beyond the token being revoked) never hands the revoked JWT back."""
    leaked = [path for path, value in walk(scene.reply.body) if path[-1:] == ("accessToken",) and value]
    check(not leaked, f"the revocation's answer carries accessToken at {['.'.join(map(str, p)) for p in leaked]} "
                      "(spec §2: only the creating response does)")


def walk(node, path=()):
    """Every (path, value) of a JSON document, depth first."""
    yield path, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from walk(value, path + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from walk(value, path + (index,))


# -- the token record of a creating response --------------------------------------------------------------
def created(scene):
    check(scene.reply.ok, f"expected the token to be created, got {scene.reply.describe()}")
    check(isinstance(scene.reply.body, dict), "the creating response carries the token record")
    return scene.reply.body


@then("the response carries the new token's access token")
def carries_access_token(scene):
    token = created(scene).get("accessToken")
    check(isinstance(token, str) and token.count(".") == 2,
          "the creating response carries accessToken, a JWT (spec §2, §5 rule 1)")


@then("the new token is valid")
def new_token_valid(scene):
    record = created(scene)
    assert_valid(record)


@then("the new token has never been used")
def new_token_unused(scene):
    check(created(scene).get("lastUsedAt", "missing") is None, "lastUsedAt is null for a token never used")


@then("the new token has an id")
def new_token_has_id(scene):
    check(isinstance(created(scene).get("id"), str) and created(scene)["id"],
          "a partner token living over one hour has an id (spec §2, §5 rule 3, §8)")


@then("the new token has no id")
def new_token_has_no_id(scene):
    check(created(scene).get("id") is None, "a partner token living one hour or less has no id (spec §8)")


@then(phrase('the new token is named "{name}" with scope "{scope}"'))
def new_token_name_scope(scene, name, scope):
    record = created(scene)
    check(record.get("name") == scene.name(name), f"name: expected {scene.name(name)!r}, got {record.get('name')!r}")
    check(checks.scope_set(record.get("scope")) == set(scope.split()),
          f"scope: expected {scope!r}, got {record.get('scope')!r}")
    check("  " not in record["scope"] and record["scope"] == record["scope"].strip(),
          f"scopes are separated by a single space (spec §2): {record['scope']!r}")


@then(phrase("the new token lives {seconds:d} seconds"))
def new_token_lifetime(scene, seconds):
    assert_lifetime(created(scene), seconds)


def assert_valid(record):
    check(record.get("isValid") is True, f"isValid: expected true, got {record.get('isValid')!r}")
    check(record.get("isRevoked") is False, f"isRevoked: expected false, got {record.get('isRevoked')!r}")
    check(record.get("isExpired") is False, f"isExpired: expected false, got {record.get('isExpired')!r}")
    check(record.get("revokedAt", "missing") is None, f"revokedAt: expected null, got {record.get('revokedAt')!r}")


def assert_lifetime(record, seconds):
    check(record.get("expiresIn") == seconds, f"expiresIn: expected {seconds}, got {record.get('expiresIn')!r}")
    span = checks.seconds_between(record["createdAt"], record["expiresAt"])
    check(abs(span - seconds) < 1, f"expiresAt is {span} s after createdAt, expected {seconds} s")


# -- token lists -------------------------------------------------------------------------------------------
@then(phrase('the list shows the token "{name}"'))
def list_shows(scene, name):
    check(scene.reply.ok, f"expected the token list, got {scene.reply.describe()}")
    scene.find_listed(name)


@then(phrase('the list does not show the token "{name}"'))
def list_does_not_show(scene, name):
    check(scene.reply.ok, f"expected the token list, got {scene.reply.describe()}")
    check(scene.listed(name) is None,
          f"the list shows the token {name!r} of another partner (spec §4.1: the partner's own tokens)")


@then("no token in the list carries its access token")
def no_access_tokens(scene):
    tokens = listed_tokens(scene.reply)
    check(tokens, "the token list is not empty")
    carrying = [t.get("name") for t in tokens if "accessToken" in t]
    check(not carrying, f"accessToken appears in the list for {carrying} (spec §2: only in the creating response)")


@then(phrase('the listed token "{name}" has the scope "{scope}"'))
def listed_scope(scene, name, scope):
    record = scene.find_listed(name)
    given = record.get("scope")
    check(checks.scope_set(given) == set(scope.split()), f"scope: expected {scope!r}, got {given!r}")
    check("  " not in given and given == given.strip(),
          f"scopes are separated by a single space (spec §2): {given!r}")


@then(phrase('the token list is an object whose tokens field lists the token "{name}"'))
def list_object(scene, name):
    """Spec §2 Token list response: an object with the field tokens, an array of token records (a newer server
    may add fields, §9 rule 2; a bare array is not that object)."""
    body = scene.reply.body
    check(scene.reply.ok, f"expected the token list, got {scene.reply.describe()}")
    check(isinstance(body, dict) and isinstance(body.get("tokens"), list),
          f"the token list response is an object whose field tokens is an array (spec §2), got "
          f"{type(body).__name__}: {scene.reply.text[:120]!r}")
    scene.find_listed(name)


@then(phrase('the listed token "{name}" is valid'))
def listed_valid(scene, name):
    assert_valid(scene.find_listed(name))


@then(phrase('the listed token "{name}" is revoked'))
def listed_revoked(scene, name):
    record = scene.find_listed(name)
    check(record.get("isRevoked") is True, f"isRevoked: expected true, got {record.get('isRevoked')!r}")
    check(record.get("isValid") is False, f"isValid: expected false, got {record.get('isValid')!r}")
    check(isinstance(record.get("revokedAt"), str), f"revokedAt is set, got {record.get('revokedAt')!r}")
    check(checks.seconds_between(record["createdAt"], record["revokedAt"]) >= 0, "revokedAt is not before createdAt")


@then(phrase('the listed token "{name}" is expired'))
def listed_expired(scene, name):
    record = scene.find_listed(name)
    check(record.get("isExpired") is True, f"isExpired: expected true, got {record.get('isExpired')!r}")
    check(record.get("isValid") is False, f"isValid: expected false, got {record.get('isValid')!r}")
    check(record.get("isRevoked") is False, f"isRevoked: expected false, got {record.get('isRevoked')!r}")


@then(phrase('the listed token "{name}" has been used'))
def listed_used(scene, name):
    record = scene.find_listed(name)
    check(isinstance(record.get("lastUsedAt"), str), f"lastUsedAt is set once used, got {record.get('lastUsedAt')!r}")
    check(checks.seconds_between(record["createdAt"], record["lastUsedAt"]) >= 0, "lastUsedAt is not before createdAt")


@then(phrase('the listed token "{name}" was last used later than before'))
def listed_used_later(scene, name):
    """Spec §2 (2.1.1): lastUsedAt is the time of the token's last use, so it moves with each use."""
    lists = [r for r in scene.replies if r.operation == "GetOwnPartnerTokens" and r.ok]
    check(len(lists) >= 2, "the token was listed twice, once after each use")
    before, now = (scene.find_listed(name, listing).get("lastUsedAt") for listing in lists[-2:])
    check(isinstance(before, str) and isinstance(now, str), f"lastUsedAt is set once used, got {before!r}, {now!r}")
    check(checks.seconds_between(before, now) >= 1, f"lastUsedAt stayed at {before} after a use 2 s later "
          f"(it reads {now}); it moves with each use (spec §2)")


@then(phrase('the listed token "{name}" has never been used'))
def listed_unused(scene, name):
    record = scene.find_listed(name)
    check(record.get("lastUsedAt", "missing") is None, f"lastUsedAt: expected null, got {record.get('lastUsedAt')!r}")

