"""Tests of the workload suite (workloads/suite)."""
