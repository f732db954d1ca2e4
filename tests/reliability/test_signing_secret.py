"""The signing secret of a SQLite state lives in a key file beside it (0600), not in the state (issue 24): a
copy of the state file alone lets no one forge tokens. A secret an older version kept inside moves out, and the
tokens it signed stay valid."""

import os
import sqlite3

from ptas_sandbox.simulator import create_app
from tests.support.client import Api
from tests.support.worlds import new_world


def served(path, system_time):
    return create_app({"STATE": str(path), "START_SERVICES": False, "SYSTEM_TIME": system_time})


def first_launch(tmp_path, system_time):
    """A state file with one world made and the server stopped: (state, the world's token, the key file)."""
    state = tmp_path / "sandbox.db"
    app = served(state, system_time)
    try:
        token = new_world(Api(app.test_client())).token
    finally:
        app.extensions["ptas"].close()
    return state, token, tmp_path / "sandbox.db.key"


def test_the_secret_is_in_a_key_file_beside_the_state_and_tokens_outlive_a_restart(tmp_path, system_time):
    state, token, key = first_launch(tmp_path, system_time)
    secret = key.read_text().strip()
    assert len(secret) >= 32 and (os.stat(key).st_mode & 0o777) == 0o600
    for name in os.listdir(tmp_path):       # the state, its WAL and its other files hold no trace of it
        if name != "sandbox.db.key":
            assert secret.encode() not in (tmp_path / name).read_bytes(), name
    again = served(state, system_time)
    try:
        assert Api(again.test_client()).as_(token).get("/partners/self").status_code == 200
    finally:
        again.extensions["ptas"].close()


def test_a_secret_an_older_version_kept_in_the_state_moves_out_and_its_tokens_stay_valid(tmp_path, system_time):
    state, token, key = first_launch(tmp_path, system_time)
    secret = key.read_text().strip()
    with sqlite3.connect(state) as db:      # as an older version left it: inside the state, no key file
        db.execute("INSERT INTO meta (key, value) VALUES ('signing-secret', ?)", (f'"{secret}"',))
    key.unlink()
    again = served(state, system_time)
    try:
        assert Api(again.test_client()).as_(token).get("/partners/self").status_code == 200
    finally:
        again.extensions["ptas"].close()
    assert key.read_text().strip() == secret
    with sqlite3.connect(state) as db:
        assert db.execute("SELECT count(*) FROM meta WHERE key = 'signing-secret'").fetchone()[0] == 0
