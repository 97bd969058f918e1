"""One open finding of each kind on the newest build (issue #46 item 2): the documents of two builds
whose second raises each deterministic finding through real detection (a case that started failing;
a failure that changed; a new graph-break reason and more graph breaks; a new recompile reason and
more recompiles; an unbacked/backed gap), and a change point of every tracked metric as detection
records them. Used by tests/dashboard/test_every_finding_every_page.py (in-process) and
bench/hostile_probe.py (posted to a real deployment, detected by its worker)."""
from __future__ import annotations

import random

from contract.metrics import TRACKED
from dashboard.regressions.models import Regression
from dashboard.results.models import Build, Series
from tests.api.history import document_for_day
from tests.regressions.history import case

DETERMINISTIC = {"started_failing", "status_changed", "new_graph_break", "more_graph_breaks", "new_recompile_reason",
                 "more_recompiles", "dynamic_gap"}


def _failing(result: dict, status: str, message: str) -> dict:
    result.update(status=status, error={"type": "InductorError", "message": message})
    return result


def every_finding_documents(*, days: tuple[int, int] = (1, 2), machine_class: str = "cpu") -> list[dict]:
    """The two builds' documents (days of November 2026): the second raises every deterministic finding."""
    rng = random.Random(46)
    first = document_for_day(days[0], [
        case(1.25, rng=rng),
        _failing(case(1.1, workload="resnet_train", rng=rng), "compile_error", "lowering failed"),
        case(1.25, regime="backed", rng=rng),
        case(1.24, regime="unbacked", rng=rng),
        case(1.1, workload="resnet_train", regime="backed", rng=rng),
        case(1.1, workload="resnet_train", regime="unbacked", rng=rng, recompile_count=1),
        case(1.3, rng=rng, mode="max-autotune", recompile_count=1),
    ], machine_class)
    more_recompiles = case(1.1, workload="resnet_train", regime="unbacked", rng=rng, recompile_count=3)
    more_recompiles["recompiles"] = [{"reason": "tensor 'x' size mismatch at index 0. expected 8, actual 16", "count": 2}]
    new_break = case(1.25, regime="backed", rng=rng, graph_break_count=2)
    new_break["graph_breaks"] = [{"reason": "Tensor.item", "location": "model.py:12", "count": 1},
                                 {"reason": "Unsupported: call_function BuiltinVariable(print)", "location": "model.py:40", "count": 1}]
    same_reasons = case(1.3, rng=rng, mode="max-autotune", recompile_count=4)
    more_breaks = case(1.1, workload="resnet_train", regime="backed", rng=rng, graph_break_count=3)
    more_breaks["graph_breaks"] = [{"reason": "Tensor.item", "location": "model.py:12", "count": 3}]
    second = document_for_day(days[1], [
        _failing(case(1.25, rng=rng), "compile_error", "failed OrderedSet([u1])"),
        _failing(case(1.1, workload="resnet_train", rng=rng), "crash", "case process died: SIGSEGV"),  # a failure -> another (not oom/timeout: no finding, docs/detection.md)
        new_break, case(1.02, regime="unbacked", rng=rng), more_breaks, more_recompiles, same_reasons,
    ], machine_class)
    return [first, second]


def every_finding_history() -> None:
    """Both builds stored and the second detected, in this process (the pages' tests)."""
    from dashboard.pipeline.services import run_ingest_and_detect
    from dashboard.regressions.services import detection_run

    documents = every_finding_documents()
    for document in documents:
        run_ingest_and_detect(document=document)
    detection_run(run_id=documents[-1]["run"]["id"])


def change_points_every_metric(*, first: Build | None = None, newest: Build | None = None, machine_class: str = "cpu") -> None:
    """A change point of every tracked metric on ``newest`` (default: the newer of the only two builds),
    as detection records them (half of them improvements; one by the short-history rule)."""
    if first is None or newest is None:
        first, newest = Build.objects.order_by("ordered_at")
    series = Series.objects.filter(workload__name="mlp_loop", config__tags__shape_regime="unbacked", machine_class=machine_class).get()
    for index, metric in enumerate(TRACKED):
        before, after = 2.0, 2.6
        kind = "improvement" if index % 2 else "regression"
        rule = {"rule": "short_history", "noise_source": "stated"} if index == 0 else {}
        Regression.objects.create(
            series=series, metric=metric.name, finding="change_point", kind=kind, first_bad_build=newest, last_good_build=first,
            raised_build=newest, magnitude=-0.3 if kind == "regression" else 0.3, confidence=0.99, before_value=before,
            after_value=after, details={"message": f"{metric.name} {before:.4g} -> {after:.4g} (+30.0%), 9.0 noise standard errors",
                                        "z": 9.0, "noise": 0.01, "delay": 1, **rule})
