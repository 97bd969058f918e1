"""Replay real run documents as nightly builds through ingest -> detection -> verdict (issue #15).

    python -m bench.real_verdicts --history A.json B.json ... [--then C.json D.json ...]
                                  [--with-earlier N] [--keep-sha] [--plant METRIC:WORKLOAD:FACTOR]

Each file is one nightly build (join files with a comma to make one build of several documents,
e.g. two GPUs' halves of one suite). Builds are replayed in order, ``--history`` first, then
``--then``; each gets a fresh distinct git sha (``--keep-sha``: the documents' own) and a fresh run
id, and is stored with ``run_ingest`` and checked by ``detection_run``: the dashboard's own path. No
worker is registered, so a re-measurement cannot run (documents posted from outside): the next
build decides it. ``--with-earlier N`` replays only the last N history builds (a series' first
week). ``--plant`` multiplies a metric of a workload in the ``--then`` builds (a planted change on
real documents, until recorded variant builds exist). Prints per build: our default verdict (against the previous build), the named-baseline
verdict against the build before (the two builds' runs compared directly), and for comparison the HUD's rule (speedup < 0.95x or
compile time > 1.15x the median of up to 10 builds before, on 2 builds in a row) and Perfherder's
t-test (``bench/lib/detection_baselines.py``), each as regressed / pass.

Database: PTBENCH_DATA_DIR (a throwaway SQLite there) or a temporary directory; DATABASE_URL is
ignored unless ``--database-url`` is given.
"""
from __future__ import annotations

import argparse
import copy
import datetime as dt
import hashlib
import json
import os
import sys
import tempfile
import uuid
from pathlib import Path


HUD_RULES = {"speedup": (0.05, 1), "compile_time_cold_s": (0.15, -1)}  # metric: (threshold, +1 higher is better)


def load_builds(groups: list[str]) -> list[tuple[str, list[dict]]]:
    """``["a.json", "b.json,c.json"]`` -> [(name, [documents])], one entry per build."""
    builds = []
    for group in groups:
        paths = [Path(p) for p in group.split(",") if p]
        stems = [p.stem.removesuffix("-2026-11-22").removeprefix("h200-torch2.11-").removeprefix("h100-torch2.11-")
                 for p in paths]
        name = "+".join(stems) if len(stems) <= 3 else f"{'+'.join(stems[:2])} and {len(stems) - 2} more"
        builds.append((name, [json.loads(p.read_text()) for p in paths]))
    return builds


def planted(builds: list[tuple[str, list[dict]]], metric: str, workload: str, factor: float) -> list[tuple[str, list[dict]]]:
    """Copies of ``builds`` with ``metric`` of ``workload`` multiplied by ``factor``."""
    out = []
    for name, documents in builds:
        documents = copy.deepcopy(documents)
        for document in documents:
            for result in document["results"]:
                if result["workload"] == workload and result["metrics"].get(metric):
                    result["metrics"][metric] *= factor
        out.append((f"{name} {metric}x{factor:g} {workload}", documents))
    return out


def replay(builds: list[tuple[str, list[dict]]], *, keep_sha: bool = False, start_day: int = 1) -> list[dict]:
    """Store and detect each build in order (a configured Django database); one row per build."""
    from dashboard.regressions.selectors import build_verdict
    from dashboard.regressions.services.detection_pass import detection_run
    from dashboard.results.models import Build, Run
    from dashboard.results.services import run_ingest

    rows, stored = [], []
    for i, (name, documents) in enumerate(builds):
        sha = hashlib.sha1(f"real-verdicts {i} {name}".encode()).hexdigest()
        run_ids, machine_class = [], None
        for document in documents:
            doc = copy.deepcopy(document)
            doc["run"]["id"] = str(uuid.uuid4())
            if not keep_sha:
                doc["build"]["git_sha"] = sha
            if doc["build"].pop("overrides", None):  # a recorded variant replayed as a plain nightly
                doc["build"]["local_label"] = doc["build"].get("local_label", "").split(".")[0]
            doc["build"]["commit_time"] = (dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
                                           + dt.timedelta(days=start_day - 1 + i)).isoformat()
            doc["build"]["label"] = f"replay {i + 1}: {name}"
            run_ingest(document=doc)
            run_ids.append(doc["run"]["id"])
            machine_class = doc["machine"]["machine_class"]
        for run_id in run_ids:
            detection_run(run_id=run_id)
        build = Run.objects.get(pk=run_ids[0]).build
        stored.append(build)
        default = build_verdict(build=build, machine_class=machine_class)
        named = build_verdict(build=build, machine_class=machine_class, baseline=stored[-2]) if len(stored) > 1 else None
        rows.append({"build": i + 1, "name": name, "machine_class": machine_class, "build_id": build.id,
                     "default": default.verdict, "default_reason": default.reason,
                     "named": named.verdict if named else "-",
                     "findings": [f"{r['workload']} {r['metric']} {r['kind']}" for r in default.regressions],
                     "messages": [_finding_line(r) for r in default.regressions if r["kind"] == "regression"]
                     + [_finding_line(r, "named") for r in (named.regressions if named else []) if r["kind"] == "regression"]})
    _baselines(rows, [b.id for b in stored], Build)
    return rows


def stored_findings(build_ids: list[int]) -> str:
    """Every finding detection stored over the replay (any verdict aside): a count per kind, then
    each with the replayed build it starts at and its message."""
    from dashboard.regressions.models import Regression

    position = {b: i + 1 for i, b in enumerate(build_ids)}
    found = list(Regression.objects.select_related("series__workload").order_by("id"))
    kinds: dict[str, int] = {}
    for finding in found:
        kinds[finding.kind] = kinds.get(finding.kind, 0) + 1
    lines = [f"stored findings: {', '.join(f'{n} {k}' for k, n in sorted(kinds.items())) or 'none'}"]
    lines += [f"  build {position.get(f.first_bad_build_id, '?')}: {f.series.workload.name} {f.metric} {f.finding} "
              f"{f.kind}: {(f.details or {}).get('message', '')[:150]}" for f in found]
    return "\n".join(lines)


def _finding_line(finding: dict, verdict: str = "default") -> str:
    """One regression of a verdict in words: which verdict, case and metric, and its message."""
    return (f"{verdict}: {finding['workload']} {finding.get('config', '')} {finding['metric']}: "
            f"{finding.get('message') or ''}")[:300]


def named_pairs(build_ids: list[int]) -> list[tuple[int, int, str, list[str]]]:
    """The named-baseline verdict of every later build against every earlier one: (i, j, verdict,
    its regressions in words)."""
    from dashboard.regressions.selectors import build_verdict
    from dashboard.results.models import Build

    builds = [Build.objects.get(pk=b) for b in build_ids]
    out = []
    for j, build in enumerate(builds):
        machine_class = build.runs.values_list("machine__machine_class", flat=True).first()
        for i in range(j):
            verdict = build_verdict(build=build, machine_class=machine_class, baseline=builds[i])
            out.append((i + 1, j + 1, verdict.verdict,
                        [_finding_line(r, "named") for r in verdict.regressions if r["kind"] == "regression"]))
    return out


CHANGE_METRICS = {"speedup": 1, "compiled_latency_ms": -1, "compile_time_cold_s": -1, "compile_cpu_ratio": -1}


def planted_changes(history: list[tuple[str, list[dict]]], then: list[tuple[str, list[dict]]]) -> str:
    """Per workload and metric: the history's median and run-to-run sd, each later build's change
    against that median, and whether it is past 3x the sd (what the targets require to be caught)."""
    import statistics

    def values(builds):
        table: dict[tuple[str, str], list[float]] = {}
        for _, documents in builds:
            per_build: dict[tuple[str, str], list[float]] = {}
            for document in documents:
                for result in document["results"]:
                    for metric in CHANGE_METRICS:
                        value = result["metrics"].get(metric)
                        if result["status"] == "pass" and value:
                            per_build.setdefault((result["workload"], metric), []).append(value)
            for key, vals in per_build.items():
                table.setdefault(key, []).append(statistics.median(vals))
        return table

    before, after = values(history), values(then)
    lines = [f"{'workload':18} {'metric':20} {'history median':>14} {'sd':>6}  later builds: change (x sd)"]
    for key in sorted(before):
        hist = before[key]
        median = statistics.median(hist)
        sd = statistics.stdev(hist) / statistics.mean(hist) if len(hist) > 1 else float("nan")
        sd = sd or float("nan")  # one document replayed as several builds: no spread
        changes = [f"{100 * (v / median - 1):+6.1f}% ({abs(v / median - 1) / sd:4.1f})" for v in after.get(key, [])]
        lines.append(f"{key[0]:18} {key[1]:20} {median:14.4g} {100 * sd:5.2f}%  " + "  ".join(changes))
    return "\n".join(lines)


def _baselines(rows: list[dict], build_ids: list[int], Build) -> None:
    """The HUD rule and Perfherder's t-test on every series and metric of the replayed builds."""
    from bench.lib.detection_baselines import hud, perfherder

    from dashboard.results.models import Result

    series: dict[tuple[int, str], dict[int, list[float]]] = {}
    for sid, build_id, *values in Result.objects.filter(build_id__in=build_ids, status="pass").values_list(
            "series_id", "build_id", *HUD_RULES):
        for metric, value in zip(HUD_RULES, values):
            if value is not None and value > 0:
                series.setdefault((sid, metric), {}).setdefault(build_id, []).append(float(value))
    for row in rows:
        row["hud"], row["perfherder"] = "pass", "pass"
    position = {b: i for i, b in enumerate(build_ids)}
    for (_, metric), by_build in series.items():
        threshold, sign = HUD_RULES[metric]
        order = sorted(by_build, key=position.__getitem__)
        values = [sorted(by_build[b])[len(by_build[b]) // 2] for b in order]
        for t in range(2, len(values)):
            for first, raised in hud(values[: t + 1], threshold=threshold, baseline_points=min(10, t - 1)):
                if raised == t and sign * (values[t] / values[first - 1] - 1) < 0:
                    rows[position[order[t]]]["hud"] = "regressed"
        for first, raised in perfherder(values):
            if sign * (values[raised] / values[max(first - 1, 0)] - 1) < 0:
                rows[position[order[raised]]]["perfherder"] = "regressed"


def format_rows(rows: list[dict], details: bool = False) -> str:
    head = f"{'build':>5}  {'documents':<48}  {'ours':<9}  {'named':<9}  {'hud':<9}  {'perfherder':<10}  findings"
    lines = [head, "-" * len(head)]
    for r in rows:
        ours = r["default"] + ("" if r["default"] != "pass" or r["default_reason"] == "no_regressions" else f" ({r['default_reason']})")
        lines.append(f"{r['build']:>5}  {r['name'][:48]:<48}  {ours:<9}  {r['named']:<9}  {r['hud']:<9}  "
                     f"{r['perfherder']:<10}  {'; '.join(r['findings'][:4])}")
    if details:
        lines += [f"  build {r['build']} {line}" for r in rows for line in r.get("messages", [])]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--history", nargs="+", required=True, help="earlier nightlies (a,b = one build of two documents)")
    parser.add_argument("--then", nargs="*", default=[], help="nightlies after the history")
    parser.add_argument("--with-earlier", type=int, help="replay only the last N history builds")
    parser.add_argument("--keep-sha", action="store_true", help="keep the documents' git shas (repeated runs of one build)")
    parser.add_argument("--plant", help="METRIC:WORKLOAD:FACTOR applied to the --then builds")
    parser.add_argument("--database-url", help="default: a throwaway SQLite in PTBENCH_DATA_DIR or a temporary directory")
    parser.add_argument("--details", action="store_true", help="each regression of a verdict in words")
    parser.add_argument("--all-pairs", action="store_true",
                        help="also the named-baseline verdict of every history build against every earlier one")
    args = parser.parse_args(argv)
    history = args.history[-args.with_earlier:] if args.with_earlier else args.history
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings")
    os.environ["DATABASE_URL"] = args.database_url or \
        f"sqlite:///{Path(os.environ.get('PTBENCH_DATA_DIR') or tempfile.mkdtemp())}/real_verdicts.sqlite3"
    os.environ.setdefault("CELERY_TASK_ALWAYS_EAGER", "true")
    import django
    from django.test.utils import setup_databases, teardown_databases

    django.setup()
    old = setup_databases(verbosity=0, interactive=False)
    try:
        then = load_builds(args.then)
        if args.plant:
            metric, workload, factor = args.plant.split(":")
            then = planted(then, metric, workload, float(factor))
        history_builds = load_builds(history)
        rows = replay(history_builds + then, keep_sha=args.keep_sha)
        pairs = named_pairs([r["build_id"] for r in rows[: len(history_builds)]]) if args.all_pairs else []
        stored = stored_findings([r["build_id"] for r in rows])
    finally:
        teardown_databases(old, verbosity=0)
    print(format_rows(rows, details=args.details))
    if pairs:
        failed = [f"{i}->{j}: {v}" for i, j, v, _ in pairs if v != "pass"]
        print(f"\nnamed-baseline verdicts between history builds: {len(pairs) - len(failed)} of {len(pairs)} pairs pass"
              + (f"; not pass: {', '.join(failed)}" if failed else ""))
        if args.details:
            print("\n".join(f"  {i}->{j} {line}" for i, j, v, lines in pairs for line in lines))
    print("\n" + stored)
    if then:
        print("\n" + planted_changes(history_builds, then))
    return 0


if __name__ == "__main__":
    sys.exit(main())
