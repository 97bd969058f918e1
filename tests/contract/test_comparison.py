"""The one comparison engine (issue #34), pure: a case's change and tone, and the pooled row."""
from __future__ import annotations

import pytest

from contract.comparison import REFERENCE_CHANGED, TOO_NOISY, Judged, case_sd, judge, pooled
from contract.findings import TWO_RUNS_95
from contract.metrics import BY_NAME

SPEEDUP, COLD, BREAKS = BY_NAME["speedup"], BY_NAME["compile_time_cold_s"], BY_NAME["graph_break_count"]


def test_a_timed_change_is_one_only_past_its_threshold_and_its_band():
    assert judge(SPEEDUP, 1.0, 1.04, threshold=0.05, noise=0.01).tone == "same"  # under the threshold
    assert judge(SPEEDUP, 1.0, 1.08, threshold=0.05, noise=0.1).tone == "same"  # under the band
    assert judge(SPEEDUP, 1.0, 1.08, threshold=0.05, noise=0.01).tone == "better"
    assert judge(COLD, 10.0, 10.8, threshold=0.05, noise=0.01).tone == "worse"  # lower is better
    judged = judge(SPEEDUP, 2.0, 1.5, noise=0.01)
    assert (judged.change, judged.difference, judged.noise, judged.tone) == (-0.25, -0.5, 0.01, "worse")


def test_too_noisy_by_its_band_or_a_sides_own_stated_noise():
    # Too noisy to track greys only a change within that noise (issue #42): -70 % is log -1.20,
    # past two runs of sd 27 % (0.75), not of sd 50 % (1.39).
    assert judge(COLD, 10.0, 3.0, noise=TWO_RUNS_95 * 0.27).tone == "better"
    assert judge(COLD, 10.0, 3.0, noise=TWO_RUNS_95 * 0.5).tone == TOO_NOISY
    assert judge(COLD, 10.0, 3.0, noise=TWO_RUNS_95 * 0.19).tone == "better"
    assert judge(SPEEDUP, 1.3, 10.661, noise=0.05, within_sd=0.8).tone == TOO_NOISY  # 8.2x: within two runs of sd 80 %
    assert judge(SPEEDUP, 1.3, 10.661, noise=0.05, within_sd=0.5).tone == "better"


def test_the_floor_widens_a_band_and_counts_change_by_any_difference():
    assert judge(SPEEDUP, 1.0, 1.004, noise=0.0).tone == "better"
    floored = judge(SPEEDUP, 1.0, 1.004, noise=0.0, floor=0.0055)
    assert (floored.tone, floored.noise) == ("same", 0.0055)
    assert judge(BREAKS, 0, 2).tone == "worse" and judge(BREAKS, 3, 1).tone == "better"
    assert judge(BREAKS, 1, 1).tone == "same" and judge(BREAKS, None, 1).tone == ""
    assert judge(BREAKS, 0, 2).noise is None and judge(BREAKS, 0, 2).difference == 2


def test_pooled_is_the_geomean_less_the_cases_not_tracked_judged_on_the_mean_band():
    cases = [judge(SPEEDUP, 1.0, 1.2, noise=0.02), judge(SPEEDUP, 4.0, 4.8, noise=0.04),
             judge(SPEEDUP, 1.0, 3.0, noise=TWO_RUNS_95 * 0.5)]
    assert cases[2].tone == TOO_NOISY
    row = pooled(SPEEDUP, cases, threshold=0.05)
    assert (row.old, row.new, row.noise, row.tone) == (pytest.approx(2.0), pytest.approx(2.4), pytest.approx(0.03), "better")
    assert pooled(SPEEDUP, cases[2:]).tone == TOO_NOISY and pooled(SPEEDUP, cases[2:]).old is None
    moved = Judged(1.0, 2.0, 1.0, 1.0, 0.01, REFERENCE_CHANGED)
    assert pooled(SPEEDUP, [moved]).tone == REFERENCE_CHANGED
    totals = pooled(BREAKS, [judge(BREAKS, 1, 2), judge(BREAKS, 0, 0), judge(BREAKS, None, 3)])
    assert (totals.old, totals.new, totals.difference, totals.tone) == (1.0, 2.0, 1.0, "worse")
    assert pooled(SPEEDUP, []).tone == "" and pooled(BREAKS, []).old is None


def test_repeated_runs_state_a_cases_own_noise():
    from contract.comparison import repeat_sd  # noqa: PLC0415

    assert repeat_sd([[10.0], [12.0]]) is None  # no build ran twice
    # The quick start's cpu class: warm compile 24.9 / 14.0 s and 4.4 / 2.5 s in two runs of each build.
    sd = repeat_sd([[24.9, 14.0], [4.4, 2.5]])
    assert sd == pytest.approx(0.40, abs=0.01) and judge(COLD, 24.9, 14.0, noise=0.4, within_sd=sd).tone == TOO_NOISY
    assert judge(COLD, 24.9, 4.4, noise=0.4, within_sd=sd).tone == "better"  # 5.7x: past even that noise
    assert repeat_sd([[10.0, 10.1], [5.0, 5.05, None]]) == pytest.approx(0.00704, abs=1e-4)


def test_a_cases_sd_is_max_of_the_present_ones_written_out_nan_and_ties_as_max_orders_them():
    # case_sd skips max() over a generator (/compare/ asks 25,000 times, issue #46 item 13): the same
    # value as max() in the same order, a NaN first or second included (max keeps the first unless a later one is larger).
    nan, values = float("nan"), (None, 0.0, 0.02, 0.3, 1.5, float("inf"), float("nan"))
    for band in values:
        for within in values:
            series = band / TWO_RUNS_95 if band is not None else None
            expected = max((x for x in (series, within) if x is not None), default=None)
            got = case_sd(band=band, within_sd=within)
            assert (got is None and expected is None) or got is expected or got == expected or (got != got and expected != expected), \
                (band, within, got, expected)
    assert case_sd(band=nan, within_sd=0.5) != case_sd(band=nan, within_sd=0.5)  # the band's NaN first: max keeps it
    assert case_sd(band=0.1, within_sd=nan) == 0.1 / TWO_RUNS_95


def _same(a, b) -> bool:
    return a == b or (a != a and b != b)  # NaN is NaN


def test_judge_cell_is_judge_composed_of_its_parts_for_every_kind_of_value():
    # judge_cell writes judge's parts out for /compare/'s loop (issue #46 item 13): its change, tone and
    # sd are relative_change, contract.findings.judge past max(threshold, band) and case_sd, to the bit.
    from contract.comparison import judge_cell, relative_change  # noqa: PLC0415
    from contract.findings import judge as findings_judge  # noqa: PLC0415

    tones = {"worse": "worse", "better": "better", "too noisy to track": TOO_NOISY}
    nan, inf = float("nan"), float("inf")
    values = (None, 0, 0.0, 1.0, 1.04, 3.0, -2.0, 1e-300, 1e308, nan, inf, 5)
    for metric in (SPEEDUP, COLD, BREAKS):
        for old in values:
            for new in values:
                for threshold, noise, within in ((0.05, None, None), (0.0, 0.02, None), (0.05, 0.5, 0.3), (0.0, nan, 0.01),
                                                 (0.05, None, nan), (0.02, inf, None), (0.0, 0.0, 0.0)):
                    change, tone, sd = judge_cell(metric, old, new, threshold, noise if metric.noisy else None, within)
                    assert _same(change, relative_change(old, new))
                    if not metric.noisy:
                        difference = new - old if old is not None and new is not None else None
                        expected = "" if difference is None else "same" if difference == 0 else (
                            "worse" if metric.worse(difference) else "better")
                        assert (tone, sd) == (expected, None)
                        continue
                    assert _same(sd, case_sd(band=noise, within_sd=within))
                    bar = max(threshold, noise or 0.0)
                    expected = "" if change is None else tones.get(
                        findings_judge(change=change, bar=bar, worse=metric.worse(change), sd=sd), "same")
                    assert tone == expected, (metric.name, old, new, threshold, noise, within)
                    judged = judge(metric, old, new, threshold=threshold, noise=noise, within_sd=within)
                    assert (judged.tone, _same(judged.change, change)) == (tone, True)
