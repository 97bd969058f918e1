"""Value types of the detector: directions, change points and the detector's settings."""
from __future__ import annotations

from dataclasses import asdict, dataclass

HIGHER_IS_BETTER = "higher_is_better"
LOWER_IS_BETTER = "lower_is_better"
DIRECTIONS = (HIGHER_IS_BETTER, LOWER_IS_BETTER)

#: Direction of each metric a result stores (speedup and memory compression, eager / compiled peak:
#: higher is better; latency, compile time and memory: lower is better).
METRIC_DIRECTIONS = {
    "speedup": HIGHER_IS_BETTER,
    "memory_compression": HIGHER_IS_BETTER,
    "eager_latency_ms": LOWER_IS_BETTER,
    "compiled_latency_ms": LOWER_IS_BETTER,
    "compile_time_cold_s": LOWER_IS_BETTER,
    "compile_time_warm_s": LOWER_IS_BETTER,
    "compile_cpu_ratio": LOWER_IS_BETTER,
    "eager_peak_memory_bytes": LOWER_IS_BETTER,
    "compiled_peak_memory_bytes": LOWER_IS_BETTER,
}


def direction_sign(direction: str) -> int:
    """+1 when a larger value is better, -1 when a smaller one is."""
    if direction == HIGHER_IS_BETTER:
        return 1
    if direction == LOWER_IS_BETTER:
        return -1
    raise ValueError(f"direction must be one of {', '.join(map(repr, DIRECTIONS))}, not {direction!r}")


@dataclass(frozen=True)
class ChangePoint:
    """A change of level found in a series.

    Indices are positions in the series as given (None/NaN points keep their positions).

    - ``first_bad``: index of the first point of the new level; ``last_good`` the last valid point
      before it (None when there is none).
    - ``raised_at``: index of the newest point when the change was raised; ``raised_at - first_bad + 1``
      valid points after the change had been seen (the detection delay, in builds).
    - ``kind``: 'regression' (worse for the metric's direction) or 'improvement'.
    - ``relative_change``: after/before - 1 of the metric itself (+0.05 = the value grew by 5%).
    - ``magnitude``: the same change signed by goodness: negative is worse, positive is better, so a
      latency that grew 5% and a speedup that fell 5% both give about -0.05.
    - ``before`` / ``after``: robust levels (medians) of the window before the change and of the
      points after it, in the metric's units.
    - ``z``: the test statistic: the shift over its standard error (noise of the series, including
      autocorrelation and the uncertainty of both levels), signed like ``magnitude``.
    - ``confidence``: 1 - p, with p the one-sided normal tail of ``|z|`` times the number of candidate
      splits scanned (Bonferroni), clipped to [0, 1]. An alert is at least 0.99; a suspect, less.
    - ``state``: 'alert' (evidence past the alert bar) or 'suspect' (the newest build looks changed but
      the evidence is short of the bar: re-measure it, see ``confirm_with_remeasurement``).
    - ``noise``: the between-build noise (relative standard deviation) the test used.
    """

    first_bad: int
    last_good: int | None
    raised_at: int
    kind: str
    relative_change: float
    magnitude: float
    before: float
    after: float
    z: float
    confidence: float
    state: str
    noise: float

    @property
    def delay(self) -> int:
        """Points seen from the first bad one to the one that raised it, both included."""
        return self.raised_at - self.first_bad + 1

    def to_dict(self) -> dict:
        out = asdict(self)
        for key in ("relative_change", "magnitude", "before", "after", "z", "confidence", "noise"):
            out[key] = round(float(out[key]), 6)
        return out


@dataclass(frozen=True)
class DetectorConfig:
    """Settings of the online detector (defaults chosen on the benchmark, see the package docstring).

    z thresholds are in units of the standard error of the shift.
    """

    alert_z: float = 4.2  # alert bar for the mean shift
    short_extra: float = 0.0  # added to the alert bar with 2 or 3 points after the split
    suspect_z: float = 3.0  # lower bar: the newest build is reported as a suspect
    max_after: int = 30  # candidate splits only in the last ``max_after`` points
    min_after: int = 2  # an alert needs at least this many points after the split
    min_before: int = 8  # and at least this many points of the current level before it
    before_window: int = 60  # points of the current level used for the before-level
    scale_window: int = 80  # trailing first differences used for the noise scale
    history_window: int = 120  # trailing points (residuals about their level) for sd and autocorrelation
    winsor: float = 5.0  # squared deviations are capped at ``winsor`` robust sd in the noise scale
    tail_weight: float = 1.0  # weight of the 95th-percentile tail scale (0 turns it off)
    clip: float = 4.5  # deviations are clipped at ``clip`` noise sd before averaging
    robust_z: float = 3.0  # median of the after points (m >= 3) must be this significant too
    pair_min: float = 1.5  # with 2 points after, both must be at least this many sd off
    pair_spread: float = 2.5  # ... and differ by at most this many sd of a difference
    rank_z: float = 2.0  # Mann-Whitney z of the after points against the before window
    max_rho: float = 0.8  # cap of the lag-1 autocorrelation used to widen the variance
    min_noise: float = 5e-4  # floor of the noise sd (0.05%): constant series still alert on real steps
    prior_weight: float = 20.0  # degrees of freedom given to ``noise_history``
