"""Public entry points: ``detect`` (a series as seen now) and ``replay_online`` (point by point)."""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .noise import within_run_se
from .online import Engine, Hit, confidence
from .types import ChangePoint, DetectorConfig, direction_sign

DEFAULT_CONFIG = DetectorConfig()


def _prepare(values, direction, samples, sample_se):
    sign = direction_sign(direction)
    raw = np.asarray([math.nan if v is None else v for v in values], dtype=float)
    if raw.ndim != 1:
        raise ValueError("values must be a flat sequence of numbers")
    finite = np.isfinite(raw)
    if np.any(raw[finite] <= 0):
        bad = int(np.flatnonzero(finite & (raw <= 0))[0])
        raise ValueError(f"values[{bad}]: {raw[bad]!r} is not positive (relative changes need positive values)")
    index = np.flatnonzero(finite)  # position in the series of each valid point
    g = sign * np.log(raw[index])
    se = np.full(len(index), np.nan)
    if samples is not None:
        if len(samples) != len(raw):
            raise ValueError(f"samples has {len(samples)} entries for {len(raw)} values")
        se = np.asarray([within_run_se(samples[i]) for i in index], dtype=float)
    if sample_se is not None:
        if len(sample_se) != len(raw):
            raise ValueError(f"sample_se has {len(sample_se)} entries for {len(raw)} values")
        given = np.asarray([math.nan if v is None else v for v in sample_se], dtype=float)[index]
        se = np.fmax(se, given)
    return sign, index, g, se


def _to_change_point(hit: Hit, sign: int, index: np.ndarray, state: str) -> ChangePoint:
    before = math.exp(sign * hit.before)
    after = math.exp(sign * hit.after)
    rel = after / before - 1.0
    magnitude = sign * rel
    return ChangePoint(
        first_bad=int(index[hit.s]),
        last_good=int(index[hit.s - 1]) if hit.s > 0 else None,
        raised_at=int(index[hit.t]),
        kind="improvement" if hit.z > 0 else "regression",
        relative_change=rel,
        magnitude=magnitude,
        before=before,
        after=after,
        z=hit.z,
        confidence=confidence(hit.z, hit.n_candidates),
        state=state,
        noise=hit.sigma,
    )


def detect(
    values: Sequence[float | None],
    *,
    direction: str,
    samples: Sequence[Sequence[float] | None] | None = None,
    noise_history: float | None = None,
    sample_se: Sequence[float | None] | None = None,
    config: DetectorConfig = DEFAULT_CONFIG,
    include_suspect: bool = True,
) -> list[ChangePoint]:
    """Change points of a series as seen now, oldest first.

    Every alert the online detector raised while the series grew (so the result for a prefix of the
    series is a prefix of this result), then, when the newest point looks changed but the evidence
    is short of the alert bar, one ``state='suspect'`` change point whose ``raised_at`` is the
    newest point.

    - ``values``: the metric per build in build order; None or NaN for a build without a value.
    - ``direction``: 'higher_is_better' or 'lower_is_better'.
    - ``samples``: per build, the run's replicate samples of the same metric (e.g. per-block
      speedups from ``speedup_replicates``), or None; they give the within-run noise floor.
    - ``sample_se``: per build, an already computed relative standard error (alternative to samples).
    - ``noise_history``: the between-build relative sd known from elsewhere (a longer history of the
      case, or re-runs of one build); pooled with the series' own estimate (20 degrees of freedom).
    """
    sign, index, g, se = _prepare(values, direction, samples, sample_se)
    if len(g) == 0:
        return []
    hits, suspect = Engine(g, se, config, noise_history).run(with_suspect=include_suspect)
    out = [_to_change_point(h, sign, index, "alert") for h in hits]
    if suspect is not None:
        out.append(_to_change_point(suspect, sign, index, "suspect"))
    return out


def replay_online(
    values: Sequence[float | None],
    *,
    direction: str,
    samples: Sequence[Sequence[float] | None] | None = None,
    noise_history: float | None = None,
    sample_se: Sequence[float | None] | None = None,
    config: DetectorConfig = DEFAULT_CONFIG,
) -> list[ChangePoint]:
    """The alerts raised if the points arrived one at a time, each at the time it was first raised.

    Alerts are never retracted: a later point never removes or moves an earlier alert. Equal to
    the alerts of ``detect`` (the engine only uses points up to the time it tests); the test suite
    checks that equality by feeding prefixes.
    """
    return [cp for cp in detect(values, direction=direction, samples=samples, noise_history=noise_history,
                                sample_se=sample_se, config=config, include_suspect=False)]


def replay_online_slow(values, *, direction, config: DetectorConfig = DEFAULT_CONFIG, **kwargs) -> list[ChangePoint]:
    """Reference replay: ``detect`` on every prefix, keeping each alert when it first appears.

    Quadratic; for tests that check ``replay_online`` against what the dashboard would really see.
    """
    seen: dict[int, ChangePoint] = {}
    for end in range(1, len(values) + 1):
        prefix_kwargs = {k: (v[:end] if k in ("samples", "sample_se") and v is not None else v) for k, v in kwargs.items()}
        for cp in detect(values[:end], direction=direction, config=config, include_suspect=False, **prefix_kwargs):
            seen.setdefault(cp.first_bad, cp)
    return sorted(seen.values(), key=lambda cp: cp.raised_at)
