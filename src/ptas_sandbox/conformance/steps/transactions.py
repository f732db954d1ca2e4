"""Steps of the transaction features: pages, one transaction, the exclude flags, searches and refresh (spec §1
capability 5, §2 transaction resource, §4.3 GetTransactions, GetTransaction, TriggerAccountRefresh)."""

from datetime import datetime, timedelta, timezone

import pytest
from pytest_bdd import then, when

from .. import checks
from ..bodies import identifier
from ..checks import items
from ..scene import Precondition, check
from ..unchecked import left_out_by_run
from . import acting, phrase
from .account_types import account_type
from .accounts import account_id, await_data

EXCLUDE = {"deprecated": "excludeDeprecatedFields", "mapped": "excludeMappedFields"}
REMOVED_FIELDS = {"bookingDate", "valueDate"}     # spec §9 2.5.0


def ids(scene, rows):
    """The transactions' ids, under the target's name for them (`id` is not shown by the spec)."""
    return [identifier(t, *scene.target.operations.hints("GetTransaction")) for t in rows]


def transactions(reply):
    check(reply.ok, f"expected transactions, got {reply.describe()}")
    body = reply.body
    check(isinstance(body, dict) and "previousPageReference" in body and "nextPageReference" in body,
          "GetTransactions answers previousPageReference and nextPageReference (spec §4.3)")
    return items(reply, "transactions")


def read_page(scene, label, query=None, response=True):
    """A page of the account's transactions as I read it: on a deployment the same read (same account, same query)
    is made once and shared by the scenarios that only read it, until the run next waits (Scene.pooled). With
    `response` it becomes the response the Then steps read, as a When step's call does."""
    account = account_id(scene, label)
    key = ("GetTransactions", str(account), tuple(sorted((query or {}).items())))
    reply = scene.pooled(key, lambda: scene.client.call("GetTransactions", token=scene.token,
                                                        params={"id": account}, query=query or None))
    if response:
        scene.reply = reply
        scene.replies.append(reply)
    return reply


@when(acting('{actor} reads the transactions of the account "{label}"'))
def read_transactions(scene, actor, label):
    if actor == "I":
        read_page(scene, label)
    else:
        scene.call("GetTransactions", actor, params={"id": account_id(scene, label)})


@when(acting('{actor} reads the transactions of the account "{label}" without {kind} fields'))
def read_transactions_without(scene, actor, label, kind):
    check(kind in EXCLUDE, f"the exclude flags are for {' and '.join(EXCLUDE)} fields, not {kind!r}")
    if actor == "I":
        read_page(scene, label, {EXCLUDE[kind]: "true"})
    else:
        scene.call("GetTransactions", actor, params={"id": account_id(scene, label)}, query={EXCLUDE[kind]: "true"})


@when(phrase('I page through every transaction of the account "{label}"'), target_fixture="paged")
def page_through(scene, label):
    return [row for page in pages_of(scene, label) for row in transactions(page)]


def pages_of(scene, label, flags=None):
    """Every page of the account's transactions, following nextPageReference (`flags` sent on each page)."""
    replies, reference = [], None
    while True:
        query = {**(flags or {}), **({"pageReference": reference} if reference else {})}
        reply = read_page(scene, label, query)
        transactions(reply)
        replies.append(reply)
        reference = reply.body.get("nextPageReference")
        if not reference or len(replies) > 200:
            return replies


@then("every transaction was seen once")
def seen_once(scene, paged):
    found = ids(scene, paged)
    check(len(found) == len(set(found)), f"{len(found) - len(set(found))} transactions came twice across the pages")
    check(len(found) > 0, "the account has transactions")


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


@when(acting('{actor} reads the first transaction of the account "{label}" on its own'),
      target_fixture="first_transaction")
def read_one(scene, actor, label):
    """The first transaction of the list I read, then read on its own by `actor` (me, a token of mine, a user)."""
    first = transactions(read_page(scene, label, response=False))[0]
    scene.call("GetTransaction", actor, params={"id": account_id(scene, label),
                                                "transactionId": scene.id_of(first, "GetTransaction")})
    return first


@when(acting('{actor} reads the transactions of the account "{label}" in the deprecated form'))
def read_deprecated(scene, actor, label):
    """GetTransactionsDeprecated (spec §4.3: the old form, its path not shown: the target's document names it)."""
    scene.call("GetTransactionsDeprecated", actor, params={"id": account_id(scene, label)})


@then("no transaction field is one spec §9 removed")
def no_removed_fields(scene):
    """Spec §9 2.5.0: bookingDate and valueDate were removed from the transaction fields."""
    named = {str(field.get("name")) for row in transactions(scene.reply) for field in row.get("fields") or []
             if isinstance(field, dict)}
    removed = sorted(named & REMOVED_FIELDS)
    check(not removed, f"transactions still list the fields {removed} (spec §9 2.5.0: removed)")


@then("it is the same transaction")
def same_transaction(scene, first_transaction):
    check(scene.reply.ok, f"expected the transaction, got {scene.reply.describe()}")
    for field in ("createdAt", "orderNumber"):
        check(scene.reply.body.get(field) == first_transaction.get(field), f"GetTransaction differs in {field}")
    check(ids(scene, [scene.reply.body]) == ids(scene, [first_transaction]),
          "GetTransaction answers the transaction asked for")


@when(phrase('I search the transactions of the account "{label}" created since the {n:d}th one'),
      target_fixture="since")
def search_since(scene, label, n):
    rows = transactions(read_page(scene, label))
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
    scene.call("TriggerAccountRefresh", params={"id": account_id(scene, label)},
               json=scene.body("TriggerAccountRefresh", {"startDate": start}))


# -- deployment checks of issue 9 item 5: what the spec states, keyed on what the target itself says ------------
MAX_PAGES = 200


@then("every transaction carries its TransactionType")
def carries_transaction_type(scene):
    """Spec §9 2.12.1: TransactionType in GetTransactions and GetTransaction responses (its shape is not shown)."""
    rows = transactions(scene.reply)
    check(rows, "the account has transactions")
    lacking = [t for t in rows if not any(k.lower() == "transactiontype" for k in t)]
    check(not lacking, f"{len(lacking)} of {len(rows)} transactions carry no TransactionType (spec §9 2.12.1)")


@then("the last page was reached and has no next page")
def last_page_reached(scene):
    pages = [r for r in scene.replies if r.operation == "GetTransactions"]
    check(len(pages) < MAX_PAGES + 1, f"still a nextPageReference after {len(pages)} pages: the last page is "
          "never reached (spec §4.3)")
    last = pages[-1]
    check(last.ok and isinstance(last.body, dict) and not last.body.get("nextPageReference"),
          f"the last page has no nextPageReference, got {last.describe()}")


@when(phrase('I read the first two pages of the transactions of the account "{label}"'), target_fixture="two_pages")
def first_two_pages(scene, label):
    first = read_page(scene, label)
    transactions(first)
    reference = first.body.get("nextPageReference")
    if not reference:
        pytest.skip("the account's transactions fit on one page: no second page to read")
    second = read_page(scene, label, {"pageReference": reference})
    return first, second


@then("the second page's previousPageReference leads back to the first page")
def previous_leads_back(scene, two_pages):
    # What the first page's previousPageReference holds is not shown (spec §4.3 says only that the response
    # carries it): null, "" or a reference of the target's own are all faithful, so it is not asserted.
    first, second = two_pages
    second_ids = ids(scene, transactions(second))
    check(second_ids and not set(second_ids) & set(ids(scene, transactions(first))),
          "the second page repeats the first")
    previous = second.body.get("previousPageReference")
    check(previous, "the second page carries a previousPageReference (spec §4.3)")
    back = scene.client.request("GET", first.path, token=scene.token, query={"pageReference": previous},
                                operation="GetTransactions")
    scene.reply = back
    check(ids(scene, transactions(back)) == ids(scene, transactions(first)),
          "following previousPageReference from the second page gives the first page again")


@when(phrase('I search the transactions of the account "{label}" created two days before them all and two days '
             'after'), target_fixture="searches")
def search_around(scene, label):
    every = page_through(scene, label)
    moments = sorted(checks.parse(t["createdAt"]) for t in every if t.get("createdAt"))
    if not moments:
        pytest.skip("the account's transactions carry no createdAt to search around")
    first = transactions(read_page(scene, label))

    def search(at):
        shown = datetime.fromtimestamp(at / 1_000_000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.0000000Z")
        return scene.call("GetTransactions", params={"id": account_id(scene, label)}, query={"createdAt": shown})
    two_days = 2 * 86_400_000_000
    return {"every": every, "first page": first,
            "before": search(moments[0] - two_days), "after": search(moments[-1] + two_days)}


@then("the two searches do not both find every transaction, and find only the account's")
def searches_narrow(scene, searches):
    def keys(rows):     # the id, else what the spec shows of every transaction (§2)
        return [ids(scene, [t])[0] or (t.get("createdAt"), t.get("orderNumber"), t.get("bookingText")) for t in rows]
    found = {}
    for side in ("before", "after"):
        reply = searches[side]
        if reply.status == 400:         # a target may refuse a search outside its data: it found less than all
            checks.problem(reply, 400)
            continue
        found[side] = keys(transactions(reply))
        unknown = set(found[side]) - set(keys(searches["every"]))
        check(not unknown, f"the createdAt search {side} every transaction found transactions the account does not "
                           f"list: {sorted(map(str, unknown))[:3]}")
    everything = keys(searches["first page"])
    check(found.get("before") != everything or found.get("after") != everything,
          "a createdAt search two days before every transaction and one two days after them both found every "
          "transaction: the search is ignored")


def marked(scene, label, kind, rows):
    """Names of the transaction fields the target marks `kind` (deprecated: its account type's transactionFields
    with isDeprecated, spec §2, or a field flagged so; mapped: a field or transactionFields entry that says what
    fixed transaction field it maps to). Never a list of names the harness knows in advance."""
    names = set()
    entries = []
    account = scene.accounts.get(label) or {}
    type_id = account.get("accountTypeId")
    if type_id:
        try:
            detail = account_type(scene, type_id)
        except Precondition:
            detail = None
        if isinstance(detail, dict):
            entries = [e for e in detail.get("transactionFields") or [] if isinstance(e, dict)]
    fields = [f for t in rows for f in t.get("fields") or [] if isinstance(f, dict)]
    for entry in entries + fields:
        if kind == "deprecated" and entry.get("isDeprecated") is True:
            names.add(entry.get("name"))
        if kind == "mapped" and (entry.get("isMapped") is True or entry.get("mappedTo")):
            names.add(entry.get("name"))
    names.discard(None)
    return names


def baseline(scene, label, kind):
    """The transactions as they are with nothing excluded: read with the flag false, said outright, since the spec
    leaves its default open (a deployment may exclude mapped fields unless asked not to)."""
    return transactions(read_page(scene, label, {EXCLUDE[kind]: "false"}, response=False))


def without_marked(scene, label, kind, found):
    """Check `found` (rows read with the exclude flag) against what a read with the flag false shows marked."""
    plain = baseline(scene, label, kind)
    names = marked(scene, label, kind, plain)
    if not names:
        pytest.skip(f"the target marks no transaction field {kind}: nothing for the flag to remove")
    listed = sorted({f.get("name") for t in found for f in t.get("fields") or []
                     if isinstance(f, dict) and f.get("name") in names})
    check(not listed, f"{EXCLUDE[kind]}=true still lists the {kind} field(s) {listed} (spec §4.3)")


@when(phrase('I page through every transaction of the account "{label}" without {kind} fields'),
      target_fixture="flagged_pages")
def page_through_without(scene, label, kind):
    """The same flag on every page's request, next to its pageReference (spec §4.3 names both parameters)."""
    check(kind in EXCLUDE, f"the exclude flags are for {' and '.join(EXCLUDE)} fields, not {kind!r}")
    return pages_of(scene, label, {EXCLUDE[kind]: "true"})


@then(phrase("no transaction of any page lists a field the target marks {kind}"))
def none_marked_on_any_page(scene, flagged_pages, kind):
    rows = [row for page in flagged_pages for row in transactions(page)]
    check(rows, "the account has transactions")
    label = next(iter(scene.accounts))
    without_marked(scene, label, kind, rows)
    if len(flagged_pages) < 2:
        pytest.skip("the account's transactions fit on one page: the flag was checked on that page only")


@then(phrase("no transaction lists a field the target marks {kind}"))
def none_marked(scene, kind):
    label = next(iter(scene.accounts))
    without_marked(scene, label, kind, transactions(scene.reply))


@when(phrase('I read a transaction of the account "{label}" with a {kind} field on its own without {kind2} fields'),
      target_fixture="excluded_from")
def read_one_without(scene, label, kind, kind2):
    check(kind in EXCLUDE, f"the exclude flags are for {' and '.join(EXCLUDE)} fields, not {kind!r}")
    rows = baseline(scene, label, kind)
    names = marked(scene, label, kind, rows)
    chosen = next((t for t in rows if any(f.get("name") in names for f in t.get("fields") or [])), None)
    if chosen is None:
        pytest.skip(f"no transaction of the account lists a field the target marks {kind}")
    scene.call("GetTransaction", params={"id": account_id(scene, label),
                                         "transactionId": scene.id_of(chosen, "GetTransaction")},
               query={EXCLUDE[kind]: "true"})
    return label, chosen, EXCLUDE[kind]


@then(phrase("the transaction lists no field the target marks {kind}"))
def one_without(scene, excluded_from, kind):
    check(scene.reply.ok and isinstance(scene.reply.body, dict), f"expected the transaction, got "
          f"{scene.reply.describe()}")
    without_marked(scene, excluded_from[0], kind, [scene.reply.body])


@then("it keeps the order number and booking text the list shows")
def one_keeps_fixed(scene, excluded_from):
    _, chosen, flag = excluded_from
    check(scene.reply.ok and isinstance(scene.reply.body, dict), f"expected the transaction, got "
          f"{scene.reply.describe()}")
    fixed_fields_kept([(scene.id_of(chosen, "GetTransaction"), chosen, scene.reply.body)], flag, "GetTransaction")


POLL_SECONDS = 10


def statistics_count(scene, account):
    reply = scene.client.call("GetAccount", token=scene.token, params={"id": account})
    statistics = reply.body.get("statistics") if reply.ok and isinstance(reply.body, dict) else None
    count = statistics.get("count") if isinstance(statistics, dict) else None
    return count if isinstance(count, int) else 0


@when(phrase('the account "{label}" has received its transactions'))
def received_transactions(scene, label):
    """Spec §1 capability 5: transactions arrive "from a few seconds up to hours" after CreateAccount. A simulator
    moves its clock a minute; on a deployment the run reuses an account that holds transactions, else reads the
    account's statistics every 10 s until its count is above zero and holds still (accounts.await_data).

    The statistics are one signal the target may get wrong: while they count none, the account's transactions
    are read too, and statistics that count none of the transactions GetTransactions lists fail the scenario
    (and every later one that needs the data) instead of leaving it "not checked"."""
    if scene.target.simulator:
        scene.time_passes(60)
        return
    counts = []
    type_id, _ = scene.account_kinds.get(label, (None, None))

    def counted(account):
        count = statistics_count(scene, account)
        if count == 0:
            listed = first_page_count(scene, account)
            if listed:
                message = (f"GetTransactions lists {listed} transactions of a {type_id} account whose statistics "
                           f"count 0 (spec §1 capability 5: count is the number of transactions)")
                scene.target.held.contradicted[(type_id, "transactions")] = message
                check(False, message)
        return count

    def settled(account):
        counts.append(counted(account))
        return counts[-1] > 0 and counts[-2:] == [counts[-1]] * 2

    await_data(scene, label, "transactions", settled, lambda waited: POLL_SECONDS,
               held_has=lambda account: counted(account) > 0)


def first_page_count(scene, account):
    """How many transactions the first page of the account's GetTransactions lists (0 when it lists none)."""
    reply = scene.client.call("GetTransactions", token=scene.token, params={"id": account})
    rows = checks.entries(reply.body, "transactions") if reply.ok else None
    return len(rows) if isinstance(rows, list) else 0


FIRST_IMPORT_WAIT = 300     # seconds of the run's waiting budget a first import may take before it is left out


def first_import_done(scene, label):
    """Waits until the account's first import has brought transactions, so what that import causes can be judged
    (spec §1 capability 5: "from a few seconds up to hours"): a simulator moves its clock a minute; a deployment
    is polled within the run's --max-wait budget, FIRST_IMPORT_WAIT at most. Transactions that did not come leave
    the scenario out, saying why."""
    account, waited = account_id(scene, label), 0.0
    if scene.target.simulator:
        scene.time_passes(60)
    while not first_page_count(scene, account):
        budget = scene.target.budget
        if scene.target.simulator or waited >= FIRST_IMPORT_WAIT or budget.left <= 0:
            left_out_by_run(f"the account {label!r} showed no transactions after {waited:g} s of waiting, and a "
                            "first import may take hours (spec §1 capability 5; check with: --max-wait "
                            f"{int(budget.total + FIRST_IMPORT_WAIT)}, or a deployment whose first import of this "
                            "account type ends within a few minutes)")
        waited += budget.wait(scene.target, POLL_SECONDS)


@then(phrase('the account "{label}" statistics give the dates of its first and last transaction'))
def statistics_first_last(scene, paged, label):
    """Spec §1 capability 5: statistics.first is the date of the first transaction, last of the last one; a
    transaction's date is its createdAt (spec §2), compared by the day so any rendering of a date holds."""
    check(paged, "the account has transactions")
    reply = scene.must(scene.client.call("GetAccount", token=scene.token, params={"id": account_id(scene, label)}),
                       "read the account")
    statistics = reply.body.get("statistics") if isinstance(reply.body, dict) else None
    check(isinstance(statistics, dict), f"GetAccount carries statistics, got {statistics!r}")
    moments = sorted((t["createdAt"] for t in paged if isinstance(t.get("createdAt"), str)), key=checks.parse)
    check(moments, "the transactions carry createdAt")
    for key, expected in (("first", moments[0]), ("last", moments[-1])):
        given = statistics.get(key)
        check(isinstance(given, str) and given[:10] == expected[:10],
              f"statistics.{key} is the date of the {key} transaction ({expected[:10]}), got {given!r} "
              "(spec §1 capability 5)")


@then("some transaction carries Shopper information")
def carries_shopper(scene):
    """Spec §2 (2.7.0): transactions have Shopper information (its shape is not shown; a transaction without a
    shopper may carry none, so some transaction of the account carries it)."""
    rows = transactions(scene.reply)
    check(rows, "the account has transactions")
    carrying = [t for t in rows if any("shopper" in k.lower() and v not in (None, {}, "") for k, v in t.items())]
    check(carrying, f"none of {len(rows)} transactions carries Shopper information (spec §2, 2.7.0)")


@when(phrase('I read the transactions of the account "{label}" with the {kind} flag unset, false and true'),
      target_fixture="three_reads")
def read_three_ways(scene, label, kind):
    check(kind in EXCLUDE, f"the exclude flags are for {' and '.join(EXCLUDE)} fields, not {kind!r}")
    reads = {}
    for value in (None, "false", "true"):
        reply = read_page(scene, label, {EXCLUDE[kind]: value} if value else None)
        reads[value] = transactions(reply)
    return label, reads, kind


# Spec §2: a transaction has orderNumber and bookingText; §4.3 names them as the fixed transaction fields the
# mapped fields map to. The exclude flags remove entries of the list of fields, never these.
FIXED_FIELDS = ("orderNumber", "bookingText")
ABSENT = object()


def by_id(scene, rows):
    """Each transaction by its id (those without one left out)."""
    return {key: row for key, row in zip(ids(scene, rows), rows) if key is not None}


def same_transactions(scene, plain, flagged):
    """(id, plain row, flagged row) of each transaction both reads list, matched by id."""
    read = by_id(scene, flagged)
    return [(key, row, read[key]) for key, row in by_id(scene, plain).items() if key in read]


def fixed_fields_kept(pairs, flag, operation="GetTransactions"):
    """A parameter that removes fields removes only what it names: each transaction read with `flag`=true keeps
    the fixed fields the read with it false shows (`pairs`: id, that row, the flagged row), with the same values;
    a target whose transactions lack them is judged on nothing."""
    lost = []
    for key, row, other in pairs:
        for name in FIXED_FIELDS:
            if name in row and other.get(name, ABSENT) != row[name]:
                shown = "absent" if other.get(name, ABSENT) is ABSENT else repr(other[name])[:60]
                lost.append(f"{name} of {key}: {repr(row[name])[:60]} with the flag false, {shown} with it true")
    check(not lost, f"{operation} with {flag}=true changed the transaction's fixed fields: {lost[:3]} (spec §4.3: "
                    "the exclude flags remove entries of the list of fields, not the orderNumber and bookingText a "
                    "transaction has, §2)")


def field_names(scene, rows):
    """Each transaction's id -> the names of its fields (unnamed fields by their position)."""
    return {key: {f.get("name", index) if isinstance(f, dict) else index
                  for index, f in enumerate(row.get("fields") or [])}
            for key, row in by_id(scene, rows).items()}


@then(phrase("the false read lists every field of the unset one, and the true read every field but those marked "
             "{kind}"))
def flag_both_sides(scene, three_reads, kind):
    label, reads, _ = three_reads
    plain, false, true = (field_names(scene, reads[v]) for v in (None, "false", "true"))
    check(plain, "the account has transactions")
    flag = EXCLUDE[kind]
    lost = {k: sorted(map(str, plain[k] - false[k])) for k in plain.keys() & false.keys() if plain[k] - false[k]}
    check(not lost, f"{flag}=false removed fields the unflagged read lists: {dict(list(lost.items())[:3])} "
                    "(spec §4.3: only true removes them)")
    names = marked(scene, label, kind, reads[None])
    dropped = {k: sorted(map(str, (plain[k] - true[k]) - names)) for k in plain.keys() & true.keys()
               if (plain[k] - true[k]) - names}
    check(not dropped, f"{flag}=true removed fields the target does not mark {kind}: "
                       f"{dict(list(dropped.items())[:3])} (spec §4.3: it removes the {kind} fields)")
    check(plain.keys() & false.keys() and plain.keys() & true.keys(),
          f"the reads with {flag} list other transactions than the unflagged read")


NAMED_CLASSIFICATIONS = ("Donation", "Tax", "Adjustment")


def classification_of(row):
    """The transaction's PaymentClassification as a string (under a property named for it; a nested object's
    name or value), or None."""
    for key, value in row.items():
        if "classification" in key.lower():
            if isinstance(value, dict):
                value = next((value[k] for k in ("name", "value", "code") if isinstance(value.get(k), str)), None)
            return value if isinstance(value, str) else None
    return None


def documented_classifications(scene):
    """The values the target's document allows for a transaction's classification, or None when it lists none."""
    try:
        schema = scene.target.operations.response_schema("GetTransaction")
    except Exception:       # noqa: BLE001 - a document without the operation lists nothing
        return None
    properties = (schema or {}).get("properties") or {}
    for key, node in properties.items():
        if "classification" in key.lower() and isinstance(node, dict):
            values = node.get("enum") or ((node.get("properties") or {}).get("name") or {}).get("enum")
            return set(values) if values else None
    return None


@then("every transaction's classification is spelled as the spec and the target's document name it")
def classifications_named(scene, paged):
    check(paged, "the account has transactions")
    values = [classification_of(t) for t in paged]
    check(any(values), f"none of {len(paged)} transactions carries a classification (spec §2)")
    seen = {v for v in values if v}
    misspelt = sorted(v for v in seen for n in NAMED_CLASSIFICATIONS if v != n and
                      (n.lower() in v.lower() or (len(v) > 2 and v.lower() in n.lower())))
    check(not misspelt, f"classification values {misspelt} stand for a value the spec names otherwise: "
                        f"{', '.join(NAMED_CLASSIFICATIONS)} (spec §2 PaymentClassification)")
    allowed = documented_classifications(scene)
    if allowed is not None:
        missing = [n for n in NAMED_CLASSIFICATIONS if n not in allowed]
        check(not missing, f"the target's document lists the classifications {sorted(allowed)}, without "
                           f"{missing} (spec §2 names them)")
        outside = sorted(seen - allowed)
        check(not outside, f"transactions carry classifications {outside} the target's document does not list "
                           f"({sorted(allowed)})")


@then("it carries its TransactionType")
def one_carries_transaction_type(scene):
    """Spec §9 2.12.1: TransactionType in GetTransactions and GetTransaction responses: the single read too."""
    check(scene.reply.ok and isinstance(scene.reply.body, dict), f"expected the transaction, got "
          f"{scene.reply.describe()}")
    check(any(k.lower() == "transactiontype" for k in scene.reply.body),
          "GetTransaction answers a transaction without its TransactionType (spec §9 2.12.1)")


@then("the true read keeps each transaction's order number and booking text")
def true_read_keeps_fixed(scene, three_reads):
    """Against the read with the flag false, said outright (as `baseline`): the unset one may exclude already."""
    _, reads, kind = three_reads
    fixed_fields_kept(same_transactions(scene, reads["false"], reads["true"]), EXCLUDE[kind])
