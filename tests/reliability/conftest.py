"""Fixtures of the reliability suite: a served sandbox in each of `ptas serve`'s modes."""

import pytest

from tests.support.launched import MODES, Launched


@pytest.fixture(params=MODES)
def launched(request, tmp_path):
    """`ptas serve` in one mode, stopped after the test; its output is kept for the test to read."""
    started = []

    def start(*options, env=None):
        server = Launched(tmp_path, request.param, *options, env=env)
        started.append(server)
        return server
    start.mode = request.param
    yield start
    for server in started:
        server.stop()
