"""Steps of the account features: a user's accounts, created from the account type's fields (spec §1 capability
3, §2 account resource, §4.3, §7 rule 4, §9 2.8.2)."""

import re

from pytest_bdd import given, then, when

from ..checks import reports_problems
from ..resolver import NotOffered
from ..scene import check
from ..unchecked import target_does_not_allow
from . import acting, phrase
from .account_types import account_type, form_for
from .users import create_user, user_id


def create_account(scene, label, type_id, owner, by="I", auth_reference=None):
    """An account of `owner` (a user of the scenario); a partner token names the user, a user token acts for itself.

    CreateAccount's payload is not shown: the body follows the target's request schema, the credentials the
    account type's accountFields (or the authReference of the OAuth2 flow, spec §1 step 3)."""
    scene.realize(by)
    values = {"accountTypeId": type_id, "userId": None if by in scene.users else user_id(scene, owner)}
    if auth_reference:
        values["authReference"] = auth_reference
    else:
        values["credentials"] = form_for(account_type(scene, type_id))
    reply = scene.call("CreateAccount", by, json=scene.body("CreateAccount", values))
    if reply.ok and isinstance(reply.body, dict):
        scene.accounts[label] = reply.body
        scene.account_kinds[label] = (type_id, owner)
        if not scene.target.simulator:
            scene.on_close(lambda: scene.undo_delete("DeleteAccount", scene.id_of(reply.body, "GetAccount")),
                           key=("account", label))
    return reply


def account_id(scene, label):
    scene.realize(label)
    accounts = scene.accounts
    check(label in accounts, f"no account {label!r} was created in this scenario")
    return scene.id_of(accounts[label], "GetAccount")


@given(phrase('a user "{owner}" with a "{type_id}" account "{label}"'))
def given_user_account(scene, owner, type_id, label):
    """On a deployment both are made on their first use (Scene.realize): a scenario that goes on with an account
    the run already holds with data (await_data) never makes them."""
    def make_user():
        scene.must(create_user(scene, owner), f"create the user {owner!r}")

    def make_account():
        scene.realize(owner)
        scene.must(create_account(scene, label, type_id, owner), f"create a {type_id} account")
    if owner not in scene.users and owner not in scene.pending:
        scene.pending[owner] = make_user
    scene.pending[label] = make_account
    scene.account_kinds[label] = (type_id, owner)
    awaits = any(AWAITS.search(text) for text in scene.step_texts or ())
    if scene.target.simulator or not awaits:    # the account itself is the stage (a data import it starts...)
        scene.realize(label)


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


# -- data on a deployment: reused where the world holds it, else awaited once within the run's budget -----------
# The steps after which a scenario may go on with an account the run holds with data instead of its own.
AWAITS = re.compile(r'^the account "[^"]+" has received (its transactions|a report)$')
WORLD_ACCOUNTS_READ = 10    # accounts of the partner's world read when looking for one that already holds data


def await_data(scene, label, kind, arrived, pause, held_has=None):
    """Make the account `label` one that holds `kind` ("transactions" or "reports") on a deployment.

    In this order: an account the run already holds with that data (of the same account type); one of the
    partner's world that holds it (`held_has(account_id)`, at most WORLD_ACCOUNTS_READ read); else the scenario's
    own account, polled (`arrived(account_id)` true when its data is there and settled; `pause(waited)` the next
    pause) within what is left of the run's --max-wait budget, then held for later scenarios. Data that did not
    come is not awaited again: later scenarios of the kind skip at once, with the same reason."""
    type_id, _ = scene.account_kinds.get(label, (None, None))
    key = (type_id, kind)
    held, budget = scene.target.held.accounts, scene.target.budget
    if key in held:
        scene.pending.pop(label, None)
        scene.accounts[label] = held[key]
        return
    check(key not in scene.target.held.contradicted, scene.target.held.contradicted.get(key, ""))
    if key in budget.given_up:
        target_does_not_allow(budget.given_up[key])
    scene.may_wait()
    mine = scene.id_of(scene.accounts[label], "GetAccount") if label in scene.accounts else None
    found = in_the_world(scene, type_id, held_has or arrived, exclude=mine)
    if found is not None:
        scene.pending.pop(label, None)
        held[key] = scene.accounts[label] = found
        return
    waited = 0.0
    while True:
        if arrived(account_id(scene, label)):
            held[key] = scene.accounts[label]
            scene.hold(label)
            return
        if budget.left <= 0:
            budget.given_up[key] = (
                f"no {kind} arrived on a new {type_id} account within {waited:g} s of waiting, and the partner's "
                f"world holds no {type_id} account with {kind} (check with: --max-wait {int(budget.total * 4)} "
                f"or more, or a {type_id} account with {kind} among the partner's users)")
            target_does_not_allow(budget.given_up[key])
        waited += budget.wait(scene.target, pause(waited))


def in_the_world(scene, type_id, has, exclude):
    """A `type_id` account of the partner's users for which `has(account_id)` holds, read in full; or None."""
    try:
        listing = scene.client.call("GetAccounts", token=scene.token)
    except NotOffered:
        return None
    if not listing.ok:
        return None
    try:
        ids = [i for i in scene.ids_in(listing, "accounts", "GetAccount") if i and i != exclude]
    except AssertionError:
        return None
    for account in sorted(ids, key=str)[:WORLD_ACCOUNTS_READ]:
        reply = scene.client.call("GetAccount", token=scene.token, params={"id": account})
        record = reply.body if reply.ok and isinstance(reply.body, dict) else {}
        if type_id in [v for v in record.values() if isinstance(v, str)] and has(account):
            return record
    return None
