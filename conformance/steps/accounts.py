"""Steps of the account features: account types, accounts (forms built from accountFields), transactions and
their pages, data imports and reports (spec §1 capabilities 3-6, §2, §4.3, §7 rule 4).

The spec shows what accountFields carry (Type, isDeprecated, deprecationReason) but not the payload of
CreateAccount; the form is built here, in one place, from each field's `name` and `Type` (`form_for`), never
from a hard-coded account type.
"""

import base64
from datetime import datetime, timedelta, timezone

from pytest_bdd import given, parsers, then, when

from ..scene import check
from . import checks
from .checks import ids_of, items, reports_problems
from .users import create_user, user_id

DUMMIES = ("dummy", "dummy-auth", "dummy-report")
SAMPLE_VALUES = {"Text": "conformance", "Secret": "s3cret-value", "Number": 1,
                 "File": base64.b64encode(b"-----BEGIN CERTIFICATE-----\n").decode()}


def uses_oauth(account_type):
    """Spec §1: an account type uses OAuth2 when an accountFields element has Type Auth."""
    return any(f.get("Type") == "Auth" for f in account_type.get("accountFields", []))


def form_for(account_type):
    """Credentials for every required, non-deprecated field, by its Type (the form a client builds)."""
    values = {}
    for field in account_type.get("accountFields", []):
        kind = field.get("Type")
        if kind == "Auth" or field.get("isDeprecated") or not field.get("isRequired", True):
            continue
        values[field["name"]] = field.get("options", [None])[0] if kind == "Choice" else SAMPLE_VALUES.get(kind, "x")
    return values


def account_type(scene, type_id):
    cache = scene.account_types
    if type_id not in cache:
        reply = scene.must(scene.client.call("GetAccountType", token=scene.token, params={"id": type_id}),
                           f"read the account type {type_id}")
        cache[type_id] = reply.body
    return cache[type_id]


def create_account(scene, label, type_id, owner, by=None):
    """An account of `owner` (a user of the scenario); a partner token names the user, a user token acts for itself."""
    body = {"accountTypeId": type_id, "credentials": form_for(account_type(scene, type_id))}
    by = by or "I"
    if by not in scene.users:
        body["userId"] = user_id(scene, owner)
    reply = scene.call("CreateAccount", by, json=body)
    if reply.ok and isinstance(reply.body, dict) and reply.body.get("id"):
        scene.accounts[label] = reply.body
        if not scene.target.simulator:
            scene.undo.append(lambda: scene.client.call("DeleteAccount", token=scene.token,
                                                        params={"id": reply.body["id"]}))
    return reply


def account_id(scene, label):
    accounts = scene.accounts
    check(label in accounts, f"no account {label!r} was created in this scenario")
    return accounts[label]["id"]


# -- account types -----------------------------------------------------------------------------------------
@when("I list the account types")
def list_types(scene):
    scene.call("GetAccountTypes")


@when(parsers.parse('I read the account type "{type_id}"'))
def read_type(scene, type_id):
    scene.call("GetAccountType", params={"id": type_id})


@then(parsers.parse('the list has the account types "{first}", "{second}" and "{third}"'))
def list_has_types(scene, first, second, third):
    ids = {t.get("id") for t in items(scene.reply, "account types")}
    missing = {first, second, third} - ids
    check(not missing, f"account types missing from GetAccountTypes: {sorted(missing)}")


@then("every account type describes its fields, help, reports and provider status")
def every_type_described(scene):
    for entry in items(scene.reply, "account types"):
        check_type(entry)


@then("the account type describes its fields, help, reports and provider status")
def type_described(scene):
    check(scene.reply.ok, f"expected the account type, got {scene.reply.describe()}")
    check_type(scene.reply.body)


def check_type(entry):
    name = entry.get("id")
    for field in ("accountFields", "transactionFields", "helpUrls", "hasPspReports", "state", "errors", "warnings"):
        check(field in entry, f"the account type {name} has {field} (spec §2)")
    for field in entry["accountFields"]:
        for key in ("Type", "isDeprecated", "deprecationReason"):
            check(key in field, f"{name}: every accountFields element has {key} (spec §2)")
    for field in entry["transactionFields"]:
        for key in ("isDeprecated", "deprecationReason"):
            check(key in field, f"{name}: every transactionFields element has {key} (spec §2)")
    reports_problems(entry, f"the account type {name}")


@then(parsers.parse("the account type {uses} OAuth2"))
def type_oauth(scene, uses):
    check(uses_oauth(scene.reply.body) == (uses == "uses"),
          f"{scene.reply.body.get('id')}: an accountFields element of Type Auth means OAuth2 (spec §1)")


@then(parsers.parse("the account type {has} reports"))
def type_reports(scene, has):
    check(scene.reply.body.get("hasPspReports") is (has == "has"),
          f"hasPspReports of {scene.reply.body.get('id')}: {scene.reply.body.get('hasPspReports')!r}")


# -- accounts ----------------------------------------------------------------------------------------------
@given(parsers.parse('a user "{owner}" with a "{type_id}" account "{label}"'))
def given_user_account(scene, owner, type_id, label):
    if owner not in scene.users:
        scene.must(create_user(scene, owner), f"create the user {owner!r}")
    scene.must(create_account(scene, label, type_id, owner), f"create a {type_id} account")


@when(parsers.parse('I create a "{type_id}" account "{label}" for the user "{owner}" from its account type\'s fields'))
def i_create_account(scene, type_id, label, owner):
    create_account(scene, label, type_id, owner)


@when(parsers.parse('"{owner}" creates a "{type_id}" account "{label}" from its account type\'s fields'))
def user_creates_account(scene, owner, type_id, label):
    create_account(scene, label, type_id, owner, by=owner)


@when(parsers.parse('"{actor}" reads the account "{label}"'))
def actor_reads_account(scene, actor, label):
    scene.call("GetAccount", actor, params={"id": account_id(scene, label)})


@when(parsers.parse('I read the account "{label}"'))
def read_account(scene, label):
    scene.call("GetAccount", params={"id": account_id(scene, label)})


@when(parsers.parse('"{actor}" lists the accounts'))
def actor_lists_accounts(scene, actor):
    scene.call("GetAccounts", actor)


@when(parsers.parse('I rename the account "{label}" to "{name}"'))
def update_account(scene, label, name):
    scene.call("UpdateAccount", params={"id": account_id(scene, label)}, json={"name": name})


@when(parsers.parse('I delete the account "{label}"'))
def delete_account(scene, label):
    scene.call("DeleteAccount", params={"id": account_id(scene, label)})


@then("the response reports errors, warnings and warningDetails")
def errors_warnings_details(scene):
    check(scene.reply.ok, f"expected the account, got {scene.reply.describe()}")
    for field in ("errors", "warnings", "warningDetails"):
        check(isinstance(scene.reply.body.get(field), list),
              f"CreateAccount and UpdateAccount answer {field} (spec §4.3, §9 2.8.2), "
              f"got {scene.reply.body.get(field)!r}")


@then("the account shows its statistics")
def account_statistics(scene):
    check(scene.reply.ok, f"expected the account, got {scene.reply.describe()}")
    stats = scene.reply.body.get("statistics")
    check(isinstance(stats, dict) and {"count", "first", "last"} <= set(stats),
          f"GetAccount carries statistics with count, first, last (spec §1 capability 5), got {stats!r}")
    reports_problems(scene.reply.body, "an account")


@then(parsers.parse('the list shows the account "{label}"'))
def list_shows_account(scene, label):
    check(account_id(scene, label) in ids_of(scene.reply, "accounts"), f"the account {label!r} is not listed")


@then(parsers.parse('the list does not show the account "{label}"'))
def list_lacks_account(scene, label):
    check(account_id(scene, label) not in ids_of(scene.reply, "accounts"), f"the account {label!r} is listed")


# -- transactions ------------------------------------------------------------------------------------------
def transactions(reply):
    check(reply.ok, f"expected transactions, got {reply.describe()}")
    body = reply.body
    check(isinstance(body, dict) and "previousPageReference" in body and "nextPageReference" in body,
          "GetTransactions answers previousPageReference and nextPageReference (spec §4.3)")
    return items(reply, "transactions")


@when(parsers.parse('"{actor}" reads the transactions of the account "{label}"'))
def actor_reads_transactions(scene, actor, label):
    scene.call("GetTransactions", actor, params={"id": account_id(scene, label)})


@when(parsers.parse('I read the transactions of the account "{label}"'))
def read_all_transactions(scene, label):
    read_transactions(scene, label, "")


@when(parsers.parse('I read the transactions of the account "{label}" {flags}'))
def read_transactions(scene, label, flags):
    query = {}
    if "without deprecated fields" in flags:
        query["excludeDeprecatedFields"] = "true"
    if "without mapped fields" in flags:
        query["excludeMappedFields"] = "true"
    scene.call("GetTransactions", params={"id": account_id(scene, label)}, query=query or None)


@when(parsers.parse('I page through every transaction of the account "{label}"'))
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
    scene.paged = seen


@then("every transaction was seen once")
def seen_once(scene):
    ids = [t.get("id") for t in scene.paged]
    check(len(ids) == len(set(ids)), f"{len(ids) - len(set(ids))} transactions came twice across the pages")
    check(len(ids) > 0, "the account has transactions")


@then(parsers.parse('the account "{label}" counts as many transactions as the pages held'))
def count_matches(scene, label):
    reply = scene.must(scene.client.call("GetAccount", token=scene.token, params={"id": account_id(scene, label)}),
                       "read the account")
    count = reply.body["statistics"]["count"]
    check(count == len(scene.paged), f"statistics.count is {count}, the pages held {len(scene.paged)} (spec §1.5)")


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


@when(parsers.parse('I read the first transaction of the account "{label}" on its own'))
def read_one(scene, label):
    first = transactions(scene.call("GetTransactions", params={"id": account_id(scene, label)}))[0]
    scene.first_transaction = first
    scene.call("GetTransaction", params={"id": account_id(scene, label), "transactionId": first["id"]})


@then("it is the same transaction")
def same_transaction(scene):
    check(scene.reply.ok, f"expected the transaction, got {scene.reply.describe()}")
    for field in ("id", "createdAt", "orderNumber"):
        check(scene.reply.body.get(field) == scene.first_transaction.get(field), f"GetTransaction differs in {field}")


# -- data imports and reports ------------------------------------------------------------------------------
@when("I list the data imports")
def list_imports(scene):
    scene.call("GetDataImports")


def every_entry_reports(scene, what, missing):
    found = items(scene.reply, what)
    check(found, missing)
    for entry in found:
        reports_problems(entry, f"every one of the {what}")
    return found[0]


@then("every data import reports errors and warnings")
def imports_report(scene):
    scene.data_import = every_entry_reports(scene, "data imports", "creating an account started a data import")


@when("I read that data import")
def read_import(scene):
    scene.call("GetDataImport", params={"id": scene.data_import["id"]})


@then("it reports errors and warnings")
def one_reports(scene):
    check(scene.reply.ok, f"expected it, got {scene.reply.describe()}")
    reports_problems(scene.reply.body, scene.reply.operation)


@when(parsers.parse('I list the reports of the account "{label}"'))
def list_reports(scene, label):
    scene.call("GetReports", params={"id": account_id(scene, label)})


@then("every report reports errors and warnings")
def reports_report(scene):
    scene.report = every_entry_reports(scene, "reports", "a type with reports has reports once time has passed")


@when("I read that report")
def read_report(scene):
    scene.call("GetReport", params={"id": scene.report["id"]})


@then("some transaction links to a report")
def links_report(scene):
    linked = [t for t in transactions(scene.reply) if t.get("reportId")]
    check(linked, "transactions of a type with reports carry a reportId link (spec §2)")
    scene.linked_report = linked[0]["reportId"]


@when(parsers.parse('I search the transactions of the account "{label}" by that report'))
def search_by_report(scene, label):
    scene.call("GetTransactions", params={"id": account_id(scene, label)}, query={"reportId": scene.linked_report})


@then("every transaction found links to that report")
def all_linked(scene):
    rows = transactions(scene.reply)
    check(rows, "the search by reportId finds the transactions of that report")
    others = {t.get("reportId") for t in rows} - {scene.linked_report}
    check(not others, f"the reportId search returned transactions of other reports: {sorted(map(str, others))}")


@when(parsers.parse('I search the transactions of the account "{label}" created since the {n:d}th one'))
def search_since(scene, label, n):
    rows = transactions(scene.call("GetTransactions", params={"id": account_id(scene, label)}))
    scene.since = rows[n - 1]["createdAt"]
    scene.call("GetTransactions", params={"id": account_id(scene, label)}, query={"createdAt": scene.since})


@then("every transaction found was created at or after that time")
def all_since(scene):
    rows = transactions(scene.reply)
    earlier = [t["createdAt"] for t in rows if checks.seconds_between(scene.since, t["createdAt"]) < 0]
    check(rows and not earlier, f"transactions before {scene.since}: {earlier[:3]}")


@then("the first page has no previous page and a next page")
def first_page(scene):
    transactions(scene.reply)
    check(scene.reply.body["previousPageReference"] is None and scene.reply.body["nextPageReference"],
          "the first of several pages: previousPageReference null, nextPageReference set")


@when(parsers.parse('I ask the account "{label}" to re-read its transactions from {days:d} days ago'))
def refresh(scene, label, days):
    start = (datetime.now(timezone.utc) - timedelta(days=days)).strftime("%Y-%m-%dT00:00:00.0000000Z")
    if scene.target.simulator:      # the world clock, not this machine's
        now = scene.must(scene.client.call("SandboxGetClock", token=scene.token), "read the clock").body["now"]
        moment = datetime.fromtimestamp(checks.parse(now) / 1_000_000, timezone.utc) - timedelta(days=days)
        start = moment.strftime("%Y-%m-%dT00:00:00.0000000Z")
    scene.call("TriggerAccountRefresh", params={"id": account_id(scene, label)}, json={"startDate": start})
