"""Property-based fuzzing of every documented operation with schemathesis: no input gives a 500, and every
answer matches the document (status, content type, schema)."""

import hypothesis
import schemathesis
from schemathesis import checks

from ptas_sandbox.simulator import create_app

# One app for the module: schemathesis binds the document at import. The rate limit is lifted so the fuzzer
# exercises the operations rather than the limiter (tests/limits/test_rate_limit.py covers that).
APP = create_app({"RATE_LIMIT": 10**9, "START_SERVICES": False, "SECRET": "fuzzing secret, long enough for HS256"})
WORLD = APP.test_client().post("/_sandbox/partners", json={"name": "Fuzz"}).get_json()
AUTH = {"Authorization": f"Bearer {WORLD['accessToken']}"}

schema = schemathesis.openapi.from_wsgi("/openapi.json", APP)


# Faults would break the operations fuzzed after them, and a snapshot's validity lies in relations between rows
# that no schema states: tests/faults/test_faults_fuzz.py fuzzes both on an app of their own.
@schema.exclude(path_regex="^/_sandbox/(reset|clock|faults.*|snapshots)$").parametrize()
@hypothesis.settings(max_examples=25, deadline=None, derandomize=True,
                     suppress_health_check=list(hypothesis.HealthCheck))
def test_no_input_breaks_an_operation(case):
    # Two checks do not apply by design: unknown query parameters are tolerated (and the bearer header is
    # always sent), and removed paths answer 404 rather than 405 (spec §4.2 note 6).
    case.call_and_validate(headers=AUTH, excluded_checks=[checks.negative_data_rejection, checks.unsupported_method])
