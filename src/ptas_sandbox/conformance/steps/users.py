"""Steps of the user features: users of a partner and their tokens (spec §4.2 notes 1-3, §4.3, §5 rule 6)."""

import re

import pytest
from pytest_bdd import given, then, when

from .. import checks
from ..bodies import flatten
from ..datetimes import parse
from ..scene import check, jwt_claims
from ..unchecked import not_applicable
from . import acting, phrase
from .partners import keep_settings

REFRESHING = "account:all transaction:all user.token:create"
# Request properties that would set a token's lifetime (`expiresIn`, `expires_in`, `lifetime`, `ttl`...).
LIFETIME = re.compile(r"expir|lifetime|ttl|validity", re.IGNORECASE)
# Refusals of a request the service found invalid: a setting it does not take, not a failure of the stage.
INVALID = (400, 409, 422)


def create_user(scene, label, scope=None, email=None, by="I"):
    """CreateUser (spec §4.2 note 1 shows scope and email; the name's property comes from the target's schema).
    `email` False sends none: the note calls it optional."""
    email = None if email is False else email or f"{label.lower().replace(' ', '.')}@example.test"
    body = scene.body("CreateUser", {"name": scene.name(label), "email": email, "scope": scope}, optional=("name",))
    reply = scene.call("CreateUser", by, json=body)
    if reply.ok and isinstance(reply.body, dict) and reply.body.get("id"):
        record = checks.find_token_record(reply.body) or {}
        scene.users[label] = {"id": reply.body["id"], "accessToken": record.get("accessToken"),
                              "token": record, "body": reply.body}
        if not scene.target.simulator:
            scene.on_close(lambda: deleted_user(scene, reply.body["id"]), key=("user", label))
    return reply


def deleted_user(scene, user):
    """DeleteUser at the end of a scenario: the user stays listed with deletedAt (spec §4.3), said in the summary."""
    if str(user) in scene.gone or scene.client.call("DeleteUser", token=scene.token, params={"id": user}).ok:
        scene.target.held.left["users deleted by the run (the service keeps listing them with deletedAt)"] += 1


def issue_user_token(scene, operation, actor, params=None):
    """CreateUserToken and CreateOwnUserToken: payloads not shown; a label where the target's schema takes one."""
    body = scene.body(operation, {"name": scene.name("refresh")}, optional=("name",))
    return scene.call(operation, actor, params=params, json=body)


def user_id(scene, label):
    scene.realize(label)
    check(label in scene.users, f"no user {label!r} was created in this scenario")
    return scene.users[label]["id"]


def users_listed(scene):
    return {item.get("id"): item for item in checks.items(scene.reply, "users")}


@given(phrase('a user "{label}"'))
def given_user(scene, label):
    """A user the scenario only acts as is shared by the run's scenarios on a deployment (Scene.pooled)."""
    def make():
        scene.must(create_user(scene, label), f"create the user {label!r}")
        return scene.users[label]
    if scene.only_acts(label, f'a user "{label}"'):
        scene.users[label] = scene.pooled(("user", label), make)
    else:
        make()


@given(phrase('a user "{label}" whose token may refresh itself'))
def given_refreshing_user(scene, label):
    scene.must(create_user(scene, label, scope=REFRESHING), f"create the user {label!r}")


@given(phrase("my users' tokens last {seconds:d} seconds"))
def user_token_lifetime(scene, seconds):
    scene.must(scene.update("GetOwnPartner", "UpdatePartner", {}, {"userTokenExpirySeconds": seconds},
                            record=keep_settings(scene)),
               "set userTokenExpirySeconds")


@given(phrase("my users' tokens last only {seconds:d} seconds"))
def short_user_token_lifetime(scene, seconds):
    """A short userTokenExpirySeconds, to see a user token expire within the run's waiting. The spec shows no
    minimum for the setting, nor that there is none: a service refusing so short a value is not checked here."""
    reply = scene.update("GetOwnPartner", "UpdatePartner", {}, {"userTokenExpirySeconds": seconds},
                         record=keep_settings(scene))
    if reply.status in INVALID:
        not_applicable(f"the target does not take userTokenExpirySeconds {seconds} (the spec shows no minimum): "
                    f"{reply.describe()}")
    scene.must(reply, "set userTokenExpirySeconds")


@when(phrase('I create a user "{label}"'))
def i_create_user(scene, label):
    create_user(scene, label)


@when(phrase('I create a user "{label}" without an e-mail address'))
def i_create_user_without_email(scene, label):
    create_user(scene, label, email=False)


@when(phrase('I create a user "{label}" with the e-mail address "{email}"'))
def i_create_user_email(scene, label, email):
    create_user(scene, label, email=email)


@when(phrase('I create a user "{label}" with scope "{scope}"'))
def i_create_user_scope(scene, label, scope):
    create_user(scene, label, scope=scope)


@then("the response carries the user's id and a user token")
def carries_id_and_token(scene):
    check(scene.reply.ok, f"expected the user, got {scene.reply.describe()}")
    check(isinstance(scene.reply.body.get("id"), str), "CreateUser answers the user id (spec §4.2 note 1)")
    record = checks.find_token_record(scene.reply.body)
    check(record is not None and record["accessToken"].count(".") == 2,
          "CreateUser answers the first user token (spec §4.2 note 1)")


def first_token_record(scene, label, field):
    """The first user token's record, when the target answers one: the spec does not show CreateUser's response
    shape, and a target answering the token as a bare string shows neither its scope nor its lifetime there."""
    record = scene.users[label]["token"]
    if set(record) == {"accessToken"}:
        record = jwt_facts(record["accessToken"])
        if field not in record:
            not_applicable(f"the target answers the first user token as a string whose claims do not carry its "
                        f"{field}: it is not shown there")
    return record


def lifetime_of(record, what):
    """A token's lifetime in seconds, as the target shows it (spec §2 token record): its expiresIn, else
    expiresAt - createdAt, else the JWT's own exp - iat (RFC 7519). Skips when none of them is shown; a lifetime
    worked out from two instants may be a second off (each rounded on its own)."""
    if isinstance(record.get("expiresIn"), int):
        return record["expiresIn"], 0
    try:
        return (parse(record["expiresAt"]) - parse(record["createdAt"])) / 1_000_000, 1
    except (KeyError, TypeError, ValueError):
        pass
    facts = jwt_facts(record.get("accessToken"))
    if "expiresIn" in facts:
        return facts["expiresIn"], 1
    pytest.skip(f"{what} shows no lifetime: no expiresIn, no expiresAt and createdAt, no exp and iat claims")


def jwt_facts(jwt):
    """What a bare JWT says of itself in the standard claims: `scope` (RFC 8693, or `scp`) and its lifetime
    (`exp` - `iat`, RFC 7519), under the token record's names."""
    claims = jwt_claims(jwt)
    facts = {}
    scope = claims.get("scope", claims.get("scp"))
    if isinstance(scope, list):
        scope = " ".join(map(str, scope))
    if isinstance(scope, str):
        facts["scope"] = scope
    if isinstance(claims.get("exp"), int) and isinstance(claims.get("iat"), int):
        facts["expiresIn"] = claims["exp"] - claims["iat"]
    return facts


@then(phrase('the user token of "{label}" holds exactly "{scope}"'))
def user_token_scope(scene, label, scope):
    record = first_token_record(scene, label, "scope")
    check(checks.scope_set(record.get("scope")) == set(scope.split()),
          f"the user token's scope: expected {scope!r}, got {record.get('scope')!r}")
    if record is scene.users[label]["token"]:       # a token record, not a JWT's claims: spec §2's format
        check(record["scope"] == " ".join(record["scope"].split()),
              f"a token record's scopes are separated by a single space (spec §2): {record['scope']!r}")


@then(phrase('the user token of "{label}" lasts {seconds:d} seconds'))
def user_token_lasts(scene, label, seconds):
    lifetime, slack = lifetime_of(scene.users[label]["token"], "the first user token")
    check(abs(lifetime - seconds) <= slack,
          f"the user token lasts userTokenExpirySeconds {seconds} (spec §5 rule 6): it lasts {lifetime:.0f} s")


@then(phrase('the response shows the e-mail address "{email}"'))
def response_email(scene, email):
    check(scene.reply.ok and scene.reply.body.get("email") == email,
          f"email: expected {email!r}, got {scene.reply.describe()}")


@when(acting("{actor} creates a token for itself"))
def user_creates_own(scene, actor):
    issue_user_token(scene, "CreateOwnUserToken", actor)


@when(acting('{actor} creates a token for the user "{label}"'))
def creates_user_token(scene, actor, label):
    issue_user_token(scene, "CreateUserToken", actor, {"id": user_id(scene, label)})


@then("the response carries a new user token")
def new_user_token(scene):
    check(scene.reply.ok, f"expected a new user token, got {scene.reply.describe()}")
    record = checks.find_token_record(scene.reply.body)
    check(record is not None, "the response carries the new token's accessToken")


@then(phrase("the new user token lasts {seconds:d} seconds"))
def new_user_token_lasts(scene, seconds):
    """Spec §5 rule 6: every user token, the ones CreateUserToken issues afterwards too, is valid for the
    partner's userTokenExpirySeconds. The harness asked for no lifetime of its own (`issue_user_token`); a target
    whose request schema requires one gave it the harness's sample, so the partner's setting is not checked."""
    check(scene.reply.ok, f"expected a new user token, got {scene.reply.describe()}")
    operation = scene.reply.operation
    _, required = flatten(scene.bodies.schema(operation))
    asked = [name for name in required if LIFETIME.search(name)]
    if asked:
        not_applicable(f"{scene.target.operations.operation_id(operation)} requires {', '.join(asked)}: the "
                    f"partner's default lifetime cannot be asked for")
    record = checks.find_token_record(scene.reply.body)
    check(record is not None, "the response carries the new token's accessToken")
    lifetime, slack = lifetime_of(record, "the new user token")
    check(abs(lifetime - seconds) <= slack,
          f"a user token CreateUserToken issues lasts userTokenExpirySeconds {seconds} (spec §5 rule 6): it "
          f"lasts {lifetime:.0f} s")


@when(acting('{actor} reads the user "{label}"'))
def read_user(scene, actor, label):
    scene.call("GetUser", actor, params={"id": user_id(scene, label)})


@then(phrase('the user is named "{name}"'))
def user_named(scene, name):
    check(scene.reply.ok and scene.reply.body.get("name") == scene.name(name),
          f"name: expected {scene.name(name)!r}, got {scene.reply.describe()}")


@when(phrase('I rename the user "{label}" to "{new}"'))
def rename_user(scene, label, new):
    scene.update("GetUser", "UpdateUser", {"id": user_id(scene, label)}, {"name": scene.name(new)})


@when(phrase('I delete the user "{label}"'))
def delete_user(scene, label):
    scene.call("DeleteUser", params={"id": user_id(scene, label)})


@when("I list my users")
def list_users(scene):
    scene.call("GetUsers")


@when(phrase('I list my users named "{name}"'))
def list_users_named(scene, name):
    scene.call("GetUsers", query={"name": scene.name(name)})


@when(phrase('I list my users with the e-mail address "{email}"'))
def list_users_email(scene, email):
    scene.call("GetUsers", query={"email": email})


@when(phrase('I search my users for "{text}"'))
def search_users(scene, text):
    scene.call("GetUsers", query={"search": text})


@when(phrase('I search my users for the name of "{label}"'))
def search_users_by_name(scene, label):
    """Spec §4.3 names the search parameter, not how it matches: a user's whole name is what any search finds."""
    scene.call("GetUsers", query={"search": scene.name(label)})


@then(phrase('the user "{label}" is listed'))
def user_listed(scene, label):
    check(user_id(scene, label) in users_listed(scene), f"the user {label!r} is not listed")


@then(phrase('the user "{label}" is not listed'))
def user_not_listed(scene, label):
    check(user_id(scene, label) not in users_listed(scene), f"the user {label!r} is listed")


def shows_deletion(record, rule):
    deleted = record.get("deletedAt") if isinstance(record, dict) else None
    check(isinstance(deleted, str) and checks.SEVEN_DIGITS.match(deleted), f"{rule}, got {deleted!r}")


@then(phrase('the user "{label}" is listed as deleted'))
def user_listed_deleted(scene, label):
    listed = users_listed(scene)
    check(user_id(scene, label) in listed, f"the deleted user {label!r} is not listed")
    shows_deletion(listed[user_id(scene, label)], "a deleted user carries deletedAt (spec §4.3 GetUsers)")


@then("the user is shown with deletedAt, if it is shown at all")
def read_as_deleted(scene):
    """Spec §2: a deleted user has deletedAt. Whether reading one by id shows it or answers 404 is not shown; a
    read that shows it shows the deletion."""
    if scene.reply.status == 404:
        return
    check(scene.reply.ok, f"expected the deleted user or 404, got {scene.reply.describe()}")
    shows_deletion(scene.reply.body, "a deleted user read by its id carries deletedAt (spec §2)")


@then(phrase('the user "{label}" is listed without deletedAt'))
def user_listed_live(scene, label):
    listed = users_listed(scene)
    check(listed.get(user_id(scene, label), {}).get("deletedAt") is None, f"the live user {label!r} has deletedAt")


@then("the user is read with its statistics")
def user_with_statistics(scene):
    """Spec §1 capability 2: user information and statistics can be read; reading the user is where the spec
    puts both (§4.2 GET /users/{id}), under a property named for them whose shape is the target's."""
    check(scene.reply.ok and isinstance(scene.reply.body, dict), f"expected the user, got {scene.reply.describe()}")
    found = {k: v for k, v in scene.reply.body.items() if "statistic" in k.lower()}
    check(found and all(v not in (None, {}, [], "") for v in found.values()),
          f"reading a user shows no statistics (spec §1 capability 2), properties: {sorted(scene.reply.body)}")
