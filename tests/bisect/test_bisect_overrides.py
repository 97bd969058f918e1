"""Bisection over a variant's overrides (issue #31), the workers played by the test: the one of five
that matters, alone, or a pair that matters only together."""
from __future__ import annotations

import pytest

from dashboard.regressions.models import Bisection
from dashboard.regressions.services.bisect import bisection_start
from tests.bisect.planted import measure, no_broker, open_cases, plant_variant, slowed_by

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def queue(monkeypatch):
    return no_broker(monkeypatch)


def bisect_variant(value, *, rounds: int):
    base, variant, series = plant_variant()
    bisection = bisection_start(series=series, metric="compiled_latency_ms", good=base, bad=variant, kind="overrides",
                                requested_by="test", size="tiny")
    for _ in range(rounds):
        measure(bisection, value=value)
        for child in Bisection.objects.filter(parent=bisection, status="running"):
            measure(child, value=value)
        bisection.refresh_from_db()
    return bisection


def test_the_one_override_of_five_that_matters_alone():
    bisection = bisect_variant(slowed_by("C"), rounds=4)
    assert bisection.status == "done" and bisection.result["override"] == "env.TORCH_PTBENCH_TEST_C=1"
    assert bisection.result["alone"] is True and bisection.result["partner_search"] == "done"
    assert bisection.result["message"] == "override env.TORCH_PTBENCH_TEST_C=1 makes it bad on its own: 3 steps, 10 runs"
    [child] = bisection.partner_searches.all()
    # The partner search measured only base+C: its ends are the first search's base and A+B+C.
    assert child.runs.count() == 2 and child.steps[0]["decision"] == "bad" and child.high == 1


def test_a_pair_that_matters_only_together():
    bisection = bisect_variant(slowed_by("B", "D"), rounds=5)
    assert bisection.result["override"] == "env.TORCH_PTBENCH_TEST_D=1"  # the first prefix with both: A+B+C+D
    assert bisection.result["pair"] == ["env.TORCH_PTBENCH_TEST_D=1", "env.TORCH_PTBENCH_TEST_B=1"]
    assert bisection.result["message"].startswith("overrides env.TORCH_PTBENCH_TEST_D=1 and env.TORCH_PTBENCH_TEST_B=1 "
                                                  "make it bad together (neither does without the other)")
    assert not open_cases(bisection) and Bisection.objects.get(parent=bisection).status == "done"


def test_the_first_override_needs_no_partner_search():
    bisection = bisect_variant(slowed_by("A"), rounds=3)
    assert bisection.result["override"] == "env.TORCH_PTBENCH_TEST_A=1" and not bisection.partner_searches.exists()
