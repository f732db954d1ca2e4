"""Steps of the Account UI session features (spec §4.2 rows and note 4, §9 2.3.0, 2.4.0, 2.12.0).

Creating and reading a session is the service's interface; what the person does on the hosted page is the
simulator's page, so completing a session is @sandbox.
"""

import uuid
from urllib.parse import urlencode, urlsplit

from pytest_bdd import then, when

from ..scene import check
from . import page_form, phrase
from .account_types import account_type, form_for
from .users import user_id


def opened(reply):
    """The session a When step opened, for the steps after it (empty when the target refused)."""
    return reply.body if reply.ok and isinstance(reply.body, dict) else {}


@when(phrase('I open an account UI session for "{owner}" offering "{first}" and "{second}"'),
      target_fixture="ui_session")
def open_account_ui(scene, owner, first, second):
    body = scene.body("CreateAccountUiSession", {"accountTypeIds": [first, second], "userId": user_id(scene, owner)})
    return opened(scene.call("CreateAccountUiSession", json=body))


@when(phrase('I open an account UI session for "{owner}" with the deprecated accountTypeId "{type_id}"'),
      target_fixture="ui_session")
def open_account_ui_deprecated(scene, owner, type_id):
    body = scene.body("CreateAccountUiSession", {"accountTypeId": type_id, "userId": user_id(scene, owner)})
    return opened(scene.call("CreateAccountUiSession", json=body))


@when("I read the account UI session")
def read_account_ui(scene, ui_session):
    scene.call("GetAccountUiSession", params={"id": scene.id_of(ui_session, "GetAccountUiSession")})


@then(phrase('the session offers the account types "{first}" and "{second}"'))
def offers(scene, first, second):
    check(scene.reply.ok, f"expected the session, got {scene.reply.describe()}")
    got = scene.reply.body.get("accountTypeIds")
    check(isinstance(got, list) and set(got) == {first, second},
          f"accountTypeIds carries the types asked for (spec §4.2 note 4), got {got!r}")


@then(phrase('the session offers the account type "{type_id}"'))
def offers_one(scene, type_id):
    check(scene.reply.ok, f"expected the session, got {scene.reply.describe()}")
    check(scene.reply.body.get("accountTypeIds") == [type_id],
          f"accountTypeIds carries the type (spec §4.2 note 4), got {scene.reply.body.get('accountTypeIds')!r}")


@when(phrase('the person fills in the "{type_id}" form on the session\'s page'))
def fill_account_form(scene, ui_session, type_id):
    path = urlsplit(ui_session["url"]).path
    token = page_form(scene, f"{path}?{urlencode({'type': type_id})}")
    fields = {**token, "accountTypeId": type_id, "action": "submit", **form_for(account_type(scene, type_id))}
    boundary = uuid.uuid4().hex
    body = "".join(f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'
                   for k, v in fields.items()) + f"--{boundary}--\r\n"
    scene.reply = scene.client.request("POST", path, data=body.encode(),
                                       headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})


@then(phrase('the session is {status} with {what}'))
def session_status(scene, status, what):
    """Account UI and User UI sessions alike: the status and what the completed session made."""
    check(scene.reply.ok, f"expected the session, got {scene.reply.describe()}")
    body = scene.reply.body
    check(body.get("status") == status, f"status: expected {status}, got {body.get('status')!r}")
    key = {"an account": "accountId", "a user": "userId"}[what]
    check(isinstance(body.get(key), str) and body[key], f"{key} is set once the session completed")
