"""The one selection of a comparison (issue #34): two builds' cases on a machine class, paired by
series. /compare/ (page and API), the A/B page and the home page's class tables read their rows
here; ``contract.comparison`` judges them."""
from __future__ import annotations

from dataclasses import dataclass, field

from dashboard.results.aggregates import latest_per_series
from dashboard.results.models import Result
from dashboard.results.selectors.common import METRICS

ROW_FIELDS = ("id", "series_id", "config_id", "workload__name", "status", "compile_reference", "speedup_noise",
              *(m.name for m in METRICS))


@dataclass
class CasePairs:
    """The cases of both builds (base row, head row, by series, in the head's order) and those of one only."""

    both: list[tuple[int, dict, dict]] = field(default_factory=list)
    only_base: list[dict] = field(default_factory=list)
    only_head: list[dict] = field(default_factory=list)


def build_results_by_series(*, build_id: int, machine_class: str) -> dict[int, dict]:
    """A build's cases on the class, one per series (the result stored last)."""
    rows = (Result.objects.filter(build_id=build_id, series__machine_class=machine_class).order_by("id")
            .values(*ROW_FIELDS))
    return latest_per_series(rows)


def case_pairs(*, base_id: int, head_id: int, machine_class: str) -> CasePairs:
    """Two builds' cases on the class: two reads, one per build, paired by series."""
    old = build_results_by_series(build_id=base_id, machine_class=machine_class)
    new = build_results_by_series(build_id=head_id, machine_class=machine_class)
    return CasePairs(both=[(s, old[s], n) for s, n in new.items() if s in old],
                     only_base=[o for s, o in old.items() if s not in new],
                     only_head=[n for s, n in new.items() if s not in old])
