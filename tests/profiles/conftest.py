"""What the blind profile rounds share."""

import pytest

from . import blind_probe_b
from .test_blind_variants import simulator, world_token


@pytest.fixture(scope="module")
def plain_answers_b():
    """The plain simulator's answers to probe B (no blind variant changes the simulator's configuration)."""
    app = simulator()
    try:
        return blind_probe_b.observe(app, world_token(app))
    finally:
        app.extensions["ptas"].close()
