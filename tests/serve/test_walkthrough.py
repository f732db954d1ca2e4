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


def test_run_by_a_python_without_the_project_it_says_which_python_has_it(tmp_path):
    import subprocess
    import sys
    # -S: no site-packages, as a system Python beside the project's .venv
    done = subprocess.run([sys.executable, "-S", str(SCRIPT), "http://127.0.0.1:9"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "is not installed for" in done.stderr and ".venv/bin/python" in done.stderr
