"""The LLM table of issue #43's note from run documents (bench/gpu/llm_gpu.sh, docs/llms.md).

    python -m bench.llm_table DOC.json ...

A row per LLM step and compile mode (``hf:Qwen/Qwen3-0.6B@decode`` reduce-overhead): per regime
(static, backed, unbacked) the speedup (after the status where the case did not pass, as a
failed accuracy check still times both sides), the cold compile seconds and the compiled side's
peak memory, then unbacked/backed (the speedups' ratio where both passed); after it the whole
training steps beside the model-only ones (``@train_step`` / ``@train``), and the failures by
status and error class. ``!cgN``: N compiled graphs of a CUDA-graph mode ran without CUDA graphs
(``environment.cuda_graphs``, recorded from 2026-11-29 on). Each case is the one stored last of its workload and configuration. Pure
Python.
"""
from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

REGIMES = ("static", "backed", "unbacked")


def cases(paths: list[str]) -> dict[tuple, dict]:
    out = {}
    for path in paths:
        for result in json.loads(Path(path).read_text())["results"]:
            config = result["config"]
            out[(result["workload"], config["compile_mode"], config["shape_regime"], config["dtype"])] = result
    return out


def cell(result: dict | None) -> str:
    if result is None:
        return "-"
    metrics = result["metrics"]
    if metrics.get("speedup") is None:
        return result["status"]
    prefix = "" if result["status"] == "pass" else f"{result['status']} "
    peak = metrics.get("compiled_peak_memory_bytes")
    skipped = ((result.get("environment") or {}).get("cuda_graphs") or {}).get("skipped_graphs")
    return (prefix + f"{metrics['speedup']:.3f}x {metrics['compile_time_cold_s']:.0f}s" + (f" {_size(peak)}" if peak else "")
            + (f" !cg{skipped}" if skipped else ""))


def _size(value: float) -> str:
    return f"{value / 1e9:.1f}GB" if value >= 1e9 else f"{value / 1e6:.1f}MB"


def ratio(backed: dict | None, unbacked: dict | None) -> str:
    if not backed or not unbacked or backed["status"] != "pass" or unbacked["status"] != "pass":
        return "-"
    return f"{unbacked['metrics']['speedup'] / backed['metrics']['speedup']:.3f}"


def rows(found: dict[tuple, dict]) -> list[tuple[str, ...]]:
    steps = sorted({(w, mode, dtype) for w, mode, _, dtype in found if w.endswith(("@prefill", "@decode"))})
    out = []
    for workload, mode, dtype in steps:
        by_regime = {regime: found.get((workload, mode, regime, dtype)) for regime in REGIMES}
        out.append((workload, mode, *(cell(by_regime[r]) for r in REGIMES), ratio(by_regime["backed"], by_regime["unbacked"])))
    return out


def training_rows(found: dict[tuple, dict]) -> list[tuple[str, ...]]:
    models = sorted({w.partition("@")[0] for w, *_ in found if w.endswith(("@train", "@train_step"))})
    return [(model, cell(found.get((f"{model}@train", "default", "static", "amp"))),
             cell(found.get((f"{model}@train_step", "default", "static", "amp")))) for model in models]


def failures(found: dict[tuple, dict]) -> Counter:
    return Counter((r["status"], (r.get("error") or {}).get("type", "")) for r in found.values() if r["status"] != "pass")


def table(headers: tuple[str, ...], body: list[tuple[str, ...]]) -> str:
    widths = [max(len(str(x)) for x in column) for column in zip(headers, *body)]
    lines = ["  ".join(str(x).ljust(w) for x, w in zip(row, widths)) for row in (headers, *body)]
    return "\n".join([lines[0], "  ".join("-" * w for w in widths), *lines[1:]])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("documents", nargs="+")
    found = cases(parser.parse_args(argv).documents)
    print("LLM steps: speedup, cold compile, compiled peak memory per regime (each cell; !cgN: N graphs ran without CUDA graphs),"
          " unbacked/backed speedup")
    print(table(("workload", "mode", *REGIMES, "unbacked/backed"), rows(found)))
    print("\nWhole training steps (AMP, static): the model's forward and backward (@train) beside the whole step (@train_step)")
    print(table(("model", "@train", "@train_step"), training_rows(found)))
    print("\nFailures by status and error class")
    print(table(("status", "error", "cases"), [(s, e or "-", str(n)) for (s, e), n in sorted(failures(found).items())]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
