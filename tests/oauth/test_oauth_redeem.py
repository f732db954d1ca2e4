"""redeem(): the one way an authReference completes an account (CreateAccount, or UpdateAccount after
CreateAccountOauthRedirectUrl); every misuse is refused and leaves the reference as it was."""

from urllib.parse import urlsplit

import pytest

from ptas_sandbox.simulator.oauth import models
from ptas_sandbox.simulator.problems import BadRequest, Conflict
from tests.support.pages import post_form


@pytest.fixture
def sandbox(app):
    return app.extensions["ptas"]


def ctx_of(sandbox, world):
    return sandbox.ctx(sandbox.worlds.get(world.body["world"]["id"]))


def approved(client, world, user_id, decision="approve"):
    flow = world.api.post("/oauth", json={"accountTypeId": "dummy-auth", "userId": user_id}).json
    post_form(client, urlsplit(flow["redirectUrl"]).path, data={"decision": decision})
    return flow["authReference"]


def redeem(sandbox, world, reference, user_id, **kw):
    kw.setdefault("account_type_id", "dummy-auth")
    with sandbox.store.transaction():
        return models.redeem(ctx_of(sandbox, world), reference, partner_id=world.partner["id"], user_id=user_id, **kw)


def test_an_approved_reference_is_redeemed_once(client, sandbox, world):
    user = world.user()[0]
    reference = approved(client, world, user["id"])
    assert redeem(sandbox, world, reference, user["id"])["status"] == "Success"
    with pytest.raises(Conflict):
        redeem(sandbox, world, reference, user["id"])


def test_unknown_and_foreign_references_are_unknown(client, sandbox, world, other_world):
    user, other_user = world.user()[0], world.user()[0]
    reference = approved(client, world, user["id"])
    with pytest.raises(BadRequest, match="Unknown"):
        redeem(sandbox, world, "no-such-reference", user["id"])
    with pytest.raises(BadRequest, match="Unknown"):
        redeem(sandbox, world, reference, other_user["id"])
    stranger = other_world.user()[0]
    with pytest.raises(BadRequest, match="Unknown"):
        redeem(sandbox, other_world, reference, stranger["id"])
    assert redeem(sandbox, world, reference, user["id"])["status"] == "Success"   # untouched by the misuse


def test_an_expired_reference_is_refused(client, sandbox, world):
    user = world.user()[0]
    reference = approved(client, world, user["id"])
    world.api.advance(models.REFERENCE_LIFETIME_US // 1_000_000)
    with pytest.raises(BadRequest, match="expired"):
        redeem(sandbox, world, reference, user["id"])


@pytest.mark.parametrize("decision", ["deny", "notfound", "error"])
def test_an_unsuccessful_reference_is_refused(client, sandbox, world, decision):
    user = world.user()[0]
    with pytest.raises(BadRequest, match="cannot be used"):
        redeem(sandbox, world, approved(client, world, user["id"], decision), user["id"])


def test_a_pending_reference_is_refused(sandbox, world):
    user = world.user()[0]
    reference = world.api.post("/oauth", json={"accountTypeId": "dummy-auth", "userId": user["id"]}).json
    with pytest.raises(BadRequest, match="not completed"):
        redeem(sandbox, world, reference["authReference"], user["id"])


def test_a_reference_for_another_account_type_or_an_update_is_refused(client, sandbox, world):
    user = world.user()[0]
    reference = approved(client, world, user["id"])
    with pytest.raises(BadRequest, match="account type"):
        redeem(sandbox, world, reference, user["id"], account_type_id="dummy")
    with pytest.raises(BadRequest, match="not made for account"):
        redeem(sandbox, world, reference, user["id"], account_id="some-account")
