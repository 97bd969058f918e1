"""The overview: the latest build of each machine class, per configuration, against the build
before it (over the cases present in both), and the suite-level trends of the same figures."""
from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field

from contract.findings import WITHIN_NOISE, judge
from dashboard.results.aggregates import OVERVIEW_FIGURES, Figure
from dashboard.results.models import BuildSummary, Config, ConfigSummary
from dashboard.results.selectors.builds import (build_summary_copy, build_summary_elsewhere, build_summary_latest,
                                                build_summary_previous, machine_class_list)
from dashboard.results.selectors.common import config_label, ref_for
from dashboard.results.variants import PLAIN_BUILD


FIGURES = OVERVIEW_FIGURES
WITHIN_NOISE_TONE = "same"  # past the figure's threshold, not past its noise band: grey, "within noise"
TOO_NOISY_TONE = "too_noisy"  # every case too noisy to track: grey, in words (/compare/'s tones)


@dataclass
class Cell:
    figure: Figure
    value: float | None  # the latest build, all its cases
    old: float | None = None  # previous build, cases present in both
    new: float | None = None  # latest build, cases present in both
    change: float | None = None  # relative; absolute for pass rate (points) and counts
    tone: str = ""  # "", "better", "worse", "better strong", "worse strong", WITHIN_NOISE_TONE, TOO_NOISY_TONE


@dataclass
class ConfigRow:
    config: Config
    label: str
    cases: int
    common: int  # cases present in both builds
    cells: list[Cell]
    open_regressions: int


@dataclass
class ClassOverview:
    machine_class: str
    latest: BuildSummary
    previous: BuildSummary | None
    rows: list[ConfigRow] = field(default_factory=list)
    copy: BuildSummary | None = None  # no previous build: another stored build of the same commit on the class
    elsewhere: BuildSummary | None = None  # no previous build nor copy: the same commit measured on another class
    suites: list = field(default_factory=list)  # the page's per-suite table (selectors.suites.suite_table)


def figure_value(summary: ConfigSummary | dict, figure: Figure) -> float | None:
    get = summary.get if isinstance(summary, dict) else lambda k: getattr(summary, k)
    if figure.key == "pass_rate":
        return get("passed") / get("cases") if get("cases") else None
    return get(figure.key)


def cell_tone(figure: Figure, old: float | None, new: float | None, *, band: float | None = None,
              noisy: bool = False) -> tuple[float | None, str]:
    """The change (relative, or absolute for rates and counts) and the colour it earns, by the one
    noise rule (``contract.findings.judge``, docs/noise-and-findings.md): a relative change not past
    the figure's threshold nor its noise ``band`` (``aggregates.figure_noise``) is within noise (no
    colour); ``noisy``: every case is too noisy to track (TOO_NOISY_TONE, no colour)."""
    if old is None or new is None:
        return None, ""
    if figure.how in ("rate", "total"):
        change = new - old
        strong = abs(change) >= (0.05 if figure.how == "rate" else 1) and change != 0
        if change == 0:
            return 0.0, ""
    else:
        if old == 0:
            return None, ""
        change = new / old - 1.0
        if noisy:
            return change, TOO_NOISY_TONE
        bar = max(figure.thresholds[0], band or 0.0)
        if judge(change=change, bar=bar, worse=False) == WITHIN_NOISE:
            return change, WITHIN_NOISE_TONE if band is not None and abs(change) >= figure.thresholds[0] else ""
        strong = abs(change) >= max(figure.thresholds[1], band or 0.0)
    better = change > 0 if figure.higher_is_better else change < 0
    return change, ("better" if better else "worse") + (" strong" if strong else "")


# Open regressions per config id of a machine class's build (``regressions.selectors.open_regression_counts``):
# passed in by the page, results imports no app above it.
RegressionCounts = Callable[..., dict[int, int]]


def overview_class(*, machine_class: str, configs: dict[int, Config], config_ids: list[int] | None = None,
                   open_regressions: RegressionCounts | None = None) -> ClassOverview | None:
    """The latest build of a class: per configuration, its figures (``ConfigSummary``) and their
    change against the previous build over the cases present in both (``versus_previous``, kept
    by ingest), so this reads a few dozen summary rows however many results there are; each row's
    open regressions from ``open_regressions`` (none without it)."""
    latest = build_summary_latest(machine_class=machine_class)
    if latest is None:
        return None
    previous = build_summary_previous(summary=latest)
    rows = ConfigSummary.objects.filter(build_id=latest.build_id, machine_class=machine_class)
    if config_ids is not None:
        rows = rows.filter(config_id__in=config_ids)
    regressions = open_regressions(machine_class=machine_class, build_id=latest.build_id) if open_regressions else {}
    out = ClassOverview(machine_class=machine_class, latest=latest, previous=previous,
                        copy=build_summary_copy(summary=latest) if previous is None else None)
    if previous is None and out.copy is None:
        out.elsewhere = build_summary_elsewhere(summary=latest)
    for summary in sorted(rows, key=lambda s: config_label(configs[s.config_id])):
        against = summary.versus_previous if previous and summary.previous_build_id == previous.build_id else {}
        cells = []
        for figure in FIGURES:
            cell = Cell(figure=figure, value=figure_value(summary, figure))
            if against.get("common"):
                cell.old, cell.new = against[figure.key]
                cell.change, cell.tone = cell_tone(figure, cell.old, cell.new, band=against.get("noise", {}).get(figure.key),
                                                   noisy=figure.key in against.get("too_noisy", ()))
            cells.append(cell)
        out.rows.append(
            ConfigRow(
                config=configs[summary.config_id], label=config_label(configs[summary.config_id]), cases=summary.cases,
                common=against.get("common", 0), cells=cells, open_regressions=regressions.get(summary.config_id, 0),
            )
        )
    return out


def overview_list(*, config_ids: list[int] | None = None, open_regressions: RegressionCounts | None = None) -> list[ClassOverview]:
    """One block per machine class, the class with the newest build first; ``config_ids``
    limits the rows to some configurations."""
    configs = {c.id: c for c in Config.objects.all()}
    blocks = (overview_class(machine_class=mc, configs=configs, config_ids=config_ids, open_regressions=open_regressions)
              for mc in machine_class_list())
    return [b for b in blocks if b is not None]


def overview_trend(*, machine_class: str, since: dt.datetime | None, config_ids: list[int] | None = None) -> dict:
    """The suite-level figures of every configuration of a machine class over builds since
    ``since``: ``{"configs": {config_id: label}, "points": {config_id: [point, ...]}, "builds": [ref, ...]}``, each point
    ``{"ref", "at", "version", "cases", <figure key>: value}``, oldest first."""
    rows = ConfigSummary.objects.filter(PLAIN_BUILD, machine_class=machine_class)
    if since is not None:
        rows = rows.filter(ordered_at__gte=since)
    if config_ids is not None:
        rows = rows.filter(config_id__in=config_ids)
    rows = rows.order_by("ordered_at", "build_id").values(
        "config_id", "ordered_at", "build__git_sha", "build__local_label", "build__torch_version", "cases", "passed",
        *(f.key for f in FIGURES if f.key != "pass_rate"),
    )
    configs = {c.id: c for c in Config.objects.all()}
    points: dict[int, dict[str, dict]] = {}  # config -> commit -> its point, in build order
    builds: dict[str, str] = {}  # every commit's ref, in build order
    for row in rows:
        ref = ref_for(git_sha=row["build__git_sha"], local_label=row["build__local_label"])
        # Two stored builds of one commit (a local measurement and an imported one, results.same_build)
        # are one build, not a before and after: one point, the one stored last, its place the first's.
        commit = row["build__git_sha"] if row["build__git_sha"] != "unknown" else ref
        point = {"ref": ref, "at": row["ordered_at"], "version": row["build__torch_version"], "cases": row["cases"]}
        for figure in FIGURES:
            point[figure.key] = figure_value(row, figure)
        points.setdefault(row["config_id"], {})[commit] = point
        builds[commit] = ref
    ordered = sorted(points, key=lambda c: config_label(configs[c]))
    return {"configs": {c: config_label(configs[c]) for c in ordered},
            "points": {c: list(points[c].values()) for c in ordered}, "builds": list(builds.values())}

