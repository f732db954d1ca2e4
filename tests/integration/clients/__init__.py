"""Partner clients written from the spec alone, to prove the integration report on software it was not tuned
to (issue 21): three careful ones (one recovering from every fault type, one multi-threaded, one event-driven
that runs for hours) and three naive ones whose mistakes differ from examples/naive_client.py and from each
other. Each module says what it does."""
