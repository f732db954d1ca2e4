"""`ptas serve`: the command behind `make serve` answers over HTTP with the options docs/design.md spells."""

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


def serve(tmp_path, *options):
    process = subprocess.Popen([sys.executable, "-m", "ptas_sandbox.cli", "serve", "--port", "0",
                                "--state", ":memory:", *options], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, cwd=tmp_path, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    first = process.stdout.readline()
    match = re.search(r"simulator on (http://\S+)", first)
    return process, match.group(1) if match else first + (process.stdout.read() if process.poll() is not None
                                                            else "")


def test_serve_sets_the_global_and_per_operation_limits_of_spec_8(tmp_path):
    process, base = serve(tmp_path, "--rate-limit", "4/60", "--operation-limit", "GetOwnPartner=2/60")
    try:
        assert base.startswith("http://"), base
        token = requests.post(f"{base}/_sandbox/partners", json={}, timeout=5).json()["accessToken"]
        auth = {"Authorization": f"Bearer {token}"}
        me = [requests.get(f"{base}/partner/v2/partners/self", headers=auth, timeout=5).status_code
              for _ in range(3)]
        assert me == [200, 200, 429]
        tokens = [requests.get(f"{base}/partner/v2/partners/self/tokens", headers=auth, timeout=5)
                  for _ in range(3)]     # the refused request above was not counted: 2 + 2 of the global 4
        assert [r.status_code for r in tokens] == [200, 200, 429]
        assert tokens[2].headers["Retry-After"] and tokens[2].json()["status"] == 429
    finally:
        process.terminate()
        process.wait(10)


@pytest.mark.parametrize("option", [["--rate-limit", "100"], ["--rate-limit", "0/60"],
                                    ["--operation-limit", "CreateUser"], ["--operation-limit", "NoSuchOp=1/60"]])
def test_serve_refuses_a_limit_it_cannot_read(tmp_path, option):
    run = subprocess.run([sys.executable, "-m", "ptas_sandbox.cli", "serve", "--port", "0", "--state", ":memory:",
                          *option], capture_output=True, text=True, cwd=tmp_path, timeout=30)
    assert run.returncode == 2 or run.returncode == 1, run
    assert "N/SECONDS" in run.stderr or "names no operation" in run.stderr, run.stderr
