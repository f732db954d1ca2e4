"""Steps of the account features: a user's accounts, created from the account type's fields (spec §1 capability
3, §2 account resource, §4.3, §7 rule 4, §9 2.8.2)."""

from pytest_bdd import given, then, when

from ..checks import reports_problems
from ..scene import check
from . import acting, phrase
from .account_types import account_type, form_for
from .users import create_user, user_id


def create_account(scene, label, type_id, owner, by="I", auth_reference=None):
    """An account of `owner` (a user of the scenario); a partner token names the user, a user token acts for itself.

    CreateAccount's payload is not shown: the body follows the target's request schema, the credentials the
    account type's accountFields (or the authReference of the OAuth2 flow, spec §1 step 3)."""
    values = {"accountTypeId": type_id, "userId": None if by in scene.users else user_id(scene, owner)}
    if auth_reference:
        values["authReference"] = auth_reference
    else:
        values["credentials"] = form_for(account_type(scene, type_id))
    reply = scene.call("CreateAccount", by, json=scene.body("CreateAccount", values))
    if reply.ok and isinstance(reply.body, dict):
        scene.accounts[label] = reply.body
        if not scene.target.simulator:
            scene.undo.append(lambda: scene.client.call("DeleteAccount", token=scene.token,
                                                        params={"id": scene.id_of(reply.body, "GetAccount")}))
    return reply


def account_id(scene, label):
    accounts = scene.accounts
    check(label in accounts, f"no account {label!r} was created in this scenario")
    return scene.id_of(accounts[label], "GetAccount")


@given(phrase('a user "{owner}" with a "{type_id}" account "{label}"'))
def given_user_account(scene, owner, type_id, label):
    if owner not in scene.users:
        scene.must(create_user(scene, owner), f"create the user {owner!r}")
    scene.must(create_account(scene, label, type_id, owner), f"create a {type_id} account")


@when(phrase('I create a "{type_id}" account "{label}" for the user "{owner}" from its account type\'s fields'))
def i_create_account(scene, type_id, label, owner):
    create_account(scene, label, type_id, owner)


@when(phrase('"{owner}" creates a "{type_id}" account "{label}" from its account type\'s fields'))
def user_creates_account(scene, owner, type_id, label):
    """A user token creating an account for its own user (no userId to name)."""
    create_account(scene, label, type_id, owner, by=owner)


@when(acting('{actor} reads the account "{label}"'))
def read_account(scene, actor, label):
    scene.call("GetAccount", actor, params={"id": account_id(scene, label)})


@when(acting("{actor} lists the accounts"))
def list_accounts(scene, actor):
    scene.call("GetAccounts", actor)


@when(acting('{actor} renames the account "{label}" to "{name}"'))
def update_account(scene, actor, label, name):
    scene.update("GetAccount", "UpdateAccount", {"id": account_id(scene, label)}, {"name": name}, actor)


@when(acting('{actor} deletes the account "{label}"'))
def delete_account(scene, actor, label):
    scene.call("DeleteAccount", actor, params={"id": account_id(scene, label)})


@then("the response reports errors, warnings and warningDetails")
def errors_warnings_details(scene):
    check(scene.reply.ok, f"expected the account, got {scene.reply.describe()}")
    for field in ("errors", "warnings", "warningDetails"):
        check(isinstance(scene.reply.body.get(field), list),
              f"CreateAccount and UpdateAccount answer {field} (spec §4.3, §9 2.8.2), "
              f"got {scene.reply.body.get(field)!r}")


@then("the account shows its statistics")
def account_statistics(scene):
    check(scene.reply.ok, f"expected the account, got {scene.reply.describe()}")
    stats = scene.reply.body.get("statistics")
    check(isinstance(stats, dict) and {"count", "first", "last"} <= set(stats),
          f"GetAccount carries statistics with count, first, last (spec §1 capability 5), got {stats!r}")
    reports_problems(scene.reply.body, "an account")


@then(phrase('the list shows the account "{label}"'))
def list_shows_account(scene, label):
    check(account_id(scene, label) in scene.ids_in(scene.reply, "accounts", "GetAccount"),
          f"the account {label!r} is not listed")


@then(phrase('the list does not show the account "{label}"'))
def list_lacks_account(scene, label):
    check(account_id(scene, label) not in scene.ids_in(scene.reply, "accounts", "GetAccount"),
          f"the account {label!r} is listed")
