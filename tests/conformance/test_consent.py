"""The OAuth2 return step on a deployment: the provider's page answered by a recognised form, a hook, or not at
all (then not checked, with what would check it)."""

import re
import shlex
import sys

from ptas_sandbox.conformance import consent
from tests.support.deployments import Deployment

PAGE = """<form method="post" action="/consent/k1"><input type="hidden" name="csrfToken" value="t1">
<button type="submit" name="decision" value="approve">Allow</button></form>
<form method="post" action="/consent/k1"><input type="hidden" name="decision" value="outcome">
<input type="radio" name="outcome" value="notfound" checked><input type="radio" name="outcome" value="error">
<button type="submit">Fail</button></form>"""


def test_a_consent_form_is_answered_with_its_hidden_fields_and_the_control_of_the_decision():
    assert consent.choose(PAGE, "approve")[1] == {"csrfToken": "t1", "decision": "approve"}
    assert consent.choose(PAGE, "notfound")[1] == {"decision": "outcome", "outcome": "notfound"}
    assert consent.choose(PAGE, "error")[1] == {"decision": "outcome", "outcome": "error"}
    assert consent.choose("<p>Sign in with your bank app</p>", "approve") is None


def test_the_hook_gets_the_page_and_the_decision_and_its_output_is_the_return_step():
    script = ("import os; print('HTTP/1.1 303'); "
              "print('Location: ' + os.environ['PTAS_OAUTH_RETURN_URL'] + '?status=Success&reference=r'); "
              "print('X-Service-AuthStatus: Success'); "
              "print('X-Service-AuthReference: ' + os.environ['PTAS_OAUTH_URL'])")
    reply = consent.by_hook(f"{shlex.quote(sys.executable)} -c {shlex.quote(script)}",
                            "https://bank.example/consent/1", "approve", "https://partner.example/done")
    assert reply.status == 303 and reply.headers["x-service-authstatus"] == "Success"
    assert reply.headers["location"].startswith("https://partner.example/done?status=Success")
    assert reply.headers["x-service-authreference"] == "https://bank.example/consent/1"


def test_a_provider_page_the_harness_does_not_recognise_leaves_the_return_step_not_checked(capsys):
    def no_form(environ, status, headers, body):
        if environ["REQUEST_METHOD"] == "GET" and "/oauth/consent/" in environ["PATH_INFO"]:
            return status, headers, b"<p>Sign in with your bank app</p>"
    deployment = Deployment()
    try:
        status, output = deployment.run("contract and oauth", change=no_form, capsys=capsys)
    finally:
        deployment.close()
    assert status == 0, output[-3000:]
    assert len(re.findall(r"\] SKIPPED +oauth ", output)) == 5      # every @contract return scenario
    assert "check with: --oauth-consent COMMAND (or interactive)" in output
    assert "NOT CHECKED in oauth" in output.strip().splitlines()[-1]


def test_a_person_at_the_terminal_answers_the_page_and_says_where_the_browser_ended(tmp_path):
    terminal = tmp_path / "tty"
    terminal.write_text("https://partner.example/done?reference=r&status=Success&message=ok\n")
    reply = consent.by_person("https://bank.example/consent/1", "approve", "https://partner.example/done",
                              terminal=str(terminal))
    assert reply.status == 302 and reply.headers["location"].startswith("https://partner.example/done?")
    assert "interactive" in reply.operation and "x-service-authstatus" not in reply.headers
    assert "open https://bank.example/consent/1" in terminal.read_text()
