"""A profile reaches the simulator the ways a developer starts one: `ptas serve --profile` and the fixtures'
`--ptas-profile` (a partner's own tests against its staging environment's choices)."""

import pytest

from ptas_sandbox.cli import main as ptas
from ptas_sandbox.conformance import profile as profiles
from ptas_sandbox.conformance.profile_learn import learn
from ptas_sandbox.conformance.targets import in_process
from ptas_sandbox.simulator import create_app

from .variants import Creates200

pytest_plugins = ["pytester"]

PARTNER_TEST = '''
def test_create_user(ptas_partner):
    reply = ptas_partner.call("POST", "/users", json={"name": "Jane"})
    assert reply.status_code == EXPECTED, reply.text
'''


@pytest.fixture(scope="module")
def creates_200(tmp_path_factory):
    """The profile of a deployment whose creates answer 200."""
    app = create_app({"STATE": ":memory:", "START_SERVICES": False})
    try:
        path = tmp_path_factory.mktemp("profiles") / "staging.json"
        profiles.dump(learn(in_process(Creates200(app))), path)
        return path
    finally:
        app.extensions["ptas"].close()


@pytest.mark.parametrize("with_profile", [True, False], ids=["--ptas-profile", "no profile"])
def test_the_fixtures_answer_as_the_profiled_deployment(pytester, creates_200, with_profile):
    pytester.makepyfile(test_partner=PARTNER_TEST.replace("EXPECTED", "200" if with_profile else "201"))
    options = ["--ptas-profile", str(creates_200)] if with_profile else []
    pytester.runpytest_inprocess("-p", "no:cacheprovider", *options).assert_outcomes(passed=1)


def test_serve_refuses_a_file_that_is_not_a_profile_in_one_line(tmp_path, capsys):
    bad = tmp_path / "staging.json"
    bad.write_text('{"format": "ptas-deployment-profile", "version": 99, "choices": {}}')
    with pytest.raises(SystemExit) as exit:
        ptas(["serve", "--state", ":memory:", "--port", "0", "--profile", str(bad)])
    err = capsys.readouterr().err
    assert exit.value.code == 2 and "version 99" in err and len(err.strip().splitlines()) == 1
