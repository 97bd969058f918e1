"""Distributed training steps: the table of one run (docs/distributed.md, issue #32).

    python -m bench.distributed_table --from RUN.json                  # the table of a stored run document
    python -m bench.distributed_table --run OUT.json [--device cuda] [--backend inductor] [--workloads N,...]

``--run`` runs ``python -m runner run`` on the distributed cases (default: the core GPT and the
residual MLP under DDP and FSDP, both orders, with and without checkpointing, plus two families'
models under each wrapper in the recommended order), writes the run document to OUT.json and prints
its table: per case the wrapper, order, checkpointing, world size, status, step speedup over eager
DDP/FSDP, cold compile, graph breaks (per collective), recompiles, peak memory per rank and the
largest gradient error after one step. On a GPU host every visible GPU is a rank (one process per
GPU, NCCL); on the CPU two gloo ranks (``PTBENCH_WORLD_SIZE`` to change either).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OPTIONS = ("ddp", "ddp+compile_first", "ddp+checkpoint", "ddp+compile_first+checkpoint",
           "fsdp", "fsdp+compile_first", "fsdp+checkpoint", "fsdp+compile_first+checkpoint")
CORE = [f"dist:{model}@train+{options}" for model in ("gpt", "mlp") for options in OPTIONS]
FAMILIES = [f"{model}@train+{wrapper}" for model in ("hf:BertForMaskedLM", "timm:resnet50") for wrapper in ("ddp", "fsdp")]


def _mib(value) -> str:
    return "–" if value is None else f"{value / 2**20:.1f}"


def _fmt(value, places: int = 3) -> str:
    return "–" if value is None else f"{value:.{places}f}"


def rows(document: dict) -> list[tuple[str, ...]]:
    table = []
    for result in document["results"]:
        distributed = (result.get("environment") or {}).get("distributed")
        if not distributed:
            continue
        metrics = result["metrics"]
        memory = " / ".join(f"{_mib(rank.get('eager'))}→{_mib(rank.get('compiled'))}" for rank in distributed.get("peak_memory_per_rank", []))
        breaks = ", ".join(f"{name} {count}" for name, count in (distributed.get("graph_breaks_per_collective") or {}).items())
        table.append((
            result["workload"].partition("@")[0], distributed["parallel"], distributed["order"], "yes" if distributed["checkpoint"] else "no",
            str(distributed["world_size"]), result["status"], _fmt(metrics.get("speedup")), _fmt(metrics.get("compile_time_cold_s"), 1),
            f"{_fmt(metrics.get('graph_break_count'), 0)} ({breaks or '-'})", _fmt(metrics.get("recompile_count"), 0),
            memory or "–", "–" if metrics.get("accuracy_max_abs_error") is None else f"{metrics['accuracy_max_abs_error']:.1e}",
        ))
    return table


HEADER = ("model", "wrapper", "order", "ckpt", "ranks", "status", "speedup", "compile s", "graph breaks (per collective)",
          "recompiles", "peak MiB per rank (eager→compiled)", "grad max abs err")


def print_table(document: dict) -> None:
    table = [HEADER, *rows(document)]
    widths = [max(len(row[i]) for row in table) for i in range(len(HEADER))]
    for row in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    build = document.get("build", {})
    machine = document.get("machine", {})
    print(f"\n{len(table) - 1} distributed cases; torch {build.get('torch_version', '?')} on {machine.get('gpu_name') or machine.get('cpu_model', '?')}")


def run(out: Path, *, device: str, backend: str, workloads: list[str], timeout: int) -> None:
    command = [sys.executable, "-m", "runner", "run", "--device", device, "--backend", backend, "--workloads", ",".join(workloads),
               "--modes", "default", "--regimes", "static", "--no-warm", "--timeout", str(timeout), "--out", str(out)]
    subprocess.run(command, cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"}, check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--from", dest="source", type=Path, help="a stored run document")
    source.add_argument("--run", type=Path, help="run the cases and write their run document here")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--backend", default="inductor", choices=("inductor", "eager", "aot_eager"))
    parser.add_argument("--workloads", help="comma-separated names (default: the dist family's 16 and 4 families' cases)")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per case")
    args = parser.parse_args(argv)
    if args.run:
        workloads = args.workloads.split(",") if args.workloads else CORE + FAMILIES
        run(args.run, device=args.device, backend=args.backend, workloads=workloads, timeout=args.timeout)
    print_table(json.loads((args.source or args.run).read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
