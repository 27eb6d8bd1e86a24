"""Benchmarks: each prints figures measured side by side in one run."""
