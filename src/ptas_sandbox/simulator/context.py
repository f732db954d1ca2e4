"""The domain context: one world at one moment, handed to every domain operation instead of Flask globals."""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import events
from .auth import Signer
from .requeststate import RequestState
from .store import Store
from .worlds import World, derived_id, next_in_sequence


@dataclass
class Ctx:
    store: Store
    world: World
    now: int                  # the world clock in microseconds, read once per request: one operation, one instant
    state: RequestState       # per-request state: in memory when the process owns its store (requeststate)
    signer: Signer | None = None
    config: dict[str, Any] = field(default_factory=dict)

    def new_id(self, kind: str) -> str:
        """The next id of `kind` in this world: drawn from the world seed, so a replayed world has the same ids."""
        return derived_id(self.world.id, self.world.seed, kind, next_in_sequence(self.store, self.world.id, kind))

    def remember(self, key: Any, read: Callable[[], Any]) -> Any:
        """What `read()` gives of this world, kept until a writer of the world ends when the process owns its
        store (MemoryState.remember), read every time otherwise: for reads nearly every request makes."""
        return self.state.remember(key, self.world.id, read)

    def emit(self, kind: str, partner_id: str, data: dict[str, Any]) -> Any:
        """Record a domain event (spec §6) in the same transaction as the change that caused it."""
        return events.emit(self, kind, partner_id, data)
