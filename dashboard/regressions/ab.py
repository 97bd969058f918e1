"""The A/B page (issue #16): a base build against variants of it, over the cases present in both.

Each change is judged against its noise: within noise it is "no change" (grey), past it "better"
or "worse". A timed figure's noise is where two runs of one unchanged build differ 95 % of the time
(1.96 x sqrt(2) x the series' run-to-run sd from the noise model, ``dashboard.regressions.noise``:
its newest builds up to the base, else its machine class's prior, else the metric's default: the
bands /compare/ reads, stored once per base, ``services.noise_bands``); counts (graph breaks,
recompiles) have no noise: any difference is a change. No band is narrower than ``NOISE_FLOOR``.
Rows are selected by ``results.selectors.pairs`` and judged by ``contract.comparison``, as on
/compare/ (issue #34: one comparison engine).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from contract import comparison
from contract.comparison import Judged
from detection.replicates import MIN_SD
from dashboard.regressions.board import regression_numbers
from dashboard.regressions.models import Regression
from dashboard.regressions.noise import TWO_RUNS_95
from dashboard.regressions.services.noise_bands import noise_bands_for_compare
from dashboard.results.models import Build, Config
from dashboard.results.selectors.common import METRICS, Metric, build_ref, config_label
from dashboard.results.selectors.pairs import case_pairs, own_sd
from dashboard.results.variants import is_variant_of, overrides_stored

AB_METRICS: tuple[Metric, ...] = tuple(m for m in METRICS if m.compared_in_ab)  # contract.metrics
SORT_KEYS = ("workload", "config") + tuple(m.name for m in AB_METRICS)
NO_CHANGE, BETTER, WORSE = "same", "better", "worse"
# The narrowest band of a timed figure: detection's floor of the run-to-run sd (``MIN_SD``, 0.2 %: a
# series that never moved, memory to the byte, is still taken to move that much), as two runs' 95 %
# band (0.55 %). Without it a series whose history never moved has a band of 0 and any byte is a
# change: peak memory 2.72 -> 2.72 GB (+0.1 %) was red (issue #27 item 4).
NOISE_FLOOR = TWO_RUNS_95 * MIN_SD


@dataclass
class Cell:
    base: float | None
    variant: float | None
    change: float | None  # relative for timed figures, the difference for counts
    noise: float | None  # relative; None for counts
    tone: str = ""  # NO_CHANGE, BETTER, WORSE, TOO_NOISY, or "" (not comparable)
    # The stored finding of this case and metric (the variant against its base, issue #42): its id and
    # numbers as every surface shows them (``board.regression_numbers``); None where there is none.
    finding: dict | None = None


@dataclass
class Row:
    workload: str
    config: str
    config_id: int
    base_status: str
    variant_status: str
    base_result_id: int
    variant_result_id: int
    cells: dict[str, Cell]

    @property
    def changed(self) -> bool:
        return self.base_status != self.variant_status or any(c.tone in (BETTER, WORSE) for c in self.cells.values())


@dataclass
class Geomean:
    config: str
    cases: int  # passing in both
    cells: dict[str, Cell]


@dataclass
class VariantAB:
    variant: Build
    ref: str
    overrides: str  # Overrides.summary()
    rows: list[Row] = field(default_factory=list)
    geomeans: list[Geomean] = field(default_factory=list)
    only_base: int = 0
    only_variant: int = 0


def judge(metric: Metric, base: float | None, variant: float | None, noise: float | None,
          within_sd: float | None = None) -> Cell:
    """One figure of the base and the variant, judged by the one engine (``contract.comparison.judge``,
    /compare/'s rule with no threshold and the band floored at ``NOISE_FLOOR``: grey "no change"
    within it, grey TOO_NOISY past the bound; docs/noise-and-findings.md)."""
    if base is None or variant is None:
        return Cell(base, variant, None, noise)
    return _cell(metric, comparison.judge(metric, base, variant, noise=noise, floor=NOISE_FLOOR, within_sd=within_sd))


def _cell(metric: Metric, judged: Judged) -> Cell:
    """The A/B page's cell of a judged change: a count's change is its difference."""
    if not metric.noisy:
        return Cell(judged.old, judged.new, judged.difference, None, judged.tone)
    if judged.old is None or judged.new is None:  # a pooled row with no case (or every case too noisy)
        return Cell(judged.old, judged.new, None, None, judged.tone)
    return Cell(judged.old, judged.new, judged.change, judged.noise, judged.tone)


def _row(base: dict, variant: dict, configs: dict[int, Config], noises: dict[str, float]) -> Row:
    both_pass = base["status"] == variant["status"] == "pass"
    cells = {
        m.name: judge(m, base[m.name] if both_pass else None, variant[m.name] if both_pass else None,
                      noises.get(m.name), own_sd(base, variant, m.name))
        for m in AB_METRICS
    }
    return Row(variant["workload__name"], config_label(configs[variant["config_id"]]), variant["config_id"], base["status"],
               variant["status"], base["id"], variant["id"], cells)


def _geomean(config: str, rows: list[Row]) -> Geomean:
    """Per figure, ``contract.comparison.pooled`` over the cases passing in both: the geomeans of the
    base's and of the variant's values (totals for counts), less the cases too noisy to track,
    judged against the mean of the cases' noise."""
    passing = [r for r in rows if r.base_status == r.variant_status == "pass"]
    cells = {}
    for m in AB_METRICS:
        cases = [Judged(c.base, c.variant, c.change, None, c.noise, c.tone) for c in (r.cells[m.name] for r in passing)]
        cells[m.name] = _cell(m, comparison.pooled(m, cases, floor=NOISE_FLOOR))
    return Geomean(config, len(passing), cells)


def ab_compare(*, base: Build, variant: Build, machine_class: str) -> VariantAB:
    """Every case of ``variant`` that ``base`` also has on ``machine_class`` (its latest result
    there), sorted by workload and configuration, and a geomean row per configuration."""
    configs = {c.id: c for c in Config.objects.all()}
    pairs = case_pairs(base_id=base.id, head_id=variant.id, machine_class=machine_class)
    out = VariantAB(variant=variant, ref=build_ref(variant), overrides=overrides_stored(variant).summary())
    bands = noise_bands_for_compare(machine_class=machine_class, base=base, head=variant)  # /compare/'s
    out.rows = sorted((_row(o, n, configs, bands(s)) for s, o, n in pairs.both),
                      key=lambda r: (r.workload, r.config))
    out.only_base, out.only_variant = len(pairs.only_base), len(pairs.only_head)
    by_config: dict[str, list[Row]] = {}
    for row in out.rows:
        by_config.setdefault(row.config, []).append(row)
    out.geomeans = [_geomean(label, rows) for label, rows in sorted(by_config.items())]
    _with_findings(out.rows, base=base, variant=variant, machine_class=machine_class)
    return out


def _with_findings(rows: list[Row], *, base: Build, variant: Build, machine_class: str) -> None:
    """Each cell with a stored finding of the variant against its base (detection's, with an id) gets
    it, and shows the finding's numbers: the same on /ab/, /regressions/ and the verdict."""
    stored = {(r.series.workload.name, r.series.config_id, r.metric): r for r in Regression.objects.filter(
        first_bad_build=variant, last_good_build=base, series__machine_class=machine_class, kind=Regression.Kind.REGRESSION,
    ).select_related("series__workload")}
    for row in rows:
        for name, cell in row.cells.items():
            regression = stored.get((row.workload, row.config_id, name))
            if regression is not None:
                numbers = regression_numbers(regression)
                cell.finding = {"id": regression.id, "text": numbers.change_text, "noise": numbers.noise,
                                "values": numbers.values_text, "status": regression.status}


def ab_rows_select(*, rows: list[Row], workload: str = "", config: str = "", only_changed: bool = False,
                   sort: str = "", descending: bool = False) -> list[Row]:
    """The rows a filter keeps (workload: a part of its name; config: its label), sorted by a
    column (a figure sorts by its change, missing values last)."""
    kept = [r for r in rows if workload.lower() in r.workload.lower() and (not config or r.config == config)
            and (r.changed or not only_changed)]
    if sort in ("", "workload", "config"):
        key = (lambda r: (r.config, r.workload)) if sort == "config" else (lambda r: (r.workload, r.config))
        return sorted(kept, key=key, reverse=descending)
    present = [r for r in kept if r.cells[sort].change is not None]
    missing = [r for r in kept if r.cells[sort].change is None]
    return sorted(present, key=lambda r: r.cells[sort].change, reverse=descending) + missing


def ab_variants_of(*, base: Build) -> list[Build]:
    """The stored variants of a build: same sha, overrides set, a label derived from the base's
    (``variants.is_variant_of``: an imported base's variants are the imported ones)."""
    variants = Build.objects.filter(git_sha=base.git_sha).exclude(overrides={}).order_by("local_label")
    return [b for b in variants if is_variant_of(b, base)]


def ab_variant_list(*, limit: int = 200) -> list[Build]:
    """Every variant build, newest first (the A/B page without a base)."""
    return list(Build.objects.exclude(overrides={}).order_by("-ordered_at", "local_label")[:limit])
