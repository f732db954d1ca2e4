"""Steps of the transaction features: pages, one transaction, the exclude flags, searches and refresh (spec §1
capability 5, §2 transaction resource, §4.3 GetTransactions, GetTransaction, TriggerAccountRefresh)."""

from datetime import datetime, timedelta, timezone

from pytest_bdd import then, when

from .. import checks
from ..checks import items
from ..scene import check
from . import acting, phrase
from .accounts import account_id

EXCLUDE = {"deprecated": "excludeDeprecatedFields", "mapped": "excludeMappedFields"}


def transactions(reply):
    check(reply.ok, f"expected transactions, got {reply.describe()}")
    body = reply.body
    check(isinstance(body, dict) and "previousPageReference" in body and "nextPageReference" in body,
          "GetTransactions answers previousPageReference and nextPageReference (spec §4.3)")
    return items(reply, "transactions")


@when(acting('{actor} reads the transactions of the account "{label}"'))
def read_transactions(scene, actor, label):
    scene.call("GetTransactions", actor, params={"id": account_id(scene, label)})


@when(acting('{actor} reads the transactions of the account "{label}" without {kind} fields'))
def read_transactions_without(scene, actor, label, kind):
    check(kind in EXCLUDE, f"the exclude flags are for {' and '.join(EXCLUDE)} fields, not {kind!r}")
    scene.call("GetTransactions", actor, params={"id": account_id(scene, label)}, query={EXCLUDE[kind]: "true"})


@when(phrase('I page through every transaction of the account "{label}"'), target_fixture="paged")
def page_through(scene, label):
    seen, reference, pages = [], None, 0
    while True:
        reply = scene.call("GetTransactions", params={"id": account_id(scene, label)},
                           query={"pageReference": reference} if reference else None)
        seen += transactions(reply)
        pages += 1
        reference = reply.body.get("nextPageReference")
        if not reference or pages > 200:
            break
    return seen


@then("every transaction was seen once")
def seen_once(paged):
    ids = [t.get("id") for t in paged]
    check(len(ids) == len(set(ids)), f"{len(ids) - len(set(ids))} transactions came twice across the pages")
    check(len(ids) > 0, "the account has transactions")


@then(phrase('the account "{label}" counts as many transactions as the pages held'))
def count_matches(scene, paged, label):
    reply = scene.must(scene.client.call("GetAccount", token=scene.token, params={"id": account_id(scene, label)}),
                       "read the account")
    count = reply.body["statistics"]["count"]
    check(count == len(paged), f"statistics.count is {count}, the pages held {len(paged)} (spec §1.5)")


@then("the transactions carry their creation time, order number, booking text and fields")
def transactions_carry(scene):
    rows = transactions(scene.reply)
    check(rows, "the account has transactions")
    for row in rows:
        for field in ("createdAt", "orderNumber", "bookingText", "reportId", "fields"):
            check(field in row, f"a transaction has {field} (spec §2)")
        check(isinstance(row["fields"], list), "a transaction's fields are a list")


@then("no field of any transaction is deprecated")
def no_deprecated(scene):
    flagged = [f.get("name") for t in transactions(scene.reply) for f in t["fields"] if f.get("isDeprecated")]
    check(not flagged, f"excludeDeprecatedFields=true still lists deprecated fields: {sorted(set(flagged))}")


@then("some field of a transaction is deprecated")
def some_deprecated(scene):
    flagged = [f for t in transactions(scene.reply) for f in t["fields"] if f.get("isDeprecated")]
    check(flagged, "the dummy provider delivers a deprecated field when not excluded")


@then("no field of any transaction is mapped to a fixed transaction field")
def no_mapped(scene):
    mapped = [f.get("name") for t in transactions(scene.reply) for f in t["fields"]
              if f.get("isMapped") or f.get("mappedTo")]
    check(not mapped, f"excludeMappedFields=true still lists mapped fields: {sorted(set(mapped))}")


@when(phrase('I read the first transaction of the account "{label}" on its own'),
      target_fixture="first_transaction")
def read_one(scene, label):
    first = transactions(scene.call("GetTransactions", params={"id": account_id(scene, label)}))[0]
    scene.call("GetTransaction", params={"id": account_id(scene, label), "transactionId": first["id"]})
    return first


@then("it is the same transaction")
def same_transaction(scene, first_transaction):
    check(scene.reply.ok, f"expected the transaction, got {scene.reply.describe()}")
    for field in ("id", "createdAt", "orderNumber"):
        check(scene.reply.body.get(field) == first_transaction.get(field), f"GetTransaction differs in {field}")


@when(phrase('I search the transactions of the account "{label}" created since the {n:d}th one'),
      target_fixture="since")
def search_since(scene, label, n):
    rows = transactions(scene.call("GetTransactions", params={"id": account_id(scene, label)}))
    since = rows[n - 1]["createdAt"]
    scene.call("GetTransactions", params={"id": account_id(scene, label)}, query={"createdAt": since})
    return since


@then("every transaction found was created at or after that time")
def all_since(scene, since):
    rows = transactions(scene.reply)
    earlier = [t["createdAt"] for t in rows if checks.seconds_between(since, t["createdAt"]) < 0]
    check(rows and not earlier, f"transactions before {since}: {earlier[:3]}")


@then("the first page has no previous page and a next page")
def first_page(scene):
    transactions(scene.reply)
    check(scene.reply.body["previousPageReference"] is None and scene.reply.body["nextPageReference"],
          "the first of several pages: previousPageReference null, nextPageReference set")


@when(phrase('I ask the account "{label}" to re-read its transactions from {days:d} days ago'))
def refresh(scene, label, days):
    start = (datetime.now(timezone.utc) - timedelta(days=days)).strftime("%Y-%m-%dT00:00:00.0000000Z")
    if scene.target.simulator:      # the world clock, not this machine's
        now = scene.must(scene.client.call("SandboxGetClock", token=scene.token), "read the clock").body["now"]
        moment = datetime.fromtimestamp(checks.parse(now) / 1_000_000, timezone.utc) - timedelta(days=days)
        start = moment.strftime("%Y-%m-%dT00:00:00.0000000Z")
    scene.call("TriggerAccountRefresh", params={"id": account_id(scene, label)}, json={"startDate": start})
