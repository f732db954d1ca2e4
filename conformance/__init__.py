"""The conformance harness: Gherkin suites run against the simulator or a real deployment."""
