"""The metric registry: every metric a result carries, described once (issue #34; docs/architecture.md,
"Metrics"). Detection, the selectors, the pages and charts, alerts, A/B, the API, the run document's
bounds and the runner's summary read it instead of keeping their own lists.

A metric is ``Metric``: its name (a key of a result's ``metrics``, and while metrics are columns a
column of ``Result``), unit, direction, how it aggregates across cases, whether it is noisy (and
timed in the runner's interleaved blocks, or host work), detection's noise default and floor, its
labels and the bound of its value. Adding a tracked metric touches this file, the code that
measures it and (while metrics are columns) the model and its migration.

Pure Python: no Django, no torch.
"""
from __future__ import annotations

from dataclasses import dataclass

from contract.phases import COMPILE_SIDES, PHASES

HIGHER_IS_BETTER = "higher_is_better"  # detection's own words for a direction (detection.types)
LOWER_IS_BETTER = "lower_is_better"

# How a metric is combined across the cases of one configuration (the summaries, the overview).
GEOMEAN, MEAN, TOTAL = "geomean", "mean", "total"

_MS = 1e9  # the bound of one call's time in ms: 11.6 days


@dataclass(frozen=True)
class Summary:
    """How a metric appears in a configuration's summary (``ConfigSummary``) and on the overview."""

    field: str  # the summary's field
    how: str  # GEOMEAN, MEAN or TOTAL: means and geomeans over passing cases, totals over every case
    label: str = ""  # the overview's column title; "" where the overview does not show it
    # A relative change this large colours the overview's cell, strongly at the second.
    thresholds: tuple[float, float] = (0.02, 0.05)


@dataclass(frozen=True)
class Metric:
    """One metric of a result."""

    name: str
    unit: str  # "x", "ms", "s", "bytes", "" (a count or a plain number): also its formatting kind
    label: str  # as the pages name it ("compile cold")
    short_label: str = ""  # a line of its chart ("cold"); the label when empty
    direction: str = LOWER_IS_BETTER
    bound: float | None = None  # the largest value a document may carry (contract.values)
    shown: bool = False  # in the pages' per-case tables, the compare page and the API's series
    tracked: bool = False  # watched by detection, alerted on
    noisy: bool = True  # False: a count, it changes or it doesn't
    block_timed: bool = False  # timed in the runner's interleaved blocks, whose scatter is speedup_noise
    host_work: bool = False  # host work in every case: follows the host CPU's speed
    host_sensitive: bool = False  # follows the host's speed in a host-bound case (dashboard.results.host)
    referenced: bool = False  # comparable only between results of one compile reference (results.compile_reference)
    # Its place in a side of /dynamic/'s backed / unbacked pairs, after the status (DynamicSummary.pairs
    # stores each side as a list in this order: a new one takes the next number, none is renumbered); 0: not there.
    dynamic_side: int = 0
    admin: bool = False  # a column of the admin's result lists
    noise_default: float = 0.02  # detection's run-to-run sd before anything is known of a series
    floor: float = 0.05  # the smallest relative change the short-history rule calls bad
    # The smallest factor (either way) a young series (at most two builds before a change, one run each:
    # detection.young_change_passes) is regressed by, beside 5 x the class prior: past every swing between
    # runs of one unchanged build in the stored real histories (speedup 1.39x on a Hugging Face model).
    young_factor: float = 1.5
    chart: str = ""  # the workload page's chart it is a line of (dashboard.web.charts.SERIES_CHARTS)
    band: str | None = None  # that line's band: "noise" (speedup_noise), "samples" (timing samples)
    summary: Summary | None = None
    compared_in_ab: bool = False  # a column of the A/B page
    # Where a result keeps it when it is no column of its own: a path into a JSON field
    # ("compile_phases.cold.phases.dynamo"); "" for a column (and a key of the document's metrics).
    source: str = ""
    # Its role in detection: "" alarms (raises findings of its own, when tracked); the name of a total
    # (a compile phase: its compile's total) explains that total's findings and raises none on its own.
    # A sub-second phase of a 14-25 s compile moves by itself (docs/detection.md, "Phases explain").
    explains: str = ""
    # A metric timed beside it in the same interleaved blocks (compiled latency: eager latency): a change
    # both share (the GPU's clocks, a shared GPU, a slower host) is the machine's, which the ratio of the
    # two (speedup) cancels; detection and the verdicts hold such a change back (docs/detection.md).
    shared_with: str = ""

    @property
    def higher_is_better(self) -> bool:
        return self.direction == HIGHER_IS_BETTER

    @property
    def line_label(self) -> str:
        return self.short_label or self.label

    def worse(self, change: float | None) -> bool:
        """Whether a change (new - old, or new / old - 1) is the wrong way for this metric."""
        return change is not None and (change < 0 if self.higher_is_better else change > 0)


_COMPILE_OVERVIEW = (0.05, 0.10)  # compile time's noise: its overview cells colour only past 5 % / 10 %

# Every metric, in the order the pages show them.
METRICS: tuple[Metric, ...] = (
    Metric("speedup", "x", "speedup", direction=HIGHER_IS_BETTER, bound=1e6, shown=True, tracked=True,
           block_timed=True, host_sensitive=True, chart="speedup", band="noise", compared_in_ab=True, dynamic_side=1, admin=True,
           summary=Summary("speedup_geomean", GEOMEAN, "geomean speedup")),
    Metric("speedup_noise", "", "speedup's 95 % half-width", bound=1e6, dynamic_side=5),
    Metric("compiled_latency_ms", "ms", "latency", "compiled", bound=_MS, shown=True, tracked=True, block_timed=True,
           host_sensitive=True, chart="latency", band="samples", compared_in_ab=True, shared_with="eager_latency_ms"),
    Metric("eager_latency_ms", "ms", "eager latency", "eager", bound=_MS, chart="latency", band="samples"),
    # Cold compile time is host work measured once per run: on the lent GPU VMs, runs of one unchanged
    # build spread with an sd of 6-15 % per workload (ten runs of three workloads on one H100: 10.6, 12.8,
    # 15.4 %, bench/results/history and bench/compile_spread.py; two cases at once: 5.6-7.1 %,
    # bench/results/compile-noise), so its default is the noisiest measured, 15 %. (20 % hid a +94 %
    # compile-time change after four earlier builds: 2.97 sd.) Its floor is the HUD bot's 15 %.
    Metric("compile_time_cold_s", "s", "compile cold", "cold", bound=1e7, shown=True, tracked=True, host_work=True,
           noise_default=0.15, floor=0.15, chart="compile", compared_in_ab=True, dynamic_side=2, admin=True,
           summary=Summary("compile_time_cold_mean", MEAN, "mean compile time, cold", _COMPILE_OVERVIEW)),
    Metric("compile_time_warm_s", "s", "compile warm", "warm", bound=1e7, shown=True, tracked=True, host_work=True,
           noise_default=0.15, floor=0.15, chart="compile",
           summary=Summary("compile_time_warm_mean", MEAN, "mean compile time, warm", _COMPILE_OVERVIEW)),
    # A compile beside a reference (runner.engine.compile_pairs, both main threads on one core): on the
    # lent H100 with two cases per host one pair's CPU-time ratio varied 0.7-1.4 % run to run, the mean
    # of 3 0.2-0.8 %; the default covers a one-pair measurement, rounded up. Steady enough (sd <= 1.4 %)
    # that 5 % more compile work is real.
    Metric("compile_cpu_ratio", "x", "compile CPU vs reference", "CPU ratio", bound=1e6, shown=True, tracked=True,
           noise_default=0.015, young_factor=1.1, chart="compile-cpu", referenced=True),
    Metric("compiled_peak_memory_bytes", "bytes", "peak memory", "compiled peak", bound=2**50, shown=True,
           tracked=True, chart="memory", compared_in_ab=True),
    Metric("eager_peak_memory_bytes", "bytes", "eager peak memory", bound=2**50),
    # Eager peak over compiled peak, computed at ingest (dashboard.results.services): no document carries it.
    Metric("memory_compression", "x", "memory compression", "compression", direction=HIGHER_IS_BETTER, shown=True,
           chart="compression", summary=Summary("memory_compression_geomean", GEOMEAN, "memory compression")),
    # Counts: at most 10,000 each, so that x 100,000 results a summary's 32-bit total still holds.
    Metric("graph_break_count", "", "graph breaks", bound=10_000, shown=True, noisy=False, chart="breaks",
           compared_in_ab=True, dynamic_side=3, admin=True, summary=Summary("graph_breaks", TOTAL, "graph breaks")),
    Metric("unique_graphs", "", "unique graphs", bound=10_000, noisy=False),
    Metric("recompile_count", "", "recompiles", bound=10_000, shown=True, noisy=False, chart="breaks",
           compared_in_ab=True, dynamic_side=4, admin=True, summary=Summary("recompiles", TOTAL)),
    Metric("accuracy_max_abs_error", "", "accuracy, max abs error", bound=1e300, noisy=False),
    Metric("accuracy_max_rel_error", "", "accuracy, max rel error", bound=1e300, noisy=False),
)
# Each phase of the cold and of the warm compile (contract.phases, docs/explain.md), watched by detection
# as compile time is: host work, its noise default and floor compile time's. Kept in Result.compile_phases,
# not a column. The cold compile's are compile_phase_<phase>_s, the warm compile's compile_phase_warm_<phase>_s
# (their totals are compile_time_cold_s and compile_time_warm_s).
PHASE_METRIC_PREFIX = {"cold": "compile_phase_", "warm": "compile_phase_warm_"}
COMPILE_TOTALS = {"cold": "compile_time_cold_s", "warm": "compile_time_warm_s"}  # each compile's total metric


def phase_metric(side: str, phase: str) -> str:
    """The tracked metric of one phase of the cold or warm compile ("compile_phase_warm_dynamo_s")."""
    return f"{PHASE_METRIC_PREFIX[side]}{phase}_s"


METRICS += tuple(
    Metric(phase_metric(side, phase.name), "s", f"compile {side}: {phase.label}", phase.label, bound=None, tracked=True,
           host_work=True, noise_default=0.15, floor=0.15, source=f"compile_phases.{side}.phases.{phase.name}",
           explains=COMPILE_TOTALS[side])
    for side in COMPILE_SIDES for phase in PHASES)
BY_NAME: dict[str, Metric] = {m.name: m for m in METRICS}
SOURCED: dict[str, str] = {m.name: m.source for m in METRICS if m.source}  # metric -> its JSON path

SHOWN: tuple[Metric, ...] = tuple(m for m in METRICS if m.shown)  # the pages' per-case metrics, in order
TRACKED: tuple[Metric, ...] = tuple(m for m in METRICS if m.tracked)  # what detection watches
ALARMING: tuple[Metric, ...] = tuple(m for m in TRACKED if not m.explains)  # what raises findings and verdicts
# A total's explaining metrics (compile_time_cold_s -> its phases), attached to the total's findings.
EXPLAINED_BY: dict[str, tuple[str, ...]] = {
    total: tuple(m.name for m in TRACKED if m.explains == total) for total in dict.fromkeys(m.explains for m in TRACKED if m.explains)}
SUMMARIZED: tuple[Metric, ...] = tuple(m for m in METRICS if m.summary)  # a configuration's summary figures
BLOCK_TIMED = frozenset(m.name for m in METRICS if m.block_timed)
HOST_WORK = frozenset(m.name for m in METRICS if m.host_work)
HOST_SENSITIVE: tuple[str, ...] = tuple(m.name for m in METRICS if m.host_sensitive)
REFERENCED = frozenset(m.name for m in METRICS if m.referenced)
# A side of /dynamic/'s pairs as DynamicSummary.pairs stores it: the status, then its metrics by place.
DYNAMIC_SIDE: tuple[str, ...] = ("status", *(m.name for m in sorted((m for m in METRICS if m.dynamic_side),
                                                                     key=lambda m: m.dynamic_side)))
ADMIN: tuple[str, ...] = tuple(m.name for m in METRICS if m.admin)  # the admin's result columns, in order
BOUNDS: dict[str, float] = {m.name: m.bound for m in METRICS if m.bound is not None}
COMPILE_TIMES: tuple[Metric, ...] = tuple(m for m in METRICS if m.chart == "compile")  # one cell: "cold / warm"


def phase_of(name: str) -> tuple[str, str] | None:
    """(side, phase) of a compile phase's metric ("compile_phase_warm_dynamo_s" -> ("warm", "dynamo")), else None."""
    source = SOURCED.get(name, "")
    parts = source.split(".")
    if len(parts) == 4 and parts[0] == "compile_phases" and parts[2] == "phases":
        return parts[1], parts[3]
    return None


def chart_lines(chart: str) -> tuple[Metric, ...]:
    """The metrics drawn as lines of the workload page's chart ``chart``, in order."""
    return tuple(m for m in METRICS if m.chart == chart)
