"""Transaction rules: which transactions a provider delivered, keyset pages over them, and their bodies drawn
from the provider on read.

An account's transactions are its schedule's n = 0, 1, 2, ... (providers/models.py: createdAt strictly increases
with n) and the delivered ones are always a prefix, n < `accounts.delivered`. So nothing per transaction is
stored: an import moves one counter, whatever it brings (a century of catch-up costs what an hour costs and
holds the store for as long), and a page is arithmetic on the schedule. A transaction's reportId is its day's
settlement report, if the account has one for that day (reports table). pageReference is an opaque, signed
cursor bound to the account and the search that made it.
"""

import base64
import hashlib
import hmac
import json
from typing import Any

from ..account_types import models as account_types
from ..context import Ctx
from ..problems import InvalidParameter, not_found
from ..providers import models as providers
from ..reports import models as reports
from ..rows import AccountRow, DataImportRow
from ..timestamps import DAY_US
from ..webhooks.signatures import same_text

# State files of versions that stored one row per delivered transaction: that table is redundant with
# `accounts.delivered` (always a prefix of the schedule) and only takes space.
SCHEMA = """
DROP TABLE IF EXISTS transactions;
"""
DEFAULT_PAGE = 100
Transaction = dict[str, Any]      # {"n", "created_at", "report"}: one delivered transaction, drawn from the schedule


def deliver(ctx: Ctx, account: AccountRow, run: DataImportRow) -> tuple[int, int]:
    """What an import run brings: the schedule's transactions before its cut-off not yet delivered (a Refresh
    re-reads from its start date: the same data again, counted as brought). Nothing is written here: the caller
    moves `accounts.delivered`.

    Returns (how many the run brought, how many the account has delivered now)."""
    when = providers.schedule_of(ctx.world.seed, account)
    hi = when.count_before(run["until_at"])
    lo = account["delivered"]
    if run["kind"] == "Refresh":     # re-read from the start date, and whatever never arrived before it
        lo = min(lo, when.first_at_or_after(run["from_at"]))
    if hi <= lo:
        return 0, account["delivered"]
    return hi - lo, max(hi, account["delivered"])


def _drawn(ctx: Ctx, account: AccountRow, lo: int, hi: int) -> list[Transaction]:
    """Transactions lo..hi-1 with their report days: one query for the reports of the days they span."""
    if hi <= lo:
        return []
    when = providers.schedule_of(ctx.world.seed, account)
    rows = [{"n": n, "created_at": t} for n, t in when.times(lo, hi)]
    days = reports.days_of(ctx, account, rows[0]["created_at"] // DAY_US, rows[-1]["created_at"] // DAY_US)
    for row in rows:
        day = row["created_at"] // DAY_US
        row["report"] = day if day in days else None
    return rows


class Cursor:
    """pageReference: base64url(JSON) plus an HMAC, so a reference is opaque and only valid for its search."""

    def __init__(self, ctx, account, search):
        self.key = hashlib.sha256(f"{ctx.signer.secret}/page".encode()).digest() if ctx.signer else b"page"
        self.scope = hashlib.sha256(json.dumps([account["id"], search], sort_keys=True).encode()).hexdigest()[:16]

    def _sign(self, payload):
        return hmac.new(self.key, payload.encode(), hashlib.sha256).hexdigest()[:24]

    def make(self, direction, at):
        payload = base64.urlsafe_b64encode(json.dumps([self.scope, direction, at]).encode()).decode().rstrip("=")
        return f"{payload}.{self._sign(payload)}"

    def read(self, reference):
        payload, _, signature = reference.partition(".")
        if not signature or not same_text(signature, self._sign(payload)):
            raise InvalidParameter("`pageReference` is not a page reference of this account and search; start "
                                   "again without it.", parameter="pageReference")
        scope, direction, at = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        if scope != self.scope:
            raise InvalidParameter("`pageReference` belongs to another account or search.",
                                   parameter="pageReference")
        return direction, at


def page(ctx, account, *, created_at=None, report_id=None, reference=None, size=DEFAULT_PAGE, newest=False):
    """One page of the account's delivered transactions in createdAt order (`newest`: the newest first), with
    references to its neighbours. The search is a range [lo, hi) of n: createdAt from a time, a report's day (if
    the report is the account's). A reference holds the direction and the createdAt it leads on from, bound to the
    search and the order (one of the other order is refused as one of another search is)."""
    cursor = Cursor(ctx, account, [created_at, report_id] + (["newest"] if newest else []))
    when = providers.schedule_of(ctx.world.seed, account)
    lo, hi = 0, account["delivered"]
    if created_at is not None:
        lo = max(lo, when.first_at_or_after(created_at))
    if report_id is not None:
        report = reports.get(ctx, report_id)
        if report is None or report["account_seq"] != account["seq"]:
            return {"rows": [], "previousPageReference": None, "nextPageReference": None}
        lo = max(lo, when.first_at_or_after(report["day"] * DAY_US))
        hi = min(hi, when.first_at_or_after((report["day"] + 1) * DAY_US))
    direction, at = cursor.read(reference) if reference else ("next", None)
    # Oldest first, "next" leads to later transactions; newest first, to earlier ones: a page either ends just
    # before the transaction at `at` or starts just after it (the first page: the range's start, or its end).
    before = (direction == "prev") != newest
    if at is None:
        start, end = (max(lo, hi - size), hi) if newest else (lo, min(hi, lo + size))
    elif before:
        end = min(hi, when.first_at_or_after(at))
        start = max(lo, end - size)
    else:
        start = max(lo, when.first_at_or_after(at + 1))
        end = min(hi, start + size)
    rows = _drawn(ctx, account, start, end)         # oldest first
    earlier = cursor.make("next" if newest else "prev", rows[0]["created_at"]) if rows and start > lo else None
    later = cursor.make("prev" if newest else "next", rows[-1]["created_at"]) if rows and end < hi else None
    if newest:
        return {"rows": rows[::-1], "previousPageReference": later, "nextPageReference": earlier}
    return {"rows": rows, "previousPageReference": earlier, "nextPageReference": later}


def get_owned(ctx: Ctx, account: AccountRow, transaction_id: str) -> Transaction:
    """One delivered transaction of the account by id; an id of another account, or not yet delivered, is 404."""
    n = providers.index_of(account["id"], transaction_id)
    if n is None or n >= account["delivered"]:
        raise not_found("transaction", transaction_id)
    return _drawn(ctx, account, n, n + 1)[0]


def render(ctx, account, rows, exclude_deprecated=False, exclude_mapped=False):
    """Transaction bodies for rows, without deprecated or mapped fields when asked (spec §4.3)."""
    entry = account_types.catalogue()[account["type_id"]]
    when = providers.schedule_of(ctx.world.seed, account)
    bodies = []
    for row in rows:
        report = reports.report_id(account["id"], row["report"]) if row["report"] is not None else None
        body = providers.transaction(account, entry, when, row["n"], report)
        body["fields"] = [f for f in body["fields"] if not (exclude_deprecated and f["isDeprecated"])
                          and not (exclude_mapped and f["isMapped"])]
        bodies.append(body)
    return bodies
