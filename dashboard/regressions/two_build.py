"""The two-build confirmation (``detection.fastconfirm``) over a series' stored points (issue #42).

Beside the change-point engine, detection replays the two-build rule over every run of every build
(the nightly run and any re-measurement of it): a step is a finding on its second build, or on its
first where two re-runs of it agree; a build 1.75 robust sd off its regime's median is a suspect and
is re-measured (``services.remeasure`` runs it twice, ``FastConfig.reruns``), and the rule decides the
re-measurement too (``two_build_decision``). Pure reads: no query of its own.
"""
from __future__ import annotations

import math

from detection import ChangePoint, FastConfig, FastReplay, fast_replay

from dashboard.regressions.history import Point

RULE = "two_build"  # ``details["rule"]`` of its findings and ``suspect["rule"]`` of its re-measurements
SAME_CHANGE = 2  # builds: an alert whose first bad build is this close to one already raised is that change


def build_runs(points: list[Point], metric: str) -> list[list[float]]:
    """Per point, the values of ``metric`` its passing runs measured (the point's value where the
    runs are not kept)."""
    out = []
    for p in points:
        value = p.values.get(metric)
        out.append([] if value is None else list(p.run_values.get(metric) or [value]))
    return out


def two_build_replay(points: list[Point], metric: str, direction: str, config: FastConfig = FastConfig()) -> FastReplay:
    """``fast_replay`` of the series' runs of ``metric``; indices are positions in ``points``."""
    return fast_replay(build_runs(points, metric), direction=direction, config=config)


def two_build_changes(points: list[Point], metric: str, direction: str, engine: list[ChangePoint]
                      ) -> tuple[list[ChangePoint], ChangePoint | None]:
    """``(alerts, suspect)``: the rule's alerts that no alert of the engine (``engine``) already names
    (first bad builds within ``SAME_CHANGE``), and the newest build as a suspect to re-measure where
    the rule found it off with one run and nothing alerted on it (None otherwise)."""
    replay = two_build_replay(points, metric, direction)
    raised = [cp for cp in engine if cp.state == "alert"]
    alerts = [a for a in replay.alerts if not any(abs(a.first_bad - cp.first_bad) <= SAME_CHANGE for cp in raised)]
    newest = len(points) - 1
    if newest not in replay.suspects or any(cp.raised_at == newest for cp in raised + alerts) or newest == 0:
        return alerts, None
    last_good = next((i for i in range(newest - 1, -1, -1) if points[i].values.get(metric) is not None), None)
    if last_good is None:
        return alerts, None
    before, after = replay.level or points[last_good].values[metric], points[newest].values[metric]
    rel = after / before - 1.0
    sign = 1.0 if direction == "higher_is_better" else -1.0
    z = math.log(after / before) * sign / replay.noise if replay.noise else 0.0
    suspect = ChangePoint(first_bad=newest, last_good=last_good, raised_at=newest,
                          kind="regression" if sign * rel < 0 else "improvement", relative_change=rel,
                          magnitude=sign * rel, before=before, after=after, z=z, confidence=0.0, state="suspect",
                          noise=replay.noise or 0.0)
    return alerts, suspect


def confirmed_by(alert: ChangePoint) -> str:
    """How an alert of the rule was confirmed: ``remeasurement`` (raised on its own first bad build,
    which needs a re-run of it) or ``next_build`` (the build after it)."""
    return "remeasurement" if alert.raised_at == alert.first_bad else "next_build"


def alert_note(alert: ChangePoint) -> str:
    """What a finding's message says of the rule: ``" (two-build confirmation, re-measured)"``."""
    return f" (two-build confirmation, {'re-measured' if confirmed_by(alert) == 'remeasurement' else 'the next build'})"


def two_build_decision(points: list[Point], metric: str, direction: str, *, build_index: int) -> tuple[str, ChangePoint | None]:
    """The rule's decision on a re-measured (or next-build-decided) suspect at ``points[build_index]``,
    over ``points`` up to the newest: ``("confirmed", alert)`` where an alert starts there (on its own
    build it takes ``1 + FastConfig.reruns`` runs), ``("rejected", None)`` where a later build came and
    none did, where its runs now sit less than ``point_min`` robust sd off, or where a re-run is not off
    the first run's way by ``run_min``; else ``("pending", None)`` (its next re-run or the next build decides)."""
    replay = two_build_replay(points, metric, direction)
    for alert in replay.alerts:
        if alert.first_bad == build_index and alert.kind == "regression":
            return "confirmed", alert
    if any(p.values.get(metric) is not None for p in points[build_index + 1:]):
        return "rejected", None
    runs = build_runs(points, metric)[build_index]
    if len(runs) >= 2 and replay.level and replay.noise:
        offs = [math.log(x / replay.level) for x in runs]
        if abs(sum(offs) / len(offs)) < FastConfig().point_min * replay.noise:
            return "rejected", None
        # a re-run not off the first run's way by run_min: no alert can start at this build any more
        if any(math.copysign(1.0, offs[0]) * off < FastConfig().run_min * replay.noise for off in offs[1:]):
            return "rejected", None
    return "pending", None
