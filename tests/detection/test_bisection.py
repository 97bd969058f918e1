"""detection.bisection (issue #31): a midpoint is good, bad or unknown against both ends of a range."""
from __future__ import annotations

import pytest

from detection.bisection import BAD, GOOD, UNKNOWN, classify, ends_differ, nearest, steps_needed


def test_a_midpoint_at_the_bad_level_is_bad_and_at_the_good_level_good():
    good, bad = [10.0, 10.1], [12.0, 12.1]
    assert classify(good, bad, [12.05, 11.98], sd=0.01).decision == BAD
    assert classify(good, bad, [10.02, 10.05], sd=0.01).decision == GOOD
    found = classify(good, bad, [12.05, 11.98], sd=0.01)
    assert found.position == pytest.approx(1.0, abs=0.05) and found.z_good > 3 > found.z_bad


def test_between_the_levels_or_within_the_noise_of_both_is_unknown_then_the_nearer_end():
    halfway = classify([10.0, 10.0], [12.0, 12.0], [11.0, 11.0], sd=0.005)
    assert halfway.decision == UNKNOWN and 0.4 < halfway.position < 0.6
    noisy = classify([10.0], [10.5], [10.4], sd=0.05)  # the ends are 1 noise apart: nothing can tell
    assert noisy.decision == UNKNOWN and nearest(noisy) == BAD


def test_off_both_levels_but_nearly_at_one_is_that_ends():
    # A tiny CPU case: the bad level is 100x the good one; a good build measured 10 % off the good end's run.
    near = classify([0.02], [2.0], [0.022], sd=0.02)
    assert near.z_good > 3 and near.z_bad > 3 and near.decision == GOOD and near.near_end
    assert classify([0.02], [2.0], [1.9], sd=0.02).decision == BAD


def test_the_attempts_own_spread_widens_a_noise_model_that_is_too_narrow():
    # Attempts that scatter by ~10 % make a 12 % step unknown although the model says 1 %.
    scattered = classify([10.0, 11.0, 9.0], [11.2, 12.4, 10.1], [11.0, 9.8, 12.0], sd=0.01)
    assert scattered.decision == UNKNOWN and scattered.sd > 0.05


def test_exact_values_need_no_noise():
    assert classify([0.0], [1.0], [1.0], sd=0.0, exact=True).decision == BAD
    assert classify([2.0], [3.0], [2.0], sd=0.0, exact=True).decision == GOOD
    assert classify([2.0], [3.0], [4.0], sd=0.0, exact=True).decision == UNKNOWN
    assert ends_differ([2.0], [3.0], sd=0.0, exact=True) and not ends_differ([2.0], [2.0], sd=0.0, exact=True)


def test_the_ends_differ_only_past_k_noise():
    assert ends_differ([10.0, 10.1], [12.0, 12.1], sd=0.02)
    assert not ends_differ([10.0, 10.1], [10.2, 10.3], sd=0.02)


@pytest.mark.parametrize(("builds", "steps"), [(2, 0), (3, 1), (6, 3), (9, 3), (10, 4), (33, 5)])
def test_steps_needed(builds, steps):
    assert steps_needed(builds) == steps
