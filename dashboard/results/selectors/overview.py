"""The overview: the latest build of each machine class, per configuration, against the build
before it (over the cases present in both), and the suite-level trends of the same figures."""
from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from contract import comparison
from contract.comparison import BETTER, SAME, TOO_NOISY, WORSE
from contract.findings import BLOCK_TIMED_METRICS, TWO_RUNS_95
from contract.metrics import BY_NAME
from dashboard.results.aggregates import OVERVIEW_FIGURES, PASS, Figure
from dashboard.results.models import BuildSummary, Config, ConfigSummary
from dashboard.results.selectors.builds import (build_label_on, build_summary_copy, build_summary_elsewhere,
                                                build_summary_latest, build_summary_previous, machine_class_list)
from dashboard.results.selectors.common import config_label, ref_for
from dashboard.results.selectors.pairs import CASE_FIELDS, case_pairs, own_sd
from dashboard.results.variants import PLAIN_BUILD


FIGURES = OVERVIEW_FIGURES
FIGURE_COLUMNS = tuple(f.column for f in FIGURES if f.column)  # what a row's cells read of the two builds' cases
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
    noise: float | None = None  # the relative 95 % band a relative change was judged against


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
    cases: dict | None = None  # the latest build's cases, where the page read them (selectors.build_cases)
    not_passed: dict | None = None  # its cases that did not pass, by status, where the page has them (selectors.builds.build_not_passed)
    build_label: str = ""  # the latest build as this class measured it (selectors.builds.build_label_on)
    outcome: str = ""  # "204 cases, 173 passed, 31 did not: 20 compile_error, ..." (web.last_night.Night.outcome)


def figure_value(summary: ConfigSummary | dict, figure: Figure) -> float | None:
    get = summary.get if isinstance(summary, dict) else lambda k: getattr(summary, k)
    if figure.key == "pass_rate":
        return get("passed") / get("cases") if get("cases") else None
    return get(figure.key)


def cell_tone(figure: Figure, old: float | None, new: float | None, *, band: float | None = None,
              noisy: bool = False) -> tuple[float | None, str]:
    """The change of a figure (relative, or absolute for rates and counts) and its colour: a count
    or a rate by its thresholds; a relative change by the one noise rule (``contract.comparison``,
    docs/noise-and-findings.md): not past the figure's threshold nor its noise ``band`` it is within
    noise (grey "within noise" past the threshold, else no colour); ``noisy``: every case is too
    noisy to track (TOO_NOISY_TONE). Strong past the second threshold and the band."""
    if old is None or new is None:
        return None, ""
    if figure.how in ("rate", "total"):
        change = new - old
        if change == 0:
            return 0.0, ""
        strong = abs(change) >= (0.05 if figure.how == "rate" else 1)
        better = change > 0 if figure.higher_is_better else change < 0
        return change, ("better" if better else "worse") + (" strong" if strong else "")
    if noisy:
        return comparison.relative_change(old, new), TOO_NOISY_TONE
    judged = comparison.judge(BY_NAME[figure.column], old, new, threshold=figure.thresholds[0], noise=band)
    return judged.change, _tone(figure, judged)


def _tone(figure: Figure, judged: comparison.Judged) -> str:
    if judged.tone == TOO_NOISY:
        return TOO_NOISY_TONE
    if judged.tone == SAME:
        return WITHIN_NOISE_TONE if judged.change and abs(judged.change) > figure.thresholds[0] else ""
    if judged.tone not in (BETTER, WORSE):
        return ""
    strong = abs(judged.change) >= max(figure.thresholds[1], judged.noise or 0.0)
    return judged.tone + (" strong" if strong else "")


def figure_cell(figure: Figure, value: float | None, cases: list[tuple[dict, dict]], bands: Callable[[int], dict]) -> Cell:
    """One cell of a configuration's row: its figure over the latest build's cases (``value``) and
    its change against the previous build over ``cases`` (base row, head row: ``pairs`` rows, paired
    by series). Rates and counts over every case; a relative figure by ``contract.comparison``: each
    case judged against its series' noise band (``bands``: /compare/'s, of its series; a
    block-timed figure's at least its cases' own stated noise) and too noisy to track past the
    bound in its own noise (``pairs.own_sd``: repeated runs, stated intervals), the geomean or mean over the cases
    that passed in both less those too noisy to track, judged against their mean band."""
    cell = Cell(figure=figure, value=value)
    if not cases:
        return cell
    if figure.how == "rate":
        cell.old, cell.new = (sum(r["status"] == PASS for r in side) / len(cases) for side in zip(*cases))
    elif figure.how == "total":
        cell.old, cell.new = (float(sum(r[figure.column] or 0 for r in side)) for side in zip(*cases))
    else:
        metric = BY_NAME[figure.column]
        judged = []
        for o, n in cases:
            if o["status"] != PASS or n["status"] != PASS:
                continue
            band = bands(o["series_id"]).get(figure.column)
            own = own_sd(o, n, figure.column)
            if figure.column in BLOCK_TIMED_METRICS and own is not None:  # its cases' stated intervals
                band = max(band or 0.0, TWO_RUNS_95 * own)
            judged.append(comparison.pooling(o[figure.column], n[figure.column], noise=band, within_sd=own))
        row = comparison.pooled(metric, judged, threshold=figure.thresholds[0], how=figure.how)
        if row.tone == TOO_NOISY:  # every case is: the figure over them all, in words, uncoloured
            combine = comparison.geomean if figure.how == "geomean" else comparison.mean
            row = comparison.Judged(combine(j.old for j in judged), combine(j.new for j in judged), None, None, None, TOO_NOISY)
        cell.old, cell.new, cell.noise = row.old, row.new, row.noise
        cell.change = comparison.relative_change(row.old, row.new)
        cell.tone = _tone(figure, row)
        return cell
    cell.change, cell.tone = cell_tone(figure, cell.old, cell.new)
    return cell


# Open regressions per config id of a machine class's build (``regressions.selectors.open_regression_counts``):
# passed in by the page, results imports no app above it.
RegressionCounts = Callable[..., dict[int, int]]
# Per config id, the judged cells of a pair of builds: (cases present in both, one Cell per figure
# without its value), as ``class_cells`` judges them (``regressions.services.home_cells.home_cells``:
# machine_class=, base=, head= -> stored after the pipeline stores the noise bands), passed in by the page.
ClassCells = Callable[..., dict[int, tuple[int, list[Cell]]]]


def class_cells(*, machine_class: str, base_id: int, head_id: int, bands: Callable[[int], dict],
                config_ids: list[int] | None = None) -> dict[int, tuple[int, list[Cell]]]:
    """Per configuration, its figures' change from build ``base_id`` to ``head_id`` over the cases
    present in both (``figure_cell``, without the head's own value), judged from the two builds'
    cases (two reads, one per build, ``pairs.case_pairs``) and their series' noise ``bands``
    (/compare/'s for this pair); ``config_ids``: of those configurations only."""
    pairs = case_pairs(base_id=base_id, head_id=head_id, machine_class=machine_class,
                       metrics=FIGURE_COLUMNS, config_ids=config_ids, fields=CASE_FIELDS)
    by_config: dict[int, list[tuple[dict, dict]]] = {}
    for _, o, n in pairs.both:
        by_config.setdefault(n["config_id"], []).append((o, n))
    return {config_id: (len(cases), [figure_cell(figure, None, cases, bands) for figure in FIGURES])
            for config_id, cases in by_config.items()}


def overview_class(*, machine_class: str, configs: dict[int, Config], config_ids: list[int] | None = None,
                   open_regressions: RegressionCounts | None = None, cells: ClassCells | None = None) -> ClassOverview | None:
    """The latest build of a class: per configuration, its figures (``ConfigSummary``) and their
    change against the previous build over the cases present in both: ``cells`` (the page's: stored
    by the pipeline, ``regressions.services.home_cells``), else judged here by ``class_cells`` without
    noise bands (each case's own stated noise and the thresholds); each row's open regressions from
    ``open_regressions`` (none without it)."""
    latest = build_summary_latest(machine_class=machine_class)
    if latest is None:
        return None
    previous = build_summary_previous(summary=latest)
    rows = ConfigSummary.objects.filter(build_id=latest.build_id, machine_class=machine_class)
    if config_ids is not None:
        rows = rows.filter(config_id__in=config_ids)
    regressions = open_regressions(machine_class=machine_class, build_id=latest.build_id) if open_regressions else {}
    out = ClassOverview(machine_class=machine_class, latest=latest, previous=previous,
                        copy=build_summary_copy(summary=latest) if previous is None else None,
                        build_label=build_label_on(build=latest.build, machine_class=machine_class))
    if previous is None and out.copy is None:
        out.elsewhere = build_summary_elsewhere(summary=latest)
    judged: dict[int, tuple[int, list[Cell]]] = {}
    if previous is not None:
        judged = (cells(machine_class=machine_class, base=previous.build, head=latest.build) if cells is not None else
                  class_cells(machine_class=machine_class, base_id=previous.build_id, head_id=latest.build_id,
                              bands=lambda series_id: {}, config_ids=config_ids))
    for summary in sorted(rows, key=lambda s: config_label(configs[s.config_id])):
        common, changes = judged.get(summary.config_id, (0, None))
        values = [figure_value(summary, figure) for figure in FIGURES]
        row_cells = ([replace(cell, value=value) for cell, value in zip(changes, values)] if changes is not None
                     else [Cell(figure=figure, value=value) for figure, value in zip(FIGURES, values)])
        out.rows.append(
            ConfigRow(
                config=configs[summary.config_id], label=config_label(configs[summary.config_id]), cases=summary.cases,
                common=common, cells=row_cells, open_regressions=regressions.get(summary.config_id, 0),
            )
        )
    return out


def overview_list(*, config_ids: list[int] | None = None, open_regressions: RegressionCounts | None = None,
                  cells: ClassCells | None = None, classes: list[str] | None = None,
                  configs: dict[int, Config] | None = None) -> list[ClassOverview]:
    """One block per machine class, the class with the newest build first; ``config_ids``
    limits the rows to some configurations. ``classes`` (``machine_class_list``) and ``configs``
    (every Config by id): the page's own reads, where it has them."""
    configs = configs if configs is not None else {c.id: c for c in Config.objects.all()}
    blocks = (overview_class(machine_class=mc, configs=configs, config_ids=config_ids, open_regressions=open_regressions,
                             cells=cells)
              for mc in (classes if classes is not None else machine_class_list()))
    return [b for b in blocks if b is not None]


def overview_trend(*, machine_class: str, since: dt.datetime | None, config_ids: list[int] | None = None,
                   configs: dict[int, Config] | None = None) -> dict:
    """The suite-level figures of every configuration of a machine class over builds since
    ``since``: ``{"configs": {config_id: label}, "points": {config_id: [point, ...]}, "builds": [ref, ...]}``, each point
    ``{"ref", "at", "version", "cases", <figure key>: value}``, oldest first; ``configs``: every Config
    by id, where the caller has read them."""
    rows = ConfigSummary.objects.filter(PLAIN_BUILD, machine_class=machine_class)
    if since is not None:
        rows = rows.filter(ordered_at__gte=since)
    if config_ids is not None:
        rows = rows.filter(config_id__in=config_ids)
    # Read as tuples, each figure's value taken as figure_value takes it (~2,000 rows at 90 days: no dict per row).
    stored = [f.key for f in FIGURES if f.key != "pass_rate"]
    rows = rows.order_by("ordered_at", "build_id").values_list(
        "config_id", "ordered_at", "build__git_sha", "build__local_label", "build__torch_version", "cases", "passed", *stored,
    )
    at = {key: 7 + i for i, key in enumerate(stored)}  # a figure's place in the row
    configs = configs if configs is not None else {c.id: c for c in Config.objects.all()}
    points: dict[int, dict[str, dict]] = {}  # config -> commit -> its point, in build order
    builds: dict[str, str] = {}  # every commit's ref, in build order
    for row in rows:
        config_id, ordered_at, git_sha, local_label, version, cases, passed = row[:7]
        ref = ref_for(git_sha=git_sha, local_label=local_label)
        # Two stored builds of one commit (a local measurement and an imported one, results.same_build)
        # are one build, not a before and after: one point, the one stored last, its place the first's.
        commit = git_sha if git_sha != "unknown" else ref
        point = {"ref": ref, "at": ordered_at, "version": version, "cases": cases}
        for figure in FIGURES:
            point[figure.key] = (passed / cases if cases else None) if figure.key == "pass_rate" else row[at[figure.key]]
        points.setdefault(config_id, {})[commit] = point
        builds[commit] = ref
    ordered = sorted(points, key=lambda c: config_label(configs[c]))
    return {"configs": {c: config_label(configs[c]) for c in ordered},
            "points": {c: list(points[c].values()) for c in ordered}, "builds": list(builds.values())}

