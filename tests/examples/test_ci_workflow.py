"""The CI workflow of docs/chaos.md, run as a shell runs it: the sandbox starts in the background, and the next
step waits until it answers before its first call (a curl at once found nothing listening)."""

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import yaml

CHAOS = (Path(__file__).parents[2] / "docs" / "chaos.md").read_text(encoding="utf-8")


def steps():
    workflow = yaml.safe_load(re.search(r"```yaml\n(# \.github/workflows/.*?)```", CHAOS, flags=re.S).group(1))
    return [step["run"] for step in workflow["jobs"]["sandbox"]["steps"] if "run" in step]


def held_port():
    """A port for the script's fixed one, held bound (not listening) with SO_REUSEADDR while the script runs: the
    kernel hands it to no other socket meanwhile, and waitress's own SO_REUSEADDR bind may share it (Linux)."""
    held = socket.socket()
    held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    held.bind(("127.0.0.1", 0))
    return held


def test_the_job_waits_for_the_sandbox_before_its_first_call(tmp_path):
    serve, script = [run for run in steps() if "ptas serve" in run or "PTAS_URL" in run][:2]
    held = held_port()
    port = str(held.getsockname()[1])
    # Up to the calls of the partner's own tests: start, wait, create a world, add a fault.
    body = script.split("./run-my-integration-tests")[0]
    bin_dir = os.path.dirname(sys.executable)
    jq = "| python3 -c 'import json, sys; print(json.load(sys.stdin)[\"accessToken\"])'"     # jq may be absent here
    shell = f"{serve}\n{body}".replace("8080", port).replace("| jq -r .accessToken", jq)
    with held:
        done = subprocess.run(["bash", "-ec", shell + "\nkill %1"], cwd=tmp_path, capture_output=True, text=True,
                              timeout=120, env={**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^[\w-]+  status status=503", done.stdout, flags=re.M), done.stdout      # the fault went in
