"""Histories with planted regressions for the alert tests, stored through the real ingest service
(detection and alert planning are called by each test)."""
from __future__ import annotations

import random

from dashboard.alerts.services import delivery_plan_run
from dashboard.regressions.services import detection_run
from dashboard.results.models import Run
from tests.dashboard.page_history import ingest_build
from tests.regressions.history import NOISE, case

LAST_DAY = 17  # mlp_loop's speedup steps down at day 15; resnet_train starts failing at day 17


def slowdown_and_breakage(*, machine_class: str = "cpu", last_failing: bool = True) -> list[Run]:
    """17 builds (days 1..17). mlp_loop static: speedup 1.25, then 1.10 from day 15 (a slowdown of
    about 12%, in speedup and compiled latency). resnet_train static: passes, then fails to compile
    on day 17 (a breakage). Run detection on the last run only and every finding lands on its summary."""
    rng = random.Random(7)
    runs = []
    for day in range(1, LAST_DAY + 1):
        level = 1.25 if day < 15 else 1.10
        slow = case(level * (1 + rng.gauss(0, NOISE)), rng=rng)
        other = case(1.5, workload="resnet_train", rng=rng)
        if day == LAST_DAY and last_failing:
            other.update(status="compile_error", error={"type": "InductorError", "message": "LoweringException: boom\nmore"})
        document = ingest_build(day, [slow, other], machine_class=machine_class)
        runs.append(Run.objects.get(pk=document["run"]["id"]))
    return runs


def detect_and_plan(run: Run) -> list[int]:
    detection_run(run_id=run.id)
    return delivery_plan_run(run_id=run.id)
