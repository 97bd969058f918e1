"""Why a compiled case runs slower than eager, from its kernel profile (issue #42 item 9).

A result's ``kernel_profile`` (runner.engine.kernel_profile; docs/explain.md) lists the largest
operators and kernels of one profiled call on each side, ``compiled`` and ``eager``, each
``{name, count, self_ms}``. ``slower_than_eager`` names what the compiled call runs that eager does
not, and what eager runs that the compiled call lost, and recognises two known mechanisms:

- attention leaving its fused kernel: eager runs SDPA as a fused flash / memory-efficient / cuDNN
  attention kernel, the compiled call has none (it runs the decomposed math path: batched GEMMs and
  a softmax kernel). E.g. hf:BertForMaskedLM on an H100 at 0.556x: transformers builds an explicit
  4D mask while tracing, and SDPA with that mask leaves the flash kernels (bench/results/families/README.md);
- float32 GEMMs in a bfloat16 / float16 case: cuBLAS kernels named ``f32f32_f32f32`` / ``sgemm`` /
  ``ffma`` (CUDA cores, not tensor cores).

Otherwise the cause is the compiled call's largest entries that eager lacks. Pure Python.
"""
from __future__ import annotations

import re

FUSED_ATTENTION = re.compile(r"attention_forward|flash_fprop|flash_fwd|fmha|flash_attn|scaled_dot_product_(flash|efficient|cudnn)", re.I)
FP32_GEMM = re.compile(r"f32f32_f32f32|sgemm|_ffma_|gemm_f32", re.I)
LOW_PRECISION = ("bfloat16", "float16")
SHOWN = 3  # entries named in a generic cause


def _entries(rows) -> dict[str, dict]:
    """name -> the row (the larger where a name is listed twice: an op and its launch); the compiled
    graph's own call (``## Call CompiledFxGraph ... ##``, host time around its kernels) left out."""
    out: dict[str, dict] = {}
    for row in rows or []:
        if not isinstance(row, dict) or not row.get("name") or not isinstance(row.get("self_ms"), (int, float)) \
                or str(row["name"]).startswith("## "):
            continue
        if row["name"] not in out or row["self_ms"] > out[row["name"]]["self_ms"]:
            out[row["name"]] = row
    return out


def _short(name: str, limit: int = 60) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"


def _named(row: dict) -> str:
    return f"{_short(row['name'])} ({row.get('count') or '?'} calls, {row['self_ms']:.2f} ms)"


def slower_than_eager(profile, *, dtype: str = "") -> dict | None:
    """``{"kind", "headline", "text", "compiled", "eager"}``: the likeliest cause of a compiled call slower than
    eager, from a result's kernel profile (None without one on both sides). ``kind``: ``attention``,
    ``fp32_gemm`` or ``compiled_only``; ``compiled`` / ``eager``: the entries the text names."""
    profile = profile if isinstance(profile, dict) else {}
    compiled, eager = _entries(profile.get("compiled")), _entries(profile.get("eager"))
    if not compiled or not eager:
        return None
    only_compiled = sorted((r for n, r in compiled.items() if n not in eager), key=lambda r: -r["self_ms"])
    only_eager = sorted((r for n, r in eager.items() if n not in compiled), key=lambda r: -r["self_ms"])
    lost_attention = [r for r in only_eager if FUSED_ATTENTION.search(r["name"])]
    kept_attention = [r for r in compiled.values() if FUSED_ATTENTION.search(r["name"])]
    fp32 = [r for r in only_compiled if FP32_GEMM.search(r["name"])] if dtype in LOW_PRECISION else []
    softmax = [r for r in only_compiled if "softmax" in r["name"].lower()]
    through = [r for r in only_compiled if r["name"] in ("aten::bmm", "aten::matmul", "aten::baddbmm")]
    if lost_attention and not kept_attention:
        text = f"attention left its fused kernel: eager runs {_named(lost_attention[0])}, the compiled call none"
        gemms = fp32 or through
        if gemms:
            precision = f"float32 GEMMs on CUDA cores in this {dtype} case" if fp32 else "batched GEMMs"
            via = f", through {through[0]['name']}" if through and fp32 else ""
            text += f"; it runs the math path instead: {precision} ({sum(r['self_ms'] for r in gemms):.2f} ms{via})"
        if softmax:
            text += f" and a softmax kernel ({softmax[0]['self_ms']:.2f} ms)"
        return {"kind": "attention", "headline": "attention left its fused kernel", "text": text, "compiled": gemms + softmax[:1], "eager": lost_attention[:1]}
    if fp32:
        text = (f"float32 GEMMs on CUDA cores in this {dtype} case: {', '.join(_named(r) for r in fp32[:SHOWN])}, "
                f"{sum(r['self_ms'] for r in fp32):.2f} ms that eager runs in {dtype}")
        return {"kind": "fp32_gemm", "headline": f"float32 GEMMs in a {dtype} case", "text": text, "compiled": fp32[:SHOWN], "eager": []}
    if not only_compiled:
        return None
    text = "the compiled call's largest entries that eager lacks: " + ", ".join(_named(r) for r in only_compiled[:SHOWN])
    return {"kind": "compiled_only", "headline": f"compiled runs {_short(only_compiled[0]['name'], 40)}, eager not", "text": text, "compiled": only_compiled[:SHOWN], "eager": only_eager[:SHOWN]}
