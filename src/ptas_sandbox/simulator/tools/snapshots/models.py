"""Snapshot rules: a world's state as one versioned JSON document, and that document checked and loaded into a
new world in one transaction (it completes or leaves nothing).

The document keeps the world's ids (its data are a function of world seed and account id, so the same ids give
the same transactions byte for byte); it carries no signing secret: the loading server signs fresh access
tokens for the snapshot's live tokens (same ids, scopes and expiry). Logs (journal, delivery history, events
already fanned out, fault injections, report notes) stay behind; pending deliveries travel. Tables with many
rows travel column-wise, integers delta-encoded, gzipped and base64-encoded.
"""

import base64
import gzip
import json
import zlib

from ptas_sandbox import __version__

from ...account_types.models import catalogue
from ...partners import models as partners
from ...problems import BadRequest, Conflict
from ...timestamps import LATEST, parse, render
from ...webhooks import deliveries
from ...worlds import EARLIEST_CLOCK, LATEST_CLOCK
from ..control.models import delete_world, make_room, world_tables

FORMAT = "ptas-sandbox-snapshot"
VERSION = 2
READS = (1, 2)      # version 1 carried a row per delivered transaction: redundant with accounts.delivered, dropped
# What a load may take of the server's memory: a world's snapshot is kilobytes, as transactions and reports
# are drawn, not stored; parsing JSON costs up to ~25x its size in Python objects, and a packed
# table's gzip could unpack to gigabytes (32 MiB of `{},` peaked the server at 1 GiB; a gzip bomb, beyond).
MAX_BYTES = 4 * 1024 * 1024             # a document larger than this is refused (config SNAPSHOT_MAX_BYTES)
MAX_UNPACKED = 8 * 1024 * 1024          # bytes all packed tables of a document unpack to, together
MAX_CONTAINERS = 20_000                 # JSON objects and arrays in a document (its rows travel packed)
MAX_ROWS = 2_000_000                    # rows of one table
PACK_ABOVE = 200                        # tables with more rows than this travel packed
LEFT_BEHIND = {"journal", "report_observations", "fault_injections", "events", "echo_captures",
               "inspector_tickets", "counters", "world_use", "profile_pages"}
# Columns holding another table's integer row key (accounts.seq), renumbered on load.
ACCOUNT_SEQ_COLUMNS = {"data_imports": "account_seq", "reports": "account_seq"}
ROW_KEYS = {"accounts": "seq", "webhook_deliveries": "seq"}      # given anew on load
# Columns naming a row of the world by id, where the name does not say the table (`partner_id`: partners). A
# snapshot's row may name rows of the same snapshot only: ids are unique across the sandbox, so a row naming
# another world's webhook would sign and send that world's notifications, and one naming another world's user
# would reach into it.
REFERENCES = {"parent_id": "partners", "target_account_id": "accounts", "delivery_id": "webhook_deliveries"}
TYPE_COLUMNS = ("type_id", "account_type_id")                   # the account-type catalogue's ids
# Columns holding JSON text, and the JSON type each holds: the areas read them back without asking.
JSON_COLUMNS = {
    "accounts": {"options": dict, "credentials": dict, "auth": dict, "errors": list, "warnings": list},
    "partners": {"redirect_urls": list, "ui_settings": dict},
    "accountui_sessions": {"account_type_ids": list},
    "data_imports": {"report_ids": list, "errors": list, "warnings": list},
    "reports": {"errors": list, "warnings": list},
    "webhooks": {"events": list},
    "webhook_deliveries": {"request_headers": dict, "response_headers": dict},
}


def columns(store, table):
    return store.columns(table)


def exported_tables(store):
    return sorted(t for t in world_tables(store) if t not in LEFT_BEHIND)


# --- export ------------------------------------------------------------------------------------------------

def pack(names, rows):
    """Column-wise, integer columns as deltas, then gzip and base64: a century of daily reports fits in a few MiB."""
    cols = {name: [row[name] for row in rows] for name in names}
    delta = [n for n, values in cols.items() if values and all(type(v) is int for v in values)]
    for name in delta:
        values = cols[name]
        cols[name] = [values[0]] + [b - a for a, b in zip(values, values[1:])]
    raw = json.dumps({"columns": cols, "delta": delta}, separators=(",", ":")).encode()
    return {"encoding": "gzip+base64", "rows": len(rows), "data": base64.b64encode(gzip.compress(raw, 6)).decode()}


def unpack(value, table, budget=None):
    """The rows of a packed table; `budget` (a one-item list) is what the document's tables may still unpack to,
    and is used up by this one."""
    budget = budget if budget is not None else [MAX_UNPACKED]
    try:
        inflate = zlib.decompressobj(wbits=31)        # gzip, read no further than the budget
        raw = inflate.decompress(base64.b64decode(value["data"], validate=True), budget[0] + 1)
        if len(raw) > budget[0] or inflate.unconsumed_tail:
            raise BadRequest(f"`tables.{table}` unpacks to more than the {MAX_UNPACKED // 1024 // 1024} MiB a "
                             "snapshot's packed tables may hold together.")
        budget[0] -= len(raw)
        doc = json.loads(raw)
        cols, delta = doc["columns"], doc.get("delta", [])
        for name in delta:
            values, total = cols[name], 0
            for i, step in enumerate(values):
                total += step
                values[i] = total
        names = list(cols)
        count = len(cols[names[0]]) if names else 0
        if any(len(v) != count for v in cols.values()) or count != value["rows"]:
            raise ValueError("columns of different lengths")
        return [dict(zip(names, row)) for row in zip(*cols.values())]
    except (ValueError, TypeError, KeyError, OSError, EOFError, AttributeError, zlib.error) as error:
        raise BadRequest(f"`tables.{table}` is not a readable packed table: {error}.") from None


def export(store, hooks, world, now):
    """The world as one document; fan-out first so events not yet turned into deliveries travel as pending ones."""
    deliveries.fan_out(store, hooks)
    tables = {}
    for table in exported_tables(store):
        where = "world = ?" + (" AND status IN ('pending', 'sending')" if table == "webhook_deliveries" else "")
        order = ROW_KEYS.get(table, "rowid")
        rows = [dict(r) for r in store.all(f"SELECT * FROM {table} WHERE {where} ORDER BY {order}", (world.id,))]
        for row in rows:
            row.pop("world", None)
            row.pop("rowid", None)          # PostgreSQL's insertion-order column: given anew on load
            if table == "webhook_deliveries" and row["status"] == "sending":
                row["status"] = "pending"
        if rows or table in ("partners", "tokens"):
            names = list(rows[0]) if rows else []
            tables[table] = pack(names, rows) if len(rows) > PACK_ABOVE else rows
    # ordered: PostgreSQL returns updated rows in no fixed order, and the same world must export the same bytes
    counters = {r["kind"]: r["value"] for r in store.all(
        "SELECT kind, value FROM counters WHERE world = ? ORDER BY kind", (world.id,))}
    return {"format": FORMAT, "version": VERSION, "simulator": __version__, "createdAt": render(now),
            "world": {"id": world.id, "seed": world.seed, "scenario": world.scenario,
                      "clock": {"now": render(now), "frozen": world.frozen}},
            "counters": counters, "tables": tables}


# --- import ------------------------------------------------------------------------------------------------

def checked(document, store):
    """The document's rows per table, each checked against the store's own tables; 400 at the first fault."""
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise BadRequest(f"Not a sandbox snapshot: `format` must be {FORMAT!r}.")
    if document.get("version") not in READS:
        raise BadRequest(f"Snapshot version {document.get('version')!r} is not one this sandbox reads "
                         f"(it reads versions {', '.join(map(str, READS))}).")
    world = document.get("world")
    if not isinstance(world, dict) or type(world.get("seed")) is not int or not 0 <= world["seed"] <= 2**53:
        raise BadRequest("`world.seed` must be an integer between 0 and 2^53.")
    clock = world.get("clock")
    if not isinstance(clock, dict) or not isinstance(clock.get("now"), str) or \
            not isinstance(clock.get("frozen"), bool):
        raise BadRequest("`world.clock` must be {\"now\": date-time, \"frozen\": boolean}.")
    try:
        now = parse(clock["now"])
    except ValueError as error:
        raise BadRequest(f"`world.clock.now` is not a date-time: {error}.") from None
    if not EARLIEST_CLOCK <= now <= LATEST_CLOCK:
        raise BadRequest("`world.clock.now` is outside the range of a world clock.")
    counters = document.get("counters", {})
    if not isinstance(counters, dict) or not all(isinstance(k, str) and type(v) is int and 0 <= v < 2**53
                                                 for k, v in counters.items()):
        raise BadRequest("`counters` must map sequence names to non-negative integers.")
    tables = document.get("tables")
    if not isinstance(tables, dict):
        raise BadRequest("`tables` must be an object of table name to rows.")
    if document["version"] == 1:
        tables = {name: rows for name, rows in tables.items() if name != "transactions"}
    known = set(exported_tables(store))
    unknown = set(tables) - known
    if unknown:
        raise BadRequest(f"Unknown tables in the snapshot: {', '.join(sorted(unknown))}.")
    out, budget = {}, [MAX_UNPACKED]
    for table, value in tables.items():
        rows = unpack(value, table, budget) if isinstance(value, dict) else value
        if not isinstance(rows, list) or len(rows) > MAX_ROWS:
            raise BadRequest(f"`tables.{table}` must be a list of at most {MAX_ROWS} rows.")
        out[table] = [checked_row(table, row, columns(store, table)) for row in rows]
    roots = [p for p in out.get("partners", []) if p.get("parent_id") is None]
    if len(roots) != 1:
        raise BadRequest("A snapshot holds exactly one root partner (a partner without parent_id).")
    held_together(out, set(exported_tables(store)))
    return now, world, counters, out


def held_together(tables, exported):
    """400 unless every id a row names is a row of the snapshot itself (REFERENCES), or an account type."""
    ids = {table: {row.get("id") for row in rows} for table, rows in tables.items()}
    types = catalogue()
    for table, rows in tables.items():
        for row in rows:
            for column, value in row.items():
                if value is None or not column.endswith("_id"):
                    continue
                if column in TYPE_COLUMNS:
                    if value not in types:
                        raise BadRequest(f"`tables.{table}.{column}` names the account type {value!r:.60}, which "
                                         "this sandbox does not offer.")
                    continue
                named = REFERENCES.get(column, column[:-3] + "s")
                if named in exported and value not in ids.get(named, ()):
                    raise BadRequest(f"`tables.{table}.{column}` names {named} {value!r:.60}, which the snapshot "
                                     "does not hold.")


def checked_row(table, row, cols):
    if not isinstance(row, dict):
        raise BadRequest(f"A row of `tables.{table}` is not an object.")
    unknown = set(row) - set(cols) - {"world"}
    if unknown:
        raise BadRequest(f"`tables.{table}` has unknown columns: {', '.join(sorted(unknown))}.")
    for name, col in cols.items():
        if name == "world" or (name == ROW_KEYS.get(table)):
            continue
        value = row.get(name)
        if value is None:
            if col["notnull"] and not col["default"]:
                raise BadRequest(f"`tables.{table}` rows need `{name}`.")
            continue
        kind = col["type"].upper()
        ok = (type(value) is int and -2**63 <= value < 2**63) if kind == "INTEGER" else \
            isinstance(value, (int, float)) and not isinstance(value, bool) if kind == "REAL" else \
            isinstance(value, str) and len(value) <= 1_000_000
        if not ok:
            raise BadRequest(f"`tables.{table}.{name}` must be of type {kind.lower()}, not {value!r:.60}.")
        if kind == "INTEGER" and name.endswith("_at") and not -LATEST <= value <= LATEST:
            raise BadRequest(f"`tables.{table}.{name}` is not an instant.")
        shape = JSON_COLUMNS.get(table, {}).get(name)
        if shape is not None:
            try:
                ok = isinstance(json.loads(value), shape)
            except (ValueError, RecursionError):
                ok = False
            if not ok:
                raise BadRequest(f"`tables.{table}.{name}` must be a JSON {'object' if shape is dict else 'array'} "
                                 f"as text, not {value!r:.60}.")
    return row


def load(sandbox, document, tokens_issue, replace=None):
    """A new world holding the document's state; its root partner's token and fresh access tokens for every
    live token. `tokens_issue(ctx, row)` signs one. Nothing of it remains if any part fails.

    `replace(world_id)`, when given, is asked about the world that already holds the snapshot's root partner
    (the world it was saved from, or loaded into before): it answers that World, checked as the caller's to
    replace, and the load takes its place in one transaction, under the same world id (the world's tokens keep
    working). The snapshot's ids stay as they are."""
    store = sandbox.store
    now, world_doc, counters, tables = checked(document, store)
    root = next(p for p in tables["partners"] if p.get("parent_id") is None)
    holder = partners.world_of(store, root["id"]) if replace is not None else None
    replacing = replace(holder) if holder is not None else None
    for table, rows in tables.items():
        key = "id" if "id" in columns(store, table) and table not in ("webhook_outbox_cursor",) else None
        ids = [r["id"] for r in rows if key and r.get("id") is not None]
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            other = " AND world != ?" if replacing is not None else ""
            taken = store.one(f"SELECT id FROM {table} WHERE id IN ({', '.join('?' * len(chunk))}){other} LIMIT 1",
                              [*chunk, replacing.id] if replacing is not None else chunk)
            if taken:
                raise Conflict(f"This sandbox already holds {table} {taken['id']!r} of the snapshot (was it loaded "
                               "here before, or taken here?). Load it with `replace=true` (`ptas snapshot load "
                               "--replace`) to put it in place of the world it came from, or into another "
                               "sandbox, e.g. a fresh `ptas serve --state :memory:`.")
    try:
        with store.transaction():
            if replacing is not None:
                delete_world(sandbox, replacing, replaced=True)
            else:
                make_room(sandbox)
            world = sandbox.worlds.create(seed=world_doc["seed"], start=now, frozen=world_doc["clock"]["frozen"],
                                          scenario=world_doc.get("scenario"),
                                          world_id=replacing.id if replacing is not None else None)
            insert_tables(store, world.id, tables)
            for kind, value in counters.items():
                store.insert("counters", world=world.id, kind=kind, value=value)
            ctx = sandbox.ctx(world)
            access = {row["id"]: tokens_issue(ctx, row) for row in tables.get("tokens", [])
                      if row.get("revoked_at") is None and row["expires_at"] > ctx.now}
    except BadRequest:
        raise
    except Exception as error:       # a constraint the checks did not foresee: the world is rolled back
        # by name, for either engine: psycopg raises subclasses (UniqueViolation is an IntegrityError)
        if any(kind.__name__ in ("IntegrityError", "OperationalError", "DataError") for kind in type(error).__mro__):
            raise BadRequest(f"The snapshot's rows do not fit together: {error}.") from None
        raise
    return world, root, access


def insert_tables(store, world_id, tables):
    seqs = {}
    for table in sorted(tables, key=lambda t: (t != "accounts", t)):      # accounts first: others use its seq
        rows = tables[table]
        for row in rows:
            row = {k: v for k, v in row.items() if k != "world"}
            if table in ROW_KEYS:
                old = row.pop(ROW_KEYS[table], None)
            if table in ACCOUNT_SEQ_COLUMNS:
                column = ACCOUNT_SEQ_COLUMNS[table]
                if row.get(column) not in seqs:
                    raise BadRequest(f"`tables.{table}` names account row {row.get(column)!r}, which the snapshot "
                                     "does not hold.")
                row[column] = seqs[row[column]]
            if table == "webhooks":
                row["after_seq"] = deliveries.last_event(store)          # no event of the past reaches it again
            names = ", ".join(["world", *row])
            sql = f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' * (len(row) + 1))})"
            if table == "accounts":
                seqs[old] = store.one(sql + " RETURNING seq", (world_id, *row.values()))["seq"]
            else:
                store.execute(sql, (world_id, *row.values()))
