"""Partner clients written from the spec alone, to prove the integration report on software it was not tuned
to (issue 21): two careful ones (one multi-threaded, one recovering from every fault type) and two naive ones
whose mistakes differ from examples/naive_client.py and from each other. Each module says what it does."""
