"""Confirmation by re-measurement on the combined runs of the previous and the new build."""
from __future__ import annotations

import numpy as np
import pytest

from detection import confirm_with_remeasurement


def run(seed: int, level: float, n: int = 30, sd: float = 0.01) -> list[float]:
    return list(level * np.exp(np.random.default_rng(seed).normal(0.0, sd, n)))


def test_same_build_twice_is_no_change():
    c = confirm_with_remeasurement([run(1, 1.5), run(2, 1.5)], [run(3, 1.5), run(4, 1.5)], "higher_is_better",
                                   between_run_sigma=0.004)
    assert c.decision == "no_change" and abs(c.z) < 1.5
    assert c.runs_old == 2 and c.runs_new == 2 and c.run_sigma == pytest.approx(0.004)


def test_a_real_drop_is_confirmed_with_magnitude_and_direction():
    old, new = [run(1, 1.5), run(2, 1.5)], [run(3, 1.44), run(4, 1.44)]  # 4% slower speedup
    c = confirm_with_remeasurement(old, new, "higher_is_better", between_run_sigma=0.004)
    assert c.decision == "regression" and c.z < -3
    assert c.magnitude == pytest.approx(-0.04, abs=0.01) and c.relative_change == pytest.approx(c.magnitude)
    assert c.before == pytest.approx(1.5, rel=0.01) and c.after == pytest.approx(1.44, rel=0.01)
    assert 0.99 < c.confidence <= 1.0
    # the same change on a latency is an improvement
    assert confirm_with_remeasurement(old, new, "lower_is_better", between_run_sigma=0.004).decision == "improvement"


def test_between_run_noise_keeps_a_suspect_from_being_confirmed_by_tight_samples():
    old, new = run(1, 1.5, sd=0.002), run(2, 1.485, sd=0.002)  # 1% apart, each run known to 0.05%
    tight = confirm_with_remeasurement(old, new, "higher_is_better")
    assert tight.decision == "regression"  # the samples alone understate run-to-run noise
    honest = confirm_with_remeasurement(old, new, "higher_is_better", between_run_sigma=0.01)
    assert honest.decision == "no_change"


def test_run_spread_estimates_the_between_run_noise_and_history_joins_the_old_side():
    old = [run(1, 1.50), run(2, 1.53)]
    new = [run(3, 1.47), run(4, 1.50)]
    c = confirm_with_remeasurement(old, new, "higher_is_better")
    assert c.run_sigma > 0.01 and c.decision in ("no_change", "inconclusive")
    hist = [1.5 * np.exp(e) for e in np.random.default_rng(9).normal(0, 0.004, 20)]
    c2 = confirm_with_remeasurement(run(1, 1.5), run(3, 1.44), "higher_is_better", between_run_sigma=0.004, history=hist)
    assert c2.runs_old == 21 and c2.decision == "regression"


def test_bad_input():
    with pytest.raises(ValueError, match="new_samples"):
        confirm_with_remeasurement(run(1, 1.5), [], "higher_is_better")
    with pytest.raises(ValueError, match="old_samples"):
        confirm_with_remeasurement([[-1.0]], run(1, 1.5), "higher_is_better")
    with pytest.raises(ValueError, match="direction"):
        confirm_with_remeasurement(run(1, 1.5), run(1, 1.5), "sideways")
