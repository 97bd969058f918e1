"""Compiled-vs-eager output comparison over pytrees, and default tolerances."""
from __future__ import annotations

import collections

import pytest
import torch

from runner.engine.accuracy import compare_outputs, judge_against_fp64, to_host, tolerances


def test_identical_pytrees_pass_with_zero_error():
    tree = {"logits": torch.ones(2, 3), "aux": (torch.arange(4), [torch.zeros(1)]), "n": 3}
    result = compare_outputs(to_host(tree), to_host(tree), rtol=1e-3, atol=1e-3)
    assert result.ok and result.max_abs_error == 0.0 and result.max_rel_error == 0.0


def test_small_differences_pass_large_ones_fail_with_their_path():
    expected = (torch.tensor([1.0, 100.0]), torch.tensor([2.0]))
    close = (torch.tensor([1.0005, 100.05]), torch.tensor([2.0]))
    far = (torch.tensor([1.0, 100.0]), torch.tensor([2.5]))
    assert compare_outputs(close, expected, rtol=1e-3, atol=1e-3).ok
    result = compare_outputs(far, expected, rtol=1e-3, atol=1e-3)
    assert not result.ok
    assert result.max_abs_error == 0.5
    assert result.max_rel_error == 0.25
    assert result.problem.startswith("output[1]:")


def test_nan_in_the_same_places_passes_elsewhere_fails():
    expected = torch.tensor([1.0, float("nan")])
    assert compare_outputs(torch.tensor([1.0, float("nan")]), expected, rtol=1e-3, atol=1e-3).ok
    result = compare_outputs(torch.tensor([float("nan"), 1.0]), expected, rtol=1e-3, atol=1e-3)
    assert not result.ok and result.max_abs_error is None and "NaN" in result.problem


def test_structure_shape_and_integer_mismatches_fail():
    assert not compare_outputs((torch.ones(2),), [torch.ones(2), torch.ones(1)], rtol=1, atol=1).ok
    assert "shape" in compare_outputs(torch.ones(2), torch.ones(3), rtol=1, atol=1).problem
    assert not compare_outputs(torch.tensor([1, 2]), torch.tensor([1, 3]), rtol=1, atol=1).ok


def test_namedtuples_dicts_and_bfloat16_are_compared_in_float64():
    Out = collections.namedtuple("Out", "loss hidden")
    expected = to_host(Out(torch.tensor(1.0, dtype=torch.bfloat16), {"h": torch.ones(2, dtype=torch.bfloat16)}))
    actual = to_host(Out(torch.tensor(1.0078125, dtype=torch.bfloat16), {"h": torch.ones(2, dtype=torch.bfloat16)}))
    rtol, atol = tolerances("bfloat16")
    result = compare_outputs(actual, expected, rtol=rtol, atol=atol)
    assert result.ok and result.max_abs_error == 0.0078125


def test_instance_tolerances_override_the_dtype_defaults():
    assert tolerances("float32") == (1e-3, 1e-3)
    assert tolerances("float32", rtol=1e-2) == (1e-2, 1e-3)
    assert tolerances("bfloat16", atol=0.1)[1] == 0.1


def test_float64_judgement_compares_distances_to_the_float64_run():
    fp64 = (torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64),)
    eager = (torch.tensor([1.02, 2.0, 3.0]),)
    closer = (torch.tensor([1.01, 2.0, 3.0]),)
    farther = (torch.tensor([1.1, 2.0, 3.0]),)
    verdict = judge_against_fp64(closer, eager, fp64, atol=1e-3)
    assert verdict.ok and verdict.compiled_rmse < verdict.eager_rmse
    assert not judge_against_fp64(farther, eager, fp64, atol=1e-3).ok
    assert not judge_against_fp64((torch.tensor([float("nan"), 2.0, 3.0]),), eager, fp64, atol=1e-3).ok


def _outputs(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    expected = torch.randn(5, 7, generator=generator).to(torch.bfloat16)
    actual = (expected.float() + torch.randn(5, 7, generator=generator) * 0.05).to(torch.bfloat16)
    return actual, expected


def test_slice_by_slice_comparison_gives_the_figures_of_one_piece(monkeypatch):
    """Outputs are compared in slices of CHUNK_ELEMENTS (on the case's device): the maxima, the
    verdict, the NaN counts and the first problem are those of the whole tensor."""
    actual, expected = _outputs(0)
    with_nans = actual.clone()
    with_nans[0, 0], with_nans[4, 6] = float("nan"), float("nan")
    with_infs = actual.clone()
    with_infs[3, 1] = float("inf")
    cases = [(actual, expected, 3e-2), (actual, expected, 0.5), (with_nans, expected, 0.5), (with_infs, expected, 0.5)]
    whole = [compare_outputs((a,), (e,), rtol=tol, atol=tol) for a, e, tol in cases]
    whole_judged = judge_against_fp64((actual,), (expected,), (expected.double() * 1.001,), atol=1e-3)
    monkeypatch.setattr("runner.engine.accuracy.CHUNK_ELEMENTS", 4)
    assert [compare_outputs((a,), (e,), rtol=tol, atol=tol) for a, e, tol in cases] == whole
    assert [w.ok for w in whole] == [False, True, False, False]
    assert whole[2].problem == "output[0]: NaN in 2 compiled vs 0 eager elements"
    assert whole[3].problem == "output[0]: infinities differ"
    judged = judge_against_fp64((actual,), (expected,), (expected.double() * 1.001,), atol=1e-3)
    assert judged.ok == whole_judged.ok
    assert judged.compiled_rmse == pytest.approx(whole_judged.compiled_rmse, rel=1e-12)
    assert judged.eager_rmse == pytest.approx(whole_judged.eager_rmse, rel=1e-12)


def test_cosine_agreement_is_the_harness_fallback_where_no_float64_run_fits():
    from runner.engine.accuracy import COSINE_FLOOR, cosine_agreement

    eager = (torch.linspace(-1, 1, 1000), {"past": torch.ones(3)})
    assert cosine_agreement(eager, eager) == pytest.approx(1.0)
    noisy = (eager[0] + 0.01 * torch.sin(torch.arange(1000.0)), {"past": torch.ones(3)})
    assert cosine_agreement(noisy, eager) >= COSINE_FLOOR
    assert cosine_agreement((-eager[0], eager[1]), eager) < 0  # the smallest leaf decides
    assert not cosine_agreement((torch.full((1000,), float("nan")), eager[1]), eager) >= COSINE_FLOOR
    assert cosine_agreement((torch.ones(4), eager[1]), eager) == 0.0  # another shape


def test_a_float64_run_that_cannot_be_made_falls_back_to_cosine(monkeypatch):
    """gpt-oss-20b's float64 copy (167 GB) fits no GPU: the case is judged as the harness judges it."""
    import types

    import runner.engine.accuracy_check as accuracy_check
    from runner.engine.result_file import CaseRecord

    def no_room(*_):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 3.96 GiB")

    monkeypatch.setattr(accuracy_check, "_fp64_output", no_room)
    eager_out = (torch.linspace(-3, 3, 4096),)
    spec = types.SimpleNamespace(dtype="bfloat16", device="cpu")  # all the judgement reads of a CaseSpec
    for compiled_out, verdict in (((eager_out[0] * 1.05,), True), ((torch.flip(eager_out[0], [0]),), False)):
        record = CaseRecord()
        ok = accuracy_check._closer_to_fp64_than_allowed(
            spec, None, types.SimpleNamespace(host_inputs=(), reference=eager_out),
            types.SimpleNamespace(first_output=compiled_out), 1e-2, record)
        fp64 = record.environment["accuracy_fp64"]
        assert ok is verdict and fp64["passed"] is verdict and fp64["fallback"] == "cosine"
        assert fp64["error"].startswith("OutOfMemoryError")


def test_a_float64_copy_past_the_free_gpu_memory_is_not_tried(monkeypatch):
    """On a GPU shared by several cases, a 7B model's 58 GB float64 copy would take all the free memory
    before failing: it is judged by the cosine fallback without trying, and says why."""
    import types

    import runner.engine.accuracy_check as accuracy_check
    from runner.engine.result_file import CaseRecord

    module = torch.nn.Linear(1000, 1000).to(torch.bfloat16)  # 1.001 M values: 10.0 MB copied and cast
    tried = []
    monkeypatch.setattr(accuracy_check, "_fp64_output", lambda *a: tried.append(a) or (_ for _ in ()).throw(RuntimeError))
    eager_out = (torch.linspace(-3, 3, 4096),)
    eager = types.SimpleNamespace(host_inputs=(), reference=eager_out,
                                  instance=types.SimpleNamespace(rebind=lambda m: None, modules=(module,)))
    spec = types.SimpleNamespace(dtype="bfloat16", device="cuda")
    for free, expect_tried in ((5_000_000, False), (100_000_000, True)):
        monkeypatch.setattr(torch.cuda, "mem_get_info", lambda free=free: (free, 10**11))
        monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
        monkeypatch.setattr(accuracy_check, "cosine_agreement", lambda *a, **k: 1.0)
        tried.clear()
        record = CaseRecord()
        assert accuracy_check._closer_to_fp64_than_allowed(
            spec, None, eager, types.SimpleNamespace(first_output=eager_out), 1e-2, record)
        assert bool(tried) is expect_tried
        error = record.environment["accuracy_fp64"]["error"]
        if not expect_tried:
            assert error.startswith("MemoryError: no room for a float64 copy: it needs 0.0 GB")
