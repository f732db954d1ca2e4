"""examples/partner_walkthrough.py runs as documented against a sandbox served over HTTP."""

import importlib.util
from pathlib import Path

from ptas_sandbox.simulator import create_app
from tests.support.receivers import Served

SCRIPT = Path(__file__).parents[2] / "examples" / "partner_walkthrough.py"


def test_the_partner_walkthrough_runs_end_to_end():
    spec = importlib.util.spec_from_file_location("partner_walkthrough", SCRIPT)
    walkthrough = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(walkthrough)
    served = Served(create_app({"START_SERVICES": False}))
    lines = []
    try:
        outcome = walkthrough.walk(served.base, say=lines.append)
    finally:
        served.close()
    assert outcome["transactions"] == outcome["count"] > 0 and outcome["event"] == "AccountCreated"
    assert len(lines) == 6 and lines[-1].startswith("webhook received a signed AccountCreated")
