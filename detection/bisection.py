"""Bisection's decisions (issue #31): is a build between a good and a bad one good, bad or unknown?

Pure functions over the values of a case's metric, one value per attempt (a run of the case on that
build). As Chromium's Pinpoint does, every build is measured a fixed number of times, a build is
compared with both ends of the range, and an answer that is neither is "unknown": more attempts.
The noise is the series' run-to-run model (``replicates.noise_estimate``, the caller's) floored at
the spread the attempts themselves show, in log space (a relative sd) for positive values; a count
or a status (``exact``) needs no noise: equal or not.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from .replicates import K_NOISE

GOOD, BAD, UNKNOWN = "good", "bad", "unknown"
NEAR_END = 0.1  # a midpoint within this fraction of the change from one end's level is that end's


@dataclass(frozen=True)
class Classification:
    decision: str  # good | bad | unknown
    position: float | None  # 0: the good end's level, 1: the bad end's (None: the ends do not differ)
    z_good: float  # the midpoint's distance from the good end in standard errors (inf: exact and different)
    z_bad: float
    sd: float  # the relative sd used
    near_end: bool = False  # decided by NEAR_END: off both levels, nearly at one

    def to_dict(self) -> dict:
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in asdict(self).items()}


def _levels(values: list[float], exact: bool) -> list[float]:
    if exact:
        return [float(v) for v in values]
    return [math.log(v) for v in values if v is not None and v > 0]


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def attempts_spread(*groups: list[float]) -> float:
    """Pooled sd of the log values within each group (the attempts of one build); 0 without two of any."""
    squares, dof = 0.0, 0
    for group in groups:
        levels = _levels(group, exact=False)
        if len(levels) >= 2:
            mean = _mean(levels)
            squares += sum((x - mean) ** 2 for x in levels)
            dof += len(levels) - 1
    return math.sqrt(squares / dof) if dof else 0.0


def _z(a: list[float], b: list[float], sd: float, exact: bool) -> float:
    la, lb = _levels(a, exact), _levels(b, exact)
    if not la or not lb:
        return float("nan")
    diff = abs(_mean(la) - _mean(lb))
    if exact:
        return 0.0 if diff == 0 else float("inf")
    se = sd * math.sqrt(1 / len(la) + 1 / len(lb))
    return diff / se if se > 0 else (0.0 if diff == 0 else float("inf"))


def ends_differ(good: list[float], bad: list[float], *, sd: float, k: float = K_NOISE, exact: bool = False) -> bool:
    """Whether the two ends of a range differ by more than ``k`` standard errors (the regression reproduces)."""
    noise = 0.0 if exact else max(sd, attempts_spread(good, bad))
    return _z(good, bad, noise, exact) > k


def classify(good: list[float], bad: list[float], mid: list[float], *, sd: float, k: float = K_NOISE,
             exact: bool = False) -> Classification:
    """A build between ``good`` and ``bad``: bad when it differs from the good end and not from the bad
    one, good the other way round, unknown when it differs from neither or from both (more attempts
    tell; Pinpoint's UNKNOWN), unless it is within ``NEAR_END`` of the change from one end's level. ``sd``: the series' run-to-run relative sd, floored here at the spread
    of the attempts of the three builds."""
    noise = 0.0 if exact else max(sd, attempts_spread(good, bad, mid))
    z_good, z_bad = _z(mid, good, noise, exact), _z(mid, bad, noise, exact)
    lg, lb, lm = (_levels(v, exact) for v in (good, bad, mid))
    position = None
    if lg and lb and lm and _mean(lb) != _mean(lg):
        position = (_mean(lm) - _mean(lg)) / (_mean(lb) - _mean(lg))
    differs_good, differs_bad = z_good > k, z_bad > k
    decision = BAD if differs_good and not differs_bad else GOOD if differs_bad and not differs_good else UNKNOWN
    near_end = False
    if differs_good and differs_bad and position is not None and not exact:
        # Off both levels by more than the noise, but nearly at one of them: builds differ by small
        # amounts too (a CPU timing of a tiny case, a second small change); the change bisected is
        # the one between the ends.
        decision = BAD if position >= 1 - NEAR_END else GOOD if position <= NEAR_END else UNKNOWN
        near_end = decision != UNKNOWN
    return Classification(decision=decision, position=position, z_good=z_good, z_bad=z_bad, sd=noise, near_end=near_end)


def nearest(classification: Classification) -> str:
    """When attempts are spent and the answer is still unknown: the end the midpoint is nearer to."""
    if classification.position is None:
        return UNKNOWN
    return BAD if classification.position >= 0.5 else GOOD


def steps_needed(builds: int) -> int:
    """Midpoints a range of ``builds`` builds (both ends included) needs to reach an adjacent pair."""
    return math.ceil(math.log2(builds - 1)) if builds > 2 else 0
