"""The host rules shared by the run page, the workload charts, detection and the verdict."""
from __future__ import annotations

from dashboard.results.host import HOST_REFERENCE_RUNS, slowdown, slowed_points


def test_slowdown_is_the_ratio_of_median_probes_and_needs_both_sides():
    assert slowdown([0.9, 1.0, 1.1, None], [1.5]) == {"slowdown": 1.5, "before_probe_ms": 1.0, "after_probe_ms": 1.5}
    assert slowdown([], [1.5]) is None and slowdown([1.0], [None]) is None


def test_only_host_bound_points_slower_than_the_points_before_them_are_flagged():
    probes = [0.95, 0.97, 0.96, 1.17, 1.17, 1.00, 1.30, None]
    shares = [0.98, 0.98, 0.98, 0.98, 0.30, 0.98, None, 0.98]
    flagged = slowed_points(probes, shares)
    # 1.17 against a median of 0.96: flagged; the same probe on a GPU-bound point, a point at the
    # usual speed, one without a host share and one without a probe are not.
    assert list(flagged) == [3]
    assert flagged[3]["slowdown"] == round(1.17 / 0.96, 3)
    assert slowed_points([1.0], [0.99]) == {}  # nothing before the first point


def test_the_reference_is_the_recent_points_only():
    # A host that became slower for good stops being flagged once it is the recent normal.
    probes = [0.9] * 5 + [1.2] * (HOST_REFERENCE_RUNS + 2)
    flagged = slowed_points(probes, [0.98] * len(probes))
    assert 5 in flagged and len(probes) - 1 not in flagged
