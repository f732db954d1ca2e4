"""Named, seeded sandbox worlds (DESIGN.md scenarios/): `load` one into a new world, `catalogue` lists them."""

from .models import catalogue, load, resume

__all__ = ["catalogue", "load", "resume"]
