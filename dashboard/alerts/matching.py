"""Which regressions a subscription wants: pure functions over plain values (no database).

Severity splits detection's findings in two:
- **breakage**: the compiled program changed for the worse, deterministically: a case that starts
  failing or fails differently, a new graph-break reason or more graph breaks, a new recompile
  (guard-failure) reason or more recompiles;
- **slowdown**: a measured figure got worse: a change point in a noisy metric (speedup, compiled
  latency, cold/warm compile time, compiled peak memory) or the unbacked/backed gap opening.
Improvements (and fixes) are never alerted; the caller only offers regressions.
"""
from __future__ import annotations

BREAKAGE = "breakage"
SLOWDOWN = "slowdown"
BOTH = "both"

# Regression.finding -> severity. tests/alerts/test_matching.py checks every finding is listed.
SEVERITY_OF_FINDING = {
    "started_failing": BREAKAGE,
    "status_changed": BREAKAGE,
    "new_graph_break": BREAKAGE,
    "more_graph_breaks": BREAKAGE,
    "new_recompile_reason": BREAKAGE,
    "more_recompiles": BREAKAGE,
    "change_point": SLOWDOWN,
    "dynamic_gap": SLOWDOWN,
}


def severity_of(finding: str) -> str:
    """A finding detection adds later counts as breakage: the deterministic kinds are the ones that grow."""
    return SEVERITY_OF_FINDING.get(finding, BREAKAGE)


def subscription_wants(subscription, *, finding: str, metric: str, magnitude: float | None,
                       machine_class: str, workload: str, size: str) -> bool:
    """Does ``subscription`` (anything with the filter attributes of ``Subscription``) want this
    regression? An empty list filter lets everything through. ``min_magnitude`` compares with the
    size of the change (``|magnitude|``, a fraction); findings without a magnitude (failures, graph
    breaks, recompiles) are not held back by it."""
    for allowed, value in ((subscription.machine_classes, machine_class), (subscription.workloads, workload),
                           (subscription.sizes, size), (subscription.metrics, metric)):
        if allowed and value not in allowed:
            return False
    if subscription.severity != BOTH and severity_of(finding) != subscription.severity:
        return False
    if subscription.min_magnitude and magnitude is not None and abs(magnitude) < subscription.min_magnitude:
        return False
    return True
