"""Run-to-run noise from replicates and the short-history rule (detection.replicates)."""
import math
import random

import pytest

from contract.metrics import BY_NAME
from detection import NoiseEstimate, confirm_with_remeasurement, early_check, noise_bar, noise_estimate, series_noise, t_bar

LOWER, HIGHER = "lower_is_better", "higher_is_better"


def test_series_noise_matches_the_run_to_run_sd_and_ignores_a_known_step():
    rng = random.Random(3)
    values = [10 * math.exp(rng.gauss(0, 0.05)) for _ in range(60)]
    sd, dof = series_noise(values)
    assert 0.04 < sd < 0.06 and dof == 59
    stepped = values[:30] + [v * 1.5 for v in values[30:]]
    sd_step, dof_step = series_noise(stepped, breaks=[30])
    assert dof_step == 58 and abs(sd_step / sd - 1) < 0.05
    assert series_noise(stepped)[0] < 1.1 * sd  # unknown, the one step difference is winsorised


def test_repeated_runs_of_one_build_count_as_replicates():
    sd, dof = series_noise([10.0], runs=[[10.0, 11.0, 9.0, 10.5, 9.5]])
    assert dof == 4 and 0.05 < sd < 0.12


def test_noise_source_series_then_class_then_default():
    assert noise_estimate([10, 11], default=0.15).source == "default"
    assert noise_estimate([10, 11], default=0.15).sd == 0.15  # the caller's default, as given
    assert noise_estimate([1.0, 1.01], default=0.02, prior=0.004) .source == "class"
    own = noise_estimate([1.0, 1.01, 0.99, 1.0, 1.02, 1.0], default=0.02, prior=0.004)
    assert own.source == "series" and own.dof == 5 and own.sd > 0.004
    assert noise_estimate([1.0] * 8, default=0.02).sd < 0.01  # shrunk toward the 2% default
    assert noise_estimate([1.0] * 8, default=0.02, floor=0.03).sd == 0.03  # within-run floor


def test_registry_defaults_and_floors_are_the_measured_ones():
    """Detection's noise defaults and floors live in contract.metrics: cold and warm compile time 15 %
    (the noisiest of ten real H100 runs) with the HUD's 15 % floor; the compile CPU ratio 1.5 % with a
    5 % floor; timed figures and memory 2 % and 5 %."""
    assert {m: (BY_NAME[m].noise_default, BY_NAME[m].floor) for m in (
        "speedup", "compiled_latency_ms", "compile_time_cold_s", "compile_time_warm_s", "compile_cpu_ratio",
        "compiled_peak_memory_bytes")} == {
        "speedup": (0.02, 0.05), "compiled_latency_ms": (0.02, 0.05), "compile_time_cold_s": (0.15, 0.15),
        "compile_time_warm_s": (0.15, 0.15), "compile_cpu_ratio": (0.015, 0.05), "compiled_peak_memory_bytes": (0.02, 0.05)}


def test_first_week_suspect_then_regressed_compile_time():
    history = [17.9, 18.6, 16.8, 17.4]  # four earlier builds
    assert early_check(history + [26.9], direction=LOWER, sd=0.1, floor=0.15).state == "suspect"
    second = early_check(history + [26.9, 27.0], direction=LOWER, sd=0.1, floor=0.15)
    assert (second.state, second.first_bad, second.last_good, second.bad_builds) == ("regressed", 4, 3, 2)
    assert second.magnitude < -0.4


def test_first_week_needs_both_the_floor_and_k_noise():
    base = [1.30, 1.31, 1.30]
    assert early_check(base + [1.26, 1.26], direction=HIGHER, sd=0.001, floor=0.05) is None  # 3% < 5% floor
    assert early_check(base + [1.20, 1.20], direction=HIGHER, sd=0.04, floor=0.05) is None  # 8% < 3 x 4%
    assert early_check(base + [1.20, 1.20], direction=HIGHER, sd=0.01, floor=0.05).state == "regressed"
    assert early_check(base + [1.45, 1.45], direction=HIGHER, sd=0.01, floor=0.05) is None  # improvement


def test_first_build_is_the_baseline_and_long_histories_are_left_to_the_detector():
    assert early_check([10.0], direction=LOWER, sd=0.1, floor=0.15) is None
    assert early_check([10.0] * 8 + [20.0], direction=LOWER, sd=0.1, floor=0.15) is None
    assert early_check([10.0] * 7 + [20.0, 20.0], direction=LOWER, sd=0.1, floor=0.15).state == "regressed"
    assert early_check([10.0, 20.0, None], direction=LOWER, sd=0.1, floor=0.15) is None  # no newest value


def test_on_a_long_history_the_floor_rule_finds_where_a_change_began():
    """Real bert_encoder compile times (bench/results/history): ten runs of one build, bimodal
    (10-12 s and 15-16 s), then +94 % and +62 % (coordinate descent tuning). The change-point
    detector's own noise misses it; the floor rule on the noise model does not, and it starts the
    change at the first bad build, not at an earlier slow run that only the mean of the run covers."""
    history = [10.3, 11.5, 15.4, 16.0, 16.1, 12.8, 13.0, 15.2, 16.2, 12.5]
    assert early_check(history + [27.4], direction=LOWER, sd=0.154, floor=0.15, min_before=None).state == "suspect"
    found = early_check(history + [27.4, 22.8], direction=LOWER, sd=0.154, floor=0.15, min_before=None)
    assert (found.state, found.first_bad) == ("regressed", 10)
    masked = [5.8, 7.7, 6.6, 8.6]  # the last is slow (+30 %) but within the noise
    assert early_check(masked + [16.3, 14.8], direction=LOWER, sd=0.2, floor=0.15, min_before=None).first_bad == 4
    for n in range(2, len(history) + 1):  # no unchanged build is bad
        assert early_check(history[:n], direction=LOWER, sd=0.154, floor=0.15, min_before=None) is None


def test_on_ten_real_runs_of_one_build_about_95_percent_fall_inside_each_others_interval():
    """The +- shown is 1.96 x the noise model's sd per run; two runs differ by sqrt(2) of it. On the
    ten real H100 runs of one unchanged build (bench/results/history), over speedup, compiled
    latency, cold compile time and peak memory of three workloads, about 95 % of run pairs agree."""
    import glob
    import json
    from pathlib import Path

    from detection import noise_estimate

    files = sorted(glob.glob(str(Path(__file__).resolve().parents[2] / "bench/results/history/hist-base-*.json")))
    assert len(files) >= 10
    series: dict[tuple[str, str], list[float]] = {}
    for path in files:
        for result in json.loads(Path(path).read_text())["results"]:
            for metric in ("speedup", "compiled_latency_ms", "compile_time_cold_s", "compiled_peak_memory_bytes"):
                series.setdefault((result["workload"], metric), []).append(result["metrics"][metric])
    inside = pairs = 0
    for (_, metric), values in series.items():
        half = 1.96 * math.sqrt(2) * noise_estimate(values, default=BY_NAME[metric].noise_default).sd
        for i, a in enumerate(values):
            for j, b in enumerate(values):
                if i != j:
                    pairs += 1
                    inside += abs(math.log(b / a)) <= half
    assert 0.90 <= inside / pairs <= 0.995, inside / pairs


def test_a_young_series_is_regressed_only_far_outside_the_class_noise():
    """Issue #42: at most two builds before a change, one run each: past 5 x the class prior and the
    metric's factor (1.5 by default), else not; more builds, or noise measured by repeated runs, pass."""
    from detection import young_bar, young_change_passes

    # hf:GPT2ForSequenceClassification's speedup between runs of one unchanged build: 2.46 -> 1.82
    assert not young_change_passes(2.46, 1.82, earlier=1, sd=0.025)
    assert young_change_passes(2.46, 1.50, earlier=1, sd=0.025)  # past 1.5x and 5 x 2.5 %
    assert not young_change_passes(20.0, 38.0, earlier=2, sd=0.15)  # compile time: 1.9x < 5 x 15 % in log
    assert young_change_passes(20.0, 45.0, earlier=2, sd=0.15)
    assert young_change_passes(2.46, 1.82, earlier=3, sd=0.025)  # not young: the other rules decide
    assert young_change_passes(2.46, 1.82, earlier=1, sd=0.025, measured=True)  # repeated runs measured it
    assert young_change_passes(1.0, 1.16, earlier=2, sd=0.015, min_factor=1.1)  # a steadier metric's factor
    assert young_bar(0.01) == math.log(1.5) and young_bar(0.2) == 5 * 0.2


# timm:resnet50 bf16 speedup, six runs of one unchanged build on an H200 (bench/results/families/
# history-h200-2026-11-28, hist-base-1..6): the sixth's compiled latency moved (5.96 ms against 5.62-5.75).
RESNET50 = [2.3414, 2.3698, 2.3233, 2.3495, 2.3624, 2.2255]


def test_a_noise_from_five_runs_gets_a_student_t_bar_so_an_unchanged_sixth_run_passes():
    model = noise_estimate(RESNET50[:5], default=BY_NAME["speedup"].noise_default)
    assert (model.source, model.dof) == ("series", 4) and 0.01 < model.sd < 0.015
    assert noise_bar(model) == pytest.approx(t_bar(6)) and 4.8 < noise_bar(model) < 5.0  # 3 sd at 4 + 2 dof
    assert noise_bar(noise_estimate([1.0, 1.01], default=0.02, prior=0.004)) == 3.0  # a prior: 3 sd
    assert t_bar(1e6) == pytest.approx(3.0, abs=1e-3)
    same = confirm_with_remeasurement([RESNET50[4]], [RESNET50[5]], HIGHER, between_run_sigma=model.sd, confirm_z=noise_bar(model))
    assert same.z < -3.0 and same.decision != "regression"  # 3 sd on this estimate: 'regressed' (what it was)
    # the -31 % conv-net change of the fusion history, on the same noise: still a regression
    step = confirm_with_remeasurement([RESNET50[4]], [RESNET50[4] * 0.69], HIGHER, between_run_sigma=model.sd,
                                      confirm_z=noise_bar(model))
    assert step.decision == "regression"


def test_the_floor_rule_takes_the_same_bar_the_unchanged_sixth_run_and_a_next_one_pass():
    model = NoiseEstimate(0.0136, "series", 4)  # as detection estimated it there (shrunk toward the class prior)
    values = RESNET50 + [2.2277]  # the next build measured at 2.228 (hist-fusion-2)
    floor = BY_NAME["speedup"].floor
    assert early_check(values, direction=HIGHER, sd=model.sd, floor=floor, min_before=None) is not None  # 3 sd
    assert early_check(values, direction=HIGHER, sd=model.sd, floor=floor, min_before=None, k=noise_bar(model)) is None
    stepped = RESNET50[:5] + [v * 0.69 for v in values[5:]]  # -31 %: still regressed on two builds
    found = early_check(stepped, direction=HIGHER, sd=model.sd, floor=floor, min_before=None, k=noise_bar(model))
    assert found is not None and found.state == "regressed" and found.first_bad == 5
