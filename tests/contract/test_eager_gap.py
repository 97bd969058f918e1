"""Why a compiled case runs slower than eager, from its kernel profile (contract.eager_gap, #42 item 9):
on the stored H100 run of hf:BertForMaskedLM (bf16, 0.556x), attention left cuDNN's fused kernel for
float32 GEMMs and a softmax kernel; on small made-up profiles, the other two answers."""
from __future__ import annotations

import json
from pathlib import Path

from contract.eager_gap import slower_than_eager

STORED = Path(__file__).resolve().parents[2] / "bench" / "results" / "families" / "h100-2026-11-28" / "h100-1-hf-static-cost.json"


def test_compiled_bert_on_an_h100_lost_its_fused_attention_to_float32_gemms():
    [bert] = [r for r in json.loads(STORED.read_text())["results"] if r["workload"] == "hf:BertForMaskedLM"]
    assert bert["metrics"]["speedup"] < 0.6 and bert["config"]["dtype"] == "bfloat16"
    cause = slower_than_eager(bert["kernel_profile"], dtype="bfloat16")
    assert cause["kind"] == "attention" and cause["headline"] == "attention left its fused kernel"
    assert cause["text"].startswith("attention left its fused kernel: eager runs aten::_cudnn_attention_forward (12 calls")
    assert "float32 GEMMs on CUDA cores in this bfloat16 case" in cause["text"] and "through aten::bmm" in cause["text"]
    assert "softmax kernel" in cause["text"]


def _row(name, ms, count=1):
    return {"name": name, "count": count, "self_ms": ms}


def test_float32_gemms_in_a_half_case_and_otherwise_what_only_the_compiled_call_runs():
    profile = {"eager": [_row("aten::mm", 1.0)], "compiled": [_row("aten::mm", 1.0), _row("ampere_sgemm_128x64_nn", 3.0, 4)]}
    assert slower_than_eager(profile, dtype="bfloat16")["kind"] == "fp32_gemm"
    other = slower_than_eager(profile, dtype="float32")  # float32 GEMMs are what a float32 case runs
    assert other["kind"] == "compiled_only" and other["text"].endswith("ampere_sgemm_128x64_nn (4 calls, 3.00 ms)")
    assert slower_than_eager({"eager": [], "compiled": [_row("x", 1.0)]}) is None  # no profile of eager: no cause
    assert slower_than_eager(None) is None
