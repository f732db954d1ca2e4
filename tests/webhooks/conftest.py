"""Fixtures of the webhook tests: the whole-attempt deadline an app is made with (a test lowers it with
`@pytest.mark.parametrize("deadline", [...], indirect=True)` only where a receiver never answers in time)."""

import pytest

from tests.support.receivers import LONG


@pytest.fixture
def deadline(request):
    return getattr(request, "param", LONG)


@pytest.fixture
def config(system_time, deadline):
    return {"SYSTEM_TIME": system_time, "START_SERVICES": False, "WEBHOOK_TIMEOUT_SECONDS": deadline}
