"""Steps of the Account UI and User UI session features (spec §4.2 rows and note 4, §9 2.3.0, 2.4.0, 2.12.0).

Creating and reading a session is the service's interface; what the person does on the hosted page is the
simulator's page, so completing a session is @sandbox.
"""

import uuid
from urllib.parse import urlencode, urlsplit

from pytest_bdd import parsers, then, when

from ..scene import check
from .accounts import account_type, form_for
from .users import user_id


@when(parsers.parse('I open an account UI session for "{owner}" offering "{first}" and "{second}"'))
def open_account_ui(scene, owner, first, second):
    reply = scene.call("CreateAccountUiSession", json={"accountTypeIds": [first, second],
                                                       "userId": user_id(scene, owner)})
    if reply.ok:
        scene.ui_session = reply.body


@when("I read the account UI session")
def read_account_ui(scene):
    scene.call("GetAccountUiSession", params={"id": scene.ui_session["id"]})


@then(parsers.parse('the session offers the account types "{first}" and "{second}"'))
def offers(scene, first, second):
    check(scene.reply.ok, f"expected the session, got {scene.reply.describe()}")
    got = scene.reply.body.get("accountTypeIds")
    check(isinstance(got, list) and set(got) == {first, second},
          f"accountTypeIds carries the types asked for (spec §4.2 note 4), got {got!r}")


@when(parsers.parse('the person fills in the "{type_id}" form on the session\'s page'))
def fill_account_form(scene, type_id):
    fields = {"accountTypeId": type_id, "action": "submit", **form_for(account_type(scene, type_id))}
    boundary = uuid.uuid4().hex
    body = "".join(f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'
                   for k, v in fields.items()) + f"--{boundary}--\r\n"
    scene.reply = scene.client.request("POST", urlsplit(scene.ui_session["url"]).path, data=body.encode(),
                                       headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})


@then(parsers.parse('the session is {status} with {what}'))
def session_status(scene, status, what):
    check(scene.reply.ok, f"expected the session, got {scene.reply.describe()}")
    body = scene.reply.body
    check(body.get("status") == status, f"status: expected {status}, got {body.get('status')!r}")
    key = {"an account": "accountId", "a user": "userId"}[what]
    check(isinstance(body.get(key), str) and body[key], f"{key} is set once the session completed")


@when("I open a user UI session")
def open_user_ui(scene):
    reply = scene.call("CreateUserUiSession", json={})
    if reply.ok:
        scene.ui_session = reply.body


@when("I read the user UI session")
def read_user_ui(scene):
    scene.call("GetUserUiSession", params={"id": scene.ui_session["id"]})


@then("the response identifies the session")
def identifies(scene):
    check(scene.reply.ok, f"expected the session, got {scene.reply.describe()}")
    check(isinstance(scene.reply.body, dict) and scene.reply.body.get("id") == scene.ui_session["id"],
          "GetUserUiSession answers the session asked for")


@when(parsers.parse('the person registers as "{name}" on the session\'s page'))
def register(scene, name):
    scene.reply = scene.client.request(
        "POST", urlsplit(scene.ui_session["url"]).path, data=urlencode({"name": name, "email": "p@example.test"}),
        headers={"Content-Type": "application/x-www-form-urlencoded"})


@when(parsers.parse('I open an account UI session for "{owner}" with the deprecated accountTypeId "{type_id}"'))
def open_account_ui_deprecated(scene, owner, type_id):
    reply = scene.call("CreateAccountUiSession", json={"accountTypeId": type_id, "userId": user_id(scene, owner)})
    if reply.ok:
        scene.ui_session = reply.body


@then(parsers.parse('the session offers the account type "{type_id}"'))
def offers_one(scene, type_id):
    check(scene.reply.ok, f"expected the session, got {scene.reply.describe()}")
    check(scene.reply.body.get("accountTypeIds") == [type_id],
          f"accountTypeIds carries the type (spec §4.2 note 4), got {scene.reply.body.get('accountTypeIds')!r}")
