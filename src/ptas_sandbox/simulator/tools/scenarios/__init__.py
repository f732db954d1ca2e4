"""The scenarios tool: `load` a named, seeded world (its data: ptas_sandbox/catalogue/scenarios/) into a new
world, `catalogue` lists them."""

from .models import catalogue, load, resume

__all__ = ["catalogue", "load", "resume"]
