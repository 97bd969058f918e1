"""What keeping a case's compile trace costs (#34 artifact store, #30 item 2; docs/artifacts.md).

Runs each workload's case (default mode, static shapes, no warm phase) through
``python -m runner run --out``, alternating runs that keep no trace (``--artifact-max-bytes 0``,
TORCH_TRACE unset) with runs that keep it (the default bound, or ``--max-bytes``), ``--repeats``
times each, and prints per workload: the median cold compile time and case wall time of each side,
the trace's cost in percent, and the kept file's size (compressed, raw, what the bound dropped).

    python -m bench.artifact_overhead [--workloads mlp_loop,bert_encoder] [--repeats 3] [--device cuda]
                                      [--max-bytes N] [--backend eager]

On the GPU, ``--device cuda`` runs the ``full`` size; the default is this host's CPU at ``tiny``.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_MAX_BYTES = 4 * 1024 * 1024


def one_case(workload: str, *, keep_bytes: int, device: str, backend: str, folder: Path) -> dict:
    out = folder / f"run-{keep_bytes}-{len(list(folder.iterdir()))}.json"
    command = [sys.executable, "-m", "runner", "run", "--workloads", workload, "--regimes", "static", "--modes", "default",
               "--no-warm", "--device", device, "--backend", backend, "--size", "full" if device == "cuda" else "tiny",
               "--artifact-max-bytes", str(keep_bytes), "--out", str(out)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    return json.loads(out.read_text())["results"][0]


def _median(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default="mlp_loop,bert_encoder")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--max-bytes", type=int, default=DEFAULT_MAX_BYTES)
    parser.add_argument("--backend", choices=("inductor", "eager"), default="inductor", help="eager: a quick check of the script")
    args = parser.parse_args()
    print(f"device {args.device}, backend {args.backend}, {args.repeats} repeats per side, alternating; bound {args.max_bytes} bytes")
    print(f"{'workload':<24} {'cold compile off/on (s)':>24} {'case wall off/on (s)':>22} {'cost':>7} "
          f"{'kept (KB)':>10} {'raw (KB)':>9}  dropped")
    for workload in (w.strip() for w in args.workloads.split(",") if w.strip()):
        sides: dict[int, list[dict]] = {0: [], args.max_bytes: []}
        with tempfile.TemporaryDirectory(prefix="ptbench-bench-artifacts-") as folder:
            for _ in range(args.repeats):
                for keep in sides:
                    sides[keep].append(one_case(workload, keep_bytes=keep, device=args.device, backend=args.backend,
                                                    folder=Path(folder)))
        off, on = sides[0], sides[args.max_bytes]
        compile_off = _median([r["metrics"].get("compile_time_cold_s") for r in off])
        compile_on = _median([r["metrics"].get("compile_time_cold_s") for r in on])
        wall_off, wall_on = _median([r.get("duration_s") for r in off]), _median([r.get("duration_s") for r in on])
        kept = [r.get("artifact") or {} for r in on]
        dropped = {d["kind"] for k in kept for d in k.get("dropped", [])}
        cost = f"{(wall_on / wall_off - 1) * 100:+.1f}%" if wall_off and wall_on else "–"
        print(f"{workload:<24} {compile_off or 0:>11.2f} / {compile_on or 0:<10.2f} {wall_off or 0:>10.2f} / {wall_on or 0:<9.2f} "
              f"{cost:>7} {(_median([k.get('size_bytes') for k in kept]) or 0) / 1024:>10.1f} "
              f"{(_median([k.get('raw_bytes') for k in kept]) or 0) / 1024:>9.1f}  {', '.join(sorted(dropped)) or '–'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
