"""Issue 14's "done when": the naive sample client gets the findings it deserves, the well-behaved one none;
both run against a served sandbox with the same faults on (examples/naive_client.py, examples/good_client.py)."""

import os
import sys

import pytest
import requests

from ptas_sandbox.simulator import create_app
from tests.support.receivers import Served

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "examples"))
from good_client import GoodClient, demo  # noqa: E402
from naive_client import NaiveClient  # noqa: E402


@pytest.fixture
def served(system_time):
    served = Served(create_app({"SYSTEM_TIME": system_time, "START_SERVICES": False}))
    yield served.base
    served.close()


def findings(base, token):
    report = requests.get(f"{base}/_sandbox/report", headers={"Authorization": f"Bearer {token}"}, timeout=30)
    return {f["rule"] for f in report.json()["findings"]}


def test_the_naive_client_gets_the_expected_findings(served, capsys):
    token = demo(served, NaiveClient)
    assert findings(served, token) == {"initial-token-in-use", "retry-after-ignored", "blind-retry",
                                       "polling-instead-of-webhook", "pagination-ignored",
                                       "account-types-hardcoded"}
    assert "fix:" in capsys.readouterr().out


def test_the_good_client_gets_none(served, capsys):
    token = demo(served, GoodClient)
    assert findings(served, token) == set()
    assert "No findings" in capsys.readouterr().out

