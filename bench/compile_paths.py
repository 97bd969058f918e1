"""Every workload through each compile path (docs/compile-paths.md): one ``python -m runner run``
over workloads x modes x regimes, its run document, and a table per case and per mode.

On a GPU (the core suite and ten family models, each path against default, every regime):

    python -m bench.compile_paths --device cuda --out bench/results/compile-paths-gpu-DATE.json \\
        --table bench/results/compile-paths-gpu-DATE.txt

On the CPU at the tiny size (what bench/results/compile-paths-cpu-2026-11-25.txt holds):

    python -m bench.compile_paths --device cpu --workloads mlp_loop \\
        --out bench/results/compile-paths-cpu-2026-11-25.json --table bench/results/compile-paths-cpu-2026-11-25.txt

The table again from a stored document: ``python -m bench.compile_paths --from DOC.json``; a
workload x mode table of several documents' static cases: ``python -m bench.compile_paths --matrix DOC.json ...``. The
runner writes the document after every case, so a run cut short keeps what it finished.
"""
from __future__ import annotations

import argparse
import json
import math
import shlex
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from contract.suites import expand_suites

ROOT = Path(__file__).resolve().parents[1]

# Ten inference models of the families, three families, small to large (docs/families.md).
FAMILY_MODELS = ["hf:BertForMaskedLM", "hf:DistilBertForQuestionAnswering", "hf:GPT2ForSequenceClassification",
                 "hf:AlbertForMaskedLM", "timm:resnet50", "timm:mobilenetv3_large_100", "timm:deit_tiny_patch16_224.fb_in1k",
                 "torchvision:resnet50", "torchvision:mobilenet_v2", "torchvision:convnext_tiny"]
MODES = "default,export,aot_inductor,cpp_wrapper,freezing"
PHASES = ("export_s", "package_s", "load_s", "first_call_s")


def run(args: argparse.Namespace) -> dict:
    workloads = ",".join(expand_suites(args.workloads.split(",")))
    command = [sys.executable, "-m", "runner", "run", "--device", args.device, "--size", args.size, "--workloads", workloads,
               "--modes", args.modes, "--regimes", args.regimes, "--timeout", str(args.timeout), "--out", str(args.out)]
    if args.dtypes:
        command += ["--dtypes", args.dtypes]
    if args.no_warm:
        command.append("--no-warm")
    print("$ " + shlex.join(command), file=sys.stderr, flush=True)
    completed = subprocess.run(command, cwd=ROOT)
    if not args.out.exists():
        raise SystemExit(f"the runner wrote no document (exit {completed.returncode})")
    document = json.loads(args.out.read_text())
    document["run"]["notes"] = f"runner command: {document['run'].get('command', '')}"[:4000]
    document["run"]["command"] = "python -m bench.compile_paths " + shlex.join(sys.argv[1:])
    return document


def _s(value) -> str:
    return "-" if value is None else f"{value:.2f}"


def _failure(result: dict) -> str:
    detail = (result.get("environment") or {}).get("data_dependent") or {}
    if detail:
        return f"{detail.get('expression', '?')} at {detail.get('source') or detail.get('caused_by', '?')}"
    message = ((result.get("error") or {}).get("message") or "").splitlines()
    return message[0][:90] if message else ""


def case_rows(results: list[dict]) -> list[str]:
    header = (f"{'workload':34} {'mode':13} {'regime':9} {'status':21} {'speedup':>14} {'cold s':>8} {'warm s':>7} "
              f"{'export':>7} {'package':>8} {'load':>6} {'1st call':>8} {'unbacked':>8} {'guards':>6}  dynamic shapes / failure")
    lines = [header, "-" * len(header)]
    for r in results:
        m, phases, path = r["metrics"], r.get("path_phases") or {}, (r.get("environment") or {}).get("compile_path") or {}
        speedup = "-" if m.get("speedup") is None else f"{m['speedup']:.3f}x"
        if m.get("speedup") is not None and m.get("speedup_noise") is not None:
            speedup += f" ±{m['speedup_noise']:.0%}"
        guards = path.get("guards") if path.get("guards") is not None else path.get("export_guards")
        note = _failure(r) if r["status"] != "pass" else path.get("dynamic_shapes", "")
        lines.append(f"{r['workload'][:34]:34} {r['config']['compile_mode']:13} {r['config']['shape_regime']:9} {r['status']:21} "
                     f"{speedup:>14} {_s(m.get('compile_time_cold_s')):>8} {_s(m.get('compile_time_warm_s')):>7} "
                     + " ".join(f"{_s(phases.get(p)):>{w}}" for p, w in zip(PHASES, (7, 8, 6, 8)))
                     + f" {str(path.get('unbacked_symbols', '-')):>8} {str(guards if guards is not None else '-'):>6}  {note}")
    return lines


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def mode_rows(results: list[dict]) -> list[str]:
    """Per mode and regime: cases, passed, data-dependent errors, geomean speedup, median cold compile and export time."""
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in results:
        groups[(r["config"]["compile_mode"], r["config"]["shape_regime"])].append(r)
    header = f"{'mode':13} {'regime':9} {'cases':>5} {'pass':>5} {'dde':>4} {'geomean speedup':>16} {'median cold s':>14} {'median export s':>16}"
    lines = [header, "-" * len(header)]
    for (mode, regime), rows in sorted(groups.items()):
        passed = [r for r in rows if r["status"] == "pass"]
        dde = sum(r["status"] == "data_dependent_error" for r in rows)
        speedup = geomean([r["metrics"].get("speedup") for r in passed])
        colds = [r["metrics"]["compile_time_cold_s"] for r in passed if r["metrics"].get("compile_time_cold_s") is not None]
        exports = [(r.get("path_phases") or {}).get("export_s") for r in passed]
        exports = [e for e in exports if e is not None]
        lines.append(f"{mode:13} {regime:9} {len(rows):>5} {len(passed):>5} {dde:>4} "
                     f"{('-' if speedup is None else f'{speedup:.3f}x'):>16} {_s(statistics.median(colds) if colds else None):>14} "
                     f"{_s(statistics.median(exports) if exports else None):>16}")
    return lines


def table(document: dict) -> str:
    build, machine = document["build"], document["machine"]
    head = [f"compile paths: torch {build['torch_version']} ({build['git_sha'][:12]}), {machine.get('gpu_name') or machine.get('cpu_model')}, "
            f"machine class {machine['machine_class']}", f"command: {document['run'].get('command', '')}", ""]
    results = document["results"]
    return "\n".join(head + ["per mode and regime (dde: data_dependent_error)"] + mode_rows(results) + ["", "per case (speedup ± its 95 % half-width from the samples; seconds)"]
                     + case_rows(results)) + "\n"


def matrix(documents: list[dict], *, regime: str = "static") -> str:
    """A markdown table, a row per workload and a column per compile mode, of ``regime``'s cases over
    several documents: speedup over eager and cold compile seconds where it passed, else the status,
    and the card (machine class without ``gpu-``). A later document's case replaces an earlier one's."""
    cells: dict[str, dict[str, str]] = defaultdict(dict)
    modes: list[str] = []
    for document in documents:
        card = document["machine"]["machine_class"].removeprefix("gpu-")
        for r in document["results"]:
            if r["config"]["shape_regime"] != regime:
                continue
            mode, m = r["config"]["compile_mode"], r["metrics"]
            if mode not in modes:
                modes.append(mode)
            shown = (f"{m['speedup']:.3f}x, {m['compile_time_cold_s']:.0f} s" if r["status"] == "pass" and m.get("speedup")
                     and m.get("compile_time_cold_s") is not None else r["status"])
            cells[r["workload"]][mode] = f"{shown} ({card})"
    lines = [" | ".join(("workload", *modes)), " | ".join("---" for _ in range(len(modes) + 1))]
    lines += [" | ".join((w, *(cells[w].get(mode, "-") for mode in modes))) for w in sorted(cells, key=lambda w: (":" in w, w))]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--from", dest="source", type=Path, help="print the table of a stored run document; run nothing")
    parser.add_argument("--matrix", nargs="+", type=Path, help="stored documents: a markdown table of their static cases, workload x mode")
    parser.add_argument("--device", default="cuda", choices=("cpu", "cuda"))
    parser.add_argument("--size", help="tiny or full (default: full on cuda, tiny on cpu)")
    parser.add_argument("--workloads", default="core," + ",".join(FAMILY_MODELS), help="names or suites (core, hf, ...), comma-separated")
    parser.add_argument("--modes", default=MODES)
    parser.add_argument("--regimes", default="static,backed,unbacked")
    parser.add_argument("--dtypes", help="default: each workload's own (bfloat16 for the families)")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per case")
    parser.add_argument("--no-warm", action="store_true", help="skip the warm-compile phase")
    parser.add_argument("--out", type=Path, help="the run document (written after every case)")
    parser.add_argument("--table", type=Path, help="also write the table here")
    args = parser.parse_args()
    if args.matrix:
        print(matrix([json.loads(path.read_text()) for path in args.matrix]), end="")
        return
    if args.source:
        document = json.loads(args.source.read_text())
    else:
        if args.out is None:
            parser.error("--out: where the run document goes (or --from a stored one)")
        args.size = args.size or ("full" if args.device == "cuda" else "tiny")
        document = run(args)
        args.out.write_text(json.dumps(document, indent=1) + "\n")
    text = table(document)
    print(text, end="")
    if args.table:
        args.table.write_text(text)


if __name__ == "__main__":
    main()
