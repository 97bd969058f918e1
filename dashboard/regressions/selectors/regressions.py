"""Reads of the regressions app: lists for the page and the API, the CI verdict, and the other
pages' reads of findings (open counts on the overview, markers on the trend charts)."""
from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Count, Exists, OuterRef, Q, QuerySet

from contract.findings import GAP_METRIC
from contract.metrics import BY_NAME
from dashboard.regressions.board import regression_numbers, suspect_numbers
from dashboard.regressions.models import AlertSummary, DetectionPass, Regression, Remeasurement
from dashboard.results.models import Build, Result, Run
from dashboard.results.same_build import same_build, same_build_message
from dashboard.results.selectors.common import build_ref
from dashboard.results.variants import base_of

OPEN_STATUSES = (Regression.Status.UNTRIAGED, Regression.Status.ACKNOWLEDGED, Regression.Status.INVESTIGATING)


def runs_detection_pending(*, runs: QuerySet[Run] | None = None) -> QuerySet[Run]:
    """Runs whose detection has not completed: stored results, and no alert summary yet (detection
    writes its summary with its first chunk of findings) or a detection pass still going over them
    (``services.detection_pass``). A dispatched run still measuring is among them; the sweep leaves
    those to ``run_finish_if_done``."""
    runs = Run.objects.all() if runs is None else runs
    unfinished = DetectionPass.objects.filter(run=OuterRef("pk"), finished_at__isnull=True)
    # A variant's runs too: detection judges them against their base build (issue #42).
    return runs.filter(Q(alert_summary__isnull=True) | Exists(unfinished), Exists(Result.objects.filter(run=OuterRef("pk"))))


def runs_detection_running(*, since) -> QuerySet[DetectionPass]:
    """Detection passes at work: unfinished, a chunk committed after ``since`` (the lease)."""
    return DetectionPass.objects.filter(finished_at__isnull=True, beat_at__gte=since)


def run_detection_pending(*, build: Build, machine_class: str) -> bool:
    """Whether some run of ``build`` on ``machine_class`` has results that detection has not gone
    over yet: its verdict is ``pending`` until it has (the sweep makes sure it will)."""
    runs = Run.objects.filter(build=build, machine__machine_class=machine_class)
    return runs_detection_pending(runs=runs).exists()


def detection_failures(*, build: Build, machine_class: str) -> list[dict]:
    """The series whose detection failed in the newest pass over a run of ``build`` on
    ``machine_class`` (``AlertSummary.detection_failures``), each once: ``[{series, workload,
    config, error}]``."""
    failures: dict[int, dict] = {}
    for listed in AlertSummary.objects.filter(build=build, machine_class=machine_class).exclude(
            detection_failures=[]).order_by("created_at").values_list("detection_failures", flat=True):
        failures.update({f["series"]: f for f in listed})
    return [failures[k] for k in sorted(failures)]


def detection_failures_recent(*, limit: int = 20) -> list[AlertSummary]:
    """The newest alert summaries whose detection failed on some series (the regressions page)."""
    return list(AlertSummary.objects.exclude(detection_failures=[]).select_related("build", "run")
                .order_by("-created_at")[:limit])


def detection_failed_message(failures: list[dict]) -> str:
    named = "; ".join(f"{f['workload']} [{f['config']}]: {f['error']}" for f in failures[:5])
    more = f"; and {len(failures) - 5} more" if len(failures) > 5 else ""
    return (f"detection failed on {len(failures)} series, so they were not judged: {named}{more}; "
            "fix the cause and run detection again (python manage.py detect_regressions RUN_ID)")


def regression_list(*, status=None, build=None, workload=None, machine_class=None, kind=None, metric=None,
                    finding=None) -> QuerySet[Regression]:
    """Regressions, newest first. ``status`` may be a status, a list of them, or "open"; ``build`` a
    Build or its id (matches the first bad build); ``workload`` a name."""
    qs = Regression.objects.select_related(
        "series__workload", "series__config", "first_bad_build", "last_good_build", "summary", "culprit_build"
    ).order_by("-created_at", "-id")
    if status == "open":
        qs = qs.filter(status__in=OPEN_STATUSES)
    elif isinstance(status, (list, tuple)):
        qs = qs.filter(status__in=status)
    elif status:
        qs = qs.filter(status=status)
    if build is not None:
        qs = qs.filter(first_bad_build=build)
    if workload:
        qs = qs.filter(series__workload__name=workload)
    if machine_class:
        qs = qs.filter(series__machine_class=machine_class)
    if kind:
        qs = qs.filter(kind=kind)
    if metric:
        qs = qs.filter(metric=metric)
    if finding:
        qs = qs.filter(finding=finding)
    return qs


def finding_metric_names() -> set[str]:
    """Every metric a finding can name (``contract.metrics``, the deterministic findings' and the
    dynamic gap's) and every one a stored finding names: a filter on another is a typo."""
    stored = set(Regression.objects.values_list("metric", flat=True).distinct())
    return set(BY_NAME) | {"status", "graph_breaks", "recompiles", GAP_METRIC} | stored


def remeasurement_list_pending() -> QuerySet[Remeasurement]:
    return Remeasurement.objects.filter(status=Remeasurement.Status.PENDING).select_related(
        "series__workload", "series__config", "build", "baseline_build"
    )


def regression_as_dict(regression: Regression) -> dict:
    return {
        "id": regression.id,
        "workload": regression.series.workload.name,
        "config": str(regression.series.config),
        "machine_class": regression.series.machine_class,
        "metric": regression.metric,
        "finding": regression.finding,
        "kind": regression.kind,
        "magnitude": regression.magnitude,
        **regression_numbers(regression).as_dict(),  # before, after, change, direction, noise, confidence, ...
        "status": regression.status,
        "message": regression.message,
    }


@dataclass
class Verdict:
    verdict: str  # "pass" | "regressed" | "suspect" | "pending" | "not_compared" | "error"
    # no_regressions | regressions_found | suspects_found | no_baseline | no_results | detection_pending
    # | detection_failed (error: detection raised on some series, named in ``message``)
    # | same_build (not_compared: the baseline is this build) | not_tracked (not_compared: a variant
    # whose base build has no results on the class; detection never judges variants)
    # | base_no_change | base_regressed | base_suspect (a variant judged against its base build)
    reason: str
    build: Build
    baseline: Build | None
    machine_class: str
    regressions: list[dict] = field(default_factory=list)
    # What was not compared and why, never counted: compile_cpu_ratio measured against different
    # compile references (``verdict.reference_notes``).
    notes: list[dict] = field(default_factory=list)
    message: str = ""  # what was compared with what, in words, where the reason alone does not say it

    def to_dict(self) -> dict:
        return {
            "verdict": self.verdict,
            "reason": self.reason,
            "message": self.message,
            "build": _build_ref(self.build),
            "baseline": _build_ref(self.baseline) if self.baseline else None,
            "machine_class": self.machine_class,
            "regressions": self.regressions,
            "notes": self.notes,
        }


def _build_ref(build: Build) -> dict:
    return {"id": build.id, "torch_version": build.torch_version, "git_sha": build.git_sha,
            "local_label": build.local_label, "label": str(build)}


def build_verdict(*, build: Build, machine_class: str, baseline: Build | None = None) -> Verdict:
    """Did ``build`` regress on ``machine_class``? ``pass``, ``regressed``, ``suspect`` (moved, not
    yet confirmed: the findings and what would confirm them) or ``pending`` (no results on the class,
    or detection has not run): never a silent pass. ``notes``: what was not compared (a change of
    compile reference: compile_cpu_ratio starts a new baseline there), never counted.

    Against the previous build (no ``baseline``): the open regressions detection found first at this
    build or confirmed at it (a second bad build; invalid, fixed and won't-fix ones do not fail a
    build), else the pending re-measurements of this build. A series' first build is its baseline
    (its first build on the class: ``no_baseline``). Against a named baseline: the cases of both
    builds compared directly with the run-to-run noise model (see ``verdict_against``).
    """
    from dashboard.regressions.services.detection import previous_build  # noqa: PLC0415 (read-only helper)
    from dashboard.regressions.verdict import reference_change_notes, verdict_against_noted  # noqa: PLC0415

    if same_build(build, baseline):  # whatever either measured: there is nothing to compare
        return Verdict("not_compared", "same_build", build, baseline, machine_class,
                       message=same_build_message(build, baseline, ref=build_ref))
    runs = Run.objects.filter(build=build, machine__machine_class=machine_class)
    if not Result.objects.filter(run__in=runs).exists():
        return Verdict("pending", "no_results", build, baseline, machine_class)
    if baseline is None and build.overrides:
        return _variant_verdict(build=build, machine_class=machine_class)
    if baseline is not None:
        found, notes = verdict_against_noted(build=build, baseline=baseline, machine_class=machine_class)
        return _verdict_of(found, build, baseline, machine_class, notes)
    baseline = previous_build(build=build, machine_class=machine_class)
    if baseline is None:
        return Verdict("pass", "no_baseline", build, None, machine_class)
    if run_detection_pending(build=build, machine_class=machine_class):
        return Verdict("pending", "detection_pending", build, baseline, machine_class)
    failures = detection_failures(build=build, machine_class=machine_class)
    found = [regression_as_dict(r) for r in regression_list(status="open", machine_class=machine_class,
                                                            kind=Regression.Kind.REGRESSION).filter(
        Q(first_bad_build=build) | Q(raised_build=build))]
    regressed = {(f["workload"], f["config"], f["metric"]) for f in found}
    suspects = [remeasurement_as_suspect(r) for r in Remeasurement.objects.filter(
        build=build, series__machine_class=machine_class, status=Remeasurement.Status.PENDING,
    ).select_related("series__workload", "series__config", "baseline_build")]
    found += [s for s in suspects if (s["workload"], s["config"], s["metric"]) not in regressed]  # already counted
    notes = reference_change_notes(build=build, baseline=baseline, machine_class=machine_class)
    if failures:  # never a pass over series nobody judged (the findings of the others still listed)
        return Verdict("error", "detection_failed", build, baseline, machine_class, found, notes,
                       message=detection_failed_message(failures))
    return _verdict_of(found, build, baseline, machine_class, notes)


def _variant_verdict(*, build: Build, machine_class: str) -> Verdict:
    """A variant's default verdict (issue #33 item 5). A variant is an experiment, not a point of its
    base's series: detection judges it against its base build, case by case with the run-to-run noise
    model (``verdict_against``, as a named baseline), and stores its regressions as findings (issue
    #42): the verdict lists those, with their ids, and the comparison's suspects; without a base
    build measured on the class it is ``not_compared`` / ``not_tracked``, never a plain pass."""
    from dashboard.regressions.verdict import verdict_against_noted  # noqa: PLC0415 (as in build_verdict)

    base = base_of(build)
    if base is None or not Result.objects.filter(build=base, run__machine__machine_class=machine_class).exists():
        where = (f"its base build {build_ref(base)} has no results on {machine_class}" if base is not None
                 else "its base build is not stored")
        return Verdict("not_compared", "not_tracked", build, base, machine_class,
                       message=f"variant {build_ref(build)}: {where}; detection does not track variants, "
                               "so there is nothing to judge it against")
    if run_detection_pending(build=build, machine_class=machine_class):
        return Verdict("pending", "detection_pending", build, base, machine_class)
    # Its regressions are findings detection stored (services.detection._variant_findings: the same
    # comparison, with ids, on /regressions/ and /ab/); its suspects are the comparison's, not stored.
    found, notes = verdict_against_noted(build=build, baseline=base, machine_class=machine_class)
    stored = [regression_as_dict(r) for r in regression_list(status="open", machine_class=machine_class,
                                                             kind=Regression.Kind.REGRESSION).filter(
        first_bad_build=build, last_good_build=base)]
    verdict = _verdict_of(stored + [f for f in found if f["kind"] == "suspect"], build, base, machine_class, notes)
    # Its own reasons, not a detection pass's (issue #46 item 12: a variant read a plain no_regressions).
    verdict.reason = VARIANT_REASONS.get(verdict.verdict, verdict.reason)
    verdict.message = f"variant {build_ref(build)} judged against its base build {build_ref(base)}"
    return verdict


# A variant's verdict against its base build, by verdict: reasons apart from a detection pass's.
VARIANT_REASONS = {"pass": "base_no_change", "regressed": "base_regressed", "suspect": "base_suspect"}


def _verdict_of(found: list[dict], build, baseline, machine_class, notes: list[dict] | None = None) -> Verdict:
    notes = notes or []
    if any(f["kind"] == "regression" for f in found):
        return Verdict("regressed", "regressions_found", build, baseline, machine_class, found, notes)
    if any(f["kind"] == "suspect" for f in found):
        return Verdict("suspect", "suspects_found", build, baseline, machine_class, found, notes)
    return Verdict("pass", "no_regressions", build, baseline, machine_class, found, notes)


def remeasurement_as_suspect(request: Remeasurement) -> dict:
    """A pending re-measurement as a verdict entry: the suspect change and what would confirm it."""
    from dashboard.regressions.services.remeasure import remeasurement_runnable  # noqa: PLC0415 (a read)

    suspect = request.suspect or {}
    if remeasurement_runnable(request):
        confirm = (f"re-runs of this build and of {request.baseline_build} on {request.series.machine_class} "
                   "decide it (queued)")
    else:
        confirm = (f"no worker of {request.series.machine_class} can re-measure both builds: the next build "
                   "decides it (a second bad build confirms it)")
    numbers = suspect_numbers(request)
    change = f" {numbers.values_text} ({numbers.change_text})" if numbers.values_text else ""
    return {
        "id": None, "workload": request.series.workload.name, "config": str(request.series.config),
        "machine_class": request.series.machine_class, "metric": request.metric, "finding": "change_point",
        "kind": "suspect", "magnitude": suspect.get("magnitude"), "status": request.status,
        **numbers.as_dict(),
        "message": f"suspect: {request.metric}{change}; {confirm}",
    }


@dataclass(frozen=True)
class Marker:
    series_id: int
    metric: str
    build_id: int  # the first bad build
    kind: str  # "regression" or "improvement"
    status: str
    magnitude: float | None
    change_text: str = ""  # the finding's change as every surface shows it (contract.findings): "+274.4 % worse"


def open_regression_counts(*, machine_class: str, build_id: int | None = None) -> dict[int, int]:
    """Open regressions (kind 'regression') of a machine class's series, per config id; with
    ``build_id``, only those first seen on that build (the overview: the latest build's)."""
    found = Regression.objects.filter(series__machine_class=machine_class, status__in=OPEN_STATUSES,
                                      kind=Regression.Kind.REGRESSION)
    if build_id is not None:
        found = found.filter(first_bad_build_id=build_id)
    rows = found.values("series__config_id").annotate(n=Count("id"))
    return {r["series__config_id"]: r["n"] for r in rows}


def regression_markers(*, series_ids: list[int]) -> list[Marker]:
    """Every detected change on these series (any status): drawn on the trend charts at its first
    bad build, on the chart of its metric."""
    if not series_ids:
        return []
    rows = Regression.objects.filter(series_id__in=series_ids).only(
        "series_id", "metric", "first_bad_build_id", "kind", "status", "magnitude", "finding", "before_value", "after_value",
        "details", "confidence")
    return [Marker(r.series_id, r.metric, r.first_bad_build_id, r.kind, r.status, r.magnitude,
                   regression_numbers(r).change_text) for r in rows]
