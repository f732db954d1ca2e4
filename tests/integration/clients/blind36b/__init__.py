"""The second pair of partner clients written blind for issue 36, from the spec and docs/chaos.md alone, and
counted on the report before any rule was changed for them: a careful settlement-sync daemon that keeps its state
in a file and restarts (careful.py) and a naive merchant portal with 20 mistakes (naive.py; MANIFEST.md says what
each does and which requests show each mistake). Kept as they were written; both take the harness's `Run` (base,
sleep, clock, receiver) where the writer's run.py, which MANIFEST.md names, gave its own. The report is proven on
them in tests/integration/test_blind_clients.py."""
