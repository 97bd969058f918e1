"""One real bisection over a variant's overrides (issue #31, docs/bisect.md), through the real
distributed path on this machine: a throwaway PostgreSQL and Redis, the dashboard-side Celery worker
(which moves the bisection on as its runs end) and one runner worker, as in docker-compose.yml.
``--inprocess``: the quick start's path instead (no broker, no database server: SQLite in a temporary
folder, Celery tasks run eagerly, the build registered as ``manage.py register_build`` does, each case
run by the in-process worker ``dashboard.dispatch.inprocess`` in its own subprocess): the same
services, for a host that has only Python and the dashboard's packages (a GPU machine).

    python -m bench.bisect_variants [--inprocess] [--env NAME=VALUE ...] [--config SECTION.KEY=VALUE ...] [--out FILE]
    # on a GPU host, the proof the issue asks for (five inductor settings, one of which matters;
    # bench/results/bisect-gpu-h100-2026-11-27.txt, with the dashboard's wheels: docs/bisect.md):
    python -m bench.bisect_variants --inprocess --size full --backend inductor --workload masked_attention \\
        --dtype float32 --metric speedup --attempts 1 --python /opt/torch/.venv/bin/python3 --out OUT.txt \\
        --config inductor.max_fusion_size=1 --config inductor.epilogue_fusion=true \\
        --config inductor.pattern_matcher=true --config inductor.shape_padding=true \\
        --config inductor.size_asserts=true

The variant of the worker's build with these overrides is measured once beside its base (a
requested run each: the series), then bisected over its overrides: the chain base, +o1, +o1+o2, ...
(``regressions.services.bisect.override_chain``). Printed: each build of the chain with its role and
values, the steps, the runs (attempts), the culprit override and the wall time from the request to
the result. Without options it is the CPU test's case at its tiny size (tests/dispatch/workloads.py:
EnvSlowed, eager backend, five environment overrides of which TORCH_PTBENCH_TEST_C slows each call).
"""
from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench.dispatch_overhead import services_up, wait_until

ROOT = Path(__file__).resolve().parent.parent

TINY_WORKLOAD = "tests.dispatch.workloads:EnvSlowed"
TINY_ENV = [f"TORCH_PTBENCH_TEST_{x}=1" for x in "ABCDE"]
# The tests' catalog names EnvSlowed (dispatch_overhead, imported above, admits its own module only).
os.environ["PTBENCH_WORKLOAD_MODULES"] = ",".join(filter(None, [os.environ.get("PTBENCH_WORKLOAD_MODULES"),
                                                                TINY_WORKLOAD.partition(":")[0]]))
os.environ.setdefault("PTBENCH_WORKLOAD_CATALOGS", str(ROOT / "tests" / "catalog.json"))


@contextlib.contextmanager
def inprocess_up(*, machine_class: str, python: str, cuda_visible: str | None):
    """The quick start's embedded dashboard in this process: no broker (Celery tasks run eagerly), a
    SQLite database in a temporary folder (migrated), and ``python`` registered as a build of
    ``machine_class`` as ``manage.py register_build`` does (probed in-process after the commit).
    Cases run here, each in its own subprocess (``dashboard.dispatch.inprocess``); removed on the way out."""
    work = Path(tempfile.mkdtemp(prefix="ptbench-bisect-inprocess."))
    for name in ("DATABASE_URL", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND", "CELERY_TASK_ALWAYS_EAGER"):
        os.environ.pop(name, None)
    os.environ.update(PTBENCH_DATA_DIR=str(work), DJANGO_SETTINGS_MODULE="dashboard.settings",
                      DJANGO_STATIC_ROOT=str(work / "static"), DJANGO_LOG_LEVEL=os.environ.get("DJANGO_LOG_LEVEL", "WARNING"),
                      DETECT_AFTER_INGEST="true", PYTHONUNBUFFERED="1")
    if cuda_visible is not None:  # the services path hides the GPUs from the runner worker of a tiny (CPU) run too
        os.environ["CUDA_VISIBLE_DEVICES"] = cuda_visible
    try:
        import django

        django.setup()
        from django.conf import settings
        from django.core.management import call_command

        assert settings.CELERY_TASK_ALWAYS_EAGER and settings.DATABASES["default"]["ENGINE"].endswith("sqlite3")
        call_command("migrate", verbosity=0)
        call_command("register_build", python=python, machine_class=machine_class)
        yield work
    finally:
        from django.db import connections

        connections.close_all()
        shutil.rmtree(work, ignore_errors=True)


def measure_once(build, args, machine_class: str):
    from dashboard.dispatch.services import run_request
    from dashboard.results.models import Result, Run

    run = run_request(build=build, machine_class=machine_class, size=args.size, requested_by="bench/bisect_variants.py",
                      workloads=[args.workload], modes=[args.mode], regimes=[args.regime],
                      dtypes=[args.dtype] if args.dtype else None, backend=args.backend)
    wait_until(lambda: Run.objects.filter(pk=run.id, status__in=("completed", "failed")).exists(), timeout=args.timeout,
               what=f"run {run.id} of {build}", poll=1)
    result = Result.objects.filter(run=run).select_related("series").first()
    if result is None or result.status != "pass":
        raise SystemExit(f"{build}: the case did not pass ({result.status if result else 'no result'})")
    return result


def _ended(bisection_id: int):
    """The bisection once it and any search for its override's partner have ended."""
    from dashboard.regressions.models import Bisection
    from dashboard.regressions.selectors.bisect import bisection_busy

    bisection = Bisection.objects.get(pk=bisection_id)
    return None if bisection_busy(bisection=bisection) else bisection


def report(bisection, *, wall_s: float, args, header: list[str]) -> list[str]:
    from dashboard.regressions.selectors.bisect import bisection_view

    view = bisection_view(bisection=bisection)
    lines = [*header, "", f"{'#':>3}  {'build (chain)':<48}{'role':<12}{args.metric + ' per run':>24}"]
    for row in view.rows:
        lines.append(f"{row.index + 1:>3}  {(row.override or row.ref)[:47]:<48}{row.role or '-':<12}{row.values_text or '-':>24}")
    lines += ["", f"status: {bisection.status} · {bisection.result.get('message', '')}",
              f"the chain's search: steps {len(bisection.steps)} · runs (attempts) {view.runs}, lost {view.lost} · "
              f"attempts per build {bisection.attempts} (up to {bisection.max_attempts}) · wall time, partner search included, "
              f"{wall_s:.0f} s"]
    for step in bisection.steps:
        lines.append(f"  step: build {step['index'] + 1} {step['decision']} ({step['how']}; z good "
                     f"{step['z_good'] if step['z_good'] is None else round(step['z_good'], 1)}, z bad "
                     f"{step['z_bad'] if step['z_bad'] is None else round(step['z_bad'], 1)})")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", action="append", default=[], help="a variant config override SECTION.KEY=VALUE")
    parser.add_argument("--env", action="append", default=[], help="a variant environment override NAME=VALUE")
    parser.add_argument("--workload", default=TINY_WORKLOAD)
    parser.add_argument("--size", default="tiny", choices=["tiny", "full"])
    parser.add_argument("--backend", default="eager")
    parser.add_argument("--mode", default="default")
    parser.add_argument("--regime", default="static")
    parser.add_argument("--dtype", default=None)
    parser.add_argument("--metric", default="compiled_latency_ms")
    parser.add_argument("--attempts", type=int, default=2, help="runs per build of the chain")
    parser.add_argument("--max-attempts", type=int, default=None, help="runs a build may get when undecided (default: settings)")
    parser.add_argument("--inprocess", action="store_true",
                        help="no broker nor database server: SQLite, tasks and cases run by this process (the quick start's path)")
    parser.add_argument("--python", default=sys.executable, help="the build's interpreter (PTBENCH_BUILDS of the worker)")
    parser.add_argument("--machine-class", default=None, help="default: cpu-bisect-bench, or h100-bisect-bench with --size full")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds a run, and the bisection, may take")
    parser.add_argument("--out", help="also write the table to this file")
    args = parser.parse_args()
    from contract.variants import Overrides

    overrides = Overrides.from_cli(args.config, args.env or ([] if args.config else TINY_ENV))
    machine_class = args.machine_class or ("cpu-bisect-bench" if args.size == "tiny" else "h100-bisect-bench")
    cuda_visible = "" if args.size == "tiny" else None
    if args.inprocess:
        path = ("in-process: no broker, Celery tasks run eagerly, SQLite in a temporary folder; each case in its own "
                "subprocess of this process (dashboard.dispatch.inprocess)")
        up = inprocess_up(machine_class=machine_class, python=args.python, cuda_visible=cuda_visible)
    else:
        path = "services: a throwaway PostgreSQL and Redis, the dashboard's Celery worker and one runner worker (--concurrency 1)"
        up = services_up(prefix="ptbench-bisect.", machine_class=machine_class, cuda_visible=cuda_visible,
                         detect=True, env={"PTBENCH_BUILDS": args.python})

    with up:
        from dashboard.dispatch.models import BuildEnvironment
        from dashboard.regressions.services.bisect import bisection_start
        from dashboard.results.services import variant_get_or_create

        row = wait_until(lambda: BuildEnvironment.objects.filter(machine_class=machine_class).select_related("build").first(),
                         timeout=300, what="the runner worker's report of its builds", poll=0.5)
        base = row.build
        variant = variant_get_or_create(base=base, overrides=overrides)
        print(f"{'in-process worker' if args.inprocess else 'runner worker'} up; base {base}, variant {variant.local_label}",
              flush=True)
        started_all = time.monotonic()
        measure_once(base, args, machine_class)
        series = measure_once(variant, args, machine_class).series
        started = time.monotonic()
        # In-process, bisection_start returns once the whole search (and its partner search) has ended.
        bisection = bisection_start(series=series, metric=args.metric, good=base, bad=variant, kind="overrides",
                                    requested_by="bench/bisect_variants.py", attempts=args.attempts,
                                    max_attempts=args.max_attempts, size=args.size, backend=args.backend)
        bisection = wait_until(lambda: _ended(bisection.id), timeout=args.timeout, what="the bisection to end", poll=1)
        wall_s = time.monotonic() - started
        header = [
            f"# python -m bench.bisect_variants {' '.join(sys.argv[1:])}".rstrip(),
            f"# {dt.date.today()} · {platform.node()} · {os.cpu_count()} CPUs · load {os.getloadavg()[0]:.2f} · "
            f"Python {platform.python_version()}",
            f"# path: {path}",
            f"# {args.workload} {args.size} {args.backend} {args.mode}/{args.regime} on {machine_class}; "
            f"variant {variant.local_label} of {base}; the two runs before the search (base, variant) took "
            f"{started - started_all:.0f} s",
        ]
        lines = report(bisection, wall_s=wall_s, args=args, header=header)
        print("\n".join(lines))
        if args.out:
            Path(args.out).write_text("\n".join(lines) + "\n")
        return 0 if bisection.status == "done" else 1

if __name__ == "__main__":
    sys.exit(main())
