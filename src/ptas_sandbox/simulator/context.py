"""The domain context: one world at one moment, handed to every domain operation instead of Flask globals."""

from dataclasses import dataclass, field

from . import events
from .worlds import derived_id, next_in_sequence


@dataclass
class Ctx:
    store: object
    world: object
    now: int                  # the world clock, read once per request so one operation sees one instant
    signer: object = None
    config: dict = field(default_factory=dict)

    def new_id(self, kind):
        """The next id of `kind` in this world: drawn from the world seed, so a replayed world has the same ids."""
        return derived_id(self.world.id, self.world.seed, kind, next_in_sequence(self.store, self.world.id, kind))

    def emit(self, kind, partner_id, data):
        """Record a domain event (spec §6) in the same transaction as the change that caused it."""
        return events.emit(self, kind, partner_id, data)
