"""What changed between two run documents, case by case, without a dashboard (issue #30,
docs/explain.md): each case present in both, compared by ``contract.explain`` as the "what changed"
view compares two results: the likeliest cause, the phases that moved most, the kernels that changed.

    python -m bench.explain_pair BEFORE.json AFTER.json [--metric compile_time_cold_s] [--out table.txt]

bench/gpu/explain_gpu.sh runs it on the GPU proof's documents (a plain build against
``inductor.max_fusion_size=1`` and ``inductor.coordinate_descent_tuning=true``).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from contract.explain import explain


def _environment(document: dict, result: dict) -> dict:
    build, machine = document["build"], document["machine"]
    env = {"torch": build.get("torch_version"), "torch git sha": build.get("git_sha"), "triton": build.get("triton_version"),
           "CUDA": build.get("cuda_version"), "Python": build.get("python_version"),
           "settings": json.dumps((build.get("overrides") or {}).get("config") or {}, sort_keys=True),
           "host CPU": machine.get("cpu_model"), "GPU": machine.get("gpu_name"), "driver": machine.get("driver_version")}
    env.update({f"case.{k}": v for k, v in (result.get("environment") or {}).items() if isinstance(v, (str, int, float))})
    return env


def _side(document: dict, result: dict) -> dict:
    return {"metrics": result.get("metrics") or {}, "compile_phases": result.get("compile_phases") or {},
            "kernel_profile": result.get("kernel_profile") or {}, "graph_breaks": result.get("graph_breaks") or [],
            "recompiles": result.get("recompiles") or [], "environment": _environment(document, result)}


def _key(result: dict) -> tuple:
    c = result["config"]
    return result["workload"], c["compile_mode"], c["shape_regime"], c["dtype"], c["device"]


def report(before: dict, after: dict, *, metric: str | None) -> list[str]:
    lines = []
    by_key = {_key(r): r for r in before["results"]}
    for result in after["results"]:
        old = by_key.get(_key(result))
        if old is None:
            continue
        x = explain(_side(before, old), _side(after, result), metric=metric)
        lines.append(f"== {' '.join(_key(result))}: {old['status']} -> {result['status']}")
        for name in ("compile_time_cold_s", "compile_time_warm_s", "compiled_latency_ms", "speedup"):
            a, b = (old.get("metrics") or {}).get(name), (result.get("metrics") or {}).get(name)
            if a is not None and b is not None:
                lines.append(f"   {name:<22} {a:>10.4g} -> {b:<10.4g} ({(b / a - 1) if a else 0:+.1%})")
        lines.append(f"   likeliest cause: {x['cause']['text'] if x['cause'] else 'none stands out'}")
        moved = sorted((p for p in x["phases"] if p["delta"] is not None and p["name"] != "total"), key=lambda p: -abs(p["delta"]))
        lines += [f"   phase {p['side']:<4} {p['label']:<30} {p['before'] or 0:>8.3f} -> {p['after'] or 0:<8.3f} s ({p['delta']:+.3f})"
                  for p in moved[:4]]
        changed = [k for k in x["kernels"] if k["status"] != "same"]
        statuses = {}
        for k in x["kernels"]:
            statuses[k["status"]] = statuses.get(k["status"], 0) + 1
        lines.append("   kernels: " + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items())))
        lines += [f"   kernel {k['status']:<8} {k['name'][:70]:<70} {k['before_ms'] or 0:>8.4f} -> {k['after_ms'] or 0:<8.4f} ms"
                  for k in changed[:8]]
        differing = [e for e in x["environment"] if e["differs"]]
        lines += [f"   environment {e['key']}: {e['before']} -> {e['after']}" for e in differing[:6]]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--metric", default=None)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    text = "\n".join(report(json.loads(Path(args.before).read_text()), json.loads(Path(args.after).read_text()), metric=args.metric))
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
