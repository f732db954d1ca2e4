"""Per-request state: what every authenticated request touches besides its operation (the token's `lastUsedAt`,
the §8 windows, the journal entry, reads of the world, its token, its faults, its catch-up) and where it lives.

The pipeline has one path for every request and asks its `RequestState` (docs/durability.md):

- `admit` a read (authenticate, authorize, count toward §8), and `admitted` for an API write: a context
  manager that admits, prepares the call (parses its input: a 400 still counts) and owns the write's
  transaction, the operation runs inside it;
- `remember` a read nearly every request makes, `write_behind` what may wait, `reads_behind` before an
  operation that reads what waits (`Operation.reads_behind`).

Two strategies, chosen once by `open_state`:

- `exact.StoreState`: every request's state straight in the store, exact across processes (several workers,
  PostgreSQL); an API write is admitted, caught up and run in one transaction;
- `memory.MemoryState`: a store this process alone uses (a SQLite file under one `ptas serve`, `:memory:`):
  the state in memory, written behind in batches; what is remembered is kept until a writer changes it.

Each holds its half of the rate limiter (`rate_windows`): the store's sliding log, or the same log in memory.
"""

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

from .exact import StoreState
from .memory import Behind, MemoryState

__all__ = ["Behind", "MemoryState", "RequestState", "StoreState", "open_state", "owns_store"]

T = TypeVar("T")


class RequestState(Protocol):
    """What the pipeline, the areas and the tools ask of the per-request state (the module docstring)."""

    lookahead_us: tuple[int, ...]

    def admit(self, sandbox: Any, ctx: Any, claims: Mapping[str, Any], op: Any) -> Any: ...

    def admitted(self, sandbox: Any, ctx: Any, claims: Mapping[str, Any], op: Any,
                 prepare: Callable[[Any], T]) -> AbstractContextManager[T]: ...

    def remember(self, key: Any, world_id: str, read: Callable[[], Any]) -> Any: ...

    def drop(self, key: Any) -> None: ...

    def forget_world(self, world_id: str | None) -> None: ...

    def write_behind(self, write: Callable[[Any, list[Any]], None]) -> Any: ...

    def reads_behind(self, op: Any) -> None: ...

    def rate_windows(self) -> Any: ...

    def settle(self) -> None: ...

    def close(self) -> None: ...


def owns_store(store: Any, config: Mapping[str, Any]) -> bool:
    """Whether this process owns its store, so per-request state may live in its memory: a SQLite store (a file
    is locked to one launch, `:memory:` is the process's) that the launch does not share between workers."""
    return store.engine == "sqlite" and not config.get("SHARED_STORE")


def open_state(store: Any, config: Mapping[str, Any]) -> StoreState:
    """The strategy for this store: in memory when this process owns it, else straight in the store."""
    if owns_store(store, config):
        return MemoryState(store, background=bool(config.get("START_SERVICES", True)))
    return StoreState(store)


