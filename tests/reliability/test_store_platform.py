"""The platform under a SQLite store fails (issue 24): a full disk answered reads and writes 500 "this is a
bug" while health said ok; a read-only state file and an unreachable PostgreSQL were tracebacks at start. Now
they are ProblemDetails with a plain reason (507 full, 503 read-only), health says why, and start-up failures
are one line with exit status 2 and no password. The disk is a small tmpfs mounted for the test where the
machine allows it."""

import os
import subprocess
import sys

import pytest

from ptas_sandbox.simulator import create_app
from tests.support.client import Api
from tests.support.worlds import new_world


@pytest.fixture
def small_disk(tmp_path):
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root or CAP_SYS_ADMIN): {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def fill(directory):
    """Write until the disk is full; returns the filler file."""
    filler = directory / "filler"
    with open(filler, "wb") as out:
        try:
            while True:
                out.write(b"\0" * 65536)
                out.flush()
        except OSError:
            pass
    return filler


def test_a_full_disk_is_507_for_writes_and_health_says_so_until_space_comes_back(small_disk, system_time, caplog,
                                                                                 state_config):
    """The answers name no path and no driver text; the operator's log has the path, once."""
    app = create_app({"STATE": str(small_disk / "sandbox.db"), "START_SERVICES": False, "SYSTEM_TIME": system_time,
                      **state_config})
    caplog.set_level("WARNING", logger="ptas")
    try:
        api = Api(app.test_client())
        world = new_world(api)
        filler = fill(small_disk)
        refused = None
        for n in range(200):            # the WAL may hold a few pages more before the file must grow
            refused = world.api.post("/users", json={"name": f"user {n} " + "x" * 150})
            if refused.status_code != 201:
                break
        assert refused.status_code == 507, refused.json
        assert refused.headers["Content-Type"] == "application/problem+json"
        assert "full" in refused.json["detail"] and "bug" not in refused.json["detail"]
        for again in (refused, world.api.post("/users", json={"name": "again " + "x" * 150})):
            assert again.status_code == 507
            assert not leaks(again.get_data(as_text=True), small_disk), again.json
        health = api.get("/_sandbox/health")
        assert health.status_code == 503 and "full" in health.json["detail"]
        assert not leaks(health.get_data(as_text=True), small_disk), health.json
        said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("store:")]
        assert len(said) == 1 and str(small_disk) in said[0], said
        read = world.api.get("/partners/self")       # a read needs no room; its journal entry does
        assert read.status_code in (200, 507), read.json
        filler.unlink()
        assert api.get("/_sandbox/health").status_code == 200
        assert world.api.post("/users", json={"name": "after"}).status_code == 201
    finally:
        app.extensions["ptas"].close()


def leaks(text, directory):
    """What of the state's whereabouts or SQLite's own words an answer gives away."""
    return [w for w in (str(directory), "sandbox.db", "sqlite", "database or disk is full", "errno")
            if w.lower() in text.lower()]


def test_a_read_only_state_is_a_503_with_a_plain_reason(tmp_path):
    """What SQLite says when its file cannot be written (a read-only mount, a file the server may not write)
    is a 503 saying so. The error is SQLite's own, from a connection that may only read (as root, permissions
    would not refuse the write, and a mount in use cannot be made read-only)."""
    import sqlite3

    from ptas_sandbox.simulator.store import SqliteStore, StoreUnavailable
    path = tmp_path / "sandbox.db"
    store = SqliteStore(str(path))
    try:
        with pytest.raises(sqlite3.OperationalError) as raised:
            sqlite3.connect(f"file:{path}?mode=ro", uri=True).execute("CREATE TABLE t (x)")
        problem = store.platform_problem(raised.value)
        assert isinstance(problem, StoreUnavailable) and problem.status == 503
        assert "read-only" in problem.detail and problem.headers["Retry-After"]
        assert not leaks(problem.detail, tmp_path) and str(path) in problem.cause    # the cause: for the log only
        assert "cause" not in problem.body()
        assert store.platform_problem(sqlite3.OperationalError("no such table: t")) is None     # a bug stays one
    finally:
        store.close()


def run_serve(cwd, *options):
    return subprocess.run([sys.executable, "-m", "ptas_sandbox.cli", "serve", "--port", "0", *options],
                          capture_output=True, text=True, cwd=cwd, timeout=60,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})


def one_line(done, *words):
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert all(word in done.stderr for word in words), done.stderr


def test_an_unreachable_postgresql_at_start_is_one_line_without_the_password(tmp_path):
    done = run_serve(tmp_path, "--store", "postgresql://ptas:hunter2-secret@127.0.0.1:1/sandbox")
    one_line(done, "cannot use the store", "ptas:***@127.0.0.1:1")
    assert "hunter2" not in done.stdout + done.stderr


def test_a_state_file_on_a_read_only_disk_at_start_is_one_line(small_disk, tmp_path):
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    one_line(run_serve(tmp_path, "--state", str(small_disk / "sandbox.db")), "cannot use the state")
