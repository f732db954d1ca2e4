"""Steps of the User UI session features (spec §4.2 rows, §9 2.12.0); `the session is ... with ...` is shared
with the Account UI (accountui.py). Registering on the hosted page is the simulator's page: @sandbox."""

from urllib.parse import urlencode, urlsplit

from pytest_bdd import then, when

from ..scene import check
from . import page_form, phrase
from .accountui import opened


@when("I open a user UI session", target_fixture="ui_session")
def open_user_ui(scene):
    return opened(scene.call("CreateUserUiSession", json=scene.body("CreateUserUiSession", {})))


@when("I read the user UI session")
def read_user_ui(scene, ui_session):
    scene.call("GetUserUiSession", params={"id": scene.id_of(ui_session, "GetUserUiSession")})


@then("the response identifies the session")
def identifies(scene, ui_session):
    check(scene.reply.ok, f"expected the session, got {scene.reply.describe()}")
    check(isinstance(scene.reply.body, dict) and
          scene.id_of(scene.reply.body, "GetUserUiSession") == scene.id_of(ui_session, "GetUserUiSession"),
          "GetUserUiSession answers the session asked for")


@when(phrase('the person registers as "{name}" on the session\'s page'))
def register(scene, ui_session, name):
    path = urlsplit(ui_session["url"]).path
    scene.reply = scene.client.request(
        "POST", path, data=urlencode({**page_form(scene, path), "name": name, "email": "p@example.test"}),
        headers={"Content-Type": "application/x-www-form-urlencoded"})
