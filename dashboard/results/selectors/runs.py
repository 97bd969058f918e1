"""Runs: the recent-runs list and the run page (progress, each case's status, error excerpts)."""
from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Min
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce

from contract.case_config import SHOWN_AXES
from contract.case_interval import case_interval, class_sd, series_sds
from contract.findings import ratio_interval, sd_of_halfwidth, too_noisy
from dashboard.results.host import (
    COMPILED_HOST_SHARE,
    HOST_PROBE_MS,
    host_speed,
    is_host_bound,
)
from dashboard.results.models import BuildSummary, Result, Run
from dashboard.results.run_counts import run_counts_of
from dashboard.results.selectors.common import build_ref, config_fields

# The newest builds of a machine class, up to a run's own, whose repeated runs give a series' run-to-run
# sd (as the class prior's ``PRIOR_BUILDS``).
RUN_TO_RUN_BUILDS = 30
TOO_NOISY_NOTE = "too noisy"  # a speedup bar without an error bar: its interval says nothing

# A result's documents the run page's rows never show (its /explain/ page does): decoding them cost
# ~15 % of the page at 500 rows.
UNSHOWN_JSON = ("path_phases", "compile_phases", "kernel_profile", "cost")

FAILED_STATUSES = tuple(s for s in Result.Status.values if s != Result.Status.PASS)


@dataclass(frozen=True)
class RunSummary:
    run: Run
    result_count: int
    pass_count: int
    graph_breaks: int

    @property
    def pass_rate(self) -> float | None:
        return self.pass_count / self.result_count if self.result_count else None


def run_list_newest(*, limit: int) -> list[Run]:
    """The ``limit`` runs measured last (started_at, else ingested_at), newest first, and at least
    the newest run of every machine class (a class whose runs are older still shows up)."""
    when = Coalesce("started_at", "ingested_at")
    runs = Run.objects.select_related("build", "machine").annotate(when=when)
    found = list(runs.order_by("-when", "-ingested_at")[:limit])
    shown = {run.machine.machine_class for run in found}
    for machine_class in Run.objects.values_list("machine__machine_class", flat=True).distinct():
        if machine_class not in shown:
            shown.add(machine_class)
            found += runs.filter(machine__machine_class=machine_class).order_by("-when", "-ingested_at")[:1]
    return sorted(found, key=lambda run: run.when, reverse=True)


def run_list_recent(*, limit: int = 20) -> list[RunSummary]:
    """The newest runs (``run_newest``) with their case counts: those the ingest stored on the run
    (``results.run_counts``), counted by the database over the ``result_unique_case_per_run`` index for
    a run that has none stored (a few thousand rows per run at most)."""
    runs = run_list_newest(limit=limit)
    uncounted = [run.id for run in runs if run.result_count is None]
    counts = run_counts_of(Result.objects.filter(run__in=uncounted)) if uncounted else {}
    empty = {"n": 0, "passed": 0, "breaks": 0}
    return [
        RunSummary(run=run, result_count=run.result_count, pass_count=run.pass_count, graph_breaks=run.graph_break_total)
        if run.result_count is not None else
        RunSummary(
            run=run,
            result_count=counts.get(run.id, empty)["n"],
            pass_count=counts.get(run.id, empty)["passed"],
            graph_breaks=counts.get(run.id, empty)["breaks"] or 0,
        )
        for run in runs
    ]


@dataclass(frozen=True)
class RunProgress:
    stored: int
    expected: int | None
    by_status: dict[str, int]

    @property
    def fraction(self) -> float | None:
        return min(1.0, self.stored / self.expected) if self.expected else None

    @property
    def failed(self) -> int:
        return sum(n for status, n in self.by_status.items() if status != Result.Status.PASS)


def run_progress(*, run: Run) -> RunProgress:
    by_status = dict(Result.objects.filter(run=run).values_list("status").annotate(n=Count("id")).order_by("status"))
    return RunProgress(stored=sum(by_status.values()), expected=run.cases_expected, by_status=by_status)


def run_title(*, run: Run) -> str:
    """"tiny size · torch 2.13.0 (cf30153c4c13+cpu) · cpu": what ran, on which build, on which class."""
    return f"{run.size} size · torch {run.build.torch_version.split('+')[0]} ({build_ref(run.build)}) · {run.machine.machine_class}"


def run_speedup_chart(*, run: Run) -> dict:
    """Speedup per workload and shape regime for one run: the data behind the run page's chart. A
    case's error bar is its 95 % interval as a ratio interval (never below 0); a case too noisy to
    track (its interval's sd past ``contract.findings.TOO_NOISY_SD``) has none and its bar says
    ``too noisy`` (``note``), as the other pages say it (docs/noise-and-findings.md)."""
    rows = (
        Result.objects.filter(run=run)
        .order_by("workload__name", *config_fields("compile_mode", "shape_regime"))
        .values_list("status", "speedup", "speedup_noise", "workload__name", *config_fields("shape_regime", "compile_mode"))
    )
    traces: dict[str, dict] = {}
    for status, speedup, speedup_noise, workload, regime, mode in rows:  # tuples: 1,920 cases at most
        name = f"{regime} ({mode})"
        trace = traces.setdefault(name, {"name": name, "x": [], "y": [], "noise": [], "noise_below": [], "status": [],
                                         "note": []})
        trace["x"].append(workload)
        trace["y"].append(speedup if status == Result.Status.PASS else None)
        noisy = status == Result.Status.PASS and too_noisy(sd_of_halfwidth(speedup_noise))
        low, high = (None, None) if noisy else ratio_interval(speedup, speedup_noise or 0)  # log scale: never below 0
        trace["note"].append(TOO_NOISY_NOTE if noisy else "")
        trace["noise"].append(None if noisy else 0 if high is None else high - speedup)  # None: no bar, not a cap at 0
        trace["noise_below"].append(None if noisy else 0 if low is None else speedup - low)
        trace["status"].append(status)
    return {"run_id": str(run.id), "traces": list(traces.values())}


def run_results(*, run: Run, only: str = "all"):
    """A run's cases, failed ones first when ``only`` is "failed" (then only those); each with the
    compiled side's host share and the median host probe where the runner measured them
    (``compiled_host_share``, ``host_probe_ms``), and the model that ran (``implementation``: ours,
    ``workloads.…``, or a library's class, as the workload page shows it), and for a distributed case
    its wrapper, world size, order and checkpointing (``parallel``, ``world_size``, ``order``,
    ``checkpoint``: docs/distributed.md)."""
    rows = (
        Result.objects.filter(run=run)
        .select_related("workload", "config")
        .defer("samples", "environment", *UNSHOWN_JSON)
        .annotate(compiled_host_share=COMPILED_HOST_SHARE, host_probe_ms=HOST_PROBE_MS,
                  implementation=KT("environment__implementation"), parallel=KT("environment__distributed__parallel"),
                  world_size=KT("environment__distributed__world_size"), order=KT("environment__distributed__order"),
                  checkpoint=KT("environment__distributed__checkpoint"))
        .order_by("workload__name", *config_fields(*SHOWN_AXES))
    )
    if only == "failed":
        rows = rows.filter(status__in=FAILED_STATUSES)
    return rows


def with_host_speed(results) -> list:
    """The results (a page of :func:`run_results`) with ``host_speed`` set on each host-bound one:
    the fastest median host probe of its series' passing runs over this run's (1.0 = the host ran as
    fast as it ever did for this series; 0.5 = at half speed). None where not host-bound or not
    probed. One grouped query over the host-bound series."""
    results = list(results)
    bound = [r for r in results if is_host_bound(r.compiled_host_share) and r.host_probe_ms]
    floors = dict(
        Result.objects.filter(series_id__in={r.series_id for r in bound}, status=Result.Status.PASS)
        .values("series_id").annotate(floor=Min(HOST_PROBE_MS)).values_list("series_id", "floor")
    ) if bound else {}
    bound_ids = {r.pk for r in bound}
    for r in results:
        r.host_speed = host_speed(floors.get(r.series_id), r.host_probe_ms) if r.pk in bound_ids else None
    return results


def with_run_to_run(results, *, machine_class: str, upto) -> list:
    """The results (a page of :func:`run_results`, a workload's latest figures) with ``interval`` set on
    each passing one (``contract.case_interval``, issue #44 item 6): the wider of its own speedup
    interval and where another run of its build falls by its series' run-to-run sd, from the series'
    repeated runs of one build (remeasurements included, bisection runs not) over the class's newest
    ``RUN_TO_RUN_BUILDS`` builds up to ``upto`` (the run's build, or the newest shown); a series
    without repeated runs takes the upper quartile of those of the page's series that have them (the
    class's, as its prior). No query where none of those builds ran twice; else one over the page's
    series."""
    results = list(results)
    if not results or upto is None:
        return results
    builds = [b for b, runs in BuildSummary.objects.filter(machine_class=machine_class, ordered_at__lte=upto.ordered_at)
              .order_by("-ordered_at", "-build_id").values_list("build_id", "runs")[:RUN_TO_RUN_BUILDS] if runs > 1]
    rows = (Result.objects.filter(series_id__in={r.series_id for r in results if r.speedup}, build_id__in=builds,
                                  status=Result.Status.PASS).exclude(run__reason=Run.Reason.BISECTION)
            .values_list("series_id", "build_id", "speedup")) if builds else []
    sds = series_sds(rows)
    prior = class_sd(sds)
    for r in results:
        own = r.speedup_noise if r.speedup else None
        r.interval = (case_interval(own, sds[r.series_id]) if r.series_id in sds
                      else case_interval(own, prior, from_class=True) if r.speedup else None)
    return results
