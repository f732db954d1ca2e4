"""Steps of the webhook features (spec §4.2 webhook and test-event rows, §6). The subscription's field names and
the payload are not shown by the spec: scenarios that subscribe are @sandbox, and read what arrives at the
simulator's echo receiver (`/_sandbox/echo/{bin}`), delivered at once with `/_sandbox/webhooks/flush`."""

import json
import uuid

import pytest
from pytest_bdd import given, then, when

from .. import checks
from ..bodies import identifier
from ..scene import check
from . import phrase
from .transactions import first_import_done

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
    reply = scene.must(scene.client.call("SandboxEchoCaptures", params={"bin": inbox_bin}, token=scene.token),
                       "read the inbox")
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


# -- deployment checks of issue 9 item 5: CRUD through the document's schema, delivery to a receiver -----------
ACTIVE = tuple(KINDS)
RETIRED = ("ReportImported", "TransactionsImportError", "AccountError")
CARRIERS = ("account", "report", "dataimport", "import")     # spec §6: these objects carry errors and warnings


def receiver_of(scene):
    """The harness's receiver (--receiver-listen), or a simulator's echo bins; otherwise the scenario skips."""
    from ..receiver import EchoReceiver
    receiver = getattr(scene.target, "receiver", None)
    if receiver is not None:
        return receiver
    if scene.target.simulator:
        return EchoReceiver(scene, "http://localhost" if scene.target.in_process else scene.target.name)
    pytest.skip("no webhook receiver: pass --receiver-listen HOST:PORT (and --receiver-url URL, the address the "
                "deployment reaches it at) to check deliveries")


def webhook_location(reply):
    """A created webhook's id from its Location header, where the body carries none."""
    location = reply.headers.get("location") if reply.ok else None
    return location.rstrip("/").rsplit("/", 1)[-1] if location else None


def create_webhook(scene, kinds):
    """CreateWebhook with a body built from the target's schema (bodies.py): the callback URL and the event kinds
    are the spec's words for what a webhook has (§2); their field names are the target's."""
    receiver = receiver_of(scene)
    url, inbox = receiver.inbox()
    reply = scene.call("CreateWebhook", json=scene.body("CreateWebhook", {"callbackUrl": url, "events": kinds}))
    found = identifier(reply.body, *scene.target.operations.hints("GetWebhook")) if reply.ok else None
    hook = {"inbox": inbox, "url": url, "receiver": receiver, "reply": reply,
            "id": str(found) if found is not None else webhook_location(reply)}
    if hook["id"] and not scene.target.simulator:
        scene.undo.append(lambda: scene.client.call("DeleteWebhook", token=scene.token, params={"id": hook["id"]}))
    return hook


@when(phrase("I subscribe a webhook to every active event kind, sent to the receiver"), target_fixture="hook")
def subscribe_all(scene):
    return create_webhook(scene, list(ACTIVE))


@given(phrase("a webhook for {kinds} notifications sent to the receiver"), target_fixture="hook")
def given_hook(scene, kinds):
    wanted = list(ACTIVE) if kinds == "every active kind of" else \
        [k.strip() for k in kinds.replace(" and ", ",").split(",")]
    hook = create_webhook(scene, wanted)
    scene.must(hook["reply"], "subscribe a webhook")
    return hook


@given(phrase("a second webhook for {kinds} notifications sent to the receiver"), target_fixture="second_hook")
def given_second_hook(scene, kinds):
    return given_hook(scene, kinds)


@then(phrase("the second webhook gets a {kind} notification"))
def second_gets(scene, second_hook, kind):
    receiver_gets(scene, second_hook, kind)


STRAY_WAIT = 5.0     # seconds a notification that should not come is given to come, at most the delivery budget


def stray_budget(scene):
    """How long a notification that must not come is watched for: STRAY_WAIT within the delivery budget, or the
    run's `stray_wait` (the project's own tests shorten it for deployments that are faithful by construction,
    where nothing comes however long the watch)."""
    given = scene.target.options.get("stray_wait")
    return float(given) if given is not None else min(STRAY_WAIT, wait_budget(scene))


@then(phrase("the first webhook got no {kind} notification"))
def first_got_none(scene, hook, kind):
    """Nothing of `kind` reaches the first webhook, watched for a few seconds more: it got its own kind, sent
    after `kind`, but a service need not deliver one webhook's notifications in order, so a stray `kind` may
    still be on its way (a simulator's flush has delivered everything at once)."""
    notes = hook["receiver"].wait(hook["inbox"], lambda notes: kind in kinds_named(notes),
                                  stray_budget(scene))
    named = kinds_named(notes)
    check(kind not in named, f"a webhook not subscribed to {kind} received a {kind} notification "
          f"(spec §2, §6: it subscribes to event kinds): {sorted(named)}")


@then("the webhook can be read back and is listed")
def read_back_and_listed(scene, hook):
    check(hook["reply"].ok, f"CreateWebhook succeeds, got {hook['reply'].describe()}")
    if not hook["id"]:
        pytest.skip("the created webhook carries no id the harness can find (its field names are not shown)")
    one = scene.call("GetWebhook", params={"id": hook["id"]})
    check(one.ok and hook["url"] in checks.strings(one.body),
          f"GetWebhook shows the webhook with its callback URL, got {one.describe()}")
    listed = scene.call("GetWebhooks")
    check(listed.ok and hook["url"] in checks.strings(listed.body),
          f"GetWebhooks lists the new webhook, got {listed.describe()}")


@when(phrase("I change the webhook to {kind} notifications only"))
def change_kinds(scene, hook, kind):
    if not hook["id"]:
        pytest.skip("the created webhook carries no id the harness can find (its field names are not shown)")
    scene.update("GetWebhook", "UpdateWebhook", {"id": hook["id"]}, {"events": [kind]})


@when(phrase("I patch the webhook to {kind} notifications only"))
def patch_kinds(scene, hook, kind):
    """PATCH /webhooks/{id} (spec §4.2): only the event kinds, under the target's name for them."""
    check(hook["reply"].ok, f"CreateWebhook succeeds, got {hook['reply'].describe()}")
    if not hook["id"]:
        pytest.skip("the created webhook carries no id the harness can find (its field names are not shown)")
    scene.call("PatchWebhook", params={"id": hook["id"]}, json=scene.body("PatchWebhook", {"events": [kind]}))


@then(phrase("reading the webhook shows {kind} notifications only"))
def shows_only(scene, hook, kind):
    check(scene.reply.ok, f"UpdateWebhook succeeds, got {scene.reply.describe()}")
    record = scene.call("GetWebhook", params={"id": hook["id"]}).body
    # The response may name the kinds otherwise than the request: any array of event kinds in the record.
    arrays = [v for v in (record.values() if isinstance(record, dict) else ())
              if isinstance(v, list) and v and all(isinstance(k, str) and k in ACTIVE + RETIRED for k in v)]
    check(arrays == [[kind]], f"the webhook subscribes {arrays or 'no event kinds'} after the update, not [{kind!r}]")


@when("I delete the webhook")
def delete_hook(scene, hook):
    if not hook["id"]:
        pytest.skip("the created webhook carries no id the harness can find (its field names are not shown)")
    scene.call("DeleteWebhook", params={"id": hook["id"]})


@then("the webhook is no longer listed or read")
def gone(scene, hook):
    check(scene.reply.ok, f"DeleteWebhook succeeds, got {scene.reply.describe()}")
    one = scene.call("GetWebhook", params={"id": hook["id"]})
    check(not one.ok, f"a deleted webhook is not read back, got {one.describe()}")
    listed = scene.call("GetWebhooks")
    check(listed.ok and hook["url"] not in checks.strings(listed.body),
          "GetWebhooks no longer lists the deleted webhook")


@when("I send a test notification of every active kind")
def send_every_test(scene):
    for kind in ACTIVE:
        scene.call(TEST_OPERATIONS[kind])


def kinds_in(note):
    """The event kinds a notification names: any string value that is a kind (the payload shape is not shown)."""
    found, stack = set(), [note]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, str) and node in ACTIVE + RETIRED:
            found.add(node)
    return found


def kinds_named(notes):
    """The event kinds the notifications name, together."""
    return set().union(*map(kinds_in, notes or ()))


def wait_budget(scene):
    options = scene.target.options
    return float(options.get("delivery_wait") or min(float(options.get("max_wait") or 60), 120))


def delivered(scene, hook, kinds):
    """The notifications at the hook's inbox, once one of each of `kinds` is there or the budget is spent."""
    return hook["receiver"].wait(hook["inbox"], lambda notes: set(kinds) <= kinds_named(notes), wait_budget(scene))


@then(phrase("the receiver gets a {kind} notification"), target_fixture="notes")
def receiver_gets(scene, hook, kind):
    notes = delivered(scene, hook, [kind])
    named = kinds_named(notes)
    check(kind in named, f"no {kind} notification reached the receiver within {wait_budget(scene):g} s "
          f"(got {len(notes)}: {sorted(named)})")
    return notes


@then(phrase('the receiver gets a {kind} notification once the account "{label}" has its transactions'),
      target_fixture="notes")
def receiver_gets_after_import(scene, hook, kind, label):
    """A notification an effect causes is judged once the effect is seen (spec §6 TransactionsImported:
    "transactions were imported, with or without a report"). The first import may take from seconds to hours
    (§1 capability 5): the account's transactions are awaited first (polled within the run's --max-wait budget,
    FIRST_IMPORT_WAIT at most), then the notification gets a whole delivery wait. Transactions that did not come
    leave the scenario out, saying why; a notification that did not follow them fails it."""
    first_import_done(scene, label)
    notes = delivered(scene, hook, [kind])
    check(kind in kinds_named(notes),
          f"the account {label!r} holds imported transactions, yet no {kind} notification reached the receiver "
          f"within {wait_budget(scene):g} s of seeing them (spec §6: 'with or without a report')")
    return notes


@then("the receiver gets one notification of each active kind and none of a retired kind", target_fixture="notes")
def each_active_none_retired(scene, hook):
    notes = delivered(scene, hook, ACTIVE)
    named = kinds_named(notes)
    missing = sorted(set(ACTIVE) - named)
    check(not missing, f"no notification of {missing} reached the receiver within {wait_budget(scene):g} s")
    # a retired kind sent beside an active one may arrive after it (no order is promised): watched a few seconds
    notes = hook["receiver"].wait(hook["inbox"], lambda got: bool(kinds_named(got) & set(RETIRED)),
                                  stray_budget(scene))
    named = kinds_named(notes)
    retired = sorted(named & set(RETIRED))
    check(not retired, f"a notification of the retired kind(s) {retired} was sent (spec §6: no longer triggered)")
    return notes


@then("every account, report and data-import object in them carries errors and warnings")
def carriers_report(notes):
    seen = 0
    stack = [(None, n) for n in notes]
    while stack:
        key, node = stack.pop()
        if isinstance(node, dict):
            if key and key.lower().replace("_", "") in CARRIERS:
                seen += 1
                for field in ("errors", "warnings"):
                    check(isinstance(node.get(field), list), f"the {key} object of a notification carries "
                          f"{field} as an array (spec §6), got {node.get(field)!r}")
            stack.extend(node.items())
        elif isinstance(node, list):
            stack.extend((key, item) for item in node)
    carrying = kinds_named(notes) - {"AccountTypeUpdated"}     # spec §6: it gives an account type, none of these
    if not seen and carrying:
        pytest.skip("no account, report or data-import object in the notifications to check")


# Spec §6: what a notification of each kind carries; the payload's shape is not shown, so a property named for it
# anywhere in the notification (`report`, `reportId`; `accountType` with its `state`; `account`, `accountId`).
CARRIED = {
    "TransactionsImported": (("report",), "report information"),
    "AccountTypeUpdated": (("accounttype", "state"), "the account type and the current state of its provider"),
    "AccountCreated": (("account",), "the account"),
    "AccountUpdated": (("account",), "the account"),
    "AccountDeleted": (("account",), "the account"),
}


def key_names(node, depth=99):
    """Every property name in a JSON document down to `depth` levels of objects, lower case, without separators."""
    found, stack = set(), [(node, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict) and level <= depth:
            found.update(str(k).lower().replace("_", "").replace("-", "") for k in item)
            stack.extend((value, level + 1) for value in item.values())
        elif isinstance(item, list):
            stack.extend((value, level) for value in item)
    return found


@then(phrase("the {kind} notification carries what the spec gives it, with seven-digit date-times"))
def notification_carries(scene, notes, kind):
    """Spec §6 per kind (TransactionsImported carries report information, AccountTypeUpdated gives the provider's
    current state, the account events the account) and §2, §9.3: every date-time in it has seven digits."""
    mine = [n for n in notes if kind in kinds_in(n)]
    check(mine, f"no {kind} notification to read")
    wanted, meaning = CARRIED[kind]
    for note in mine:
        # what the notification carries, in it or in its payload object (not inside another object it carries:
        # a data import's reportIds is the import's, not the notification's report information)
        names, near = key_names(note), key_names(note, depth=2)
        lacking = [w for w in wanted if not any(w in name for name in (names if w == "state" else near))]
        check(not lacking, f"a {kind} notification carries no {meaning} (spec §6): no property named for "
                           f"{lacking} among {sorted(names)[:20]}")
        bad = list(checks.bad_date_times(note))
        check(not bad, f"date-times of a {kind} notification without seven fractional digits and a Z (spec §2, "
                       f"§9.3): {bad[:5]}")
