"""The compare page's tables as flat rows, for its CSV and JSON export."""
from __future__ import annotations

from dashboard.results.selectors.common import METRICS, ref_for
from dashboard.results.selectors.compare import Comparison, CompareRow


def compare_tables(*, comparison: Comparison, rows: list[CompareRow]) -> dict[str, list[dict]]:
    """``cases``: every case in both builds (the page's filter and sort), each metric's base,
    head and relative change; ``only_in_base`` / ``only_in_head``: the one-sided cases."""
    base = ref_for(git_sha=comparison.base.git_sha, local_label=comparison.base.local_label)
    head = ref_for(git_sha=comparison.head.git_sha, local_label=comparison.head.local_label)
    cases = []
    for row in rows:
        out = {"machine_class": comparison.machine_class, "base": base, "head": head, "workload": row.workload,
               "config": row.config, "base_status": row.base_status, "head_status": row.head_status,
               "flags": ",".join(sorted(row.flags))}
        for metric in METRICS:
            change = row.changes.get(metric.name)
            out[f"{metric.name}_base"] = change.old if change else None
            out[f"{metric.name}_head"] = change.new if change else None
            out[f"{metric.name}_change"] = change.change if change else None
        cases.append(out)

    def one_sided(items, build) -> list[dict]:
        return [{"build": build, "workload": i.workload, "config": i.config, "status": i.status} for i in items]

    return {"cases": cases, "only_in_base": one_sided(comparison.only_base, base),
            "only_in_head": one_sided(comparison.only_head, head)}
