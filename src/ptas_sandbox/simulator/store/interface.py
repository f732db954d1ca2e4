"""The store as the domain sees it: rows in, rows out, in transactions. Whatever the engine (SQLite, PostgreSQL),
an area's models need only these; `Engine` (base.py) implements them, and more for the core (schema upgrades,
retries of aborted transactions, the server's own settings)."""

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

Row = Mapping[str, Any]
Params = Sequence[Any]


class Store(Protocol):
    def one(self, sql: str, params: Params = ()) -> Any:
        """The first row of a query (a dict), or None. SQL is portable, with `?` placeholders."""

    def all(self, sql: str, params: Params = ()) -> list[Any]:
        """Every row of a query, as dicts."""

    def execute(self, sql: str, params: Params = ()) -> Any:
        """A statement whose rows are not needed (or read with RETURNING through `one`)."""

    def insert(self, table: str, **values: Any) -> None:
        """INSERT one row of `table`."""

    def update(self, table: str, key: Mapping[str, Any], **values: Any) -> None:
        """UPDATE `table` SET values WHERE every column of `key` equals its value."""

    def transaction(self, read_only: bool = False) -> AbstractContextManager[Any]:
        """All or nothing: nested uses join the outer transaction; an exception rolls the whole of it back."""

    def reading(self) -> AbstractContextManager[Any]:
        """A transaction that only reads: one consistent view, no writer's turn where the engine allows it."""

    def savepoint(self) -> AbstractContextManager[Any]:
        """Inside a transaction: the block's writes are undone when it raises, and the transaction goes on."""

    def lock(self, key: str) -> None:
        """Serialize this transaction with every other one taking `key`, in every process, until it ends."""

    def for_update(self) -> str:
        """The suffix that locks the rows a SELECT reads, where the engine has row locks ("" otherwise)."""

    def skip_locked(self, alias: str | None = None) -> str:
        """The suffix that locks a SELECT's rows and skips those another transaction holds ("" on SQLite)."""

