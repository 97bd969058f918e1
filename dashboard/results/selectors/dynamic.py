"""Backed against unbacked dynamic shapes: per workload and build, unbacked speedup / backed
speedup (the unbacked gap) and unbacked / backed cold compile time, for one compile mode and dtype
on one machine class. Reads one ``DynamicSummary`` row per build (kept by ingest with the other
summary tables: each workload's gap and the build's geomeans, the cases themselves read for the
build shown only), not the results."""
from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from contract import colour_reasons as why
from contract import comparison
from contract.case_config import CaseConfig
from contract.findings import BETTER, TOO_NOISY, WITHIN_NOISE, TWO_RUNS_95, WORSE, judge, sd_of_halfwidth, too_noisy
from contract.metrics import BY_NAME
from dashboard.results.aggregates import geomean
from dashboard.results.models import BuildSummary, DynamicSummary, Series
from dashboard.results.selectors.common import config_lookups, ref_for
from dashboard.results.variants import PLAIN_BUILD

GAP_HIGHLIGHT = 0.05  # a ratio further than this from 1 is highlighted
DYNAMIC_REGIMES = ("backed", "unbacked")
# A ``DynamicSummary`` pair's fourth item: its unbacked case marked some dims (``dims=batch``) and no
# backed case of those dims was measured, so its backed side is the workload's backed case on every
# declared dim (docs/families.md, "What the pages show").
BACKED_EVERY_DIM = "backed on every dim"


def dynamic_pair_key(config: CaseConfig) -> str:
    """The identity of a ``DynamicSummary``: the configuration apart from its regime and device
    (``default/*/float32/*``): the backed and unbacked cases of each workload, on any device."""
    return CaseConfig.pattern(compile_mode=config.compile_mode, dtype=config.dtype, dims=config.dims)


def _dynamic_series(machine_class: str):
    return Series.objects.filter(machine_class=machine_class, **config_lookups(shape_regime__in=DYNAMIC_REGIMES))


@dataclass
class Side:
    status: str
    speedup: float | None
    compile_time_cold_s: float | None
    graph_break_count: int | None
    recompile_count: int | None
    speedup_noise: float | None = None  # its stated 95 % half-width (absent from summaries stored before it)
    export_s: float | None = None  # an exporting path's export time (path_phases.export_s; docs/compile-paths.md)


@dataclass
class Pair:
    workload: str
    backed: Side | None = None
    unbacked: Side | None = None
    # The 95 % band of cold compile time on this workload's series (the wider side's; /compare/'s
    # bands, ``pairs_compile_noise``): what the compile-time ratio is judged against. None: the threshold.
    compile_band: float | None = None
    backed_every_dim: bool = False  # the backed side marked every declared dim, the unbacked only some

    @property
    def gap(self) -> float | None:
        """Unbacked speedup / backed speedup, when both passed."""
        b, u = self.backed, self.unbacked
        if b and u and b.status == "pass" and u.status == "pass" and b.speedup and u.speedup:
            return u.speedup / b.speedup
        return None

    def _ratio(self, field: str) -> float | None:
        """Unbacked / backed of a side's ``field``, when both have it."""
        b, u = getattr(self.backed, field, None), getattr(self.unbacked, field, None)
        return u / b if b and u else None

    @property
    def compile_ratio(self) -> float | None:
        return self._ratio("compile_time_cold_s")

    @property
    def export_ratio(self) -> float | None:
        """Unbacked / backed export time (export and aot_inductor)."""
        return self._ratio("export_s")

    @property
    def export_tone(self) -> str:
        """The export-time ratio as ``compile_tone`` (export time is part of a path's cold compile:
        docs/compile-paths.md), against the same band."""
        return self._time_ratio_tone(self.export_ratio)

    def _time_ratio_tone(self, ratio: float | None) -> str:
        """An unbacked / backed time ratio by the one engine (``contract.comparison``): a change from
        1 past GAP_HIGHLIGHT and the series' cold-compile band (two measurements, as two runs) is
        worse (unbacked slower) or better; too noisy to track past the bound; else ''."""
        if ratio is None:
            return ""
        judged = comparison.judge(BY_NAME["compile_time_cold_s"], 1.0, ratio, threshold=GAP_HIGHLIGHT, noise=self.compile_band)
        return judged.tone if judged.tone in (comparison.WORSE, comparison.BETTER, comparison.TOO_NOISY) else ""

    @property
    def gap_sd(self) -> float | None:
        """The larger of the two sides' stated speedup noise (``speedup_noise``) as an sd: /compare/'s
        rule for two measurements (``within_sd``: either side's own noise)."""
        sds = [sd_of_halfwidth(s.speedup_noise) for s in (self.backed, self.unbacked) if s]
        return max((sd for sd in sds if sd is not None), default=None)

    @property
    def gap_word(self) -> str:
        """The one noise rule (``contract.findings.judge``) on the gap's distance from 1: ``too noisy
        to track`` (a side's sd past the bound: detection raises no gap finding on it either),
        ``within noise`` (not past GAP_HIGHLIGHT nor the two runs' 95 % band), ``worse`` (unbacked
        slower), ``better``; '' without a gap."""
        if self.gap is None:
            return ""
        sd = self.gap_sd
        bar = max(GAP_HIGHLIGHT, math.expm1(TWO_RUNS_95 * sd) if sd is not None and not too_noisy(sd) else 0.0)
        return judge(change=self.gap - 1, bar=bar, worse=self.gap < 1, sd=sd)

    @property
    def gap_tone(self) -> str:
        return {WORSE: "worse", BETTER: "better", TOO_NOISY: "too_noisy"}.get(self.gap_word, "")

    @property
    def gap_quiet(self) -> str:
        """What the gap's cell says instead of a colour: ``within noise`` past GAP_HIGHLIGHT, or
        ``too noisy to track``; '' otherwise."""
        word = self.gap_word
        if word == TOO_NOISY or (word == WITHIN_NOISE and abs(self.gap - 1) > GAP_HIGHLIGHT):
            return word
        return ""

    @property
    def gap_reason(self) -> str:
        """A coloured gap's tooltip: a level within one build, no finding (``contract.colour_reasons``)."""
        if self.gap_tone not in ("worse", "better"):
            return ""
        noisy = why.noisy_reason(self.gap_sd) if too_noisy(self.gap_sd) else ""
        return why.not_finding("; ".join(w for w in (why.LEVEL_GAP, noisy) if w))

    @property
    def compile_reason(self) -> str:
        """A coloured compile-time ratio's tooltip (as ``gap_reason``)."""
        return why.not_finding(why.LEVEL_COMPILE) if self.compile_tone in ("worse", "better") else ""

    @property
    def export_reason(self) -> str:
        return why.not_finding(why.LEVEL_COMPILE) if self.export_tone in ("worse", "better") else ""

    @property
    def compile_tone(self) -> str:
        """The compile-time ratio (unbacked / backed): worse when unbacked compiles slower (``_time_ratio_tone``)."""
        return self._time_ratio_tone(self.compile_ratio)

    @property
    def compile_quiet(self) -> str:
        """What the compile-time ratio's cell says instead of a colour (as ``gap_quiet``)."""
        if self.compile_tone == comparison.TOO_NOISY:
            return TOO_NOISY
        if not self.compile_tone and self.compile_ratio is not None and abs(self.compile_ratio - 1) > GAP_HIGHLIGHT:
            return WITHIN_NOISE
        return ""

    @property
    def highlighted(self) -> bool:
        return self.gap_tone in ("worse", "better") or self.compile_tone in ("worse", "better")


def pairs_compile_noise(*, pairs: list[Pair], machine_class: str, mode: str, dtype: str,
                        bands: Callable[[int], dict[str, float]], dims: tuple[str, ...] | None = None) -> None:
    """Sets each pair's ``compile_band``: the wider cold-compile band (``bands``: series id -> its
    bands, /compare/'s) of the workload's backed and unbacked series on the class (one read; with
    dims, a second for the backed series on every dim that ``backed_every_dim`` pairs stand against)."""
    series = list(Series.objects.filter(machine_class=machine_class,
                                        **config_lookups(compile_mode=mode, dtype=dtype, shape_regime__in=DYNAMIC_REGIMES, dims=dims),
                                        workload__name__in=[p.workload for p in pairs]).values_list("workload__name", "id"))
    every_dim = [p.workload for p in pairs if p.backed_every_dim]
    if dims and every_dim:
        series += Series.objects.filter(machine_class=machine_class,
                                        **config_lookups(compile_mode=mode, dtype=dtype, shape_regime="backed", dims=None),
                                        workload__name__in=every_dim).values_list("workload__name", "id")
    widest: dict[str, float] = {}
    for workload, series_id in series:
        band = bands(series_id).get("compile_time_cold_s")
        if band is not None:
            widest[workload] = max(band, widest.get(workload, 0.0))
    for p in pairs:
        p.compile_band = widest.get(p.workload)


def summary_pairs(pairs: list) -> list[Pair]:
    """``DynamicSummary.pairs`` (``[[workload, backed, unbacked], ...]``, a fourth item
    ``BACKED_EVERY_DIM`` where the backed side is on every dim) as pairs, in their order."""
    return [Pair(workload, Side(*backed) if backed else None, Side(*unbacked) if unbacked else None,
                 backed_every_dim=BACKED_EVERY_DIM in rest)
            for workload, backed, unbacked, *rest in pairs]


def pair_failure(backed, unbacked) -> str | None:
    """What kept a workload's gap from being measured: the side that did not pass and its status
    (``unbacked compile_error``), or ``None`` when both passed or a side was not measured."""
    for side, name in ((unbacked, "unbacked"), (backed, "backed")):
        status = side.status if isinstance(side, Side) else (side[0] if side else None)
        if status not in (None, "pass"):
            return f"{name} {status}"
    return None


@dataclass
class GapSummary:
    """One build's gaps in words: the geomean over the workloads where both regimes passed, and the
    extremes beside it, so that 0.123 and 8.010 never read as "no gap" through their geomean."""
    geomean: float | None  # over the gaps not too noisy to track (over all of them when every one is)
    count: int  # workloads where both passed
    too_noisy: int  # of those, gaps too noisy to track: left out of the geomean unless all are
    worst: Pair | None  # the smallest gap (unbacked slowest)
    best: Pair | None  # the largest gap (unbacked fastest), when above 1
    failed: list[tuple[str, str]]  # (workload, "unbacked compile_error")


def gap_summary(pairs: list[Pair]) -> GapSummary:
    measured = sorted((p for p in pairs if p.gap is not None), key=lambda p: p.gap)
    failed = [(p.workload, f) for p in pairs if (f := pair_failure(p.backed, p.unbacked))]
    # /compare/'s geomean rule (``comparison.pooling``): a gap whose sides' noise is past the bound is left
    # out, even one coloured for being past even that noise (a pooled row is judged by its noise, not its size)
    tracked = [p for p in measured if not too_noisy(p.gap_sd)]
    return GapSummary(
        geomean=geomean(p.gap for p in (tracked or measured)), count=len(measured), too_noisy=len(measured) - len(tracked),
        worst=measured[0] if measured else None,
        best=measured[-1] if measured and measured[-1].gap > 1 and len(measured) > 1 else None,
        failed=failed,
    )


def pairs_geomeans(pairs: list[Pair]) -> tuple[float | None, float | None]:
    """A build's geomean gap and compile-time ratio over its pairs (in their stored order)."""
    return geomean(p.gap for p in pairs), geomean(p.compile_ratio for p in pairs)


# The version of ``DynamicSummary.marks`` (``pairs_marks``): raise it when what a pair's marks say
# changes (``Pair.gap_quiet``'s rule, ``pair_failure``'s words), so the rows stored before are marked
# from their pairs on request again until a migration stores them anew.
MARKS_VERSION = 1


def pairs_marks(pairs: list) -> dict:
    """What the trends mark per workload besides its gap, from ``DynamicSummary.pairs``: the side
    that failed (``pair_failure``), the gap's quiet word (``Pair.gap_quiet``), the workloads backed on
    every dim. Stored with the pairs (``DynamicSummary.marks``), so that /dynamic/'s trends read them
    instead of judging every pair of every build in range on each request."""
    built = summary_pairs(pairs)
    return {"version": MARKS_VERSION,
            "failed": {workload: f for workload, backed, unbacked, *_ in pairs if (f := pair_failure(backed, unbacked))},
            "quiet": {p.workload: quiet for p in built if (quiet := p.gap_quiet)},
            "every_dim": [p.workload for p in built if p.backed_every_dim]}


@dataclass
class BuildGaps:
    build_id: int
    ref: str
    at: dt.datetime
    version: str = ""
    gaps: dict[str, float | None] = field(default_factory=dict)  # by workload name; None: not both passed
    failed: dict[str, str] = field(default_factory=dict)  # by workload name: "unbacked compile_error", ...
    quiet: dict[str, str] = field(default_factory=dict)  # by workload name: its gap "within noise" / "too noisy to track"
    backed_every_dim: set[str] = field(default_factory=set)  # workloads whose backed side is on every dim (``BACKED_EVERY_DIM``)
    geomean_gap: float | None = None
    geomean_compile_ratio: float | None = None


@dataclass
class DynamicGaps:
    workloads: list[str]
    builds: list[BuildGaps]  # oldest first


def dynamic_gaps(*, machine_class: str, mode: str, dtype: str, since: dt.datetime | None, build_ids: list[int] | None = None,
                 dims: tuple[str, ...] | None = None) -> DynamicGaps:
    """Every build of the class since ``since`` (or exactly ``build_ids``) with each workload's gap
    and the geomeans: the builds from ``BuildSummary``, then their ``DynamicSummary`` rows, no join."""
    workloads = sorted(set(_dynamic_series(machine_class).filter(
        **config_lookups(compile_mode=mode, dtype=dtype, dims=dims),
    ).values_list("workload__name", flat=True)))
    summaries = BuildSummary.objects.filter(PLAIN_BUILD, machine_class=machine_class)
    if build_ids is not None:
        summaries = summaries.filter(build_id__in=build_ids)
    elif since is not None:
        summaries = summaries.filter(ordered_at__gte=since)
    builds = {
        build_id: BuildGaps(build_id=build_id, ref=ref_for(git_sha=sha, local_label=label), at=at, version=version)
        for build_id, sha, label, at, version in summaries.order_by("ordered_at", "build_id").values_list(
            "build_id", "build__git_sha", "build__local_label", "ordered_at", "build__torch_version"
        )
    }
    stored = DynamicSummary.objects.filter(machine_class=machine_class, config_key=CaseConfig.pattern(compile_mode=mode, dtype=dtype, dims=dims))
    rows = stored.filter(build_id__in=list(builds)).values_list("build_id", "gaps", "geomean_gap", "geomean_compile_ratio", "marks")
    unmarked = []  # rows stored before their marks were (or by an older MARKS_VERSION): marked from their pairs
    for build_id, gaps, geomean_gap, geomean_compile_ratio, marks in rows:
        build = builds[build_id]
        build.gaps, build.geomean_gap, build.geomean_compile_ratio = gaps, geomean_gap, geomean_compile_ratio
        if marks is None or marks.get("version") != MARKS_VERSION:
            unmarked.append(build_id)
        else:
            _set_marks(build, marks)
    if unmarked:
        for build_id, pairs in stored.filter(build_id__in=unmarked).values_list("build_id", "pairs"):
            _set_marks(builds[build_id], pairs_marks(pairs or []))
    return DynamicGaps(workloads=workloads, builds=[b for b in builds.values() if b.gaps])


def _set_marks(build: BuildGaps, marks: dict) -> None:
    build.failed, build.quiet, build.backed_every_dim = marks["failed"], marks["quiet"], set(marks["every_dim"])


def dynamic_pairs(*, machine_class: str, mode: str, dtype: str, build_id: int, dims: tuple[str, ...] | None = None) -> list[Pair]:
    """One build's backed and unbacked cases per workload (the case of each regime stored last),
    the widest gap first (no gap last), then by workload."""
    stored = DynamicSummary.objects.filter(machine_class=machine_class, config_key=CaseConfig.pattern(compile_mode=mode, dtype=dtype, dims=dims),
                                           build_id=build_id).values_list("pairs", flat=True).first()
    return sorted(summary_pairs(stored or []), key=lambda p: (p.gap is None, p.gap or 0, p.workload))


def dynamic_options(*, machine_class: str) -> list[tuple[str, str, str]]:
    """The (compile mode, dtype, dims) measured both backed and unbacked on a machine class; dims
    ``""`` for every declared dim, else the names joined by commas (``batch``). Unbacked on some dims
    counts with backed on every dim of the same mode and dtype (``BACKED_EVERY_DIM``)."""
    regimes: dict[tuple[str, str, str], set] = {}
    for tags in _dynamic_series(machine_class).values_list("config__tags", flat=True).distinct():
        config = CaseConfig.from_document(tags)
        dims = ",".join(config.dims) if config.dims else ""
        regimes.setdefault((config.compile_mode, config.dtype, dims), set()).add(config.shape_regime)

    def paired(mode: str, dtype: str, dims: str) -> bool:
        found = regimes[(mode, dtype, dims)]
        return len(found) == 2 or (bool(dims) and "unbacked" in found and "backed" in regimes.get((mode, dtype, ""), ()))

    return sorted(k for k in regimes if paired(*k))
