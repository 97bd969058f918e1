"""Statistics over timing samples. Pure Python, no torch: tested on its own."""
from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass
from typing import Sequence


def median(values: Sequence[float]) -> float:
    if not values:
        raise ValueError("median of no values")
    return float(statistics.median(values))


def percentile(sorted_values: Sequence[float], fraction: float) -> float:
    """Linear-interpolated percentile of already sorted values, ``fraction`` in [0, 1]."""
    if not sorted_values:
        raise ValueError("percentile of no values")
    position = fraction * (len(sorted_values) - 1)
    low = math.floor(position)
    high = math.ceil(position)
    weight = position - low
    return sorted_values[low] * (1 - weight) + sorted_values[high] * weight


@dataclass(frozen=True)
class SpeedupEstimate:
    """Median eager / median compiled, with a 95% bootstrap interval and its relative half-width."""

    speedup: float
    low: float
    high: float

    @property
    def noise(self) -> float:
        """Half the interval's width over the speedup: 0.013 means +-1.3%."""
        return (self.high - self.low) / 2 / self.speedup if self.speedup > 0 else 0.0


def speedup_ratio(eager_ms: Sequence[float], compiled_ms: Sequence[float]) -> float:
    """Median over pairs of eager block / compiled block.

    The two blocks of a pair were timed back to back, so a change of host speed (clocks, another
    process, a Python GC pause) that lasts longer than a pair slows both and cancels in their ratio.
    The ratio of the two medians does not cancel it: on the H100, the launch-bound mlp_loop's
    run-to-run difference was 2-4% with it and 0.3-1.6% with this (bench/results, 2026-11-22).
    """
    if len(eager_ms) != len(compiled_ms):
        raise ValueError(f"unpaired samples: {len(eager_ms)} eager blocks, {len(compiled_ms)} compiled blocks")
    return median([e / c for e, c in zip(eager_ms, compiled_ms)])


def bootstrap_speedup(
    eager_ms: Sequence[float],
    compiled_ms: Sequence[float],
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> SpeedupEstimate:
    """Paired bootstrap of the median of per-pair ratios (``speedup_ratio``) over interleaved blocks.

    Blocks were timed in pairs (eager block i next to compiled block i), so a pair is resampled as a
    unit: a drift of the clock that slows both blocks of a pair moves both, as it did when measured.
    Seeded, so the same samples always give the same interval.
    """
    if len(eager_ms) != len(compiled_ms):
        raise ValueError(f"unpaired samples: {len(eager_ms)} eager blocks, {len(compiled_ms)} compiled blocks")
    if not eager_ms:
        raise ValueError("no samples")
    if min(compiled_ms) <= 0:
        raise ValueError("compiled samples must be positive")
    pair_ratios = [e / c for e, c in zip(eager_ms, compiled_ms)]
    point = median(pair_ratios)
    count = len(pair_ratios)
    rng = random.Random(seed)
    ratios = []
    for _ in range(resamples):
        ratios.append(statistics.median(pair_ratios[rng.randrange(count)] for _ in range(count)))
    ratios.sort()
    tail = (1 - confidence) / 2
    return SpeedupEstimate(speedup=point, low=percentile(ratios, tail), high=percentile(ratios, 1 - tail))
