"""The online detector on planted steps and known noise (pure functions, no database)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from detection import (
    DetectorConfig, between_build_noise, detect, noise_summary, replay_online, speedup_replicates, within_run_se,
)
from detection.api import replay_online_slow


def noisy(seed: int, n: int = 200, sigma: float = 0.01, level: float = 2.0) -> np.ndarray:
    return level * np.exp(np.random.default_rng(seed).normal(0.0, sigma, n))


def step(values: np.ndarray, at: int, rel: float) -> np.ndarray:
    out = values.copy()
    out[at:] *= 1.0 + rel
    return out


def test_finds_a_planted_5_sd_drop_within_two_builds_with_magnitude_and_kind():
    x = step(noisy(1), 120, -0.05)
    cps = replay_online(x, direction="higher_is_better")
    assert len(cps) == 1
    cp = cps[0]
    assert cp.state == "alert" and cp.kind == "regression"
    assert cp.first_bad == 120 and cp.last_good == 119
    assert cp.raised_at <= 122  # seen on the second or third bad build
    assert cp.magnitude == pytest.approx(-0.05, abs=0.02)  # from the few points seen when raised
    assert cp.relative_change == pytest.approx(cp.magnitude)
    assert cp.z < -4 and 0.99 <= cp.confidence <= 1.0
    assert cp.before == pytest.approx(2.0, rel=0.01) and cp.after == pytest.approx(1.9, rel=0.03)
    assert cp.noise == pytest.approx(0.01, rel=0.35)


def test_a_10_sd_step_is_raised_on_its_second_build():
    for seed in range(5):
        cps = replay_online(step(noisy(30 + seed), 80, -0.10), direction="higher_is_better")
        assert [(c.first_bad, c.raised_at) for c in cps] == [(80, 81)]


def test_direction_decides_the_kind_and_the_sign_of_magnitude():
    x = step(noisy(2), 100, +0.06)
    up = replay_online(x, direction="higher_is_better")
    down = replay_online(x, direction="lower_is_better")
    assert [c.kind for c in up] == ["improvement"] and up[0].magnitude > 0.04
    assert [c.kind for c in down] == ["regression"] and down[0].magnitude < -0.04
    assert down[0].relative_change > 0.04  # the value itself grew


@pytest.mark.parametrize("seed", range(6))
def test_a_1_5_sd_step_is_found_later(seed):
    x = step(noisy(10 + seed, sigma=0.01), 100, -0.015)
    cps = replay_online(x, direction="higher_is_better")
    hits = [c for c in cps if abs(c.first_bad - 100) <= 5]
    # the statistical limit: about 8-12 builds of evidence; allow up to 30
    assert hits and hits[0].raised_at - 100 + 1 <= 30 and hits[0].kind == "regression"
    assert len(cps) == 1


def test_several_steps_are_each_alerted_once():
    x = step(step(step(noisy(3), 50, 0.05), 100, -0.08), 150, 0.04)
    cps = replay_online(x, direction="lower_is_better")
    assert [c.first_bad for c in cps] == [50, 100, 150]
    assert [c.kind for c in cps] == ["regression", "improvement", "regression"]


def test_a_single_outlier_never_alerts_but_is_a_suspect_when_newest():
    x = noisy(4)
    x[150] *= 1.3
    assert replay_online(x, direction="higher_is_better") == []
    cps = detect(x[:151], direction="higher_is_better")
    assert [(c.state, c.first_bad, c.raised_at, c.kind) for c in cps] == [("suspect", 150, 150, "improvement")]
    assert cps[0].confidence < 0.999 or cps[0].z > 0


def test_missing_points_are_skipped_and_indices_kept():
    x = list(step(noisy(5), 100, -0.05))
    x[100] = None
    x[60] = float("nan")
    cps = replay_online(x, direction="higher_is_better")
    assert len(cps) == 1
    assert cps[0].first_bad == 101 and cps[0].last_good == 99
    assert detect([None] * 5, direction="higher_is_better") == []
    assert detect([], direction="lower_is_better") == []


def test_too_short_series_raise_nothing():
    x = step(noisy(6, n=9), 5, -0.2)
    assert replay_online(x, direction="higher_is_better") == []


def test_replay_online_equals_feeding_prefixes():
    for seed, (at, rel) in enumerate([(40, -0.03), (70, 0.025), (90, -0.04)]):
        x = step(noisy(20 + seed, n=120), at, rel)
        x[55] *= 1.08  # an outlier on the way
        fast = replay_online(x, direction="higher_is_better")
        slow = replay_online_slow(x, direction="higher_is_better")
        assert [(c.first_bad, c.raised_at) for c in fast] == [(c.first_bad, c.raised_at) for c in slow]
        assert fast  # each series has an alert to compare


def test_detect_is_prefix_stable():
    x = step(step(noisy(7), 60, -0.04), 130, 0.04)
    full = detect(x, direction="higher_is_better", include_suspect=False)
    for k in (70, 100, 140, 160):
        part = detect(x[:k], direction="higher_is_better", include_suspect=False)
        assert part == full[: len(part)]


def test_samples_floor_the_noise():
    x = step(noisy(8, sigma=0.002), 100, -0.015)  # 7.5 sd of the series: alerts on values alone
    assert replay_online(x, direction="higher_is_better")
    rng = np.random.default_rng(0)
    # but each run's replicates say a point is only known to +-2%: not an alert any more
    samples = [list(v * np.exp(rng.normal(0, 0.12, 30))) for v in x]
    assert within_run_se(samples[0]) == pytest.approx(0.12 * 1.25 / math.sqrt(30), rel=0.4)
    assert replay_online(x, direction="higher_is_better", samples=samples) == []


def test_noise_history_is_pooled():
    x = step(noisy(9, n=40, sigma=0.002), 30, -0.012)
    assert replay_online(x, direction="higher_is_better")
    assert replay_online(x, direction="higher_is_better", noise_history=0.02) == []


def test_constant_series_still_alert_on_real_steps():
    x = [100.0] * 40 + [103.0] * 3
    cps = replay_online(x, direction="lower_is_better")
    assert [(c.first_bad, c.raised_at, c.kind) for c in cps] == [(40, 41, "regression")]


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="direction"):
        detect([1.0, 2.0], direction="up")
    with pytest.raises(ValueError, match=r"values\[1\]"):
        detect([1.0, -2.0], direction="lower_is_better")
    with pytest.raises(ValueError, match="samples"):
        detect([1.0, 2.0], direction="lower_is_better", samples=[[1.0]])


def test_config_bar_changes_sensitivity():
    x = step(noisy(11), 100, -0.03)
    strict = DetectorConfig(alert_z=12.0)
    assert replay_online(x, direction="higher_is_better", config=strict) == []
    assert replay_online(x, direction="higher_is_better")


def test_noise_helpers():
    assert speedup_replicates([2.0, 3.0, 0.0], [1.0, 1.5, 1.0]) == [2.0, 2.0]
    with pytest.raises(ValueError):
        speedup_replicates([1.0], [1.0, 2.0])
    assert math.isnan(within_run_se([1.0, 2.0]))
    assert between_build_noise(noisy(12, n=400, sigma=0.01)) == pytest.approx(0.01, rel=0.15)
    summary = noise_summary(noisy(13), [[1.0, 1.01, 0.99, 1.0]] * 200)
    assert summary["between_build"] == pytest.approx(0.01, rel=0.25) and 0 < summary["within_run"] < 0.01


def test_detect_is_fast_enough_for_hundreds_of_series():
    import time

    xs = [step(noisy(100 + k), 100, -0.04) for k in range(20)]
    t0 = time.perf_counter()
    for x in xs:
        detect(x, direction="higher_is_better")
    assert (time.perf_counter() - t0) / len(xs) < 0.1  # ~10-20 ms measured on the 2-core machine
