"""Steps of the webhook features (spec §4.2 webhook and test-event rows, §6). The subscription's field names and
the payload are not shown by the spec: scenarios that subscribe are @sandbox, and read what arrives at the
simulator's echo receiver (`/_sandbox/echo/{bin}`), delivered at once with `/_sandbox/webhooks/flush`."""

import json
import uuid

from pytest_bdd import given, parsers, then, when

from ..scene import check
from . import checks
from .accounts import create_account

KINDS = {"AccountCreated": "accountcreated", "AccountUpdated": "accountupdated", "AccountDeleted": "accountdeleted",
         "TransactionsImported": "transactionsimported", "AccountTypeUpdated": "accounttypeupdated"}
TEST_OPERATIONS = {kind: "SendTest" + kind for kind in KINDS}


def echo_url(scene, bin_name):
    base = "http://localhost" if scene.target.in_process else scene.target.name.rstrip("/")
    return f"{base}/_sandbox/echo/{bin_name}"


def subscribe(scene, label, kinds):
    scene.bin = f"conformance-{uuid.uuid4().hex[:12]}"
    reply = scene.call("CreateWebhook", json={"name": label, "callbackUrl": echo_url(scene, scene.bin),
                                              "events": kinds})
    if reply.ok:
        scene.webhooks[label] = reply.body
    return reply


@given(parsers.parse('a webhook "{label}" for {kinds} notifications sent to an inbox'))
def given_webhook(scene, label, kinds):
    scene.must(subscribe(scene, label, [k.strip() for k in kinds.replace(" and ", ",").split(",")]),
               "subscribe a webhook")


@when(parsers.parse("I send a test {kind} notification"))
def send_test(scene, kind):
    check(kind in TEST_OPERATIONS, f"no test event endpoint for {kind}")
    scene.call(TEST_OPERATIONS[kind])


def inbox(scene):
    scene.must(scene.client.call("SandboxFlushWebhooks", token=scene.token), "deliver due notifications")
    reply = scene.must(scene.client.call("SandboxEchoCaptures", params={"bin": scene.bin}), "read the inbox")
    return [json.loads(c["body"]) for c in reply.body["captures"] if c.get("body")]


@then(parsers.parse("the inbox receives the {kind} notification"))
def inbox_receives(scene, kind):
    kinds = [n.get("eventType") for n in inbox(scene)]
    check(kind in kinds, f"the inbox got {kinds}, not {kind}")


@then(parsers.parse("the inbox receives nothing"))
def inbox_empty(scene):
    got = inbox(scene)
    check(not got, f"the inbox got {[n.get('eventType') for n in got]}")


@then("every notification in the inbox carries account errors and warnings")
def notifications_carry(scene):
    for note in inbox(scene):
        account = (note.get("data") or {}).get("account")
        if account is not None:
            checks.reports_problems(account, "an account in a notification (spec §6)")


@when(parsers.parse('I create a "{type_id}" account "{label}" for the user "{owner}"'))
def create_plain(scene, type_id, label, owner):
    create_account(scene, label, type_id, owner)


@when("I list my webhooks")
def list_webhooks(scene):
    scene.call("GetWebhooks")


@when(parsers.parse('I pause the webhook "{label}"'))
def pause(scene, label):
    scene.call("PatchWebhook", params={"id": scene.webhooks[label]["id"]}, json={"isActive": False})


@when(parsers.parse('I delete the webhook "{label}"'))
def delete(scene, label):
    scene.call("DeleteWebhook", params={"id": scene.webhooks[label]["id"]})


@then(parsers.parse('the list shows the webhook "{label}"'))
def list_shows(scene, label):
    check(scene.webhooks[label]["id"] in checks.ids_of(scene.reply, "webhooks"), f"the webhook {label!r} is not listed")
