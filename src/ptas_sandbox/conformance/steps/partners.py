"""Steps of the partner features: own settings (UpdatePartner), child partners, their tokens, the deploy token."""

import copy

from pytest_bdd import given, then, when

from .. import checks
from ..scene import check
from ..unchecked import not_applicable
from . import acting, phrase

# Spec §4.1 rule 2, §8: "6 months"; any deployment's six months lie between 181 and 184 days.
SIX_MONTHS = (181 * 86400, 184 * 86400)


def create_child(scene, label, by="I", **values):
    """CreatePartner: its payload is not shown, so the body follows the target's schema (a name, an e-mail, and
    `values` in the spec's words)."""
    body = scene.body("CreatePartner", {"name": scene.name(label), "email": "store@example.test", **values},
                      optional=("email",))
    reply = scene.call("CreatePartner", by, json=body)
    if reply.ok and isinstance(reply.body, dict):
        scene.partners[label] = reply.body
        if not scene.target.simulator and "DeleteChildPartner" in scene.target.operations:
            scene.undo.append(lambda: scene.undo_delete("DeleteChildPartner", scene.id_of(reply.body, "GetPartner")))
    return reply


def child_id(scene, label):
    check(label in scene.partners, f"no child partner {label!r} was created in this scenario")
    return scene.id_of(scene.partners[label], "GetPartner")


def create_child_token(scene, child, name, scope, lifetime=None, by="I"):
    """CreatePartnerToken: request and response bodies not shown (spec §4.1); the token create request's words."""
    body = scene.body("CreatePartnerToken", {"name": scene.name(name), "scope": scope, "expiresIn": lifetime},
                      optional=("name", "expiresIn"))
    reply = scene.call("CreatePartnerToken", by, params={"id": child_id(scene, child)}, json=body)
    if reply.ok and isinstance(reply.body, dict) and reply.body.get("accessToken"):
        scene.remember_token(name, reply.body, owner=child)
    return reply


# -- child partners ----------------------------------------------------------------------------------------
@given(phrase('a child partner "{label}"'))
def given_child(scene, label):
    scene.must(create_child(scene, label), f"create the child partner {label!r}")


@given(phrase('a child partner "{label}" created by "{actor}"'))
def given_child_by(scene, label, actor):
    scene.must(create_child(scene, label, by=actor), f"create the child partner {label!r} as {actor!r}")


@when(acting('{actor} creates a child partner "{label}"'))
def creates_child(scene, actor, label):
    create_child(scene, label, by=actor)


@when(acting('{actor} reads the child partner "{label}"'))
def reads_child(scene, actor, label):
    scene.call("GetPartner", actor, params={"id": child_id(scene, label)})


@when(acting("{actor} lists the child partners", me="list my child partners"))
def lists_children(scene, actor):
    scene.call("GetPartners", actor)


@when(phrase('I rename the child partner "{label}" to "{new}"'))
def rename_child(scene, label, new):
    scene.update("GetPartner", "UpdateChildPartner", {"id": child_id(scene, label)}, {"name": scene.name(new)})


@when(phrase('I delete the child partner "{label}"'))
def delete_child(scene, label):
    scene.call("DeleteChildPartner", params={"id": child_id(scene, label)})


@then(phrase('the partner is named "{name}"'))
def partner_named(scene, name):
    check(scene.reply.ok, f"expected a partner, got {scene.reply.describe()}")
    check(scene.reply.body.get("name") == scene.name(name),
          f"name: expected {scene.name(name)!r}, got {scene.reply.body.get('name')!r}")


@then(phrase('the list shows the child partner "{label}"'))
def list_shows_child(scene, label):
    check(child_id(scene, label) in scene.ids_in(scene.reply, "child partners", "GetPartner"),
          f"the child partner {label!r} is not listed")


@then(phrase('the list does not show the child partner "{label}"'))
def list_lacks_child(scene, label):
    check(child_id(scene, label) not in scene.ids_in(scene.reply, "child partners", "GetPartner"),
          f"the child partner {label!r} is still listed")


# -- tokens of child partners ------------------------------------------------------------------------------
@given(phrase('a token "{name}" of the child partner "{child}" with scope "{scope}"'))
def given_child_token(scene, name, child, scope):
    scene.must(create_child_token(scene, child, name, scope), f"create a token for the child partner {child!r}")


@when(acting('{actor} creates a token "{name}" for the child partner "{child}" with scope "{scope}"'))
def creates_child_token(scene, actor, name, child, scope):
    create_child_token(scene, child, name, scope, by=actor)


@when(acting('{actor} creates a token "{name}" for the child partner "{child}" with scope "{scope}" lasting '
            '{seconds:d} seconds'))
def creates_child_token_lasting(scene, actor, name, child, scope, seconds):
    create_child_token(scene, child, name, scope, lifetime=seconds, by=actor)


@when(acting('{actor} lists the tokens of the child partner "{child}"'))
def list_child_tokens(scene, actor, child):
    scene.call("GetPartnerTokens", actor, params={"id": child_id(scene, child)})


@when(phrase('I revoke the token "{name}" of the child partner "{child}"'))
def revoke_child_token(scene, name, child):
    scene.call("RevokePartnerToken", params={"id": child_id(scene, child), "tokenId": scene.token_id(name)})


@then("the new token lasts about six months")
def lasts_six_months(scene):
    record = scene.reply.body if scene.reply.ok else {}
    low, high = SIX_MONTHS
    check(isinstance(record.get("expiresIn"), int) and low <= record["expiresIn"] <= high,
          f"a child partner's token lasts 6 months by default (spec §4.1 rule 2), "
          f"expiresIn is {record.get('expiresIn')!r}")
    span = checks.seconds_between(record["createdAt"], record["expiresAt"])
    check(abs(span - record["expiresIn"]) < 1, f"expiresAt is {span} s after createdAt, not expiresIn")


# -- own settings ------------------------------------------------------------------------------------------
@when(acting("{actor} reads the partner's settings", me="read my partner settings"))
def read_settings(scene, actor):
    scene.call("GetOwnPartner", actor)


@when(acting('{actor} changes the e-mail address to "{email}"', me='change my e-mail address to "{email}"'))
def change_email(scene, actor, email):
    scene.update("GetOwnPartner", "UpdatePartner", {}, {"email": email}, actor, record=keep_settings(scene))


@when(phrase('I set my redirect URLs to "{first}" and "{second}"'))
def set_redirects(scene, first, second):
    scene.update("GetOwnPartner", "UpdatePartner", {}, {"redirectUrls": [first, second]}, record=keep_settings(scene))


@when("I clear my redirect URLs")
def clear_redirects(scene):
    """§1 step 1: with no redirect URL in the request and none in the partner's settings, the user ends on the
    service's own page. A target may refuse an empty list (§1 capability 1 speaks of "one or several" redirect
    URLs): no partner of it is ever without one, and the promise does not apply to it."""
    reply = scene.update("GetOwnPartner", "UpdatePartner", {}, {"redirectUrls": []}, record=keep_settings(scene))
    if 400 <= reply.status < 500:
        not_applicable(f"the target keeps at least one redirect URL ({reply.describe()}): no partner of it reaches "
                       "the service's own page of the OAuth2 flow")
    check(reply.ok, f"clearing the redirect URLs failed: {reply.describe()}")


@when(phrase('I set my Account UI styling to primary colour "{colour}"'))
def set_styling(scene, colour):
    scene.update("GetOwnPartner", "UpdatePartner", {}, {"uiSettings": {"styling": {"primaryColor": colour}}},
                 record=keep_settings(scene))


@when(phrase('I rename myself to "{new}"'), target_fixture="settings_before")
def rename_self(scene, new):
    """Spec §2: the partner's name is changeable (UpdatePartner, §1 capability 1), its own as a child's."""
    keep_settings(scene)        # the settings as they are now, which earlier scenarios may have changed
    before = scene.must(scene.client.call("GetOwnPartner", token=scene.token), "read the partner settings").body
    scene.update("GetOwnPartner", "UpdatePartner", {}, {"name": scene.name(new)}, record=dict(before))
    return before


@then("the other settings are as they were")
def other_settings_kept(scene, settings_before):
    """A change of one setting keeps the rest: the e-mail address, the redirect URLs, the user token lifetime."""
    check(scene.reply.ok and isinstance(scene.reply.body, dict), f"expected the settings, got {scene.reply.describe()}")
    changed = {k: (settings_before.get(k), scene.reply.body.get(k)) for k in ("email", "redirectUrls",
               "userTokenExpirySeconds") if k in settings_before and settings_before[k] != scene.reply.body.get(k)}
    check(not changed, f"renaming the partner changed other settings (before, after): {changed}")


@then("the settings show an e-mail address, redirect URLs, a name, the user token lifetime and UI settings")
def settings_fields(scene):
    check(scene.reply.ok, f"expected the partner settings, got {scene.reply.describe()}")
    body = scene.reply.body
    for field in ("email", "redirectUrls", "name", "userTokenExpirySeconds", "uiSettings"):
        check(field in body, f"the partner record has {field} (spec §2 other resources)")
    check(isinstance(body["redirectUrls"], list), "redirectUrls is a list (it replaced the single redirectUrl)")
    check(isinstance(body["userTokenExpirySeconds"], int), "userTokenExpirySeconds is a number of seconds")


@then("the settings carry uiSettings.styling")
def settings_carry_styling(scene):
    """Spec §2 (2.5.0): the partner record has uiSettings, including uiSettings.styling (its shape not shown)."""
    check(scene.reply.ok, f"expected the partner settings, got {scene.reply.describe()}")
    ui = scene.reply.body.get("uiSettings")
    check(isinstance(ui, dict) and "styling" in ui,
          f"the partner record carries uiSettings.styling (spec §2, 2.5.0), got uiSettings {ui!r}")


@then(phrase('the settings show the e-mail address "{email}"'))
def settings_email(scene, email):
    check(scene.reply.ok and scene.reply.body.get("email") == email,
          f"email: expected {email!r}, got {scene.reply.describe()}")


@then(phrase('the settings show the redirect URLs "{first}" and "{second}"'))
def settings_redirects(scene, first, second):
    check(scene.reply.ok and scene.reply.body.get("redirectUrls") == [first, second],
          f"redirectUrls: expected {[first, second]}, got {scene.reply.describe()}")


@when(phrase('I create a child partner "{label}" with the Account UI styling primary colour "{colour}"'))
def create_styled_child(scene, label, colour):
    """Spec §9 2.3.0: uiSettings on CreatePartner (as on UpdatePartner)."""
    create_child(scene, label, uiSettings={"styling": {"primaryColor": colour}})


@then(phrase('the child partner "{label}" shows the Account UI styling primary colour "{colour}"'))
def child_styling(scene, label, colour):
    """What a create takes, a read of the record shows: the child partner read back carries the styling."""
    check(scene.reply.ok, f"CreatePartner with uiSettings: got {scene.reply.describe()}")
    read = scene.must(scene.client.call("GetPartner", token=scene.token, params={"id": child_id(scene, label)}),
                      "read the child partner back")
    styling = styling_of(read.body)
    check(styling.get("primaryColor") == colour, f"GetPartner's uiSettings.styling after CreatePartner set it: "
          f"got {styling!r} (spec §9 2.3.0: uiSettings on CreatePartner)")


def styling_of(partner):
    """uiSettings.styling of a partner record (empty where it has none)."""
    return ((partner if isinstance(partner, dict) else {}).get("uiSettings") or {}).get("styling") or {}


@then(phrase('the settings show the Account UI styling primary colour "{colour}"'))
def settings_styling(scene, colour):
    styling = styling_of(scene.reply.body)
    check(styling.get("primaryColor") == colour, f"uiSettings.styling: got {styling!r}")


def keep_settings(scene):
    """On a deployment, put the partner's settings back as the run found them once the scenario ends: other
    scenarios read them (the OAuth flow its redirect URLs, a full-replace PUT the e-mail address, users made later
    the user token lifetime). The run reads them once. Gives the first change of a scenario the settings as the
    run found them (a copy): None when the scenario changed them already, or on a simulator."""
    if scene.target.simulator or scene.settings_kept:
        return None
    held = scene.target.held
    client, token = scene.client, scene.token

    def put_back():     # a target that refuses them back keeps what the scenario set: read again next time
        if not client.call("UpdatePartner", token=token, json=original).ok:
            held.settings = None
            held.left["partner settings the target refused to put back"] += 1
    if held.settings is None:
        held.settings = scene.must(scene.client.call("GetOwnPartner", token=scene.token),
                                   "read the partner settings").body
    original = scene.bodies.writable("UpdatePartner", held.settings, nulls=True)
    scene.settings_kept = True
    scene.undo.append(put_back)
    return copy.deepcopy(held.settings)


@then("the partner record lists its redirect URLs under redirectUrls")
def record_redirect_urls(scene):
    """Spec §2 Partner, 2.0.0-beta2: a partner has a list redirectUrls, which replaced the single redirectUrl (a
    breaking change): a child partner's record as much as the partner's own."""
    body = scene.reply.body if scene.reply.ok else None
    check(isinstance(body, dict) and isinstance(body.get("redirectUrls"), list),
          f"the partner record carries redirectUrls, a list (spec §2), got {scene.reply.describe()}")
    check("redirectUrl" not in body, "the partner record still carries the single redirectUrl that redirectUrls "
                                     "replaced (spec §9 2.0.0-beta2)")
