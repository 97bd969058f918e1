"""Compile phases, the run document's version 2 fields and the "what changed" comparison (issue #30),
without Django or torch."""
from __future__ import annotations

import copy

import pytest

from contract.document import check_document, validate_document
from contract.explain import explain, side_by_side
from contract.phases import PHASE_NAMES, derive_phases
from detection import compare_cases, new_breaks, new_recompiles
from tests.documents import make_document, make_result

# Inclusive dynamo_timed totals of a cold CPU compile (torch 2.13, the mlp_loop case, seconds).
COLD = {"entire_frame_compile": 6.91, "backend_compile": 6.78, "build_guards": 0.021, "inductor_compile": 6.24,
        "code_gen": 6.11, "PyCodeCache.load_by_key_path": 1.04, "async_compile.wait": 0.94, "compile_file": 5.9}
# A warm compile hits the FX graph cache: no inductor_compile, the output code's load inside backend_compile.
WARM = {"entire_frame_compile": 1.57, "backend_compile": 1.41, "build_guards": 0.023, "PyCodeCache.load_by_key_path": 1.21}


def test_cold_phases_are_exclusive_and_add_up_to_the_total():
    total, phases = derive_phases(COLD)
    assert total == 6.91
    assert phases == pytest.approx({"dynamo": 0.109, "guards": 0.021, "aot_autograd": 0.54, "lowering": 0.13,
                                    "codegen": 5.07, "kernel_compile": 1.04})
    assert sum(phases.values()) == pytest.approx(total)


def test_a_cache_hit_counts_the_load_once_and_renamed_keys_are_found():
    total, phases = derive_phases(WARM)
    assert phases == pytest.approx({"dynamo": 0.137, "guards": 0.023, "aot_autograd": 0.2, "kernel_compile": 1.21})
    assert sum(phases.values()) == pytest.approx(total)
    # torch 2.13's compilation_time_metrics name the frame's compile _compile.compile_inner
    total, phases = derive_phases({"_compile.compile_inner": 2.0, "backend_compile": 1.5})
    assert total == 2.0 and phases == {"dynamo": 0.5, "aot_autograd": 1.5}
    assert set(derive_phases(COLD)[1]) <= set(PHASE_NAMES)


def _v2_result(**fields) -> dict:
    result = make_result()
    result.update(fields)
    return result


PHASES = {"cold": {"phases": {"dynamo": 0.1, "codegen": 5.0}, "total_s": 5.1, "counts": {"guards": 8, "kernels": 1}},
          "warm": {"phases": {"kernel_compile": 1.2}, "total_s": 1.5}}
PROFILE = {"device": "cpu", "compiled": [{"name": "aten::mm", "count": 2, "self_ms": 1.5, "kind": "op"}],
           "eager": [{"name": "aten::mm", "count": 2, "self_ms": 1.4}],
           "kernels": [{"name": "cpp_fused_add_0", "kind": "cpp_pybinding", "fingerprint": "0123456789abcdef", "source": "x"}]}


def test_version_2_fields_are_read_and_version_1_documents_still_are():
    document = make_document(results=[_v2_result(compile_phases=PHASES, kernel_profile=PROFILE, cost={"compile": 5.2, "warm": 3.0})])
    document["schema_version"] = 2
    assert check_document(document) is document
    version_1 = make_document()
    assert version_1["schema_version"] == 1 and validate_document(version_1) == []
    # a version-1 document carries none of version 2's fields
    mixed = copy.deepcopy(document)
    mixed["schema_version"] = 1
    assert [(e.field, e.message) for e in validate_document(mixed)] == [
        ("results[0].compile_phases", "needs schema_version 2"), ("results[0].kernel_profile", "needs schema_version 2"),
        ("results[0].cost", "needs schema_version 2")]
    unknown = make_document()
    unknown["schema_version"] = 3
    assert validate_document(unknown)[0].field == "schema_version"


@pytest.mark.parametrize("fields, field", [
    ({"compile_phases": {"cold": {"phases": {"tracing": 1.0}}}}, "results[0].compile_phases.cold.phases.tracing"),
    ({"compile_phases": {"cold": {"counts": {"frames": 1}}}}, "results[0].compile_phases.cold.counts.frames"),
    ({"compile_phases": {"cold": {"phases": {"dynamo": -1.0}}}}, "results[0].compile_phases.cold.phases.dynamo"),
    ({"compile_phases": {"hot": {}}}, "results[0].compile_phases"),
    ({"cost": {"lunch": 1.0}}, "results[0].cost.lunch"),
    ({"kernel_profile": {"kernels": [{"name": "k", "fingerprint": "not hex"}]}}, "results[0].kernel_profile.kernels[0].fingerprint"),
])
def test_a_bad_version_2_field_is_refused_naming_it(fields, field):
    document = make_document(results=[_v2_result(**fields)])
    document["schema_version"] = 2
    errors = validate_document(document)
    assert errors and errors[0].field == field, errors


def _side(phases=None, kernels=(), rows=(), breaks=(), env=None, **metrics) -> dict:
    return {"metrics": metrics, "compile_phases": phases or {}, "graph_breaks": list(breaks), "recompiles": [],
            "kernel_profile": {"kernels": list(kernels), "compiled": list(rows)}, "environment": env or {}}


def _kernel(name, fingerprint, source="", ms=None):
    kernel = {"name": name, "fingerprint": fingerprint, "source": source}
    return kernel, ({"name": name, "count": 1, "self_ms": ms} if ms is not None else None)


def test_kernels_are_slower_faster_new_gone_changed_or_renamed():
    a_kernels = [_kernel("k_slow", "aa", ms=1.0), _kernel("k_fast", "bb", ms=1.0), _kernel("k_gone", "cc", ms=0.2),
                 _kernel("k_code", "dd", "for i in x:\n    vec(a)\nend", ms=0.5), _kernel("k_old_name", "ee")]
    b_kernels = [_kernel("k_slow", "aa", ms=1.5), _kernel("k_fast", "bb", ms=0.5), _kernel("k_new", "ff", ms=0.1),
                 _kernel("k_code", "99", "for i in x:\n    a\nend", ms=0.51), _kernel("k_new_name", "ee")]
    before = _side(kernels=[k for k, _ in a_kernels], rows=[r for _, r in a_kernels if r])
    after = _side(kernels=[k for k, _ in b_kernels], rows=[r for _, r in b_kernels if r])
    rows = {r["name"]: r for r in explain(before, after)["kernels"]}
    assert {name: r["status"] for name, r in rows.items()} == {
        "k_slow": "slower", "k_fast": "faster", "k_gone": "gone", "k_new": "new", "k_code": "changed",
        "k_old_name": "renamed", "k_new_name": "renamed"}
    assert rows["k_new_name"]["renamed_from"] == "k_old_name" and rows["k_old_name"]["renamed_to"] == "k_new_name"
    assert [d["kind"] for d in rows["k_code"]["diff"]] == ["same", "changed", "same"]
    assert rows["k_code"]["diff"][1] == {"kind": "changed", "before": "    vec(a)", "after": "    a"}
    assert list(rows)[0] == "k_slow"  # slower first


def test_the_likeliest_cause_of_a_compile_change_is_the_phase_that_moved_most():
    before = _side({"cold": {"phases": {"dynamo": 1.0, "codegen": 2.0, "kernel_compile": 1.0}, "total_s": 4.0}}, compile_time_cold_s=4.0)
    after = _side({"cold": {"phases": {"dynamo": 1.1, "codegen": 2.1, "kernel_compile": 2.8}, "total_s": 6.0}}, compile_time_cold_s=6.0)
    report = explain(before, after, metric="compile_time_cold_s")
    assert report["cause"]["name"] == "kernel_compile" and report["cause"]["share"] == pytest.approx(0.9)
    assert report["cause"]["text"].startswith("kernel compile wait and load (cold): 1 s -> 2.8 s, 90% of the cold compile's change")
    shares = {r["name"]: r["share"] for r in report["phases"]}
    assert shares["dynamo"] == pytest.approx(0.05) and shares["total"] == 1.0
    # Without a metric, the one that moved most relatively is explained.
    assert explain(before, after)["cause"]["name"] == "kernel_compile"


def test_without_a_metric_the_one_that_moved_most_past_its_noise_is_explained():
    # as on the H100 with inductor.max_fusion_size=1: compile +11 % (its noise default 15 %), latency +2.6 % (2 %)
    k1, r1 = _kernel("triton_poi_fused_add_0", "aa", ms=1.0)
    k2, r2 = _kernel("triton_poi_fused_add_0", "aa", ms=1.026)
    cold = lambda total: {"cold": {"phases": {"lowering": total - 1.0, "codegen": 1.0}, "total_s": total}}  # noqa: E731
    before = _side(cold(10.0), [k1], [r1], compile_time_cold_s=10.0, compiled_latency_ms=1.0)
    after = _side(cold(11.1), [k2], [r2], compile_time_cold_s=11.1, compiled_latency_ms=1.026)
    report = explain(before, after)
    assert report["metric"] == "compiled_latency_ms" and report["cause"]["name"] == "triton_poi_fused_add_0"
    assert explain(before, after, metric="compile_time_cold_s")["cause"]["name"] == "lowering"
    # a compile phase's metric is explained by its compile's phases
    assert explain(before, after, metric="compile_phase_codegen_s")["metric"] == "compile_time_cold_s"
    assert explain(before, after, metric="compile_phase_warm_codegen_s")["metric"] == "compile_time_warm_s"


def test_a_compile_one_side_lacks_has_no_change_and_a_phase_one_compile_lacks_took_none():
    before = _side({"cold": {"phases": {"lowering": 1.0, "kernel_compile": 1.0}, "total_s": 2.0},
                    "warm": {"phases": {"kernel_compile": 0.5}, "total_s": 0.5}})
    after = _side({"cold": {"phases": {"kernel_compile": 1.2}, "total_s": 1.2}})  # a cache hit: no lowering; no warm compile
    rows = {(r["side"], r["name"]): r for r in explain(before, after)["phases"]}
    assert rows[("cold", "lowering")]["delta"] == -1.0 and rows[("cold", "lowering")]["after"] is None
    assert rows[("warm", "kernel_compile")]["delta"] is None and rows[("warm", "total")]["delta"] is None


def test_a_latency_change_is_put_on_the_kernel_that_slowed_most():
    k1, r1 = _kernel("triton_poi_fused_add_0", "aa", ms=1.0)
    k2, r2 = _kernel("triton_red_fused_sum_1", "bb", ms=2.0)
    k2b, r2b = _kernel("triton_red_fused_sum_1", "cc", ms=3.0)
    report = explain(_side(kernels=[k1, k2], rows=[r1, r2], compiled_latency_ms=3.0),
                     _side(kernels=[k1, k2b], rows=[dict(r1, self_ms=1.1), r2b], compiled_latency_ms=4.1), metric="compiled_latency_ms")
    assert report["cause"]["name"] == "triton_red_fused_sum_1"
    assert "(its code changed)" in report["cause"]["text"] and "91%" in report["cause"]["text"]


def test_new_graph_breaks_and_environment_differences_come_first():
    before = _side(breaks=[{"reason": "Tensor.item", "count": 1}], env={"torch": "2.11.0", "Python": "3.11", "triton": "3.5"})
    after = _side(breaks=[{"reason": "data-dependent branch", "location": "m.py:3", "count": 2}],
                  env={"torch": "2.12.0", "Python": "3.11", "triton": "3.5"})
    report = explain(before, after, metric="graph_break_count")
    assert report["graph_breaks"]["added"] == [{"reason": "data-dependent branch (m.py:3)", "count": 2}]
    assert report["graph_breaks"]["removed"] == [{"reason": "Tensor.item", "count": 1}]
    assert report["cause"]["text"] == "new: data-dependent branch (m.py:3) (x2)"
    # Dynamo's reasons run to a paragraph after their first line: the cause keeps the first line and
    # the location, the report's added reasons the whole text.
    long = "Graph break in loop\n  Explanation: torch.compile detected a graph break in a for/while loop.\n  Hint: ..."
    loop = explain(before, _side(breaks=[{"reason": long, "location": "bert.py:83", "count": 1}]), metric="graph_break_count")
    assert loop["cause"]["text"] == "new: Graph break in loop (bert.py:83) (x1)"
    assert loop["graph_breaks"]["added"] == [{"reason": f"{long} (bert.py:83)", "count": 1}]
    assert [(r["key"], r["differs"]) for r in report["environment"]] == [("torch", True), ("Python", False), ("triton", False)]


def test_what_counts_as_new_is_the_callers_and_the_dashboard_passes_detections():
    # torch 2.12 rewords a break's hint (its install path) and tells a location 2.11 could not: by
    # text both are new; by detection's rule (the dashboard's) only the break 2.11 did not have is.
    def skipped(path):
        return f"Attempted to inline function marked as skipped\n  Hint: skip reason: {path}/torch/_compile.py"

    before = _side(breaks=[{"reason": skipped("/opt/torch-2.11"), "count": 1}, {"reason": "Unsupported Tensor.backward() call", "count": 1}])
    after = _side(breaks=[{"reason": skipped("/work/builds/torch-2.12.1"), "count": 1},
                          {"reason": "Unsupported Tensor.backward() call", "location": "train_step.py:89", "count": 1},
                          {"reason": "graph break in loop\n  Explanation: ...", "count": 1}])
    by_text = explain(before, after, metric="graph_break_count")
    assert [a["reason"].splitlines()[0] for a in by_text["graph_breaks"]["added"]] == [
        "Attempted to inline function marked as skipped", "Unsupported Tensor.backward() call (train_step.py:89)", "graph break in loop"]
    detected = explain(before, after, metric="graph_break_count", new_of={"graph_breaks": new_breaks, "recompiles": new_recompiles})
    assert [a["reason"].splitlines()[0] for a in detected["graph_breaks"]["added"]] == ["graph break in loop"]
    assert detected["graph_breaks"]["removed"] == [] and detected["cause"]["text"] == "new: graph break in loop (x1)"
    assert (detected["graph_breaks"]["before"], detected["graph_breaks"]["after"]) == (2, 3)
    # ... which is the reason the finding names
    finding = compare_cases({"status": "pass", "graph_breaks": before["graph_breaks"]}, {"status": "pass", "graph_breaks": after["graph_breaks"]})
    assert [f.reasons for f in finding if f.kind == "new_graph_break"] == [("graph break in loop\n  Explanation: ...",)]


def test_side_by_side_cuts_long_unchanged_stretches():
    before = "\n".join(f"line {i}" for i in range(20))
    after = before.replace("line 10", "line ten")
    rows = side_by_side(before, after, context=2)
    assert [r["kind"] for r in rows] == ["same", "same", "changed", "same", "same"]
    assert rows[2] == {"kind": "changed", "before": "line 10", "after": "line ten"}


def test_the_first_run_outside_the_records_is_a_phase_and_the_phases_add_up_to_the_first_call():
    from contract.phases import with_first_run

    record = with_first_run({"phases": {"dynamo": 1.0, "codegen": 2.0}, "total_s": 3.0}, 3.5)
    assert record["phases"]["first_run"] == pytest.approx(0.5)
    assert record["total_s"] == pytest.approx(3.5) and record["records_total_s"] == 3.0
    assert sum(record["phases"].values()) == pytest.approx(record["total_s"])
    # a call that compiled nothing (no records' total) is left as it is
    assert with_first_run({"phases": {}, "counts": {}}, 2.0) == {"phases": {}, "counts": {}}
    assert with_first_run(None, 2.0) is None


def test_launch_time_tuning_is_named_as_the_cause_on_the_h100_proof():
    """bert_encoder on an H100, plain vs inductor.coordinate_descent_tuning (bench/results/explain/):
    the tuning happens at the first launch, outside PyTorch's compile records. Their phases alone
    moved by -0.7 s while the compile grew by 2.7 s."""
    from contract.phases import with_first_run

    plain = {"phases": {"dynamo": 1.772852, "guards": 0.289469, "aot_autograd": 2.755051, "lowering": 2.772624,
                        "codegen": 3.077131, "kernel_compile": 0.957712}, "total_s": 11.62484}
    tuned = {"phases": {"dynamo": 1.802781, "guards": 0.341758, "aot_autograd": 2.68302, "lowering": 2.374014,
                        "codegen": 2.656681, "kernel_compile": 1.027906}, "total_s": 10.88616}
    before = _side({"cold": with_first_run(plain, 11.910325)}, compile_time_cold_s=11.910325)
    after = _side({"cold": with_first_run(tuned, 14.648680)}, compile_time_cold_s=14.648680)
    cause = explain(before, after, metric="compile_time_cold_s")["cause"]
    assert cause["name"] == "first_run" and cause["share"] > 1.0
    assert cause["text"].startswith("first run and launch-time tuning (cold): 0.285 s -> 3.76 s")


def test_kernels_split_by_a_fusion_change_are_the_cause_on_the_h100_proof():
    """bert_encoder on an H100, plain vs inductor.max_fusion_size=1 (bench/results/explain/): 40
    kernels became 100 and compiled got 2.6 % slower. The kernels that appeared and went carry the
    change, not a cuBLAS GEMM that moved by 0.01 ms."""
    import json
    from pathlib import Path

    results = Path(__file__).resolve().parents[2] / "bench" / "results" / "explain"
    plain, fused_less = (json.loads((results / f"h100-{name}-2026-11-25.json").read_text())["results"][0]
                         for name in ("plain", "fusion1"))
    for metric in ("compiled_latency_ms", "speedup"):
        cause = explain(plain, fused_less, metric=metric)["cause"]
        assert cause["name"] == "kernels new and gone" and cause["share"] > 0.9, metric
        assert cause["text"].startswith("profiled kernels 3 new and 4 gone (fused differently): +0.7716 ms a call")


def test_results_measured_before_the_first_run_phase_get_it_from_their_compile_time():
    """The stored H100 proof (bench/results/explain/h100-*.json) predates the phase: explain derives it
    from each side's compile time, so coordinate descent tuning is still named for what it is."""
    import json
    from pathlib import Path

    results = Path(__file__).resolve().parents[2] / "bench" / "results" / "explain"
    plain, tuned = (json.loads((results / f"h100-{name}-2026-11-25.json").read_text())["results"][0] for name in ("plain", "cdt"))
    assert "first_run" not in plain["compile_phases"]["cold"]["phases"]
    for metric, side in (("compile_time_cold_s", "cold"), ("compile_time_warm_s", "warm")):
        cause = explain(plain, tuned, metric=metric)["cause"]
        assert (cause["name"], cause["side"]) == ("first_run", side) and cause["share"] > 1.0
    report = explain(plain, tuned)
    cold_total = next(r for r in report["phases"] if r["side"] == "cold" and r["name"] == "total")
    assert cold_total["after"] == pytest.approx(tuned["metrics"]["compile_time_cold_s"], abs=1e-5)
    assert "first_run" not in plain["compile_phases"]["cold"]["phases"]  # the stored side is not changed


def test_a_status_change_is_the_cause_with_its_whole_error():
    # pass -> compile_error: the failing side has no figures; "what changed" is the status and the error.
    message = "LoweringException: GuardOnDataDependentSymNode: Could not guard\n" + "target: aten.bmm.default\n" * 200
    before = {"status": "pass", "metrics": {"compile_time_cold_s": 10.0}}
    after = {"status": "compile_error", "metrics": {}, "error": {"type": "InductorError", "message": message}}
    report = explain(before, after)
    assert report["metric"] == "status"
    assert report["status"] == {"before": "pass", "after": "compile_error", "error": f"InductorError: {message}", "before_error": ""}
    assert report["cause"]["text"] == ("status pass -> compile_error: InductorError: LoweringException: "
                                       "GuardOnDataDependentSymNode: Could not guard")
    assert explain(before, {**before})["status"] is None  # no change: no status section, the metrics explain
