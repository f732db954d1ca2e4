"""Benchmarks: `make bench` runs them all; each module also runs alone with `python -m bench.<name>`."""
