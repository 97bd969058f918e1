"""Benchmarks: each module here is a script that prints a table, run from the repository's root as
``python -m bench.NAME`` (docs/benchmarks.md); ``bench.lib`` holds what several of them import,
``bench/gpu/`` the drivers of the lent GPU machines (its README), ``bench/results/`` what they measured."""
