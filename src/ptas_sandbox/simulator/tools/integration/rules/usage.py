"""Calls a client need not make: reads a webhook or a cache would spare, pages not followed, account types not
read."""

import json
import re

from ....timestamps import SECOND_US
from .base import HOOK_WRITES, Rule, finding, grouped, judges, listing, strings

# Reads a webhook makes needless: the operation, and the event kinds that say its answer changed. An account's
# `statistics` (in GetAccount and in every account GetAccounts lists) are what tell whether new transactions
# exist (spec §1 capability 5), and a TransactionsImported changes them.
POLLED = {"GetTransactions": ("TransactionsImported",),
          "GetAccounts": ("AccountCreated", "AccountUpdated", "AccountDeleted", "TransactionsImported"),
          "GetAccount": ("AccountUpdated", "AccountDeleted", "TransactionsImported"),
          "GetDataImports": ("TransactionsImported",)}
# The filters of a polled list, as the event fields they select (a change elsewhere does not change the list).
LIST_FILTERS = {"GetAccounts": {"userId": "user", "accountTypeId": "accountType"},
                "GetDataImports": {"accountId": "account", "userId": "user"}}
ACCOUNT_IN_PATH = re.compile(r"/accounts/([^/]+)")
# Reads of what does not change unless an event says so (the catalogue, the partner itself).
METADATA = {"GetAccountTypes": ("AccountTypeUpdated",), "GetAccountType": ("AccountTypeUpdated",),
            "GetOwnPartner": ()}
REREAD_SECONDS = 60             # world-clock seconds within which a read repeated with nothing changed is "at once"
METADATA_READS = 3              # reads of one metadata path with nothing changed between: more is needless
ACCOUNT_WRITES = ("CreateAccount", "ValidateAccountCredentials")
ACCOUNT_TYPE_READS = ("GetAccountTypes", "GetAccountType")


@judges(
    Rule("account-types-hardcoded", "warning", "Accounts created without reading the account types",
         "Read GetAccountTypes (or GetAccountType) and build the credential fields from it: account types "
         "and their fields must not be hard-coded (spec §1.4)."),
)
def account_types_hardcoded(data):
    """The account types are one catalogue for the whole integration: a read by any of the world's callers (a
    reseller's main partner reading them for its child partners' users) counts for every later account request.
    A read that was refused gave the client no fields to build from: only an answered one counts."""
    blind, refused = [], 0
    read = tried = False
    for call in data.api_calls:
        if call.operationId in ACCOUNT_TYPE_READS:
            answered = call.ok()
            read, tried = read or answered, tried or not answered
        if call.operationId in ACCOUNT_WRITES and not read:
            blind.append(call)
            refused += tried
    if blind:
        tried_note = f" ({refused} of them after reads that were refused, which give no fields)" if refused else ""
        yield finding("account-types-hardcoded", f"{len(blind)} account request(s) named account types and "
                      f"credential fields without an answered read of the account types before them{tried_note}.",
                      [c.evidence() for c in blind])


def hooks_of(data):
    """Every webhook of the world as history: id -> (partner, kinds, [(from, until), ...] while active), from the
    journal's webhook writes (deleted and paused ones included) and the current table. A webhook is told only
    its own partner's events (webhooks.deliveries.fan_out), so it excuses only that partner's polling."""
    hooks = {}
    for row in data.hooks:
        hooks[row["id"]] = {"partner": row["partner_id"], "kinds": set(json.loads(row["events"])),
                            "active": [row["created_at"]] if row["is_active"] else [], "closed": []}
    for call in data.all_calls:
        if not call.ok():
            continue
        if call.operationId in HOOK_WRITES:
            answer = call.answer()
            hook = hooks.setdefault(answer.get("id"), {"partner": call.partner, "kinds": set(), "active": [],
                                                       "closed": []})
            hook["kinds"] |= strings(answer.get("events"))
            if answer.get("isActive") and not hook["active"]:
                hook["active"].append(call.at)
            elif answer.get("isActive") is False and hook["active"]:
                hook["closed"].append((hook["active"].pop(), call.at))
        elif call.operationId == "DeleteWebhook":
            hook = hooks.get(call.named_id)
            if hook and hook["active"]:
                hook["closed"].append((hook["active"].pop(), call.at))
    return {i: (h["partner"], h["kinds"], h["closed"] + [(start, None) for start in h["active"]])
            for i, h in hooks.items() if i}


def subscribed(hooks, partner, kinds, at):
    return any(owner == partner and kinds & hook_kinds and any(start <= at and (end is None or at < end)
                                                                for start, end in spans)
               for owner, hook_kinds, spans in hooks.values())


def polled_scope(data, call):
    """What a polled read shows, as the event fields a change to it has: the account in its path (GetAccount,
    GetTransactions), or the filters of a list (GetAccounts, GetDataImports), a user token standing for a
    userId filter of its own user. The partner is the caller's in every case."""
    found = ACCOUNT_IN_PATH.search(call.path)
    if call.operationId in ("GetAccount", "GetTransactions") and found:
        return (("account", found.group(1)),)
    params = call.params()
    scope = {field: params[name][0] for name, field in LIST_FILTERS.get(call.operationId, {}).items()
             if params.get(name)}
    token = data.tokens.get(call.token_id) or {}
    if token.get("kind") == "user":
        scope["user"] = token["user_id"]
    return tuple(sorted(scope.items()))


@judges(
    Rule("polling-instead-of-webhook", "warning", "Resources polled while a webhook tells when they change",
         "A webhook for this resource exists: read it when a notification says it changed instead of polling."),
)
def polling(data):
    cases = polling_cases(data)
    if cases:
        path, during, changes = cases[0]
        yield finding("polling-instead-of-webhook", f"{len(cases)} resource(s) were polled while a webhook for "
                      f"them existed; e.g. {path} was read {len(during)} time(s) between {during[0].entry['at']} "
                      f"and {during[-1].entry['at']}, while {len(changes)} change(s) to it were notified.",
                      [c.evidence() for _, calls, _ in cases for c in calls],
                      count=sum(len(calls) for _, calls, _ in cases), paths=sorted({p for p, _, _ in cases}))


def polling_cases(data):
    """Per partner and resource (path and scope): reads while a webhook for its kinds existed, against the
    changes to that resource (not another account's, not another partner's)."""
    hooks = hooks_of(data)
    cases = []
    reads = [c for c in data.api_calls if c.operationId in POLLED and c.method == "GET" and c.ok()
             and not c.answer_faulted and "pageReference" not in c.params()]
    for (partner, path, scope), calls in grouped(reads, lambda c: (c.partner, c.path, polled_scope(data, c))).items():
        kinds = set(POLLED[calls[0].operationId])
        during = [c for c in calls if subscribed(hooks, partner, kinds, c.at)]
        if len(during) < 3:
            continue
        changes = [e for e in data.events if e["kind"] in kinds and e["partner"] == partner
                   and all(e[field] == value for field, value in scope)
                   and during[0].at <= e["created_at"] <= during[-1].at]
        if len(during) > len(changes) + 1:
            cases.append((path, during, changes))
    return cases


@judges(
    Rule("metadata-reread", "info", "Metadata read again and again although nothing changed",
         "Cache account types and the partner's own record; read them again after an AccountTypeUpdated "
         "notification or a 404, not before every use."),
)
def metadata_reread(data):
    cases = []
    reads = [c for c in data.api_calls if c.operationId in METADATA and c.ok() and not c.answer_faulted]
    for (_, path), calls in grouped(reads, lambda c: (c.partner, c.path)).items():
        kinds = set(METADATA[calls[0].operationId])
        changed = [e for e in data.events if e["kind"] in kinds and calls[0].at <= e["created_at"] <= calls[-1].at]
        if not changed and len(calls) > METADATA_READS:
            cases.append((path, calls))
    if cases:
        yield finding("metadata-reread", f"{len(cases)} metadata path(s) were read more than {METADATA_READS} "
                      f"times with nothing changed: {listing({p for p, _ in cases})}.",
                      [c.evidence() for _, calls in cases for c in calls], count=sum(len(c) for _, c in cases))


def records(call):
    """The records of a call's answer: the body itself, and the entries of its arrays (a list answer)."""
    body = call.answer()
    return [body] + [item for value in body.values() if isinstance(value, list)
                     for item in value if isinstance(item, dict)]


ACCOUNT_READS = ("CreateAccount", "GetAccount", "GetAccounts", "UpdateAccount")


@judges(
    Rule("reports-of-type-without-them", "info", "Reports read for accounts whose type has none",
         "Read an account's reports only where its account type says it has them (hasPspReports, spec §2): "
         "the others can only answer an empty list."),
)
def reports_of_type_without_them(data):
    """GetReports of an account whose type, as the world had read it (GetAccountTypes, GetAccountType: one
    catalogue, as for account-types-hardcoded), says hasPspReports false, the account's type known from an
    answer (CreateAccount, GetAccount(s), UpdateAccount): a read the client was told can only be empty. GetReport
    names a report, which such an account never had."""
    without, type_of, cases = set(), {}, []
    for call in data.all_calls:
        if call.operationId == "GetReports" and call.judged:
            found = ACCOUNT_IN_PATH.search(call.path)
            if found and type_of.get(found.group(1)) in without:
                cases.append(call)
        if not call.ok() or call.answer_faulted:
            continue
        if call.operationId in ACCOUNT_TYPE_READS:
            for record in records(call):
                if isinstance(record.get("id"), str) and isinstance(record.get("hasPspReports"), bool):
                    (without.discard if record["hasPspReports"] else without.add)(record["id"])
        elif call.operationId in ACCOUNT_READS:
            for record in records(call):
                if isinstance(record.get("id"), str) and isinstance(record.get("accountTypeId"), str):
                    type_of[record["id"]] = record["accountTypeId"]
    if cases:
        yield finding("reports-of-type-without-them", f"{len(cases)} report read(s) for accounts whose account "
                      f"type has no reports (hasPspReports false): e.g. {cases[0].operationId} {cases[0].path}.",
                      [c.evidence() for c in cases])


@judges(
    Rule("pagination-ignored", "warning", "Only the first page read while nextPageReference was present",
         "Follow nextPageReference (as pageReference) until it is null, or the rest of the data is never seen."),
)
def pagination(data):
    calls = data.api_calls
    ignored = [call for i, call in enumerate(calls) if call.entry["marks"].get("nextPageReference")
               and not any(later.path == call.path and "pageReference" in later.params() for later in calls[i + 1:])]
    if ignored:
        yield finding("pagination-ignored", f"{len(ignored)} page(s) with nextPageReference were never followed "
                      f"({listing({c.operationId for c in ignored})}).", [c.evidence() for c in ignored])


def changed_between(data, partner, before, call):
    """Whether an event of the partner may have come between two reads: after the first on the world clock, or at
    its very instant (a frozen clock) when a write or a control call (a clock advance) came between them: on a
    frozen clock nothing else makes an event."""
    moved = None
    for event in data.events:
        if event["partner"] != partner or not before.at <= event["created_at"] <= call.at:
            continue
        if event["created_at"] > before.at:
            return True
        if moved is None:
            moved = any(c.method != "GET" for c in data.all_calls if before.seq < c.seq < call.seq)
        if moved:
            return True
    return False


def listed_items(call):
    """The item paths a list answer showed: its path and the id of each object of its arrays."""
    paths = []
    for value in call.answer().values():
        if isinstance(value, list):
            paths += [f"{call.path.rstrip('/')}/{item['id']}" for item in value
                      if isinstance(item, dict) and isinstance(item.get("id"), str)]
    return paths


@judges(
    Rule("read-repeated", "info", "Reads repeated at once while nothing had changed",
         "Keep what a read answered until something can have changed it: a write of yours, or a notification "
         "(spec §6); read all pages once (spec §4.3) and work from that copy, not item by item. Each read spends "
         "the §8 budget (100 requests per 60 s) that the calls which matter need."),
)
def read_repeated(data):
    """A successful read repeating one whose answer the client held (same path, query and token, read in full,
    within REREAD_SECONDS of world time), or reading an item a list it held had just shown in full (the list's
    path, then the item's id), with no write of the partner and no event of its between. A read after a
    failed, cut or garbled one is not held; metadata reads and polling have rules of their own."""
    polled = {c.seq for _, calls, _ in polling_cases(data) for c in calls}
    wasted = []
    for calls in grouped(data.api_calls, lambda c: c.partner).values():
        held = {}
        for call in calls:
            if call.method != "GET":
                held.clear()            # a write (or an attempt) may change what any read answers
                continue
            key = (call.key, call.token_id)
            before = held.get(key) or held.get(("item", call.path, call.token_id))
            held[key] = call if call.ok() and not call.answer_faulted else None
            if held[key] is not None:
                for item in listed_items(call):
                    held[("item", item, call.token_id)] = call
            if before is None or call.operationId in METADATA or call.sent_while_running(before) \
                    or call.at - before.at > REREAD_SECONDS * SECOND_US or not call.ok() or call.answer_faulted:
                continue
            if call.seq in polled:
                continue
            if changed_between(data, call.partner, before, call):
                continue
            wasted.append(call)
    if wasted:
        yield finding("read-repeated", f"{len(wasted)} read(s) repeated one whose answer the client held, with "
                      f"nothing changed between ({listing({c.operationId for c in wasted})}).",
                      [c.evidence() for c in wasted])
