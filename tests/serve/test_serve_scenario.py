"""`ptas serve --scenario NAME` on a state file: a restart goes on with the world it loaded (a fresh token for
it), rather than add a world at every start."""

import os
import re
import subprocess
import sys

import requests


def serve(tmp_path, *options):
    """Start `ptas serve` on the state file until its scenario line; (base URL, scenario line), then stop it."""
    process = subprocess.Popen([sys.executable, "-m", "ptas_sandbox.cli", "serve", "--port", "0", "--quiet",
                                "--state", str(tmp_path / "sandbox.db"), *options], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, cwd=tmp_path,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        lines = [process.stdout.readline() for _ in range(5)]
        base = re.search(r"simulator on (http://\S+)", lines[0]).group(1)
        line = next(line for line in lines if line.startswith("scenario "))
        token = line.split("partner token ")[1].strip()
        auth = {"Authorization": f"Bearer {token}"}
        clock = requests.get(f"{base}/_sandbox/clock", headers=auth, timeout=10).json()
        users = requests.get(f"{base}/partner/v2/users", headers=auth, timeout=10).json()
        return line, clock, users
    finally:
        process.terminate()
        process.wait(30)


def worlds(tmp_path):
    import sqlite3
    with sqlite3.connect(tmp_path / "sandbox.db") as db:
        return [row[0] for row in db.execute("SELECT scenario FROM worlds")]


def test_a_restart_goes_on_with_the_scenario_world_it_loaded(tmp_path):
    first, clock, users = serve(tmp_path, "--scenario", "provider-outage")
    assert worlds(tmp_path) == ["provider-outage"] and "kept" not in first
    again, clock_again, users_again = serve(tmp_path, "--scenario", "provider-outage")
    assert worlds(tmp_path) == ["provider-outage"]
    assert "kept in" in again and again.split("partner token ")[1] != first.split("partner token ")[1]
    assert clock_again == clock and users_again == users        # the same world, frozen where it stood
    serve(tmp_path, "--scenario", "default")                     # another scenario is another world
    assert sorted(worlds(tmp_path)) == ["default", "provider-outage"]
