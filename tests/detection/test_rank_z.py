"""The detector's rank condition is the Mann-Whitney test: its z for every (split, points after)
at once equals scipy.stats.mannwhitneyu's, one pair of samples at a time."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from detection.online import rank_z


def test_rank_z_is_scipys_mann_whitney_z():
    rng = np.random.default_rng(18)
    splits, width, k = 6, 12, 5
    before = rng.normal(size=(splits, width))
    before[0, :3] = np.nan  # a short before window: NaN points count nowhere
    after = rng.normal(0.7, 1.0, size=(splits, k))
    n_before = np.sum(np.isfinite(before), axis=1)
    z = rank_z(before, after, n_before)
    for i in range(splits):
        b = before[i][np.isfinite(before[i])]
        for m in range(1, k + 1):
            result = stats.mannwhitneyu(after[i, :m], b, alternative="greater", method="asymptotic", use_continuity=False)
            assert z[i, m - 1] == pytest.approx(stats.norm.isf(result.pvalue), rel=1e-9, abs=1e-9)
