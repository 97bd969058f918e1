"""The accuracy step of a case: compiled's first output against eager's reference, and against a
float64 run where low precision fails the direct comparison (docs/families.md, docs/explain.md)."""
from __future__ import annotations

import dataclasses
import math
from typing import Any

import torch

from contract.spec import CaseSpec
from runner.engine.accuracy import (COSINE_FLOOR, compare_outputs, cosine_agreement, inputs_as_fp64, judge_against_fp64,
                                    map_tensors, tolerances)
from runner.engine.instances import build_instance, copied_instance
from runner.engine.result_file import CaseRecord


def check_accuracy(spec: CaseSpec, workload, eager, compiled, record: CaseRecord) -> None:
    """``eager`` and ``compiled``: the case's EagerSide and CompiledSide (runner.engine.case).
    Compiled's first output against eager's (on the case's device), and against a float64 run
    where low precision fails the direct comparison."""
    rtol, atol = tolerances(spec.dtype, compiled.instance.rtol, compiled.instance.atol)
    comparison = compare_outputs(compiled.first_output, eager.reference, rtol=rtol, atol=atol, device=spec.device)
    record.metrics["accuracy_max_abs_error"] = comparison.max_abs_error
    record.metrics["accuracy_max_rel_error"] = comparison.max_rel_error
    if not comparison.ok and not _closer_to_fp64_than_allowed(spec, workload, eager, compiled, atol, record):
        record.status = "fail_accuracy"
        record.error = {"type": "AccuracyMismatch", "message": f"compiled output differs from eager: {comparison.problem}"}
    if spec.device == "cuda":
        torch.cuda.empty_cache()  # the comparison's slices (and a float64 copy) are gone; give their memory back


def _closer_to_fp64_than_allowed(spec: CaseSpec, workload, eager, compiled, atol: float, record: CaseRecord) -> bool:
    """For float16/bfloat16/amp: does compiled stay as close to a float64 run as eager does?

    Only runs when the direct comparison failed. As PyTorch's harness does (``same()``), compiled may
    be up to 3x as far from float64 as eager is in float16/bfloat16, 2x otherwise. If the float64 run
    itself fails (a 20B model's float64 copy fits no GPU), the harness's fallback: compiled and eager
    agree when their cosine similarity is at least ``COSINE_FLOOR``.
    """
    if eager.host_inputs is None:
        return False
    multiplier = 3.0 if spec.dtype in ("float16", "bfloat16") else 2.0
    try:
        no_room = _no_room_for_fp64(spec, eager)
        if no_room:
            raise MemoryError(no_room)
        fp64_output, reference = _fp64_output(workload, spec, eager)
        verdict = judge_against_fp64(compiled.first_output, eager.reference, fp64_output, atol=atol,
                                     multiplier=multiplier, device=spec.device)
    except Exception as exc:  # noqa: BLE001 (whatever the fp64 check hits is recorded, not raised)
        fp64_output = None
        if spec.device == "cuda":
            torch.cuda.empty_cache()
        cosine = cosine_agreement(compiled.first_output, eager.reference, device=spec.device)
        passed = cosine >= COSINE_FLOOR
        record.environment["accuracy_fp64"] = {"error": f"{type(exc).__name__}: {exc}"[:1000], "fallback": "cosine",
                                               "cosine": cosine if math.isfinite(cosine) else None, "passed": passed}
        return passed
    record.environment["accuracy_fp64"] = {
        "passed": verdict.ok,
        "compiled_rmse": verdict.compiled_rmse,
        "eager_rmse": verdict.eager_rmse,
        "reference": reference,
        "multiplier": multiplier,
    }
    return verdict.ok


# Of the GPU memory free when the check starts, the share a float64 copy may take. A copy that does not
# fit is not tried: on a GPU shared by several runner processes (bench/gpu/families_gpu.sh, a worker's
# cases at once) a copy that fails does so only after taking all the free memory, and a sibling case
# allocating meanwhile would fail with it (a 7B model's copy is 58 GB).
FP64_FREE_SHARE = 0.8


def _no_room_for_fp64(spec: CaseSpec, eager) -> str | None:
    """Why the float64 copy of the eager instance's modules is not tried on this GPU, or None: its
    bytes (the deep copy in the case's dtype, then its float64 cast) past ``FP64_FREE_SHARE`` of
    the memory free now. None off CUDA and for a workload rebuilt in float64 (its size unknown)."""
    if spec.device != "cuda" or eager.instance.rebind is None or not eager.instance.modules:
        return None
    tensors = [t for module in eager.instance.modules for t in (*module.parameters(), *module.buffers())]
    need = sum(t.numel() * (t.element_size() + 8) for t in tensors if t.is_floating_point())
    free, _total = torch.cuda.mem_get_info()
    if need <= FP64_FREE_SHARE * free:
        return None
    return f"no room for a float64 copy: it needs {need / 1e9:.1f} GB, {free / 1e9:.1f} GB of the GPU is free"


def _fp64_output(workload, spec: CaseSpec, eager) -> tuple[Any, str]:
    """(a float64 run's output on float64 copies of the inputs, detached, left on the device, how it was made).

    As PyTorch's harness makes its float64 reference (a deep copy of the model it has, cast): the
    eager instance's modules copied and cast to float64 (its low-precision weights upcast) and run
    through ``Instance.rebind``; a workload without ``rebind`` is built again in float64 with the
    same seed (its own float64 weights). The copy lives only for this call.
    """
    fp64_spec = dataclasses.replace(spec, dtype="float64")
    inputs = inputs_as_fp64(eager.host_inputs, spec.device)
    if eager.instance.rebind is not None and eager.instance.modules:
        fn = copied_instance(eager.instance, torch.float64).fn
        reference = "eager weights in float64"
    else:
        fn = build_instance(workload, fp64_spec).fn
        reference = "rebuilt in float64"
    torch.manual_seed(spec.seed)
    return map_tensors(fn(*inputs), torch.Tensor.detach), reference
