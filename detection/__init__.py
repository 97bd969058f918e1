"""Regression detection core: pure functions over plain numbers (numpy only; no Django).

Noisy metrics (speedup, latency, compile time, memory)
------------------------------------------------------
``detect(values, *, direction, samples=None, noise_history=None, sample_se=None, config=...)``
    -> list[ChangePoint]. The series as seen now, in build order (None/NaN = no value: skipped,
    indices keep their positions). Returns every alert the online detector raised while the series
    grew (prefix-stable: the alerts of ``values[:k]`` are a prefix of those of ``values``), then at
    most one ``state='suspect'`` entry about the newest build.
``replay_online(values, *, direction, ...)`` -> list[ChangePoint]: the alerts as raised one build
    at a time, never retracted (what ``detect`` returns without the suspect).

``ChangePoint`` (see ``types.py``): ``first_bad`` (index of the first point of the new level),
``last_good``, ``raised_at`` (index of the newest point when raised; ``delay = raised_at -
first_bad + 1`` builds), ``kind`` ('regression' | 'improvement' for the metric's direction),
``relative_change`` (after/before - 1 of the metric), ``magnitude`` (the same, signed by goodness:
-0.043 = 4.3% worse whatever the direction), ``before``/``after`` (medians, metric units), ``z``
(shift over its standard error, signed like magnitude), ``confidence`` (1 - Bonferroni p over the
candidate splits scanned, 0-1), ``state`` ('alert' | 'suspect'), ``noise`` (between-build relative
sd used). Directions: ``higher_is_better`` (speedup, compression) or ``lower_is_better`` (latency,
compile time, memory); the caller says which (the dashboard reads ``contract.metrics``).

Minimum data: an alert needs 8 valid points of the current level before the change and 2 after it;
the noise scale and its degrees of freedom come from up to 120 trailing points (the bar is raised
while the history is short). ``samples``: per build, the run's replicate samples of the metric
(speedup: ``speedup_replicates(eager_ms, compiled_ms)``, per-block ratios); they floor the noise at
the within-run standard error. ``noise_history``: a between-build relative sd known from elsewhere
(pooled with 20 degrees of freedom). ``noise_summary(values, samples)`` reports both noises.

Suspects and re-measurement: when the newest build alone (or with the few before it) is off by at
least ``suspect_z`` (3) standard errors but no alert was raised, ``detect`` ends with a suspect
(``raised_at`` = newest index, ``first_bad`` = where the suspected change starts). Queue a re-run of
that case on the new and the previous build and call ``confirm_with_remeasurement(old_samples,
new_samples, direction, between_run_sigma=suspect.noise, history=...)`` -> ``Confirmation`` with
``decision`` 'regression' | 'improvement' | 'no_change' | 'inconclusive', magnitude and confidence.

Run-to-run noise and short histories (``replicates.py``)
-------------------------------------------------------
``noise_estimate(values, runs, default=, breaks=, prior=, floor=) -> NoiseEstimate(sd, source, dof)``:
the run-to-run sd of one series and metric from its own replicates (consecutive-build differences
not across a known change, repeated runs of one build), shrunk toward a prior; with fewer than
``MIN_SERIES_DOF`` degrees of freedom the class prior (``class_prior`` over the series of a machine
class), else the caller's ``default`` (contract.metrics: speedup/latency/memory 2%, compile time 15%); source 'series' |
'class' | 'default'. ``early_check(values, direction=, sd=, floor=)``: with fewer than ``min_before``
builds before a change, the newest builds against the median of the ones before: worse by the
metric's floor (the caller's; contract.metrics: 5%, compile time 15%) and by ``K_NOISE`` (3) sd: 'suspect' on the first
bad build, 'regressed' from the second. ``young_change_passes(before, after, earlier=, sd=, floor=)``: with at
most ``YOUNG_BUILDS`` (2) builds before a change, one run each, a regression needs ``K_YOUNG`` (5) x the class prior and
at least a factor ``YOUNG_MIN_FACTOR`` (1.5); a series whose noise its repeated runs measured is not young.

Deterministic metrics (``deterministic.py``)
--------------------------------------------
``compare_cases(previous, current) -> list[Finding]``: status that starts failing or changes,
new graph-break reasons, more graph breaks, new recompile reasons, more recompiles; each Finding has
``kind``, ``message``, ``reasons`` (the new reason texts as measured), ``regression``, ``details``.
``dynamic_gap(backed, unbacked, threshold=0.05) -> list[Finding]``: the unbacked/backed speedup gap
opening past the threshold on the newest build.

Method (measured with ``python bench/detection.py``; numbers in bench/results/detection-*.txt)
------------------------------------------------------------------------------------------------
Online, per build: candidate splits in the last 30 points of the current level; the before level
is the median of up to 60 points of the current level; the noise sd is the largest of (a) the
winsorised RMS of up to 80 trailing first differences / sqrt(2), corrected for autocorrelation,
(b) the winsorised sd of up to 120 trailing residuals about their level (regimes already alerted
on are centred on their own median), (c) the 95th percentile of |residual| / 1.96 (heavy tails),
(d) the within-run standard error from samples, (e) 0.05%. The lag-1 autocorrelation of those
residuals widens the variance of the shift (exact AR(1) variance of the two means). An alert needs
z past the Student-t quantile at the normal tail of 4.2 for the scale's degrees of freedom (about
4.5-4.6 with a long Gaussian history; higher with a short history, heavy tails or autocorrelation),
and a robust check (2 points after: both >= 1.5 sd off and
consistent with each other, so a single outlier never alerts; 3 or more: the median of the after
points is significant at 3 sd too), and a Mann-Whitney rank check against the before window
(bimodal machine states). After an alert the level restarts at the first bad point.

What was tried and measured (tuning sets of 750 pure-noise + 600 step series, seeds 11 and 12;
the reported table uses seed 2026): the first version (MAD of differences only, no autocorrelation
term, bar 4.0) gave 3.4 false alerts per 1,000 noise builds, 11 on AR(1) series; residual-based
scale with the AR(1) variance: 1.1; winsorised and tail scales, longer windows, Student-t bar with
effective degrees of freedom: 0.25-0.35 at bar 4.0-4.2. Before window 30 -> 60 and 20 -> 30
candidate splits raised the recall of 1.5-2 sd steps from 0.58 to 0.75 at the same false-alert
rate. Clipping deviations at a fixed multiple of sd around the before level capped z, so huge steps
on autocorrelated series were never alerted: the winsorising is around the after points' median.
A stricter bar only for 2-3 points after, a larger median check and placing the change at the
strongest non-passing split did not help measurably. Perfherder's t-test, the HUD rule and Otava
(e-divisive + t-test, exact) are re-implemented in bench/detection_baselines.py.
"""
from .api import detect, replay_online
from .confirm import Confirmation, confirm_with_remeasurement
from .fastconfirm import FastConfig, FastReplay, fast_alerts, fast_replay
from .deterministic import Finding, compare_cases, dynamic_gap, new_breaks, new_recompiles
from .replicates import (
    K_NOISE, EarlyChange, NoiseEstimate, class_prior, early_check, is_worse, noise_bar, noise_estimate, t_bar,
    K_YOUNG,
    MIN_SERIES_DOF,
    PRIOR_MIN_RESIDUALS,
    YOUNG_BUILDS,
    YOUNG_MIN_FACTOR,
    series_noise,
    young_bar,
    young_change_passes,
)
from .noise import between_build_noise, noise_summary, speedup_replicates, within_run_se, within_run_ses
from .types import HIGHER_IS_BETTER, LOWER_IS_BETTER, ChangePoint, DetectorConfig

__all__ = [
    "K_NOISE", "EarlyChange", "NoiseEstimate", "class_prior", "early_check", "is_worse", "noise_bar", "t_bar",
    "noise_estimate", "series_noise", "PRIOR_MIN_RESIDUALS", "MIN_SERIES_DOF",
    "K_YOUNG", "YOUNG_BUILDS", "YOUNG_MIN_FACTOR", "young_bar", "young_change_passes",
    "FastConfig", "FastReplay", "fast_alerts", "fast_replay",
    "ChangePoint", "Confirmation", "DetectorConfig", "Finding", "HIGHER_IS_BETTER", "LOWER_IS_BETTER",
    "between_build_noise", "compare_cases", "confirm_with_remeasurement", "detect",
    "dynamic_gap", "new_breaks", "new_recompiles", "noise_summary", "replay_online", "speedup_replicates", "within_run_se", "within_run_ses",
]
