"""The conformance suites as one pytest module: every feature under features/, bound to the steps."""

from pytest_bdd import scenarios

from ptas_sandbox.conformance import FEATURES

scenarios(FEATURES)
