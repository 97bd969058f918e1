"""Replayed online, the detector does not flag pure noise (fixed seeds, the benchmark's generator)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from bench.lib import detection_series as gen
from detection import replay_online



@pytest.mark.parametrize("family", gen.FAMILIES)
def test_online_replay_never_flags_pure_noise_in_the_fixed_seed_set(family):
    # A regression guard on one fixed set (12 series x 200 builds per family, sd 0.3%-3%): the
    # detector's rate is ~0.3 false alerts per 1,000 noise builds, so some seeds do see one; this
    # set sees none and must keep seeing none. The rate itself is checked below on 80,000 builds.
    rng = np.random.default_rng(20261125)
    flagged = []
    for k in range(12):
        sigma = math.exp(rng.uniform(math.log(0.003), math.log(0.03)))
        values = 5.0 * np.exp(gen.noise(rng, family, sigma, 200))
        direction = "higher_is_better" if k % 2 else "lower_is_better"
        flagged += [(k, cp.first_bad, cp.raised_at) for cp in replay_online(values, direction=direction)]
    assert flagged == []


def test_false_alert_rate_over_a_larger_noise_set_is_under_the_target():
    series = [s for s in gen.synthetic(400, seed=777, noise_fraction=1.0)]
    alerts = sum(len(replay_online(s.values, direction=s.direction)) for s in series)
    builds = sum(len(s.values) for s in series)
    assert 1000.0 * alerts / builds <= 0.5  # the target: 0.5 per 1,000 builds
