"""`ptas serve`: the command behind `make serve` answers over HTTP with the options DESIGN.md spells."""

import os
import re
import subprocess
import sys

import pytest
import requests


@pytest.fixture
def served(tmp_path):
    """`ptas serve --port 0 --state :memory:` in a subprocess; its first line names the port it bound."""
    process = subprocess.Popen([sys.executable, "-m", "ptas_sandbox.cli", "serve", "--port", "0",
                                "--state", ":memory:"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, cwd=tmp_path, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    first = process.stdout.readline()
    match = re.search(r"simulator on (http://\S+)", first)
    assert match, first + process.stdout.read() if process.poll() is not None else first
    yield match.group(1)
    process.terminate()
    assert process.wait(10) == 0


def test_ptas_serve_runs_a_throw_away_sandbox_on_the_port_given(served, tmp_path):
    assert requests.get(f"{served}/_sandbox/health", timeout=5).json()["status"] == "ok"
    world = requests.post(f"{served}/_sandbox/partners", json={"name": "Over HTTP"}, timeout=5).json()
    me = requests.get(f"{served}/partner/v2/partners/self", timeout=5,
                      headers={"Authorization": f"Bearer {world['accessToken']}"})
    assert me.json()["name"] == "Over HTTP"
    assert not (tmp_path / ".ptas").exists()
