"""A bisection without a broker (the quick start's path, ``bench/bisect_variants.py --inprocess``):
Celery tasks run eagerly and cases run in the dashboard's process (``dispatch.inprocess``), so the
end of each run moves the bisection on, which requests the next runs, from inside the case that
ended. Those run after it (``case_run_queued``), not inside it: the whole search ends within
``bisection_start`` and every case runs at the same stack depth, however many runs it takes."""
from __future__ import annotations

import itertools
import sys

import pytest
from django.db import transaction

from dashboard.celery import app
from dashboard.dispatch import broker, inprocess
from dashboard.dispatch.models import CaseTask
from dashboard.dispatch.services import case_finished, case_started
from dashboard.regressions.services.bisect import bisection_start
from dashboard.results.models import Build
from tests.bisect.planted import document, plant_variant, slowed_by

pytestmark = pytest.mark.django_db(transaction=True)  # on_commit callbacks run: real commits


def depth() -> int:
    frame, n = sys._getframe(), 0
    while frame:
        frame, n = frame.f_back, n + 1
    return n


def test_an_overrides_bisection_ends_inside_its_start_without_a_broker(settings, monkeypatch):
    """The in-process worker played (a planted latency instead of a subprocess): 3 ms with
    TORCH_PTBENCH_TEST_C set. Each case finishes through the dispatch service, the eager pipeline
    advances the bisection after its commit, and its next runs are queued behind the case."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    # the Celery app's own copy too: it read the settings when first used, maybe by an earlier test
    monkeypatch.setitem(app.conf, "task_always_eager", True)
    value, jitter, depths = slowed_by("C"), itertools.cycle((0.99, 1.0, 1.01)), []

    def worker(*, machine_class: str, message: dict) -> str:
        depths.append(depth())
        case = CaseTask.objects.get(pk=message["case_id"])
        build = Build.objects.get(git_sha=message["build"]["git_sha"], local_label=message["build"]["local_label"])
        case_started(case_id=case.id, worker="in-process", hostname="box")
        return case_finished(case_id=case.id, document=document(build, run_id=str(case.run_id),
                                                                latency=value(build) * next(jitter)))

    monkeypatch.setattr(inprocess, "case_run_inprocess", worker)
    base, variant, series = plant_variant()
    bisection = bisection_start(series=series, metric="compiled_latency_ms", good=base, bad=variant, kind="overrides",
                                requested_by="test", size="tiny", attempts=2)
    bisection.refresh_from_db()
    assert bisection.status == "done" and bisection.result["override"] == "env.TORCH_PTBENCH_TEST_C=1"
    assert bisection.result["alone"] is True and bisection.result["partner_search"] == "done"
    assert bisection.result["message"] == "override env.TORCH_PTBENCH_TEST_C=1 makes it bad on its own: 3 steps, 10 runs"
    assert len(depths) == 10 and len(set(depths)) == 1, depths  # every case at the outermost call's depth
    assert not CaseTask.objects.filter(state__in=CaseTask.OPEN_STATES).exists()


def test_cases_sent_by_a_running_case_run_after_it_in_order_at_one_depth(settings, monkeypatch):
    """A chain far longer than the recursion limit allows nested: each case sends the next."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    ran: list[tuple[int, int]] = []

    def worker(*, machine_class: str, message: dict) -> str:
        ran.append((message["n"], depth()))
        if message["n"] < 1500:
            with transaction.atomic():  # as case_finished -> bisection_advance -> run_request commit
                broker.case_send(machine_class=machine_class, kwargs={"n": message["n"] + 1}, soft_time_limit=1, time_limit=2)
            assert ran[-1][0] == message["n"]  # queued, not run inside this case
        return "done"

    monkeypatch.setattr(inprocess, "case_run_inprocess", worker)
    with transaction.atomic():
        assert broker.case_send(machine_class="cpu", kwargs={"n": 0}, soft_time_limit=1, time_limit=2) == "in-process"
        assert ran == []  # after the commit
    assert [n for n, _ in ran] == list(range(1501)) and len({d for _, d in ran}) == 1  # all ran before the commit returned
    assert getattr(inprocess._thread, "queue", None) is None


def test_a_case_that_raises_drops_the_ones_queued_behind_it_and_the_next_send_runs(settings, monkeypatch):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    ran: list[int] = []

    def worker(*, machine_class: str, message: dict) -> str:
        ran.append(message["n"])
        if message["n"] == 0:
            with transaction.atomic():
                broker.case_send(machine_class=machine_class, kwargs={"n": 1}, soft_time_limit=1, time_limit=2)
            raise RuntimeError("the case's own bug")
        return "done"

    monkeypatch.setattr(inprocess, "case_run_inprocess", worker)
    with pytest.raises(RuntimeError, match="own bug"):
        with transaction.atomic():
            broker.case_send(machine_class="cpu", kwargs={"n": 0}, soft_time_limit=1, time_limit=2)
    with transaction.atomic():
        broker.case_send(machine_class="cpu", kwargs={"n": 2}, soft_time_limit=1, time_limit=2)
    assert ran == [0, 2]


def test_a_variants_case_runs_on_its_base_s_registered_interpreter(monkeypatch):
    """A variant has no interpreter of its own: the in-process worker looks for its base's (registered
    with ``register_build``), not only for the dashboard's own interpreter (which may lack torch)."""
    base, variant, _ = plant_variant()  # base registered on cpu at /envs/0/bin/python
    probed: list[str] = []
    monkeypatch.setattr(inprocess, "_probed", {})
    monkeypatch.setattr(inprocess.shutil, "which", lambda python: python)
    monkeypatch.setattr(inprocess.LocalBuilds, "probe",
                        classmethod(lambda cls, entries: probed.extend(e.python for e in entries) or cls()))
    inprocess._local_builds(build=variant)
    assert probed == [sys.executable, "/envs/0/bin/python"]
