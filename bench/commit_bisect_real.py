"""A real bisection over commits (issue #41, docs/builds.md) on this host's torch: a mirror made from
the build's own Python files (commit 1: as installed, mapped to the build by
``refs/ptbench/builds/<sha>``), ``--commits`` commits of which one (``--culprit``) is planted and
the rest harmless, the build and an overlay at the last commit measured (a requested run each), the
range listed from the mirror and bisected over overlay builds, each made by the in-process worker
from the mirror. The quick start's path (``--inprocess`` of bench/bisect_variants.py: SQLite in a
temporary folder, Celery tasks eager, each case in its own subprocess): a GPU host needs only Python
and the dashboard's packages.

    python -m bench.commit_bisect_real --python /opt/torch/.venv/bin/python3 --plant inductor-fusion \\
        --workload masked_attention --size full --backend inductor --dtype float32 --metric speedup --out OUT.txt
    python -m bench.commit_bisect_real   # CPU smoke: a dynamo graph break planted, tiny MLP, eager, graph_breaks

Plants: ``inductor-fusion`` (``max_fusion_size = 64`` -> ``1`` in torch/_inductor/config.py: kernels
stop fusing, slower at run time), ``dynamo-graph-break`` (``debug_force_graph_break_on_leaf_return``
-> True in torch/_dynamo/config.py). Printed: the commits, each build of the search with its role
and values, steps, runs, the culprit with its values on both sides, wall time, and each overlay's
cost (seconds, new bytes) as the worker recorded it.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.bisect_variants import _ended, inprocess_up, measure_once, report
from bench.dispatch_overhead import wait_until
from tests.runner.torch_mirror import git, mirror_from_installed

ROOT = Path(__file__).resolve().parent.parent

PLANTS = {
    "inductor-fusion": ("_inductor", "config.py", r"^max_fusion_size = \d+", "max_fusion_size = 1",
                        "inductor: fuse at most one node per kernel (planted)"),
    "dynamo-graph-break": ("_dynamo", "config.py", r"^debug_force_graph_break_on_leaf_return = False",
                           "debug_force_graph_break_on_leaf_return = True", "dynamo: a graph break on each leaf return (planted)"),
}


def make_mirror(repo: Path, *, python: str, plant: str, commits: int, culprit: int) -> list[str]:
    """commit 1 (the build's files of the planted area), then ``commits`` commits, the ``culprit``-th planted."""
    area, name, pattern, replacement, subject = PLANTS[plant]
    torch_dir = Path(subprocess.run([python, "-c", "import importlib.util; print(importlib.util.find_spec('torch').submodule_search_locations[0])"],
                                    check=True, capture_output=True, text=True).stdout.strip())
    shas = [mirror_from_installed(repo, areas=(area,), torch_dir=torch_dir)]
    planted_file = repo / "torch" / area / name
    for n in range(1, commits + 1):
        text = planted_file.read_text()
        if n == culprit:
            text, count = re.subn(pattern, replacement, text, count=1, flags=re.M)
            if count != 1:
                raise SystemExit(f"torch/{area}/{name} has no line matching {pattern!r}: cannot plant")
            message = subject
        else:
            text += f"# harmless change {n}\n"
            message = f"{area}: harmless comment {n}"
        planted_file.write_text(text)
        git(repo, "commit", "-q", "-am", message)
        shas.append(git(repo, "rev-parse", "HEAD"))
    return shas


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="the build's interpreter")
    parser.add_argument("--plant", default="dynamo-graph-break", choices=sorted(PLANTS))
    parser.add_argument("--commits", type=int, default=16)
    parser.add_argument("--culprit", type=int, default=11, help="which commit (1..commits) is planted")
    parser.add_argument("--workload", default="tests.runner.sample_workloads:TinyMLP")
    parser.add_argument("--size", default="tiny", choices=["tiny", "full"])
    parser.add_argument("--backend", default="eager")
    parser.add_argument("--mode", default="default")
    parser.add_argument("--regime", default="static")
    parser.add_argument("--dtype", default=None)
    parser.add_argument("--metric", default="graph_breaks")
    parser.add_argument("--attempts", type=int, default=1)
    parser.add_argument("--machine-class", default=None)
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--out")
    args = parser.parse_args()
    if not 1 <= args.culprit <= args.commits:
        raise SystemExit("--culprit: from 1 to --commits")
    if args.workload.startswith("tests."):
        os.environ.setdefault("PTBENCH_WORKLOAD_MODULES", args.workload.partition(":")[0])
        os.environ.setdefault("PTBENCH_WORKLOAD_CATALOGS", str(ROOT / "tests" / "catalog.json"))
    work = Path(tempfile.mkdtemp(prefix="ptbench-commit-bisect."))
    shas = make_mirror(work / "mirror", python=args.python, plant=args.plant, commits=args.commits, culprit=args.culprit)
    os.environ.update(PTBENCH_TORCH_MIRROR=str(work / "mirror"), PTBENCH_OVERLAY_DIR=str(work / "overlays"))
    machine_class = args.machine_class or ("cpu-commit-bench" if args.size == "tiny" else "gpu-commit-bench")
    with inprocess_up(machine_class=machine_class, python=args.python, cuda_visible="" if args.size == "tiny" else None):
        from dashboard.dispatch.models import BuildEnvironment
        from dashboard.regressions.services.bisect import bisection_start
        from dashboard.regressions.services.commits import commit_range_request, overlay_build_get_or_create
        from dashboard.results.models import Result
        from runner.commits.mirror import BUILD_REF, Mirror

        installed = wait_until(lambda: BuildEnvironment.objects.filter(machine_class=machine_class).select_related("build").first(),
                               timeout=300, what="the build's registration", poll=0.5).build
        git(work / "mirror", "update-ref", BUILD_REF.format(git_sha=installed.git_sha), shas[0])
        bad = overlay_build_get_or_create(base=installed, commit=Mirror(str(work / "mirror")).commit_facts(shas[-1]))
        started_all = time.monotonic()
        measure_once(installed, args, machine_class)
        series = measure_once(bad, args, machine_class).series
        listed = commit_range_request(good=installed, bad=bad, machine_class=machine_class)  # listed in-process after the commit
        listed.refresh_from_db()
        if listed.status != "listed":
            raise SystemExit(f"the range was not listed: {listed.status} {listed.error}")
        started = time.monotonic()
        bisection = bisection_start(series=series, metric=args.metric, good=installed, bad=bad, kind="commits",
                                    requested_by="bench/commit_bisect_real.py", attempts=args.attempts,
                                    size=args.size, backend=args.backend)
        bisection = wait_until(lambda: _ended(bisection.id), timeout=args.timeout, what="the bisection to end", poll=1)
        wall_s = time.monotonic() - started
        header = [f"# python -m bench.commit_bisect_real {' '.join(sys.argv[1:])}".rstrip(),
                  f"# {dt.date.today()} · {platform.node()} · {os.cpu_count()} CPUs · load {os.getloadavg()[0]:.2f} · "
                  f"torch {installed.torch_version} ({installed.git_sha[:12]}) · plant {args.plant} at commit "
                  f"{args.culprit} of {args.commits} ({shas[args.culprit][:12]})",
                  f"# {args.workload} {args.size} {args.backend} {args.mode}/{args.regime} on {machine_class}; the two "
                  f"runs before the search took {started - started_all:.0f} s; the range: {len(listed.commits)} commits"]
        lines = report(bisection, wall_s=wall_s, args=args, header=header)
        culprit = bisection.result.get("commit") or {}
        lines.append(f"culprit: {culprit.get('sha', '-')[:12]} {culprit.get('subject', '')!r} (planted: {shas[args.culprit][:12]}; "
                     f"{'named' if culprit.get('sha') == shas[args.culprit] else 'NOT named'}); before {culprit.get('before')}, "
                     f"after {culprit.get('after')}")
        costs = [r.run.build_facts.get("environment", {}).get("overlay") for r in Result.objects.filter(
            run__build__local_label=bad.local_label).select_related("run")]
        costs = {c["commit"]: c for c in costs if c and c.get("seconds")}
        for cost in costs.values():
            lines.append(f"overlay {cost['commit'][:12]}: {len(cost['files'])} file(s), made in {cost['seconds']:.2f} s, "
                         f"{cost['new_bytes']} bytes of new files")
        lines.append(json.dumps({"status": bisection.status, "steps": len(bisection.steps), "runs": bisection.result.get("runs"),
                                 "wall_s": round(wall_s), "named": culprit.get("sha") == shas[args.culprit]}))
        print("\n".join(lines))
        if args.out:
            Path(args.out).write_text("\n".join(lines) + "\n")
        return 0 if culprit.get("sha") == shas[args.culprit] else 1


if __name__ == "__main__":
    raise SystemExit(main())
