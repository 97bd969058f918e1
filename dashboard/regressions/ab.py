"""The A/B page (issue #16): a base build against variants of it, over the cases present in both.

Each change is judged against its noise: within noise it is "no change" (grey), past it "better"
or "worse". A timed figure's noise is where two runs of one unchanged build differ 95 % of the time
(1.96 x sqrt(2) x the series' run-to-run sd from the noise model, ``dashboard.regressions.noise``:
its own history, else its machine class's prior, else the metric's default); counts (graph breaks,
recompiles) have no noise: any difference is a change. No band is narrower than ``NOISE_FLOOR``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from contract.findings import BLOCK_TIMED_METRICS, sd_of_halfwidth
from detection.replicates import MIN_SD
from dashboard.regressions.noise import TWO_RUNS_95, class_priors, series_noise_bands
from dashboard.results.aggregates import geomean, relative_change
from dashboard.results.models import Build, Config
from dashboard.results.selectors.common import METRICS, Metric, build_ref, config_label
from dashboard.results.selectors.compare import TOO_NOISY, build_results_by_series, noise_tone
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
    """One figure of the base and the variant, its change and whether it is past the noise, by
    /compare/'s rule (``noise_tone``: grey "no change" within it, grey TOO_NOISY past the bound;
    docs/noise-and-findings.md)."""
    if base is None or variant is None:
        return Cell(base, variant, None, noise)
    if not metric.noisy:
        change = variant - base
        return Cell(base, variant, change, None, noise_tone(metric, change, bar=0.0, noise=None) or NO_CHANGE)
    change = relative_change(base, variant)
    noise = max(noise or 0.0, NOISE_FLOOR)
    if change is None:
        return Cell(base, variant, None, noise)
    return Cell(base, variant, change, noise, noise_tone(metric, change, bar=noise, noise=noise, within_sd=within_sd))


def _row(base: dict, variant: dict, configs: dict[int, Config], noises: dict[str, float]) -> Row:
    both_pass = base["status"] == variant["status"] == "pass"
    stated = max((sd for sd in map(sd_of_halfwidth, (base["speedup_noise"], variant["speedup_noise"])) if sd is not None),
                 default=None)  # each side's own speedup interval
    cells = {
        m.name: judge(m, base[m.name] if both_pass else None, variant[m.name] if both_pass else None,
                      noises.get(m.name), stated if m.name in BLOCK_TIMED_METRICS else None)
        for m in AB_METRICS
    }
    return Row(variant["workload__name"], config_label(configs[variant["config_id"]]), variant["config_id"], base["status"],
               variant["status"], base["id"], variant["id"], cells)


def _geomean(config: str, rows: list[Row]) -> Geomean:
    """Per figure, the geomean of the base's and of the variant's values over the cases passing in
    both (totals for counts); its noise is the mean of the cases' noise (conservative: averaging
    cases would shrink it)."""
    passing = [r for r in rows if r.base_status == r.variant_status == "pass"]
    cells = {}
    for m in AB_METRICS:
        changed = [r.cells[m.name] for r in passing if r.cells[m.name].change is not None]
        present = [c for c in changed if c.tone != TOO_NOISY]  # too noisy to track: not in the geomean
        if changed and not present:  # every case is: so is the geomean (shown in words, not "–")
            cells[m.name] = Cell(None, None, None, None, TOO_NOISY)
        elif m.noisy:
            noises = [c.noise for c in present if c.noise is not None]
            cells[m.name] = judge(m, geomean(c.base for c in present), geomean(c.variant for c in present),
                                  sum(noises) / len(noises) if noises else None)
        else:
            cells[m.name] = judge(m, sum(c.base for c in present), sum(c.variant for c in present), None) if present \
                else Cell(None, None, None, None)
    return Geomean(config, len(passing), cells)


def ab_compare(*, base: Build, variant: Build, machine_class: str) -> VariantAB:
    """Every case of ``variant`` that ``base`` also has on ``machine_class`` (its latest result
    there), sorted by workload and configuration, and a geomean row per configuration."""
    configs = {c.id: c for c in Config.objects.all()}
    old = build_results_by_series(build_id=base.id, machine_class=machine_class)
    new = build_results_by_series(build_id=variant.id, machine_class=machine_class)
    out = VariantAB(variant=variant, ref=build_ref(variant), overrides=overrides_stored(variant).summary())
    priors = class_priors(machine_class=machine_class, upto=base)
    out.rows = sorted((_row(old[s], new[s], configs, series_noise_bands(series_id=s, metrics=AB_METRICS, priors=priors)) for s in new if s in old),
                      key=lambda r: (r.workload, r.config))
    out.only_base, out.only_variant = len(old.keys() - new.keys()), len(new.keys() - old.keys())
    by_config: dict[str, list[Row]] = {}
    for row in out.rows:
        by_config.setdefault(row.config, []).append(row)
    out.geomeans = [_geomean(label, rows) for label, rows in sorted(by_config.items())]
    return out


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
