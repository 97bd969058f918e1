"""Backed against unbacked dynamic shapes: per workload and build, unbacked speedup / backed
speedup (the unbacked gap) and unbacked / backed cold compile time, for one compile mode and dtype
on one machine class. Reads the two regimes' series through ``result_series_build``."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from dashboard.results.aggregates import geomean
from dashboard.results.models import BuildSummary, Result, Series
from dashboard.results.selectors.common import ref_for
from dashboard.results.variants import PLAIN_BUILD

GAP_HIGHLIGHT = 0.05  # a ratio further than this from 1 is highlighted


@dataclass
class Side:
    status: str
    speedup: float | None
    compile_time_cold_s: float | None
    graph_break_count: int | None
    recompile_count: int | None


@dataclass
class Pair:
    workload: str
    backed: Side | None = None
    unbacked: Side | None = None

    @property
    def gap(self) -> float | None:
        """Unbacked speedup / backed speedup, when both passed."""
        b, u = self.backed, self.unbacked
        if b and u and b.status == "pass" and u.status == "pass" and b.speedup and u.speedup:
            return u.speedup / b.speedup
        return None

    @property
    def compile_ratio(self) -> float | None:
        b, u = self.backed, self.unbacked
        if b and u and b.compile_time_cold_s and u.compile_time_cold_s:
            return u.compile_time_cold_s / b.compile_time_cold_s
        return None

    @property
    def gap_tone(self) -> str:
        return _tone(self.gap, higher_is_better=True)

    @property
    def compile_tone(self) -> str:
        return _tone(self.compile_ratio, higher_is_better=False)

    @property
    def highlighted(self) -> bool:
        return any(r is not None and abs(r - 1) > GAP_HIGHLIGHT for r in (self.gap, self.compile_ratio))


def _tone(ratio: float | None, *, higher_is_better: bool) -> str:
    if ratio is None or abs(ratio - 1) <= GAP_HIGHLIGHT:
        return ""
    return "better" if (ratio > 1) == higher_is_better else "worse"


@dataclass
class BuildGaps:
    build_id: int
    ref: str
    at: dt.datetime
    version: str = ""
    pairs: dict[str, Pair] = field(default_factory=dict)  # by workload name

    @property
    def geomean_gap(self) -> float | None:
        return geomean(p.gap for p in self.pairs.values())

    @property
    def geomean_compile_ratio(self) -> float | None:
        return geomean(p.compile_ratio for p in self.pairs.values())


@dataclass
class DynamicGaps:
    workloads: list[str]
    builds: list[BuildGaps]  # oldest first


def dynamic_gaps(*, machine_class: str, mode: str, dtype: str, since: dt.datetime | None, build_ids: list[int] | None = None) -> DynamicGaps:
    """Every build of the class since ``since`` (or exactly ``build_ids``) with its backed and
    unbacked pairs: the builds from ``BuildSummary``, then the two regimes' results of those builds
    (``result_series_build``), no join."""
    series = {
        s["id"]: s
        for s in Series.objects.filter(
            machine_class=machine_class, config__compile_mode=mode, config__dtype=dtype,
            config__shape_regime__in=("backed", "unbacked"),
        ).values("id", "workload__name", "config__shape_regime")
    }
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
    rows = (
        Result.objects.filter(series_id__in=list(series), build_id__in=list(builds))
        .order_by("id")
        .values_list("build_id", "series_id", "status", "speedup", "compile_time_cold_s", "graph_break_count", "recompile_count")
    )
    for build_id, series_id, status, speedup, cold, breaks, recompiles in rows:
        s = series[series_id]
        pair = builds[build_id].pairs.setdefault(s["workload__name"], Pair(workload=s["workload__name"]))
        setattr(pair, s["config__shape_regime"], Side(status, speedup, cold, breaks, recompiles))
    workloads = sorted({s["workload__name"] for s in series.values()})
    return DynamicGaps(workloads=workloads, builds=[b for b in builds.values() if b.pairs])


def dynamic_options(*, machine_class: str) -> list[tuple[str, str]]:
    """The (compile mode, dtype) pairs measured both backed and unbacked on a machine class."""
    rows = (
        Series.objects.filter(machine_class=machine_class, config__shape_regime__in=("backed", "unbacked"))
        .values_list("config__compile_mode", "config__dtype", "config__shape_regime")
        .distinct()
    )
    regimes: dict[tuple[str, str], set] = {}
    for mode, dtype, regime in rows:
        regimes.setdefault((mode, dtype), set()).add(regime)
    return sorted(k for k, v in regimes.items() if len(v) == 2)
