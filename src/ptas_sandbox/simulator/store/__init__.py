"""The store: every piece of state of every world, behind one interface (`interface.Store`) with two engines.

interface.py is what the domain sees; schema.py reads the areas' tables and brings an older state up to date;
base.py is what both engines share (`Engine`); sqlite.py and postgres.py are the engines; `open_store` picks
one for a location.

- SQLite (the embedded default): a file (WAL mode, one connection per thread, so readers never wait for a
  writer and writers queue on `BEGIN IMMEDIATE`), or `:memory:` (one connection behind a lock: a private
  in-memory database cannot be shared between connections without shared-cache table locks).
- PostgreSQL (`postgresql://...`, psycopg 3): one connection per thread, so any number of processes on any
  number of machines share the state.

Each area of the spec declares its own tables (`SCHEMA` in its models module) in portable SQL with `?`
placeholders; the PostgreSQL engine translates the few differences (placeholders, 64-bit integers, identity
columns, `rowid` as an identity column). Rows come back as plain dicts on both engines. `transaction()` makes
an operation atomic: nested uses join the outer transaction; an exception rolls the whole of it back.
"""

import re

from .base import Engine, PlatformProblem, StoreFull, StoreUnavailable
from .interface import Store
from .postgres import PostgresStore
from .schema import StaleState, declared_columns, statements
from .sqlite import SqliteStore

__all__ = ["Engine", "PlatformProblem", "PostgresStore", "SqliteStore", "StaleState", "Store", "StoreFull",
           "StoreUnavailable", "declared_columns", "masked", "open_store", "statements"]


def masked(location):
    """A store location fit to print: a PostgreSQL URL's password replaced by ***."""
    text = str(location)
    if not text.startswith(("postgresql://", "postgres://")):
        return text
    text = re.sub(r"(?i)([?&]password=)[^&]*", r"\1***", text)
    scheme, _, rest = text.partition("://")
    address, query, tail = rest.partition("?")
    credentials, at, host = address.rpartition("@")
    if at and ":" in credentials:
        address = f"{credentials.split(':', 1)[0]}:***@{host}"
    return f"{scheme}://{address}{query}{tail}"


def open_store(location=":memory:", schemas=(), upgrades=None):
    """The engine for a location: a PostgreSQL URL, `:memory:` or a SQLite file path. `upgrades` says how the
    rows of an older version's tables fill columns it did not have (`Engine.upgrade`)."""
    if str(location).startswith(("postgresql://", "postgres://")):
        return PostgresStore(location, schemas, upgrades)
    return SqliteStore(location, schemas, upgrades)
