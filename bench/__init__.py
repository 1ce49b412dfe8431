"""Benchmarks: `python -m bench` prints JSON figures (see README)."""
