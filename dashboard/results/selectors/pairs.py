"""The one selection of a comparison (issue #34): two builds' cases on a machine class, paired by
series. /compare/ (page and API), the A/B page and the home page's class tables read their rows
here; ``contract.comparison`` judges them."""
from __future__ import annotations

from dataclasses import dataclass, field

from contract.comparison import repeat_sd
from contract.findings import BLOCK_TIMED_METRICS, sd_of_halfwidth
from django.db.models import TextField
from django.db.models.functions import Cast

from dashboard.results.aggregates import latest_per_series
from dashboard.results.models import Result
from dashboard.results.selectors.common import METRICS

ROW_FIELDS = ("id", "series_id", "config_id", "workload__name", "status", "compile_reference", "speedup_noise")
CASE_FIELDS = ("id", "series_id", "config_id", "status", "speedup_noise")  # enough to judge a case (no join)
METRIC_NAMES = tuple(m.name for m in METRICS)
# A field ``fields`` may name that is a JSON field's stored text, not decoded (/compare/ decodes a case's
# graph-break reasons only where the two builds' texts differ: 3,840 lists decoded were ~15 ms of a cold page).
TEXT_FIELDS = {"graph_breaks_text": Cast("graph_breaks", TextField())}


@dataclass
class CasePairs:
    """The cases of both builds (base row, head row, by series, in the head's order) and those of one only."""

    both: list[tuple[int, dict, dict]] = field(default_factory=list)
    only_base: list[dict] = field(default_factory=list)
    only_head: list[dict] = field(default_factory=list)


NOISY = frozenset(m.name for m in METRICS if m.noisy)


def build_results_by_series(*, build_id: int, machine_class: str, metrics: tuple[str, ...] = METRIC_NAMES,
                            config_ids: list[int] | None = None, fields: tuple[str, ...] = ROW_FIELDS) -> dict[int, dict]:
    """A build's cases on the class (of ``config_ids``, where given), one per series (the result
    stored last), with ``fields`` and ``metrics`` (default: every shown metric) and ``runs``: per timed metric, the
    values of every passing run of the build where it ran more than once (repeated runs: their
    spread is the case's own noise, ``contract.comparison.repeat_sd``), from the same read."""
    results = Result.objects.filter(build_id=build_id, series__machine_class=machine_class)
    if config_ids is not None:
        results = results.filter(config_id__in=config_ids)
    if texts := {name: TEXT_FIELDS[name] for name in fields if name in TEXT_FIELDS}:
        results = results.annotate(**texts)
    names = (*fields, *metrics)
    rows = [dict(zip(names, row)) for row in results.order_by("id").values_list(*names)]  # tuples: a third of values()' cost
    latest = latest_per_series(rows)
    repeated: dict[int, list[dict]] = {}
    if len(rows) > len(latest):  # some case ran more than once
        for row in rows:
            if row["status"] == "pass":
                repeated.setdefault(row["series_id"], []).append(row)
    timed = [name for name in metrics if name in NOISY]
    for series_id, row in latest.items():
        runs = repeated.get(series_id, ())
        row["runs"] = {name: [r[name] for r in runs] for name in timed} if len(runs) > 1 else {}
    return latest


def stated_sd(o: dict, n: dict) -> float | None:
    """The larger of both sides' stated speedup interval (``speedup_noise``) as an sd, the base's on a
    tie; None where neither states one: what ``own_sd`` adds to a block-timed metric's (read once per case)."""
    sd = sd_of_halfwidth(o["speedup_noise"])
    head = sd_of_halfwidth(n["speedup_noise"])
    return head if head is not None and (sd is None or head > sd) else sd


def own_sd(o: dict, n: dict, metric: str) -> float | None:
    """A case's own run-to-run sd of ``metric`` (pairs rows ``o``, ``n``): the repeated runs of
    both builds (``contract.comparison.repeat_sd``), and for a block-timed metric the larger of
    that and either side's stated speedup interval (``stated_sd``)."""
    sd = repeat_sd([o["runs"].get(metric, []), n["runs"].get(metric, [])]) if o["runs"] or n["runs"] else None
    if metric in BLOCK_TIMED_METRICS:  # max() of the present ones in this order, written out (/compare/: 1,920 cases x 5 metrics)
        stated = stated_sd(o, n)  # the larger of the two intervals first: the same max (none is NaN)
        if stated is not None and (sd is None or stated > sd):
            sd = stated
    return sd


def case_pairs(*, base_id: int, head_id: int, machine_class: str, metrics: tuple[str, ...] = METRIC_NAMES,
               config_ids: list[int] | None = None, fields: tuple[str, ...] = ROW_FIELDS) -> CasePairs:
    """Two builds' cases on the class: two reads, one per build, paired by series (``metrics``,
    ``config_ids``, ``fields``: as ``build_results_by_series``)."""
    read = {"machine_class": machine_class, "metrics": metrics, "config_ids": config_ids, "fields": fields}
    old = build_results_by_series(build_id=base_id, **read)
    new = build_results_by_series(build_id=head_id, **read)
    return CasePairs(both=[(s, old[s], n) for s, n in new.items() if s in old],
                     only_base=[o for s, o in old.items() if s not in new],
                     only_head=[n for s, n in new.items() if s not in old])
