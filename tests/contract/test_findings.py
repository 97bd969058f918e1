"""One finding, one set of numbers, and one noise rule (contract.findings, issue #27 items 2-3): the
sign convention, the gap as a ratio, intervals never below zero, "within noise" and "too noisy to
track". Pure: no database."""
from __future__ import annotations

import math

import pytest

from contract.findings import (
    BETTER,
    NEW_REASON,
    TOO_NOISY,
    TOO_NOISY_SD,
    WITHIN_NOISE,
    WORSE,
    FindingNumbers,
    finding_numbers,
    judge,
    ratio_interval,
    sd_of_halfwidth,
    too_noisy,
)


def test_a_latency_rise_is_a_positive_change_and_worse():
    # the "0.6379 -> 2.388 (-274.4 %) ... (+274.4 %)": one sign, the value's own
    n = finding_numbers(metric="compiled_latency_ms", before=0.6379, after=2.388, kind="regression", noise=0.012,
                        confidence=0.999)
    assert n.change == pytest.approx(2.388 / 0.6379 - 1) and n.direction == WORSE
    assert n.text == "0.6379 ms → 2.388 ms (+274.4 % worse, noise ± 1.2 %), confidence 0.999"
    assert "-274" not in n.text


def test_a_speedup_drop_is_a_negative_change_and_worse_an_improvement_better():
    drop = finding_numbers(metric="speedup", before=1.25, after=1.10, kind="regression")
    assert drop.change_text == "-12.0 % worse" and drop.values_text == "1.25× → 1.1×"
    rise = finding_numbers(metric="speedup", before=1.10, after=1.25, kind="improvement")
    assert rise.change_text == "+13.6 % better"


def test_the_gap_is_changed_as_the_ratio_shown_never_as_gap_minus_one():
    # stored 0.4493 -> -0.1918 (ratio - 1): shown 1.449 -> 0.8082, change 0.8082 / 1.4493 - 1 = -44.2 %
    n = finding_numbers(metric="dynamic_gap", before=0.4493, after=-0.1918, kind="regression", certain=True)
    assert (n.before, n.after) == (pytest.approx(1.4493), pytest.approx(0.8082))
    assert n.change == pytest.approx(0.8082 / 1.4493 - 1) and n.change_text == "-44.2 % worse"
    assert "-19.2" not in n.text and "-87.7" not in n.text


def test_a_deterministic_finding_has_confidence_one_shown_as_certain():
    n = finding_numbers(metric="status", before="pass", after="compile_error", kind="regression", certain=True)
    assert (n.confidence, n.confidence_text, n.change) == (1.0, "certain", None)
    assert n.text == "pass → compile_error (worse), certain"
    assert n.as_dict()["confidence"] == 1.0  # never null where a page says certain


def test_a_new_reason_at_the_same_count_shows_no_zero_change():
    # A new recompile reason while the count stays 2: the finding is the reason, not "+0.0 % worse".
    n = finding_numbers(metric="recompile_count", before=2, after=2, kind="regression", certain=True)
    assert (n.change, n.change_text, n.text) == (None, "worse", "2 → 2 (worse), certain")


def test_a_new_reason_finding_names_its_reason_and_reads_counts_as_counts():
    # 2 -> 2 with a new recompile reason is never "worse": the reason is named instead.
    same = finding_numbers(metric="recompiles", before=2, after=2, kind="regression", certain=True,
                           new_reason="tensor 'labels' size mismatch")
    assert (same.direction, same.change_text) == (NEW_REASON, "new reason: tensor 'labels' size mismatch")
    assert same.text == "2 → 2 (new reason: tensor 'labels' size mismatch), certain"
    # Fewer breaks is better, as /compare/ colours it, while the finding still names the new reason.
    fewer = finding_numbers(metric="graph_breaks", before=2, after=1, kind="regression", certain=True, new_reason="graph break in loop")
    assert (fewer.direction, fewer.change_text) == (BETTER, "-50.0 % better · new reason: graph break in loop")
    more = finding_numbers(metric="graph_breaks", before=0, after=1, kind="regression", certain=True, new_reason="x")
    assert more.direction == WORSE
    unknown = finding_numbers(metric="graph_breaks", before=None, after=None, kind="regression", certain=True, new_reason="x")
    assert (unknown.direction, unknown.change_text) == (NEW_REASON, "new reason: x")
    assert FindingNumbers.from_dict("graph_breaks", fewer.as_dict()) == fewer


def test_no_confidence_is_shown_as_nothing_not_zero():
    n = finding_numbers(metric="speedup", before=1.2, after=1.0, kind="regression", confidence=None)
    assert n.confidence_text == "" and n.text == "1.2× → 1× (-16.7 % worse)"


def test_a_finding_on_a_too_noisy_series_says_so_instead_of_worse():
    n = finding_numbers(metric="speedup", before=1.3, after=10.661, kind="improvement", noise=0.5)
    assert n.direction == TOO_NOISY and n.change_text == "+720.1 % too noisy to track"


def test_the_numbers_round_trip_through_json_as_the_cli_reads_them():
    n = finding_numbers(metric="compiled_peak_memory_bytes", before=2.72e9, after=2.75e9, kind="regression",
                        noise=0.001, confidence=0.995)
    again = FindingNumbers.from_dict("compiled_peak_memory_bytes", n.as_dict())
    assert again == n and again.text == n.text == "2.72 GB → 2.75 GB (+1.1 % worse, noise ± 0.1 %), confidence 0.995"


@pytest.mark.parametrize("halfwidth", [0.02, 1.74, 8.34, 50.0])
def test_an_interval_is_never_below_zero_and_holds_the_value(halfwidth):
    # mlp_loop's 10.661x ±174 % and 2.387x ±834 %: a linear ± goes below zero, a ratio interval does not
    for value in (10.661, 2.387, 0.001):
        low, high = ratio_interval(value, halfwidth)
        assert 0 < low < value < high and high == pytest.approx(value * (1 + halfwidth))
        assert math.log(high / value) == pytest.approx(math.log(value / low))  # symmetric on the log scale
    assert ratio_interval(None, 0.1) == (None, None) and ratio_interval(1.0, None) == (None, None)


def test_too_noisy_is_past_the_bound_and_the_real_gpu_series_are_far_under_it():
    assert TOO_NOISY_SD == 0.20
    assert not too_noisy(0.02) and not too_noisy(TOO_NOISY_SD) and too_noisy(0.21) and not too_noisy(None)
    assert too_noisy(sd_of_halfwidth(1.74)) and too_noisy(sd_of_halfwidth(8.34))
    assert not too_noisy(sd_of_halfwidth(0.0157))  # the CPU run's mlp_loop static ±1.6 %
    assert sd_of_halfwidth(0.02) == pytest.approx(math.log(1.02) / 1.96)


def test_one_rule_for_every_change():
    assert judge(change=0.03, bar=0.05, worse=True, sd=0.01) == WITHIN_NOISE
    assert judge(change=-0.03, bar=0.05, worse=False, sd=0.01) == WITHIN_NOISE
    assert judge(change=0.08, bar=0.05, worse=True, sd=0.01) == WORSE
    assert judge(change=7.13, bar=0.05, worse=False, sd=0.01) == BETTER
    # A series too noisy to track greys only a change within that noise (issue #42): mlp_loop's +713 %
    # (log 2.10) is past two runs of sd 0.51 (1.41), not of sd 0.9 (2.49).
    assert judge(change=7.13, bar=0.05, worse=False, sd=0.51) == BETTER
    assert judge(change=7.13, bar=0.05, worse=False, sd=0.9) == TOO_NOISY
    assert judge(change=-0.9, bar=0.05, worse=True, sd=0.9) == TOO_NOISY
    # A band is a ratio band: a fall past 1 / (1 + bar), never out of reach of a wide one.
    assert judge(change=-0.951, bar=0.988, worse=True, sd=0.1) == WORSE
    assert judge(change=-0.45, bar=0.988, worse=True, sd=0.1) == WITHIN_NOISE
    assert judge(change=None, bar=0.05, worse=False) == ""
