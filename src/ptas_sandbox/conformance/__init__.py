"""The conformance harness: Gherkin suites run against the simulator or a real deployment."""

import os

# features/ sits beside conformance/ both in the source tree and in an installed ptas_sandbox package.
FEATURES = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "features"))
