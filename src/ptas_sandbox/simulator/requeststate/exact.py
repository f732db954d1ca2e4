"""Every request's state straight in the store: exact across processes (several workers, PostgreSQL).

An admission is one transaction under the world's rate lock: the token's row read and its `lastUsedAt` moved in
one statement, the scope checked, the §8 windows counted (`StoreWindows`). An API write takes the world's lock,
is admitted, caught up and run in the same transaction: one writer's turn per write, not two.
"""

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

from ..auth import Principal, authorize
from ..ratelimit import count

T = TypeVar("T")


class StoreState:
    """Per-request state in the store (the package's docstring); the base of the in-memory strategy too."""

    lookahead_us: tuple[int, ...] = ()      # instants ahead `Simulator.catch_up` may remember as quiet: none

    def __init__(self, store) -> None:
        self.store = store

    def admit(self, sandbox, ctx, claims: Mapping[str, Any], op) -> Principal:
        """Authenticate, authorize and count the request in a transaction of its own. Only a request that
        authenticated and holds the scope counts toward the §8 budget: refusals (forged, revoked, expired, wrong
        kind or scope) must not let anyone use up a partner's budget. A 429 rolls back with the rest, so it leaves
        `lastUsedAt` as it was."""
        return self.store.retrying(lambda: self._admit(sandbox, ctx, claims, op))

    def _admit(self, sandbox, ctx, claims, op) -> Principal:
        with self.store.transaction():
            sandbox.limiter.lock(ctx.world.id)      # before the token's row: see pipeline's LOCK ORDER
            principal = sandbox.hooks.tokens.authenticate(ctx, claims, None)
            authorize(op, principal)
            sandbox.limiter.hit(ctx.world.id, ctx.now, op.id, frozen=ctx.world.frozen)
        return principal

    @contextmanager
    def admitted(self, sandbox, ctx, claims: Mapping[str, Any], op, prepare: Callable[[Principal], T]) -> Iterator[T]:
        """An API write in one write transaction: the world's lock, the admission, the catch-up, then what
        `prepare(principal)` gives (the parsed call) and the operation (the `with` body) in a savepoint, so bad
        input or a refused change undoes only the operation and the request still counts (as `lastUsedAt` and
        the §8 budget saw it before). The operation's failure is
        raised after the commit; a deadlock the store broke is raised at once, for `Store.retrying` to run the
        whole transaction again."""
        store = self.store
        failure = None
        with store.transaction():
            sandbox.worlds.lock(ctx.world.id)       # first: see pipeline's LOCK ORDER
            principal = self._admit(sandbox, ctx, claims, op)
            sandbox.catch_up(ctx.world)
            try:
                with store.savepoint():
                    yield prepare(principal)
            except Exception as error:
                if store.transient(error):
                    raise
                failure = error
        if failure is not None:
            raise failure

    def remember(self, key: Any, world_id: str, read: Callable[[], Any]) -> Any:
        """What `read()` gives, a read of world `world_id`'s rows; the in-memory state keeps it until a write
        transaction that took the world's lock (or no world's lock) ends."""
        return read()

    def drop(self, key: Any) -> None:
        """Forget what `remember` kept under `key`."""

    def forget_world(self, world_id: str | None) -> None:
        """What was remembered of a deleted world (None: of every world): nothing is, here."""

    def write_behind(self, write: Callable[[Any, list[Any]], None]) -> Any:
        """A buffer whose items `write(store, items)` stores (`add`, `drop`); here each is written when added."""
        return AtOnce(self.store, write)

    def reads_behind(self, op) -> None:
        """`op` is about to run: when it reads what is written behind (`Operation.reads_behind`), write it all."""
        if op.reads_behind:
            self.settle()

    def rate_windows(self) -> Any:
        return StoreWindows(self.store)

    def settle(self) -> None:
        """Write what waits to be written behind (nothing here)."""

    def close(self) -> None:
        """Write what waits and stop writing behind."""


class AtOnce:
    """A buffer that waits for nothing: each item `write(store, [item])` stores as it is added."""

    def __init__(self, store, write: Callable[[Any, list[Any]], None]) -> None:
        self.store, self.write = store, write

    def add(self, item: Any, size: int = 0) -> None:
        self.write(self.store, [item])

    def drop(self, keep: Callable[[Any], bool]) -> None:
        """Forget waiting items `keep` refuses: none wait here."""


class StoreWindows:
    """The §8 windows in the store (ratelimit's docstring): counted in the admission's transaction, under the
    world's rate lock, so the limit is exact with any number of threads and processes."""

    def __init__(self, store) -> None:
        self.store = store

    def hit(self, world_id, now, operation_id, rules, frozen=False) -> None:
        count(self.store, world_id, now, operation_id, rules, frozen)

    def forget(self, world_id=None, deleted=False) -> None:
        """A wiped world's windows go with its rows (rate_hits has a `world` column): nothing else to forget."""
