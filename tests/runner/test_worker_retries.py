"""The runner worker's retries of a case (Celery's autoretry_for / retry_backoff), run eagerly:
an infrastructure error is tried 1 + PTBENCH_MAX_RETRIES times with doubling countdowns, then the
case is reported failed once; a case that fails for real is not retried."""
from __future__ import annotations

import pytest
from celery.exceptions import Retry

from contract.messages import CASE_FAILED, CASE_FINISHED, CASE_STARTED
from runner.worker import tasks
from runner.worker.app import config
from runner.worker.builds import BuildUnavailable


@pytest.fixture
def worker(monkeypatch):
    sent, calls = [], []
    monkeypatch.setattr(tasks, "notify", lambda name, **kwargs: sent.append((name, kwargs)))
    monkeypatch.setattr(tasks, "run_cancelled", lambda run_id: False)
    monkeypatch.setattr(tasks, "local_builds", lambda: None)

    def measure(fail_times):
        def measure_case(**kwargs):
            calls.append(kwargs["case_id"])
            kwargs["notify_started"]()
            if len(calls) <= fail_times:
                raise BuildUnavailable("no build 0123456789ab here")
            return {"results": [{"status": "pass", "environment": {"worker": {}}}]}
        monkeypatch.setattr(tasks, "measure_case", measure_case)

    return measure, sent, calls


def test_an_infrastructure_error_is_retried_then_reported_failed_once(worker):
    measure, sent, calls = worker
    measure(fail_times=99)
    outcome = tasks.run_case.apply(kwargs={"case_id": 7, "run_id": "r"})
    assert outcome.failed() and isinstance(outcome.result, BuildUnavailable)
    tries = 1 + config.max_retries
    assert len(calls) == tries
    assert [kw["attempt"] for name, kw in sent if name == CASE_STARTED] == list(range(1, tries + 1))
    failed = [kw for name, kw in sent if name == CASE_FAILED]
    assert len(failed) == 1 and failed[0]["attempts"] == tries and failed[0]["case_id"] == 7
    assert failed[0]["reason"] == "BuildUnavailable: no build 0123456789ab here"


def test_a_retry_succeeds_and_nothing_is_failed(worker):
    measure, sent, calls = worker
    measure(fail_times=1)
    assert tasks.run_case.apply(kwargs={"case_id": 8, "run_id": "r"}).get() == {"case_id": 8, "outcome": "pass"}
    assert len(calls) == 2 and [name for name, _ in sent] == [CASE_STARTED, CASE_STARTED, CASE_FINISHED]


def test_countdowns_double_from_the_retry_delay(worker, monkeypatch):
    """What a worker (not eager) asks the broker for: PTBENCH_RETRY_DELAY_S x 2**retries, no jitter."""
    measure, _, _ = worker
    measure(fail_times=99)
    countdowns = []

    def retry(**kwargs):
        countdowns.append(kwargs["countdown"])
        return Retry("retry", when=kwargs["countdown"])

    monkeypatch.setattr(tasks.run_case, "retry", retry)
    for retries in range(config.max_retries):
        with pytest.raises(Retry):
            tasks.run_case.apply(kwargs={"case_id": 9, "run_id": "r"}, retries=retries, throw=True)
    assert countdowns == [config.retry_delay_s * 2**r for r in range(config.max_retries)]
