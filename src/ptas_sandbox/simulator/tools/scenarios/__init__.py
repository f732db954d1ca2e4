"""Named, seeded sandbox worlds (DESIGN.md scenarios/): `load` one into a new world, `catalogue` lists them."""

from .models import catalogue, load

__all__ = ["catalogue", "load"]
