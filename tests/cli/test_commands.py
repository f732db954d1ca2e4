"""The remote commands (`ptas clock/reset/trigger/requests/listen/inspect`) against a sandbox served over HTTP,
and `ptas --version`: what they print, and one-line errors instead of tracebacks."""

import os
import re
import signal
import subprocess
import sys
import threading

import jwt
import pytest
import requests

from ptas_sandbox.cli import main
from ptas_sandbox.webhooks import verify
from tests.support.receivers import Receiver


@pytest.fixture
def token(live):
    return requests.post(f"{live}/_sandbox/partners", json={"name": "CLI"}, timeout=10).json()["accessToken"]


def ptas(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_version(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and re.fullmatch(r"ptas-sandbox \d+\.\d+\.\d+\S*\n", capsys.readouterr().out)


def test_clock_shows_and_moves_the_world_clock(capsys, live, token):
    target = ["--url", live, "--token", token]
    status, out, _ = ptas(capsys, "clock", *target)
    assert status == 0 and out.endswith("(running)\n")
    status, out, _ = ptas(capsys, "clock", "freeze", *target)
    frozen_at = out.split()[0]
    assert status == 0 and out.endswith("(frozen)\n")
    _, out, _ = ptas(capsys, "clock", "advance", "1h30m", *target)
    assert out.split()[0][11:16] != frozen_at[11:16]
    _, out, _ = ptas(capsys, "clock", "set", "2031-02-03T04:05:06Z", *target)
    assert out.startswith("2031-02-03T04:05:06")
    _, out, _ = ptas(capsys, "clock", "thaw", *target)
    assert out.endswith("(running)\n")


def test_the_environment_gives_url_and_token(capsys, live, token, monkeypatch):
    monkeypatch.setenv("PTAS_URL", live)
    monkeypatch.setenv("PTAS_TOKEN", token)
    assert ptas(capsys, "clock")[0] == 0


def test_errors_are_one_line(capsys, live, token):
    status, out, err = ptas(capsys, "clock", "advance", "soon", "--url", live, "--token", token)
    assert status == 2 and err.count("\n") == 1 and "not a duration" in err
    status, _, err = ptas(capsys, "clock", "--url", live, "--token", "not-a-token")
    assert status == 1 and err.startswith("ptas clock: GET /_sandbox/clock answered 401") and err.count("\n") == 1
    status, _, err = ptas(capsys, "reset", "--url", live, "--token", "")
    assert status == 2 and "PTAS_TOKEN" in err
    status, _, err = ptas(capsys, "requests", "--url", "http://127.0.0.1:9", "--token", token)
    assert status == 2 and "cannot reach" in err
    status, _, err = ptas(capsys, "trigger", "Nope", "--url", live, "--token", token)
    assert status == 2 and "AccountCreated" in err


def test_reset_wipes_the_world(capsys, live, token):
    auth = {"Authorization": f"Bearer {token}"}
    requests.post(f"{live}/partner/v2/users", json={"name": "Gone"}, headers=auth, timeout=10)
    status, out, _ = ptas(capsys, "reset", "--url", live, "--token", token)
    world = jwt.decode(token, options={"verify_signature": False})["wld"]
    assert status == 0 and out.startswith(f"reset: world {world} is back to its root partner") and "journal" in out
    assert requests.get(f"{live}/partner/v2/users", headers=auth, timeout=10).json() in ([], {"items": []}) or \
        "Gone" not in requests.get(f"{live}/partner/v2/users", headers=auth, timeout=10).text


def test_trigger_fires_and_delivers_a_test_event(capsys, live, token):
    auth = {"Authorization": f"Bearer {token}"}
    requests.post(f"{live}/partner/v2/webhooks", headers=auth, timeout=10,
                  json={"callbackUrl": f"{live}/_sandbox/echo/cli", "events": ["AccountCreated"]})
    status, out, _ = ptas(capsys, "trigger", "account.created", "--url", live, "--token", token)
    assert status == 0 and "AccountCreated test event" in out and "succeeded 200" in out
    assert len(requests.get(f"{live}/_sandbox/echo/cli", headers=auth, timeout=10).json()["captures"]) == 1


def test_requests_prints_the_journal_oldest_first(capsys, live, token):
    auth = {"Authorization": f"Bearer {token}"}
    requests.post(f"{live}/partner/v2/users", json={"name": "Jane"}, headers=auth, timeout=10)
    requests.get(f"{live}/partner/v2/users/nobody", headers=auth, timeout=10)
    status, out, _ = ptas(capsys, "requests", "--url", live, "--token", token)
    lines = out.splitlines()
    assert status == 0 and [re.search(r"  (\w+)  \d", line).group(1) for line in lines] == [
        "SandboxCreatePartner", "CreateUser", "GetUser"]
    assert " 404  GET    /partner/v2/users/nobody" in lines[-1]
    _, out, _ = ptas(capsys, "requests", "--status", "4xx", "--url", live, "--token", token)
    assert len(out.splitlines()) == 1 and token not in out
    token_id = jwt.decode(token, options={"verify_signature": False})["jti"]
    _, out, _ = ptas(capsys, "requests", "--token-id", token_id[:8], "--url", live, "--token", token)
    assert out.startswith("no requests match") and "whole token id" in out      # the id as a line shows it
    _, out, _ = ptas(capsys, "requests", "--token-id", token_id, "--url", live, "--token", token)
    assert len(out.splitlines()) == 2       # CreateUser, GetUser (the world was made without a token)


def test_inspect_prints_a_link_that_works_once(capsys, live, token):
    status, out, _ = ptas(capsys, "inspect", "--url", live, "--token", token)
    url = out.splitlines()[0]
    assert status == 0 and url.startswith(f"{live}/_sandbox/inspect/login?ticket=") and token not in url
    session = requests.Session()
    assert session.get(url, timeout=10).status_code == 200           # followed to the requests tab
    assert requests.get(url, timeout=10).status_code == 401


def listener(live, token, receiver, config, *more):
    process = subprocess.Popen([sys.executable, "-m", "ptas_sandbox.cli", "listen", "--forward-to", receiver.url,
                                "--url", live, "--token", token, "--interval", "0.05", *more],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1", "XDG_CONFIG_HOME": str(config)})
    ready = process.stdout.readline()
    assert ready.startswith("Ready"), ready + process.stdout.read()
    secret = re.search(r"secret: (\S+)", process.stdout.readline()).group(1)
    assert "this machine's clock" in process.stdout.readline()
    return process, secret


def hooks_of(live, token):
    return requests.get(f"{live}/partner/v2/webhooks", headers={"Authorization": f"Bearer {token}"}, timeout=10).text


def test_listen_forwards_notifications_signed_for_any_verifier(live, token, tmp_path):
    receiver = Receiver()
    auth = {"Authorization": f"Bearer {token}"}
    # A world whose clock is a day ahead: its own signatures carry that day, a verifier's window is minutes.
    requests.post(f"{live}/_sandbox/clock", json={"advance": 86400}, headers=auth, timeout=10)
    process, secret = listener(live, token, receiver, tmp_path, "--max-events", "1")
    try:
        requests.post(f"{live}/partner/v2/testevents/accountcreated", timeout=10, headers=auth)
        assert process.wait(30) == 0
        log = process.stdout.read()
    finally:
        if process.poll() is None:
            process.kill()
        receiver.close()
    assert "AccountCreated" in log and f"-> {receiver.url}  200" in log
    [got] = receiver.requests
    headers = {k.lower(): v for k, v in got["headers"].items()}
    assert verify(secret, headers, got["body"])["eventType"] == "AccountCreated"      # default tolerance: 5 min
    assert "ptas listen" not in hooks_of(live, token)          # its webhook is gone when it stops


def test_listen_keeps_one_secret_per_world_and_stops_cleanly_on_sigterm(live, token, tmp_path):
    receiver = Receiver()
    try:
        first, secret = listener(live, token, receiver, tmp_path)
        assert "ptas listen" in hooks_of(live, token)
        first.terminate()                                      # SIGTERM, as a process manager stops it
        assert first.wait(30) == 0 and "ptas listen" not in hooks_of(live, token)
        again, secret_again = listener(live, token, receiver, tmp_path)
        again.terminate()
        again.wait(30)
        other = requests.post(f"{live}/_sandbox/partners", json={"name": "Other"}, timeout=10).json()["accessToken"]
        elsewhere, other_secret = listener(live, other, receiver, tmp_path)
        elsewhere.terminate()
        elsewhere.wait(30)
    finally:
        receiver.close()
    assert secret_again == secret and other_secret != secret
    assert oct(os.stat(tmp_path / "ptas-sandbox" / "listen-secrets.json").st_mode & 0o777) == "0o600"


def test_listen_stopped_by_ctrl_c_removes_its_webhook_and_says_it_was_interrupted(live, token, tmp_path):
    """A stop is a request the loop honours after the call in hand (never an exception raised inside the HTTP
    library); Ctrl-C ends as an interrupted command does."""
    receiver = Receiver()
    try:
        process, _ = listener(live, token, receiver, tmp_path, "--interval", "0.01")
        assert "ptas listen" in hooks_of(live, token)
        process.send_signal(signal.SIGINT)
        assert process.wait(30) == 130 and "ptas listen" not in hooks_of(live, token)
    finally:
        receiver.close()


def test_clock_advance_backwards_is_refused_in_words(capsys, live, token):
    status, _, err = ptas(capsys, "clock", "advance", "-1h", "--url", live, "--token", token)
    assert status == 2 and err.count("\n") == 1 and "never runs backwards" in err


@pytest.mark.parametrize("form", ["{host}", "{live}/partner/v2", "{live}/partner/v2/", "{live}/"])
def test_the_url_is_taken_as_people_write_it(capsys, live, token, form):
    url = form.format(live=live, host=live.removeprefix("http://"))
    status, out, err = ptas(capsys, "clock", "--url", url, "--token", token)
    assert status == 0 and out.endswith("(running)\n"), err


def test_a_url_that_is_no_address_is_one_line(capsys, token):
    status, _, err = ptas(capsys, "clock", "--url", "ftp://files.example", "--token", token)
    assert status == 2 and err.count("\n") == 1 and "not a sandbox address" in err


def test_scenarios_lists_this_installation_or_a_running_sandbox(capsys, live):
    status, here, _ = ptas(capsys, "scenarios")
    assert status == 0 and here.startswith("busy-merchant")
    status, there, _ = ptas(capsys, "scenarios", "--url", live)
    assert status == 0 and there == here
    status, _, err = ptas(capsys, "scenarios", "--url", "http://127.0.0.1:9")
    assert status == 2 and "cannot reach" in err


def test_a_bad_fault_blames_the_field_that_is_wrong(capsys, live, token):
    status, _, err = ptas(capsys, "faults", "add", "--effect", "status", "--status", "418", "--url", live,
                          "--token", token)
    assert status == 1 and "`effect.status`: 418 is not one of" in err and "effect.type" not in err


def test_a_token_that_is_no_jwt_is_told_so_in_our_words(capsys, live):
    status, _, err = ptas(capsys, "clock", "--url", live, "--token", "abc")
    assert status == 1 and "not a JWT" in err and "segments" not in err


def test_conform_without_its_extra_says_how_to_get_it():
    # A `make serve` installation: the harness's packages are missing (None in sys.modules stops their import).
    done = subprocess.run([sys.executable, "-c", "import sys; sys.modules['pytest'] = None\n"
                           "from ptas_sandbox.cli import main; sys.exit(main(['conform']))"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1, done.stderr
    # from the clone (the tests' own working folder): the editable install of it, never a PyPI name
    assert "pip install -e '.[conform]'" in done.stderr and "ptas-sandbox[conform]" not in done.stderr


def test_the_banner_spells_ptas_as_this_shell_reaches_it(tmp_path):
    # `make serve` runs .venv/bin/ptas, which is not on PATH: the banner's hints must say .venv/bin/ptas.
    ptas_path = os.path.join(os.path.dirname(sys.executable), "ptas")
    process = subprocess.Popen([os.path.relpath(ptas_path), "serve", "--port", "0", "--state", ":memory:",
                                "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env={**os.environ, "PATH": "/usr/bin:/bin"})
    try:
        banner = "".join(process.stdout.readline() for _ in range(4))
    finally:
        process.terminate()
        process.wait(30)
    assert f"{os.path.relpath(ptas_path)} inspect | {os.path.relpath(ptas_path)} requests -f" in banner, banner


def test_snapshot_load_replace_restores_the_world_it_was_saved_from(capsys, live, token, tmp_path):
    auth = {"Authorization": f"Bearer {token}"}
    saved = str(tmp_path / "world.json")
    assert ptas(capsys, "snapshot", "save", saved, "--url", live, "--token", token)[0] == 0
    made = requests.post(f"{live}/partner/v2/users", json={"name": "After"}, headers=auth, timeout=10).json()
    status, _, err = ptas(capsys, "snapshot", "load", saved, "--url", live)
    assert status == 1 and "409" in err and "--replace" in err
    status, out, _ = ptas(capsys, "snapshot", "load", saved, "--replace", "--url", live, "--token", token)
    assert status == 0 and out.startswith("replaced: loaded into world ")
    fresh = {"Authorization": f"Bearer {out.split('partner token ')[1].strip()}"}
    assert requests.get(f"{live}/partner/v2/users/{made['id']}", headers=fresh, timeout=10).status_code == 404
    assert ptas(capsys, "reset", "--url", live, "--token", token)[0] == 0      # the world's token still steers it


def test_a_reader_that_stops_early_gets_no_traceback():
    done = subprocess.run(["bash", "-c", f"'{sys.executable}' -m ptas_sandbox.cli scenarios | head -c 1"],
                          capture_output=True, text=True, timeout=60)
    assert done.stdout == "b" and done.stderr == ""


def test_reset_delete_deletes_the_world(capsys, live, token):
    status, out, _ = ptas(capsys, "reset", "--delete", "--url", live, "--token", token)
    assert status == 0 and out.startswith("deleted the world")
    auth = {"Authorization": f"Bearer {token}"}
    assert requests.get(f"{live}/partner/v2/partners/self", headers=auth, timeout=10).status_code == 401
    status, _, err = ptas(capsys, "reset", "--delete", "--url", live, "--token", token)
    assert status == 1 and "401" in err


@pytest.mark.parametrize("given", ["9xx", "abc", "4x"])
def test_a_bad_status_filter_is_refused_once_in_the_clis_words(capsys, live, token, given):
    status, out, err = ptas(capsys, "requests", "--status", given, "--url", live, "--token", token)
    assert status == 2 and out == "" and err.count("\n") == 1 and err.count("not valid") == 0, err
    assert f"--status {given}: give a status such as 404 or a class such as 4xx" in err


def test_listen_subscribes_again_after_a_reset_and_says_so(capsys, live, token, tmp_path):
    receiver = Receiver()
    process, _ = listener(live, token, receiver, tmp_path)
    try:
        assert ptas(capsys, "reset", "--url", live, "--token", token)[0] == 0
        told = process.stdout.readline()
        assert "subscription was gone" in told and "subscribed again" in told, told
        requests.post(f"{live}/partner/v2/testevents/accountcreated", timeout=10,
                      headers={"Authorization": f"Bearer {token}"})
        forwarded = process.stdout.readline()
        assert "AccountCreated" in forwarded and forwarded.rstrip().endswith(" 200"), forwarded
    finally:
        process.terminate()
        process.wait(30)
        receiver.close()


def test_listen_notes_a_stop_signal_whenever_it_comes_and_a_second_one_stops_at_once():
    """The handler takes no lock (a threading.Event's could be held by the very thread it interrupts, and the
    listener then never stopped): a signal during the pause between polls ends the pause, one before it is seen
    at once, and a second one raises."""
    from ptas_sandbox.cli.listen import Stop
    with Stop() as stop:
        assert not stop.is_set() and not stop.wait(0)
        threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGTERM)).start()
        assert stop.wait(600)                   # ended by the signal, not by the 600 s
        assert stop.wait(600) and stop.status() == 0
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
    assert signal.getsignal(signal.SIGTERM) != stop._ask      # the handlers are put back


def test_a_forward_nothing_answers_is_tried_again_then_said_with_a_hint(monkeypatch):
    from ptas_sandbox.cli import listen
    monkeypatch.setattr(listen, "RETRY_WAITS", (0.0, 0.0))
    tries = []
    import requests as library

    def refused(*args, **kwargs):
        tries.append(args)
        raise library.ConnectionError("refused")
    monkeypatch.setattr(library, "post", refused)
    said = listen.forward({"body": "{}", "headers": {"webhook-id": "msg_1"}}, "http://127.0.0.1:9/hooks", "whsec_"
                          + "a" * 44)
    assert len(tries) == 3
    assert said.startswith("failed after 3 tries (ConnectionError): nothing answered at http://127.0.0.1:9/hooks")
    assert "is your server running" in said


def test_serve_starts_without_importing_jsonschema():
    # jsonschema's import is costly at start-up: ptas serve builds its app and answers health without it (the
    # first body or profile to check imports it).
    done = subprocess.run([sys.executable, "-c", "import sys\n"
                           "import ptas_sandbox.cli.serve, ptas_sandbox.simulator.serving\n"
                           "from ptas_sandbox.simulator import create_app\n"
                           "app = create_app({'START_SERVICES': False})\n"
                           "assert app.test_client().get('/_sandbox/health').status_code == 200\n"
                           "print(sorted(m for m in sys.modules if m.split('.')[0] == 'jsonschema'))"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr
