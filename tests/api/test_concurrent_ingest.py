"""#33 item 3: ingest and detection under concurrent ingest. 8 steady builds, one 12 % slower
(pending re-measurements), then 40 builds from 4 clients at once, each run's detection started
as the worker would start it (right after its commit, while the other clients ingest): 13 x 503
and 15 deadlocks before (ingest's commit against detection's lock of the re-measurements and,
through its join, of their series). Now: every post answers 2xx and no transaction deadlocks."""
from __future__ import annotations

import datetime as dt
import json
import threading

import pytest
from django.db import OperationalError, connection
from django.test import Client

from dashboard.api.services import api_token_create
from dashboard.pipeline.services import run_ingest_and_detect
from dashboard.regressions.models import Remeasurement
from dashboard.regressions.services import detection_run
from dashboard.dispatch.models import BuildEnvironment
from dashboard.results.models import Result, Run
from tests.documents import WORKLOADS, make_document, make_result

CLIENTS, BUILDS_EACH = 4, 10
START = dt.datetime(2026, 10, 1, tzinfo=dt.timezone.utc)


def document(index: int, *, slower: float = 1.0, reverse: bool = False) -> dict:
    results = [make_result(w["name"], regime, compiled_latency_ms=2.0 * slower, speedup=1.25 / slower)
               for w in WORKLOADS for regime in ("static", "backed", "unbacked")]
    if reverse:  # documents of a fleet list their cases in different orders
        results.reverse()
    doc = make_document(git_sha=f"{index + 1:040x}", results=results)
    doc["build"]["commit_time"] = (START + dt.timedelta(hours=index)).isoformat()
    return doc


@pytest.mark.django_db(transaction=True)
def test_forty_concurrent_ingests_with_pending_remeasurements():
    for index in range(9):
        outcome = run_ingest_and_detect(document=document(index, slower=1.12 if index == 8 else 1.0), detect=False)
        # A runner worker of the class has the builds: the suspects wait for their re-measurement.
        BuildEnvironment.objects.create(build_id=Run.objects.get(pk=outcome.run_id).build_id, machine_class="cpu",
                                        hostname="gpu-box", python="/opt/torch/bin/python",
                                        source=BuildEnvironment.Source.WORKER, reported_at=START)
        detection_run(run_id=outcome.run_id)
    pending = Remeasurement.objects.filter(status=Remeasurement.Status.PENDING).count()
    assert pending >= 6, pending  # the premise: suspects wait for their re-measurement

    secret = api_token_create(name="ci")[1]
    barrier = threading.Barrier(CLIENTS)
    statuses: list[int] = []
    failures: list[str] = []

    def client(number: int) -> None:
        web = Client(HTTP_AUTHORIZATION=f"Token {secret}")
        try:
            barrier.wait(timeout=60)
            for k in range(BUILDS_EACH):
                doc = document(9 + number + CLIENTS * k, reverse=bool(number % 2))
                response = web.post("/api/v1/runs/submit/", json.dumps(doc), content_type="application/json")
                statuses.append(response.status_code)
                if response.status_code in (200, 201):
                    detection_run(run_id=doc["run"]["id"])  # the dashboard worker's task, after the commit
        except OperationalError as exc:
            failures.append(repr(exc))
        finally:
            connection.close()

    threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    assert failures == []
    assert sorted(set(statuses)) == [201] and len(statuses) == CLIENTS * BUILDS_EACH
    assert Result.objects.count() == (9 + CLIENTS * BUILDS_EACH) * 6
