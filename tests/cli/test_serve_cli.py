"""`ptas serve` as a newcomer meets it: an access-log line per request (`--quiet` off), one-line errors for the
usual start-up mistakes, and every flag and environment variable in `--help` and the README."""

import os
import re
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import requests

from ptas_sandbox.cli import main

README = Path(__file__).resolve().parents[2] / "README.md"
ENVIRONMENT = ("PTAS_ADMIN_KEY", "PTAS_URL", "PTAS_WORLD_KEY", "PTAS_TOKEN")


def start(tmp_path, *options):
    process = subprocess.Popen([sys.executable, "-m", "ptas_sandbox.cli", "serve", "--port", "0", "--state",
                                ":memory:", *options], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               cwd=tmp_path, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    first = process.stdout.readline()
    match = re.search(r"simulator on (http://\S+)", first)
    assert match, first + (process.stdout.read() if process.poll() is not None else "")
    return process, match.group(1)


def stop(process):
    process.terminate()
    process.wait(10)
    return process.stdout.read()


def test_one_access_log_line_per_request_with_secrets_masked(tmp_path):
    process, base = start(tmp_path)
    try:
        requests.get(f"{base}/_sandbox/health", timeout=5)
        requests.get(f"{base}/_sandbox/inspect/login?ticket=s3cr3t", timeout=5)
    finally:
        output = stop(process)
    lines = [line for line in output.splitlines() if " GET /" in line]
    assert len(lines) == 2 and re.search(r"127\.0\.0\.1 GET /_sandbox/health 200 \d+\.\dms$", lines[0])
    assert "s3cr3t" not in output and "ticket=[redacted]" in lines[1]


def test_quiet_turns_the_access_log_off(tmp_path):
    process, base = start(tmp_path, "--quiet")
    try:
        requests.get(f"{base}/_sandbox/health", timeout=5)
    finally:
        output = stop(process)
    assert "/_sandbox/health" not in output


def run_serve(tmp_path, *options):
    return subprocess.run([sys.executable, "-m", "ptas_sandbox.cli", "serve", *options], capture_output=True,
                          text=True, cwd=tmp_path, timeout=60)


def assert_one_line(done, words):
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("ptas serve: ") and words in done.stderr


def test_a_port_in_use_is_one_line(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert_one_line(run_serve(tmp_path, "--port", str(port), "--state", ":memory:"), "is in use")


def test_an_unknown_scenario_is_one_line(tmp_path):
    assert_one_line(run_serve(tmp_path, "--scenario", "nope", "--state", ":memory:"), "no scenario named 'nope'")


def test_a_bad_state_path_is_one_line(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    assert_one_line(run_serve(tmp_path, "--state", str(tmp_path / "file" / "deeper" / "sandbox.db")),
                    f"{str(tmp_path / 'file')!r} is a file, not a folder")
    assert_one_line(run_serve(tmp_path, "--state", str(tmp_path)), "is a folder")
    (tmp_path / "junk.db").write_bytes(b"this is no database" * 100)
    assert_one_line(run_serve(tmp_path, "--port", "0", "--state", str(tmp_path / "junk.db")), "cannot use the state")


def test_a_state_file_of_an_older_version_is_one_line_naming_what_it_lacks(tmp_path):
    old = tmp_path / "old.db"
    with sqlite3.connect(old) as db:      # a table as an older version wrote it, without later columns
        db.execute("CREATE TABLE webhook_deliveries (id TEXT PRIMARY KEY, world TEXT NOT NULL)")
    result = run_serve(tmp_path, "--port", "0", "--state", str(old))
    assert_one_line(result, "cannot use the state")
    assert "webhook_deliveries lacks" in result.stderr and "older ptas-sandbox" in result.stderr


def serve_flags(capsys):
    try:
        main(["serve", "--help"])
    except SystemExit:
        pass
    text = capsys.readouterr().out
    return text, sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", text)) - {"--help"})


def test_every_serve_flag_and_variable_is_in_help_and_readme(capsys):
    text, flags = serve_flags(capsys)
    assert {"--port", "--state", "--quiet", "--scenario"} <= set(flags)
    # The README is short; the options are on the pages it links: the command line's and the team sandbox's.
    readme = "".join((README.parent / page).read_text() for page in (
        "README.md", "docs/cli.md", "docs/team-sandbox.md", "docs/simulator.md"))
    for name in ENVIRONMENT:
        assert name in text and name in readme, name
    missing = [flag for flag in flags if f"`{flag}" not in readme]
    assert not missing, f"README and its pages do not mention {missing}"


def test_the_readme_shows_journal_inspector_docs_and_cli():
    readme = README.read_text()
    first_steps = readme.split("## First steps", 1)[1].split("\n## ", 1)[0]
    for shown in ("ptas inspect", "/docs", "ptas clock", "ptas requests"):
        assert shown in first_steps, shown
    for shown in ("/_sandbox/requests", "/_sandbox/requests/count", "ptas trigger", "ptas listen"):
        assert shown in readme, shown


def serve_args(*options):
    import argparse

    from ptas_sandbox.cli import serve
    parser = argparse.ArgumentParser(prog="ptas")
    serve.add(parser.add_subparsers())
    return parser.parse_args(["serve", *options])


def test_world_idle_hours_reach_the_app_and_are_never_negative(capsys):
    import pytest

    from ptas_sandbox.cli.serve import settings
    assert settings(serve_args("--world-idle-hours", "1.5"), ":memory:")["WORLD_IDLE_HOURS"] == 1.5
    assert "WORLD_IDLE_HOURS" not in settings(serve_args(), ":memory:")      # the app's default (24)
    for wrong in ("-1", "nan", "inf", "a day"):
        with pytest.raises(SystemExit):
            serve_args("--world-idle-hours", wrong)
        assert "a number of hours, 0 or more" in capsys.readouterr().err


def test_ports_counts_and_seconds_out_of_range_are_refused(capsys):
    import pytest

    assert serve_args("--port", "65535").port == 65535 and serve_args("--port", "0").port == 0
    assert serve_args("--connections-per-address", "0").connections_per_address == 0     # documented: no cap
    assert serve_args("--flush-wait", "0").flush_wait == 0                              # answers at once
    for option, wrong, words in [("--port", "99999", "0 (any free port) to 65535"), ("--port", "-1", "65535"),
                                 ("--workers", "0", "1 or more"), ("--connections-per-address", "-1", "0 or more"),
                                 ("--webhook-timeout", "-1", "above 0"), ("--webhook-timeout", "0", "above 0"),
                                 ("--flush-wait", "-1", "0 or more"), ("--flush-wait", "nan", "0 or more")]:
        with pytest.raises(SystemExit) as done:
            serve_args(option, wrong)
        assert done.value.code == 2 and words in capsys.readouterr().err, (option, wrong)


def test_a_host_it_cannot_bind_or_resolve_is_one_line(tmp_path):
    for host in ("999.1.1.1", "nosuch.invalid"):
        assert_one_line(run_serve(tmp_path, "--port", "0", "--state", ":memory:", "--host", host), host)


def banner(tmp_path, env, *options):
    process = subprocess.Popen([sys.executable, "-m", "ptas_sandbox.cli", "serve", "--port", "0", "--state",
                                ":memory:", *options], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, cwd=tmp_path, env={**env, "PYTHONUNBUFFERED": "1"})
    lines = process.stdout.readline() + process.stdout.readline()
    return lines + stop(process)


def test_the_banners_curl_works_whether_the_admin_key_came_from_the_flag_or_the_variable(tmp_path):
    key = "flag-secret-key-4711"
    env = {k: v for k, v in os.environ.items() if k != "PTAS_ADMIN_KEY"}
    from_flag = banner(tmp_path, env, "--admin-key", key)
    assert "export PTAS_ADMIN_KEY=" in from_flag and '"X-Sandbox-Admin-Key: $PTAS_ADMIN_KEY"' in from_flag
    from_variable = banner(tmp_path, {**env, "PTAS_ADMIN_KEY": key})
    assert "export" not in from_variable and '"X-Sandbox-Admin-Key: $PTAS_ADMIN_KEY"' in from_variable
    assert key not in from_flag + from_variable


def test_a_bind_on_every_interface_shows_an_address_to_call_not_0_0_0_0():
    from ptas_sandbox.cli.serve import addresses

    assert addresses("127.0.0.1", 8080) == ("http://127.0.0.1:8080", "")
    for host in ("0.0.0.0", "::"):
        base, elsewhere = addresses(host, 8081)
        assert base == "http://127.0.0.1:8081" and "from other machines: http://" in elsewhere
        assert "0.0.0.0" not in elsewhere
