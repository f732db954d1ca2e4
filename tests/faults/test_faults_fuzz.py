"""Fuzzing of the fault and snapshot operations on an app of their own (faults would break the operations fuzzed
after them in tests/fuzz/test_fuzz.py): no input gives a 500 or an answer the document does not describe."""

import hypothesis
import schemathesis
from schemathesis import checks

from ptas_sandbox.simulator import create_app

APP = create_app({"START_SERVICES": False, "SECRET": "fuzzing secret, long enough for HS256"})
WORLD = APP.test_client().post("/_sandbox/partners", json={"name": "Fuzz"}).get_json()
AUTH = {"Authorization": f"Bearer {WORLD['accessToken']}"}

schema = schemathesis.openapi.from_wsgi("/openapi.json", APP)


@schema.include(path_regex="^/_sandbox/faults").parametrize()
@hypothesis.settings(max_examples=40, deadline=None, derandomize=True,
                     suppress_health_check=list(hypothesis.HealthCheck))
def test_no_input_breaks_a_fault_operation(case):
    APP.test_client().delete("/_sandbox/faults", headers=AUTH)      # room under the per-world bound
    case.call_and_validate(headers=AUTH, excluded_checks=[checks.negative_data_rejection, checks.unsupported_method])


@schema.include(path_regex="^/_sandbox/snapshots$").parametrize()
@hypothesis.settings(max_examples=40, deadline=None, derandomize=True,
                     suppress_health_check=list(hypothesis.HealthCheck))
def test_no_snapshot_breaks_the_loader(case):
    """A snapshot's validity lies in relations between rows (one root partner, accounts its transactions name)
    that no schema states: schema-valid documents may be refused, with a 400, never a 500."""
    case.call_and_validate(excluded_checks=[checks.negative_data_rejection, checks.positive_data_acceptance,
                                            checks.unsupported_method])
