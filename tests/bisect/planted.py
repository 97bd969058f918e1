"""A planted change for the bisection tests that need no worker (issue #31): six nightly builds on
machine class ``cpu`` that workers know, only the first and the last measured (a weekly run), the
case's compiled latency 2 ms up to the second build and 3 ms from the third. ``measure`` plays the
runner workers: each open case of a bisection's runs gets the document a worker would send, through
the dispatch service a worker's report reaches (``case_finished``), then the bisection moves on
(what the pipeline's task does once the run has ended)."""
from __future__ import annotations

import datetime as dt

from django.utils import timezone

from dashboard.dispatch import broker
from dashboard.dispatch.models import BuildEnvironment, CaseTask
from dashboard.dispatch.services import case_finished, case_started
from dashboard.regressions.models import Regression
from dashboard.regressions.services.bisect import bisection_advance
from dashboard.results.models import Build, Result
from dashboard.results.services import run_ingest
from tests.documents import make_document, make_result

SHAS = [f"{n:x}" * 40 for n in range(1, 7)]  # 1111..., 2222..., ... : six builds, oldest first
DAY = dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc)


def latency_of(build: Build) -> float:
    """The planted change: from the third build on, 3 ms instead of 2 ms (±1 % from run to run)."""
    return 3.0 if SHAS.index(build.git_sha) >= 2 else 2.0


def document(build: Build, *, run_id: str, latency: float, status: str = "pass") -> dict:
    doc = make_document(run_id=run_id, git_sha=build.git_sha, results=[make_result("mlp_loop", "static", status=status,
                                                                                  compiled_latency_ms=latency)])
    doc["build"].update(local_label=build.local_label, commit_time=build.commit_time.isoformat() if build.commit_time else None)
    if build.overrides:
        doc["build"]["overrides"] = build.overrides
    return doc


def nightly(n: int) -> Build:
    return Build.objects.get(git_sha=SHAS[n])


def plant(*, known=range(6)) -> Regression:
    """The six builds (those in ``known`` registered on a worker of ``cpu``), runs of the first and
    the last, and the regression detection would have raised between them."""
    for n, sha in enumerate(SHAS):
        day = (DAY + dt.timedelta(days=n)).isoformat()
        if n in (0, 5):
            doc = make_document(git_sha=sha, results=[make_result("mlp_loop", "static", compiled_latency_ms=2.0 if n == 0 else 3.0)])
            doc["build"]["commit_time"] = day
            run_ingest(document=doc)
        else:
            Build.objects.create(torch_version="2.13.0+cpu", git_sha=sha, label="torch 2.13.0", commit_time=day, ordered_at=day)
        if n in known:
            BuildEnvironment.objects.create(build=nightly(n), machine_class="cpu", hostname="box", python=f"/envs/{n}/bin/python",
                                            source="worker", reported_at=timezone.now())
    series = Result.objects.get(build=nightly(5)).series
    return Regression.objects.create(series=series, metric="compiled_latency_ms", finding=Regression.Finding.CHANGE_POINT,
                                     first_bad_build=nightly(5), last_good_build=nightly(0), raised_build=nightly(5),
                                     magnitude=-0.5, before_value=2.0, after_value=3.0, details={"message": "planted"})


def plant_variant(names: str = "ABCDE") -> tuple[Build, Build, object]:
    """A build known to workers of ``cpu``, measured once, and its variant setting
    ``TORCH_PTBENCH_TEST_<X>=1`` for each X of ``names``; returns (base, variant, series)."""
    from contract.variants import Overrides
    from dashboard.results.services import variant_get_or_create

    run_ingest(document=make_document(git_sha=SHAS[0], results=[make_result("mlp_loop", "static", compiled_latency_ms=2.0)]))
    base = nightly(0)
    BuildEnvironment.objects.create(build=base, machine_class="cpu", hostname="box", python="/envs/0/bin/python",
                                    source="worker", reported_at=timezone.now())
    variant = variant_get_or_create(base=base, overrides=Overrides.build(None, {f"TORCH_PTBENCH_TEST_{x}": "1" for x in names}))
    return base, variant, Result.objects.get(build=base).series


def slowed_by(*names: str):
    """The planted change of a variant: 3 ms instead of 2 ms when all of these overrides are set."""
    return lambda build: 3.0 if all(f"TORCH_PTBENCH_TEST_{x}" in (build.overrides.get("env") or {}) for x in names) else 2.0


def no_broker(monkeypatch) -> list[dict]:
    """The class's queue, as far as these tests go: what was sent to it (no worker listens)."""
    sent: list[dict] = []
    monkeypatch.setattr(broker, "case_send", lambda **kwargs: sent.append(kwargs) or f"task-{len(sent)}")
    return sent


def open_cases(bisection) -> list[CaseTask]:
    return list(CaseTask.objects.filter(run__bisection_attempt__bisection=bisection, state__in=CaseTask.OPEN_STATES)
                .select_related("run__build"))


def measure(bisection, *, value=latency_of, lose: set[int] = frozenset(), rounds: int = 1):
    """``rounds`` times: every open case of the bisection measured (in the first round, a case of a
    build in ``lose``, by index in the range, times out: no value), then the bisection advanced."""
    for round_ in range(rounds):
        for n, case in enumerate(open_cases(bisection)):
            case_started(case_id=case.id, worker="w0@box", hostname="box")
            build = case.run.build
            index = bisection.builds.index(build.id)
            latency = value(build) * (1 + 0.01 * ((n % 3) - 1))
            status = "timeout" if index in lose and round_ == 0 else "pass"
            case_finished(case_id=case.id, document=document(build, run_id=str(case.run_id), latency=latency, status=status))
        bisection = bisection_advance(bisection_id=bisection.id)
    return bisection
