"""The conformance harness: Gherkin suites run against the simulator or a real deployment."""

from ptas_sandbox.data import data

# features/ ships inside the package; pytest-bdd wants a path on disk (the package is never zipped).
FEATURES = str(data("features"))
