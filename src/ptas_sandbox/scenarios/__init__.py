"""Named sandbox worlds (data files, one JSON each), loaded by ptas_sandbox.simulator.scenarios."""
