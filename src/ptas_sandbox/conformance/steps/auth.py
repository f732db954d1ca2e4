"""Steps of the authentication features: the scope table of spec §5 as calls, and bearer tokens (spec §5, §7)."""

from pytest_bdd import given, then, when

from .. import checks
from ..scene import check
from . import phrase
from .accounts import account_id, create_account
from .oauth import ask
from .partners import child_id, create_child, create_child_token, keep_settings
from .tokens import SHARED_S, create_own
from .users import create_user, issue_user_token, user_id

SCOPED = "the scoped token"
# The account type of the accounts a row makes or deletes: the shared users hold a shared "dummy" account, and a user
# has one account per provider (spec §1 terms).
FRESH_TYPE = "dummy-report"
OAUTH_TYPE = "dummy-auth"      # §1 capability 6: the sandbox's dummy type with OAuth2
CHILD_KEY, USER_KEY = ("scope table", "child partner"), ("scope table", "user")


# The scope table's prerequisites are made by "me" and only read or renamed by its rows, so a deployment run shares
# them between rows (Scene.pooled); a row allowed to delete one gets its own (delete_row).
def child(scene, fresh=False):
    if "Scope Child" not in scene.partners:
        def make():
            scene.must(create_child(scene, "Scope Child"), "create a child partner")
            return scene.partners["Scope Child"]
        scene.partners["Scope Child"] = make() if fresh else scene.pooled(CHILD_KEY, make)
    return child_id(scene, "Scope Child")


def own_child_label(scene):
    """A child partner the scoped token made itself when it may (a deploy token reaches only those, spec §5
    rule 4), otherwise one of mine."""
    if "Own Child" not in scene.partners and not create_child(scene, "Own Child", by=SCOPED).ok:
        child(scene)
        return "Scope Child"
    return "Own Child"


def user(scene, fresh=False):
    if "Scope User" not in scene.users:
        def make():
            scene.must(create_user(scene, "Scope User"), "create a user")
            return scene.users["Scope User"]
        scene.users["Scope User"] = make() if fresh else scene.pooled(USER_KEY, make)
    return user_id(scene, "Scope User")


def owner(scene):
    """The user whose accounts the scoped token works on: itself when it is a user token."""
    return SCOPED if SCOPED in scene.users else (user(scene) and "Scope User")


def account(scene, fresh=False):
    if "Scope Account" not in scene.accounts:
        who = owner(scene)

        def make():     # one account per provider per user (spec §2): a row's own is of another type
            kind = FRESH_TYPE if fresh else "dummy"
            scene.must(create_account(scene, "Scope Account", kind, who), f"create a {kind} account")
            return scene.accounts["Scope Account"], scene.account_kinds["Scope Account"]
        key = account_key(scene)
        scene.accounts["Scope Account"], scene.account_kinds["Scope Account"] = \
            make() if fresh else scene.pooled(key, make)
    return account_id(scene, "Scope Account")


def delete_row(scene, operation, record, key):
    """A row calling a delete: one that expects the call forbidden tries it on the run's shared record (`key` in
    the pool, dropped if a target wrongly deletes it, so later rows get another); one that expects it allowed
    deletes a record of its own."""
    shared = "the call is forbidden" in (scene.step_texts or ())
    reply = scene.call(operation, SCOPED, params={"id": record(scene, fresh=not shared)})
    if shared and reply.ok:
        scene.target.held.pool.pop(key(scene), None)
    return reply


def account_key(scene):
    return "scope table", "account", scene.users[owner(scene)]["id"]


def session(scene):
    if scene.scope_session is None:
        reply = scene.must(scene.client.call("CreateUserUiSession", token=scene.token,
                                             json=scene.body("CreateUserUiSession", {})), "open a user UI session")
        scene.scope_session = scene.id_of(reply.body, "GetUserUiSession")
    return scene.scope_session


def own_scope(scene):
    held = scene.tokens[SCOPED]["record"].get("scope", "")
    return held if held.startswith("partner:") else "partner:read"


# How each operation is called by the scope table scenarios: prerequisites come from "me", the call from the
# scoped token. A new operation joins the table by adding one line here and rows in features/auth/scopes.feature.
CALLS = {
    "GetOwnPartner": lambda s: s.call("GetOwnPartner", SCOPED),
    "UpdatePartner": lambda s: s.update("GetOwnPartner", "UpdatePartner", {}, {"email": "scopes@example.test"},
                                        SCOPED, record=keep_settings(s)),
    "CreatePartner": lambda s: create_child(s, "Scoped Child", by=SCOPED),
    "GetPartners": lambda s: s.call("GetPartners", SCOPED),
    "GetPartner": lambda s: s.call("GetPartner", SCOPED, params={"id": child(s)}),
    "UpdateChildPartner": lambda s: s.update("GetPartner", "UpdateChildPartner", {"id": child(s)},
                                             {"name": s.name("Scope Child renamed")}, SCOPED),
    "DeleteChildPartner": lambda s: delete_row(s, "DeleteChildPartner", child, lambda s: CHILD_KEY),
    "GetOwnPartnerTokens": lambda s: s.call("GetOwnPartnerTokens", SCOPED),
    "CreateOwnPartnerToken": lambda s: s.call("CreateOwnPartnerToken", SCOPED, json={
        "name": s.name("made by the scoped token"), "scope": own_scope(s), "expiresIn": 600}),
    "CreatePartnerToken": lambda s: create_child_token(s, own_child_label(s), "child token", "partner:read", 600,
                                                       by=SCOPED),
    "GetPartnerTokens": lambda s: s.call("GetPartnerTokens", SCOPED, params={"id": child(s)}),
    "GetUsers": lambda s: s.call("GetUsers", SCOPED),
    "GetUser": lambda s: s.call("GetUser", SCOPED, params={"id": user(s)}),
    "CreateUser": lambda s: create_user(s, "Scoped User", by=SCOPED),
    "UpdateUser": lambda s: s.update("GetUser", "UpdateUser", {"id": user(s)}, {"name": s.name("Renamed")}, SCOPED),
    "DeleteUser": lambda s: delete_row(s, "DeleteUser", user, lambda s: USER_KEY),
    "CreateUserToken": lambda s: issue_user_token(s, "CreateUserToken", SCOPED, {"id": user(s)}),
    "CreateOwnUserToken": lambda s: issue_user_token(s, "CreateOwnUserToken", SCOPED),
    "CreateAccount": lambda s: create_account(s, "Scoped Account", FRESH_TYPE, owner(s), by=SCOPED),
    # §5: account:create is "create and authorize accounts": the OAuth2 flow's first step authorizes one
    "CreateOauthRedirectUrl": lambda s: ask(s, OAUTH_TYPE, owner(s), by=SCOPED),
    "GetAccounts": lambda s: s.call("GetAccounts", SCOPED),
    "GetAccount": lambda s: s.call("GetAccount", SCOPED, params={"id": account(s)}),
    "UpdateAccount": lambda s: s.update("GetAccount", "UpdateAccount", {"id": account(s)},
                                        {"name": "renamed by the scoped token"}, SCOPED),
    "DeleteAccount": lambda s: delete_row(s, "DeleteAccount", account, account_key),
    "GetTransactions": lambda s: s.call("GetTransactions", SCOPED, params={"id": account(s)}),
    "CreateUserUiSession": lambda s: s.call("CreateUserUiSession", SCOPED, json=s.body("CreateUserUiSession", {})),
    "GetUserUiSession": lambda s: s.call("GetUserUiSession", SCOPED, params={"id": session(s)}),
}


@given(phrase('a token holding only "{scope}"'))
def scoped_token(scene, scope):
    """One token of each scope serves every row of the scope table on a deployment (an hour long: tokens.SHARED_S)."""
    def make():
        scene.must(create_own(scene, SCOPED, scope, SHARED_S), f"create a token holding only {scope!r}")
        return scene.tokens[SCOPED]
    scene.tokens[SCOPED] = scene.pooled(("token", scope), make, lasting=SHARED_S)


@given(phrase('a user whose token holds only "{scope}"'))
def scoped_user_token(scene, scope):
    """One user of each first-token scope serves every row on a deployment (deleted at the run's end)."""
    def make():
        scene.must(create_user(scene, SCOPED, scope=scope), f"create a user whose token holds only {scope!r}")
        return scene.users[SCOPED]
    scene.users[SCOPED] = scene.pooled(("scope table", "user token", scope), make)


@when(phrase("that token calls {operation}"))
def scoped_call(scene, operation):
    check(operation in CALLS, f"the scope table has no call for {operation}")
    CALLS[operation](scene)
    scene.reply = scene.replies[-1]


@then(phrase("the call is {outcome}"))
def call_outcome(scene, outcome):
    if outcome == "allowed":
        check(scene.reply.ok, f"the scope grants this operation; got {scene.reply.describe()}")
    elif outcome == "forbidden":
        checks.problem(scene.reply, 403)
    else:
        raise AssertionError(f"outcome is `allowed` or `forbidden`, not {outcome!r}")


# -- bearer tokens -----------------------------------------------------------------------------------------
@when("I read my partner settings without a token")
def no_token(scene):
    scene.call("GetOwnPartner", token=None)


@when(phrase('I read my partner settings with the Authorization header "{value}"'))
def with_header(scene, value):
    scene.call("GetOwnPartner", token=None, headers={"Authorization": value})


@when("I read my partner settings with a token whose signature was altered")
def tampered(scene):
    head, payload, signature = scene.token.split(".")
    middle = len(signature) // 2
    swapped = "A" if signature[middle] != "A" else "B"
    scene.call("GetOwnPartner", token=f"{head}.{payload}.{signature[:middle]}{swapped}{signature[middle + 1:]}")


@when("I read my partner settings with an API key instead of a bearer token")
def api_key(scene):
    scene.call("GetOwnPartner", token=None, headers={"X-API-Key": scene.token, "Api-Key": scene.token})


@when("a user token reads the partner's settings")
def user_token_on_partner_operation(scene):
    scene.must(create_user(scene, "Scope User"), "create a user")
    scene.call("GetOwnPartner", "Scope User")
