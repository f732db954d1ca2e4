"""`ptas serve --scenario`: the first line still names the address (scripts read the port from it), and the
scenario's partner token follows."""

import os
import re
import subprocess
import sys

import requests


def test_with_a_scenario_the_first_line_is_still_the_address(tmp_path):
    process = subprocess.Popen([sys.executable, "-m", "ptas_sandbox.cli", "serve", "--port", "0", "--state",
                                ":memory:", "--scenario", "provider-outage"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, cwd=tmp_path,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        first = process.stdout.readline()
        base = re.search(r"simulator on (http://\S+)", first)
        assert base, first
        lines = [process.stdout.readline() for _ in range(4)]
        token = re.search(r"scenario provider-outage: partner token (\S+)", lines[-1])
        assert token, lines
        me = requests.get(f"{base.group(1)}/partner/v2/partners/self", timeout=5,
                          headers={"Authorization": f"Bearer {token.group(1)}"})
        assert me.status_code == 200
    finally:
        process.terminate()
        process.wait(10)
