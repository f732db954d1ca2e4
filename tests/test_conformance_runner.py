"""`ptas conform`'s exit status and last line: a CI gate must not go green on nothing, or on an unreachable target."""

import socket

from ptas_sandbox.cli import main


def test_a_tag_expression_selecting_nothing_fails(capsys):
    assert main(["conform", "--tags", "@contract and @sandbox"]) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    assert "no scenario was selected (check --tags)" in lines and lines[-1] == "0 passed, 0 failed"


def test_an_unknown_tag_is_named(capsys):
    assert main(["conform", "--tags", "tokens and not flaky"]) == 2
    assert "unknown tag(s) flaky; tags are contract, sandbox, slow, tokens" in capsys.readouterr().out


def test_an_unreachable_target_is_reported_without_a_traceback(capsys):
    with socket.socket() as probe:          # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert main(["conform", "--target", f"http://127.0.0.1:{port}", "--token", "x" * 40]) == 2
    output = capsys.readouterr().out
    assert "cannot reach" in output and "Traceback" not in output


def test_a_deployment_without_a_token_is_refused(capsys, monkeypatch):
    monkeypatch.delenv("PTAS_TOKEN", raising=False)
    from ptas_sandbox.conformance import runner
    assert runner.run(target="http://127.0.0.1:1") == 2
