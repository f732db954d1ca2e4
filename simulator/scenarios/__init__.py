"""Named, seeded sandbox worlds (DESIGN.md scenarios/): `load` one into a new world, `catalogue` lists them."""
