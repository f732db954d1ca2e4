"""Transaction rules: which transactions a provider delivered (rows), keyset pages over them, and their bodies
drawn from the provider on read. No Flask here.

A row is (account, createdAt, n): within an account createdAt strictly increases with n, so the primary key is
the keyset index of every page (ordered by createdAt, then id, which sorts like n) and no page ever uses OFFSET.
pageReference is an opaque, signed cursor bound to the account and the search that made it.
"""

import base64
import hashlib
import hmac
import json

from ..account_types import models as account_types
from ..context import Ctx
from ..problems import InvalidParameter, not_found
from ..providers import models as providers
from ..reports import models as reports
from ..rows import AccountRow, DataImportRow, TransactionRow
from ..timestamps import DAY_US

SCHEMA = """
CREATE TABLE IF NOT EXISTS transactions (
    account INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    n INTEGER NOT NULL,
    world TEXT NOT NULL,
    report INTEGER,
    PRIMARY KEY (account, created_at)
) WITHOUT ROWID;
"""
DEFAULT_PAGE = 100


def deliver(ctx: Ctx, account: AccountRow, run: DataImportRow) -> tuple[int, int]:
    """Materialize the transactions an import run brings (n in [lo, hi)): one executemany from a generator, so
    a million rows go in seconds and in little memory. A refresh re-reads rows already there (same data).

    Returns (how many the run brought, how many the account has delivered now)."""
    when = providers.schedule_of(ctx.world.seed, account)
    hi = when.count_before(run["until_at"])
    lo = account["delivered"]
    if run["kind"] == "Refresh":     # re-read from the start date, and whatever never arrived before it
        lo = min(lo, when.first_at_or_after(run["from_at"]))
    if hi <= lo:
        return 0, account["delivered"]
    seq, world = account["seq"], ctx.world.id
    ctx.store.executemany("INSERT INTO transactions (account, created_at, n, world) VALUES (?, ?, ?, ?) "
                          "ON CONFLICT (account, created_at) DO NOTHING",
                          ((seq, t, n, world) for n, t in when.times(lo, hi)))
    return hi - lo, max(hi, account["delivered"])


def link_report(ctx: Ctx, account: AccountRow, day: int) -> None:
    """The account's transactions of `day` now belong to that day's settlement report."""
    ctx.store.execute("UPDATE transactions SET report = ? WHERE account = ? AND created_at >= ? AND created_at < ?",
                      (day, account["seq"], day * DAY_US, (day + 1) * DAY_US))


def forget_account(ctx: Ctx, account: AccountRow) -> None:
    ctx.store.execute("DELETE FROM transactions WHERE account = ?", (account["seq"],))


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
        if not signature or not hmac.compare_digest(signature, self._sign(payload)):
            raise InvalidParameter("`pageReference` is not a page reference of this account and search; start "
                                   "again without it.", parameter="pageReference")
        scope, direction, at = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        if scope != self.scope:
            raise InvalidParameter("`pageReference` belongs to another account or search.",
                                   parameter="pageReference")
        return direction, at


def page(ctx, account, *, created_at=None, report_id=None, reference=None, size=DEFAULT_PAGE):
    """One page of the account's delivered transactions in createdAt order, with references to its neighbours."""
    cursor = Cursor(ctx, account, [created_at, report_id])
    where, params = ["account = ?"], [account["seq"]]
    if created_at is not None:
        where.append("created_at >= ?")
        params.append(created_at)
    if report_id is not None:
        report = reports.get(ctx, report_id)
        day = report["day"] if report is not None and report["account_seq"] == account["seq"] else None
        if day is None:
            return {"rows": [], "previousPageReference": None, "nextPageReference": None}
        where += ["created_at >= ?", "created_at < ?", "report = ?"]
        params += [day * DAY_US, (day + 1) * DAY_US, day]
    base = " AND ".join(where)
    direction, at = cursor.read(reference) if reference else ("next", None)
    if direction == "prev":
        rows = ctx.store.all(f"SELECT * FROM transactions WHERE {base} AND created_at < ? ORDER BY created_at DESC "
                             "LIMIT ?", (*params, at, size))[::-1]
    elif at is not None:
        rows = ctx.store.all(f"SELECT * FROM transactions WHERE {base} AND created_at > ? ORDER BY created_at "
                             "LIMIT ?", (*params, at, size))
    else:
        rows = ctx.store.all(f"SELECT * FROM transactions WHERE {base} ORDER BY created_at LIMIT ?", (*params, size))

    def beyond(op, t):
        return ctx.store.one(f"SELECT 1 FROM transactions WHERE {base} AND created_at {op} ? LIMIT 1", (*params, t))
    first, last = (rows[0]["created_at"], rows[-1]["created_at"]) if rows else (None, None)
    return {"rows": rows,
            "previousPageReference": cursor.make("prev", first) if rows and beyond("<", first) else None,
            "nextPageReference": cursor.make("next", last) if rows and beyond(">", last) else None}


def get_owned(ctx: Ctx, account: AccountRow, transaction_id: str) -> TransactionRow:
    """One delivered transaction of the account by id; an id of another account, or not yet delivered, is 404."""
    n = providers.index_of(account["id"], transaction_id)
    row = None
    if n is not None:
        at = providers.schedule_of(ctx.world.seed, account).at(n)
        row = ctx.store.one("SELECT * FROM transactions WHERE account = ? AND created_at = ?", (account["seq"], at))
    if row is None:
        raise not_found("transaction", transaction_id)
    return row


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
