"""Step definitions, one module per area; each is a pytest plugin (listed in harness.py), never star-imported."""
