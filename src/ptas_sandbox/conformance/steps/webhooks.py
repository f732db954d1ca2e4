"""Steps of the webhook features (spec §4.2 webhook and test-event rows, §6). The subscription's field names and
the payload are not shown by the spec: scenarios that subscribe are @sandbox, and read what arrives at the
simulator's echo receiver (`/_sandbox/echo/{bin}`), delivered at once with `/_sandbox/webhooks/flush`."""

import json
import uuid

from pytest_bdd import given, then, when

from .. import checks
from ..scene import check
from . import phrase

KINDS = {"AccountCreated": "accountcreated", "AccountUpdated": "accountupdated", "AccountDeleted": "accountdeleted",
         "TransactionsImported": "transactionsimported", "AccountTypeUpdated": "accounttypeupdated"}
TEST_OPERATIONS = {kind: "SendTest" + kind for kind in KINDS}


def echo_url(scene, bin_name):
    base = "http://localhost" if scene.target.in_process else scene.target.name.rstrip("/")
    return f"{base}/_sandbox/echo/{bin_name}"


def subscribe(scene, label, kinds, inbox_bin):
    reply = scene.call("CreateWebhook", json={"name": label, "callbackUrl": echo_url(scene, inbox_bin),
                                              "events": kinds})
    if reply.ok:
        scene.webhooks[label] = reply.body
    return reply


@given(phrase('a webhook "{label}" for {kinds} notifications sent to an inbox'), target_fixture="inbox_bin")
def given_webhook(scene, label, kinds):
    inbox_bin = f"conformance-{uuid.uuid4().hex[:12]}"
    scene.must(subscribe(scene, label, [k.strip() for k in kinds.replace(" and ", ",").split(",")], inbox_bin),
               "subscribe a webhook")
    return inbox_bin


@when(phrase("I send a test {kind} notification"))
def send_test(scene, kind):
    check(kind in TEST_OPERATIONS, f"no test event endpoint for {kind}")
    scene.call(TEST_OPERATIONS[kind])


def inbox(scene, inbox_bin):
    scene.must(scene.client.call("SandboxFlushWebhooks", token=scene.token), "deliver due notifications")
    reply = scene.must(scene.client.call("SandboxEchoCaptures", params={"bin": inbox_bin}), "read the inbox")
    return [json.loads(c["body"]) for c in reply.body["captures"] if c.get("body")]


@then(phrase("the inbox receives the {kind} notification"))
def inbox_receives(scene, inbox_bin, kind):
    kinds = [n.get("eventType") for n in inbox(scene, inbox_bin)]
    check(kind in kinds, f"the inbox got {kinds}, not {kind}")


@then(phrase("the inbox receives nothing"))
def inbox_empty(scene, inbox_bin):
    got = inbox(scene, inbox_bin)
    check(not got, f"the inbox got {[n.get('eventType') for n in got]}")


@then("every notification in the inbox carries account errors and warnings")
def notifications_carry(scene, inbox_bin):
    for note in inbox(scene, inbox_bin):
        account = (note.get("data") or {}).get("account")
        if account is not None:
            checks.reports_problems(account, "an account in a notification (spec §6)")


@when("I list my webhooks")
def list_webhooks(scene):
    scene.call("GetWebhooks")


@when(phrase('I pause the webhook "{label}"'))
def pause(scene, label):
    scene.call("PatchWebhook", params={"id": scene.webhooks[label]["id"]}, json={"isActive": False})


@when(phrase('I delete the webhook "{label}"'))
def delete(scene, label):
    scene.call("DeleteWebhook", params={"id": scene.webhooks[label]["id"]})


@then(phrase('the list shows the webhook "{label}"'))
def list_shows(scene, label):
    check(scene.webhooks[label]["id"] in checks.ids_of(scene.reply, "webhooks"), f"the webhook {label!r} is not listed")
