"""The pytest plugin registered by the package: fixtures for partner developers (see README)."""
