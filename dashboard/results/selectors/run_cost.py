"""Where a run's time went: each case's wall time by step (``Result.cost``, keys from
contract.phases.COST_STEPS; docs/explain.md), summed over the run and per case."""
from __future__ import annotations

from dataclasses import dataclass, field

from contract.phases import COST_STEPS
from dashboard.results.models import Run

CASES_SHOWN = 200  # the costliest cases listed


@dataclass
class RunCost:
    steps: list[tuple[str, str]]  # (step, label) present in some case, in the registry's order
    totals: dict[str, float] = field(default_factory=dict)  # step -> seconds over the run
    total_s: float = 0.0
    cases: list[dict] = field(default_factory=list)  # {"label", "result_id", "cost", "total_s"}, costliest first
    measured: int = 0  # cases with a cost

    @property
    def rows(self) -> list[dict]:
        return [{"step": step, "label": label, "seconds": self.totals[step],
                 "share": self.totals[step] / self.total_s if self.total_s else None} for step, label in self.steps]


def run_cost(*, run: Run) -> RunCost:
    rows = run.results.exclude(cost={}).select_related("workload", "config").only(
        "id", "cost", "workload__name", "config__key", "config__tags")
    totals: dict[str, float] = {}
    cases = []
    for result in rows:
        cost = {k: v for k, v in (result.cost or {}).items() if isinstance(v, (int, float))}
        for step, seconds in cost.items():
            totals[step] = totals.get(step, 0.0) + seconds
        cases.append({"label": f"{result.workload.name} {result.config}", "result_id": result.id, "cost": cost,
                      "total_s": sum(cost.values())})
    cases.sort(key=lambda c: -c["total_s"])
    steps = [(step, label) for step, label in COST_STEPS if step in totals]
    return RunCost(steps=steps, totals=totals, total_s=sum(totals.values()), cases=cases[:CASES_SHOWN], measured=len(cases))
