"""The profile layer: the simulator answering as a deployment whose profile a conformance run learned
(`ptas serve --profile FILE`, docs/profiles.md)."""
