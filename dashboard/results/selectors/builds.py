"""Builds per machine class, read from ``BuildSummary`` (index ``buildsummary_class_newest``)."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.db.models import Max, Q

from dashboard.results.aggregates import PASS, latest_per_series
from dashboard.results.imported import imported_sources_label, is_imported_label
from dashboard.results.models import Build, BuildSummary, Result, Run


def machine_class_list() -> list[str]:
    """Machine classes that have results, the one with the newest build first."""
    rows = BuildSummary.objects.values("machine_class").annotate(newest=Max("ordered_at")).order_by("-newest", "machine_class")
    return [r["machine_class"] for r in rows]


@dataclass(frozen=True)
class BuildPick:
    """A build of a picker (``build_list_for_class``): what the pickers read of its ``BuildSummary``,
    and its build with the fields that name it (``PICK_FIELDS``)."""

    build: Build
    build_id: int
    machine_class: str
    ordered_at: dt.datetime
    synthetic: bool


PICK_FIELDS = ("id", "torch_version", "git_sha", "local_label", "label", "overrides")  # its ref, name, label, overrides


def build_list_for_class(*, machine_class: str, limit: int = 400) -> list[BuildPick]:
    """The builds measured on a machine class, newest first (the build pickers: a build's ref,
    label and overrides; not its environment or config catalog, kilobytes of JSON each), read as
    rows, not as two model instances a build (8 -> 3 ms of a cold /compare/ at 1,000,000 results)."""
    rows = (BuildSummary.objects.filter(machine_class=machine_class).order_by("-ordered_at", "-build_id")
            .values_list("build_id", "machine_class", "ordered_at", "synthetic", *(f"build__{f}" for f in PICK_FIELDS))[:limit])
    db = BuildSummary.objects.db
    return [BuildPick(Build.from_db(db, PICK_FIELDS, row[4:]), *row[:4]) for row in rows]


def build_summary_latest(*, machine_class: str) -> BuildSummary | None:
    """The newest build of the class that is not a variant (a variant is no "latest build")."""
    return (
        BuildSummary.objects.filter(machine_class=machine_class, build__overrides={})
        .select_related("build", "latest_run")
        .order_by("-ordered_at", "-build_id")
        .first()
    )


def build_summary_get(*, build_id: int, machine_class: str) -> BuildSummary | None:
    return BuildSummary.objects.filter(build_id=build_id, machine_class=machine_class).select_related("build", "latest_run").first()


def build_summary_previous(*, summary: BuildSummary) -> BuildSummary | None:
    """The build measured on the same machine class just before ``summary``'s build (not a variant),
    never another stored copy of the same build (``results.same_build``: the local measurement and
    an imported sample of one sha are not before and after)."""
    older = (BuildSummary.objects.filter(machine_class=summary.machine_class, build__overrides={})
             .select_related("build", "latest_run"))
    build = summary.build
    if not build.overrides and build.git_sha != "unknown":
        older = older.exclude(build__git_sha=build.git_sha)
    # One read: a build of the same time with a lower id comes first (newest first, then by id), else
    # the newest one before (two reads cost the home page four round trips under load).
    return (older.filter(Q(ordered_at=summary.ordered_at, build_id__lt=summary.build_id) | Q(ordered_at__lt=summary.ordered_at))
            .order_by("-ordered_at", "-build_id").first())


def build_summary_elsewhere(*, summary: BuildSummary) -> BuildSummary | None:
    """The newest stored build of the same commit measured on another machine class (another host's
    measurement, never compared: docs/machine-classes-and-verdicts.md), for the home page to name."""
    build = summary.build
    if build.overrides or build.git_sha == "unknown":
        return None
    return (BuildSummary.objects.filter(build__git_sha=build.git_sha, build__overrides={})
            .exclude(machine_class=summary.machine_class).select_related("build")
            .order_by("-ordered_at", "-build_id").first())


def build_summary_copy(*, summary: BuildSummary) -> BuildSummary | None:
    """Another stored build of the same commit measured on the class (a plain build's imported copy,
    ``results.same_build``), which ``build_summary_previous`` skips: /compare/ names it."""
    build = summary.build
    if build.overrides or build.git_sha == "unknown":
        return None
    return (BuildSummary.objects.filter(machine_class=summary.machine_class, build__git_sha=build.git_sha,
                                        build__overrides={}).exclude(build_id=build.id)
            .select_related("build").order_by("-ordered_at", "-build_id").first())


def build_classes(*, build_id: int) -> list[str]:
    """The machine classes a build was measured on."""
    return list(BuildSummary.objects.filter(build_id=build_id).order_by("machine_class").values_list("machine_class", flat=True))


def builds_newest_time(*, machine_class: str) -> dt.datetime | None:
    latest = BuildSummary.objects.filter(machine_class=machine_class).order_by("-ordered_at").values_list("ordered_at", flat=True).first()
    return latest


def build_imported_sources(*, build: Build, machine_class: str | None = None) -> list[tuple[str, str, str]]:
    """(hostname, machine class, day) of each run of ``build`` (on ``machine_class`` only, when given):
    what an imported build's label names (``results.imported.imported_sources_label``)."""
    runs = Run.objects.filter(build=build)
    if machine_class is not None:
        runs = runs.filter(machine__machine_class=machine_class)
    return [(hostname, cls, started.date().isoformat() if started else "")
            for hostname, cls, started in runs.values_list("machine__hostname", "machine__machine_class", "started_at")]


def build_label_on(*, build: Build, machine_class: str) -> str:
    """The build as a class's block names it: an imported build's stored label names the hosts and
    days of every class it was imported on ("imported (cpu, gpu-h200, vm, ...)" above H100 figures);
    here, only those of its runs on ``machine_class``."""
    if not is_imported_label(build.local_label):
        return str(build)
    sources = build_imported_sources(build=build, machine_class=machine_class)
    return imported_sources_label(torch_version=build.torch_version, sources=sources) if sources else str(build)


def build_not_passed(*, build_id: int, machine_class: str, cases: dict[int, dict] | None = None) -> dict[str, int]:
    """How many of a build's cases on ``machine_class`` did not pass, by status, most first: the
    cases ``BuildSummary`` counts (one per series, the result stored last; ``cases``: as
    ``build_cases`` read them, where the page has them)."""
    if cases is None:
        rows = (Result.objects.filter(build_id=build_id, series__machine_class=machine_class)
                .order_by("id").values("series_id", "status"))
        cases = latest_per_series(rows)
    counts: dict[str, int] = {}
    for row in cases.values():
        if row["status"] != PASS:
            counts[row["status"]] = counts.get(row["status"], 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))
