"""Which regressions a subscription wants: pure, no database."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from dashboard.alerts.matching import BREAKAGE, SEVERITY_OF_FINDING, SLOWDOWN, severity_of, subscription_wants
from dashboard.regressions.models import Regression


def subscription(**filters):
    values = {"machine_classes": [], "workloads": [], "sizes": [], "metrics": [], "min_magnitude": None, "severity": "both"}
    return SimpleNamespace(**{**values, **filters})


SLOWDOWN_12 = {"finding": "change_point", "metric": "speedup", "magnitude": -0.12, "machine_class": "cpu",
               "workload": "mlp_loop", "size": "tiny"}
FAILURE = {"finding": "started_failing", "metric": "status", "magnitude": None, "machine_class": "gpu-h100",
           "workload": "resnet_train", "size": "full"}


def test_every_finding_detection_records_has_a_severity():
    assert set(Regression.Finding.values) == set(SEVERITY_OF_FINDING)
    assert {f for f, s in SEVERITY_OF_FINDING.items() if s == BREAKAGE} == {
        "started_failing", "status_changed", "new_graph_break", "more_graph_breaks", "new_recompile_reason", "more_recompiles"}
    assert {f for f, s in SEVERITY_OF_FINDING.items() if s == SLOWDOWN} == {"change_point", "dynamic_gap"}
    assert severity_of("a_finding_added_later") == BREAKAGE


def test_no_filters_take_everything():
    assert subscription_wants(subscription(), **SLOWDOWN_12) and subscription_wants(subscription(), **FAILURE)


@pytest.mark.parametrize(("filters", "slowdown", "failure"), [
    ({"machine_classes": ["cpu"]}, True, False),
    ({"machine_classes": ["gpu-h100", "gpu-a100"]}, False, True),
    ({"workloads": ["resnet_train"]}, False, True),
    ({"sizes": ["tiny"]}, True, False),
    ({"metrics": ["speedup", "compiled_latency_ms"]}, True, False),
    ({"metrics": ["status"]}, False, True),
    ({"min_magnitude": 0.10}, True, True),  # 12% passes; a failure has no magnitude and passes
    ({"min_magnitude": 0.20}, False, True),
    ({"severity": "breakage"}, False, True),
    ({"severity": "slowdown"}, True, False),
    ({"severity": "slowdown", "machine_classes": ["cpu"], "min_magnitude": 0.05}, True, False),
])
def test_each_filter(filters, slowdown, failure):
    assert subscription_wants(subscription(**filters), **SLOWDOWN_12) is slowdown
    assert subscription_wants(subscription(**filters), **FAILURE) is failure


def test_magnitude_compares_the_size_of_the_change():
    gap = {**SLOWDOWN_12, "finding": "dynamic_gap", "metric": "dynamic_gap", "magnitude": -0.16}
    assert subscription_wants(subscription(min_magnitude=0.15), **gap)
    assert not subscription_wants(subscription(min_magnitude=0.17), **gap)
