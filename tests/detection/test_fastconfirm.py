"""The two-build confirmation (detection/fastconfirm.py): a step is confirmed on its second build or on
a re-run of its first; a single-build spike, however large, never alerts; a re-run that does not
repeat the spike clears it."""
import numpy as np

from detection.fastconfirm import MAD_TO_SD, FastConfig, _level, _scale, fast_alerts


def _series(seed: int, n: int = 60, sd: float = 0.01) -> list[float]:
    return list(np.exp(np.random.default_rng(seed).normal(0.0, sd, n)))


def test_a_6_sd_step_is_confirmed_on_its_second_build():
    values = _series(5)
    values[40:] = [v * np.exp(-0.06) for v in values[40:]]
    alerts, remeasured = fast_alerts(values[:42], direction="higher_is_better")
    assert remeasured == 0
    assert [(a.first_bad, a.raised_at, a.kind) for a in alerts] == [(40, 41, "regression")]
    assert alerts[0].magnitude < -0.02


def test_a_re_run_that_agrees_confirms_on_the_first_build():
    values = _series(2)
    values[40:] = [v * np.exp(-0.05) for v in values[40:]]
    alerts, remeasured = fast_alerts(values[:41], direction="higher_is_better", remeasure=lambda i: values[i] * 1.002)
    assert remeasured >= 1  # the step build (and any earlier build past the suspect bar)
    assert [(a.first_bad, a.raised_at) for a in alerts] == [(40, 40)]


def test_a_single_spike_never_alerts_and_a_re_run_clears_it():
    values = _series(3)
    values[30] *= np.exp(-0.5)  # 50 sd, one build
    assert fast_alerts(values, direction="higher_is_better")[0] == []
    alerts, remeasured = fast_alerts(values, direction="higher_is_better", remeasure=lambda i: _series(99)[i])
    assert alerts == [] and remeasured >= 1


def test_lower_is_better_and_unusable_points():
    values: list = _series(4)
    values[40:] = [v * np.exp(0.05) for v in values[40:]]  # latency up: worse
    values[20] = None
    values[25] = float("nan")
    alerts, _ = fast_alerts(values[:42], direction="lower_is_better")
    assert [(a.first_bad, a.raised_at, a.kind) for a in alerts] == [(40, 41, "regression")]


def test_a_two_level_machine_is_read_at_its_spread_and_a_short_baseline_as_before():
    rng = np.random.default_rng(7)
    base = np.where(rng.random(60) < 0.5, -0.0125, 0.0125) + rng.normal(0.0, 0.003, 60)  # two levels, sd 0.0129
    cfg = FastConfig()
    level = _level(base, cfg)
    assert abs(level - base.mean()) < 0.002  # the trimmed mean sits midway, not on either level
    mad = MAD_TO_SD * float(np.median(np.abs(base - level)))
    narrow = _scale(base - level, 0.0, 0.0, cfg)
    assert mad > 1.3 * np.std(base) and 0.9 < narrow / np.std(base) < 1.1
    short = base[:19]  # below long_n: the median and the MAD / tail scale, as before
    assert _level(short, cfg) == float(np.median(short))
    assert _scale(short - np.median(short), 0.0, 0.0, cfg) == _scale(short - np.median(short), 0.0, 0.0)
