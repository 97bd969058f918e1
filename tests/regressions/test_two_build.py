"""The two-build confirmation over stored points (dashboard.regressions.two_build): the newest build
off its regime is a suspect to re-measure; two re-runs that agree confirm it on its own build, one
that does not rejects it; with no re-run, the next build decides. Pure: no database."""
import numpy as np

from dashboard.regressions.history import Point
from dashboard.regressions.two_build import two_build_changes, two_build_decision

HIGHER = "higher_is_better"


def _points(values, reruns=None) -> list[Point]:
    reruns = reruns or {}
    return [Point(build_id=100 + i, values={"speedup": v}, run_values={"speedup": [v, *reruns.get(i, [])]})
            for i, v in enumerate(values)]


def _history(n=30, sd=0.01, seed=4) -> list[float]:
    return [float(x) for x in 2.0 * np.exp(np.random.default_rng(seed).normal(0.0, sd, n))]


def test_a_5_sd_drop_is_a_suspect_on_its_build_then_a_finding_on_the_next():
    values = _history() + [2.0 * np.exp(-0.05)]
    alerts, suspect = two_build_changes(_points(values), "speedup", HIGHER, engine=[])
    assert alerts == [] and suspect is not None
    assert (suspect.first_bad, suspect.last_good, suspect.kind) == (30, 29, "regression") and 0.005 < suspect.noise < 0.02
    state, _ = two_build_decision(_points(values), "speedup", HIGHER, build_index=30)
    assert state == "pending"  # one run, nothing after it: the re-run or the next build decides
    later = values + [2.0 * np.exp(-0.052)]
    alerts, suspect = two_build_changes(_points(later), "speedup", HIGHER, engine=[])
    assert [(a.first_bad, a.raised_at, a.kind) for a in alerts] == [(30, 31, "regression")] and suspect is None
    assert two_build_decision(_points(later), "speedup", HIGHER, build_index=30)[0] == "confirmed"


def test_two_re_runs_that_agree_confirm_on_the_suspect_build_and_one_that_does_not_rejects():
    values = _history() + [2.0 * np.exp(-0.05)]
    state, _ = two_build_decision(_points(values, {30: [2.0 * np.exp(-0.048)]}), "speedup", HIGHER, build_index=30)
    assert state == "pending"  # one re-run that agrees: its second re-run (or the next build) decides
    state, alert = two_build_decision(_points(values, {30: [2.0 * np.exp(-0.048), 2.0 * np.exp(-0.053)]}), "speedup", HIGHER,
                                      build_index=30)
    assert state == "confirmed" and (alert.first_bad, alert.raised_at) == (30, 30) and alert.magnitude < -0.03
    state, _ = two_build_decision(_points(values, {30: [2.0 * np.exp(-0.003)]}), "speedup", HIGHER, build_index=30)
    assert state == "rejected"  # a re-run short of 1 robust sd off its way: no alert can start there
    state, alert = two_build_decision(_points(values, {30: [2.0 * np.exp(0.046)]}), "speedup", HIGHER, build_index=30)
    assert (state, alert) == ("rejected", None)  # the re-run sits back at the level: the mean of both is not off
    state, _ = two_build_decision(_points(values + [2.0]), "speedup", HIGHER, build_index=30)
    assert state == "rejected"  # the next build is back: no two-build alert starts there


def test_an_alert_the_engine_raised_is_not_raised_twice_and_a_short_series_is_left_to_the_other_rules():
    values = _history() + [2.0 * np.exp(-0.05), 2.0 * np.exp(-0.052)]
    alerts, _ = two_build_changes(_points(values), "speedup", HIGHER, engine=[])
    assert len(alerts) == 1
    assert two_build_changes(_points(values), "speedup", HIGHER, engine=alerts) == ([], None)
    assert two_build_changes(_points(values[-9:]), "speedup", HIGHER, engine=[]) == ([], None)  # 7 builds before it
