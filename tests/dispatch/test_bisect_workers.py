"""Bisection (issue #31) with real processes: Redis, PostgreSQL, the dashboard-side worker (which
moves the bisection on as its runs end) and a runner worker measuring each attempt through the
class's queue. The builds are variants of the worker's build (its interpreter runs them), the planted
change a 2 ms sleep per call under some environment overrides (tests/dispatch/workloads.py: EnvSlowed),
measured with the eager backend: no compile. The one override of five that matters, found through
real workers (two steps, then the override alone), is the run of ``bench/bisect_variants.py`` that
tests/bench/test_benchmarks_run.py makes and checks: the same services, the same workload."""
from __future__ import annotations

import pytest

from contract.variants import Overrides
from dashboard.alerts.models import Delivery, Subscription
from dashboard.regressions.models import Bisection, Regression
from dashboard.regressions.services.bisect import bisection_start
from dashboard.results.models import Result, Run
from dashboard.results.services import variant_get_or_create
from tests.fixtures.workers import wait_for
from tests.dispatch.test_workers import finished, reported_build, request

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
WORKLOAD = "tests.dispatch.workloads:EnvSlowed"


def ended(bisection_id):
    from dashboard.regressions.selectors.bisect import bisection_busy

    bisection = Bisection.objects.get(pk=bisection_id)
    return None if bisection_busy(bisection=bisection) else bisection


def values_used(bisection) -> int:
    """The values a bisection decided on: its ends' (when reproduced) and each step's."""
    ends = len(bisection.result["good_values"]) + len(bisection.result["bad_values"])
    return ends + sum(len(step["values"]) for step in bisection.steps)


def test_a_chain_of_six_variants_is_bisected_to_the_third(start_workers, queue_name):
    """Two runner workers on the class's queue: a step's two attempts (and the ends' four runs)
    are measured side by side, as on a class of two machines."""
    runner, dashboard = start_workers
    dashboard()
    base = reported_build(runner("w0"), queue_name)
    runner("w1")
    chain = [variant_get_or_create(base=base, overrides=Overrides.build(None, {"TORCH_PTBENCH_TEST_STEP": str(k)}))
             for k in range(1, 7)]
    # The weekly run measured the first and the last; the regression between them, as detection states one.
    for requested in [request(build, queue_name, [WORKLOAD], regimes=["static"]) for build in (chain[0], chain[-1])]:
        run = wait_for(lambda r=requested: finished(r.id), timeout=180, what="a measurement of an end")
        assert run.status == Run.Status.COMPLETED
    first, last = (Result.objects.get(build=b, run__reason="requested") for b in (chain[0], chain[-1]))
    assert last.compiled_latency_ms > 5 * first.compiled_latency_ms  # the sleep is there
    regression = Regression.objects.create(
        series=last.series, metric="compiled_latency_ms", finding=Regression.Finding.CHANGE_POINT, first_bad_build=chain[-1],
        last_good_build=chain[0], raised_build=chain[-1], magnitude=-5.0, details={"message": "planted"})
    Subscription.objects.create(name="on-call", channel="email", target="oncall@example.com")

    bisection = bisection_start(regression=regression, requested_by="test")
    assert bisection.builds == [b.id for b in chain] and bisection.backend == "eager" and bisection.size == "tiny"
    bisection = wait_for(lambda: ended(bisection.id), timeout=540, what="the bisection to end")

    assert bisection.status == Bisection.Status.DONE, bisection.result
    assert bisection.culprit_build == chain[2] and (bisection.low, bisection.high) == (1, 2)
    assert [(s["index"], s["decision"]) for s in bisection.steps] == [(2, "bad"), (1, "good")]
    runs = Run.objects.filter(bisection_attempt__bisection=bisection)
    # Two attempts at each end and at each step (8); a step whose values sat between the ends past
    # noise (a loaded CI host) earns more, and every run requested is one whose value was used.
    assert runs.count() >= 8 and runs.count() == values_used(bisection) == bisection.result["runs"]
    assert {r.reason for r in runs} == {"bisection"} and {r.status for r in runs} == {"completed"}
    regression.refresh_from_db()
    assert regression.culprit_build == chain[2] and regression.culprit_range == ""  # variants of one commit
    # Subscribers hear of it once; the bisection runs raised no finding of their own.
    wait_for(lambda: Delivery.objects.filter(bisection=bisection).exists(), timeout=60, what="the bisection's alert")
    assert Delivery.objects.filter(kind="bisection").count() == 1 and Bisection.objects.get(pk=bisection.id).notified_at
    assert Regression.objects.count() == 1
