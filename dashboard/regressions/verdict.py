"""The verdict against a named baseline: the two builds' cases compared directly, case by case.

Deterministic findings come from ``compare_cases``; a noisy metric counts as regressed when the
combined runs of both builds say so (``confirm_with_remeasurement`` past ``noise_bar``: 3 sd for a
prior, a Student-t bar for a noise the series estimated from few runs; with the run-to-run noise model
of each series and metric over the ``NOISE_BUILDS`` builds up to the baseline: its own replicates,
else the machine class's prior, else the metric's default, ``dashboard.regressions.noise``; compile
time and memory have no within-run noise, so two runs of one build pass) and the change is at least
``MIN_CHANGE``; a host-bound case whose new runs had a slowed host is listed as a suspect, not
counted (``history.host_slowdown``). compile_cpu_ratio measured against different compile references
on the two sides is not compared: a note says so (``notes``), and its noise history is each
reference's own. Any two builds can be compared (a release against the previous one, a PR against
main). Three queries whatever the suite's size: both builds' results, the noise history, the names.
"""
from __future__ import annotations


import statistics

from contract.findings import BLOCK_TIMED_METRICS, REASON_METRICS, finding_numbers, reason_headline, too_noisy
from contract.metrics import BY_NAME
from detection import compare_cases, confirm_with_remeasurement, noise_bar, noise_estimate, young_bar, young_change_passes
from dashboard.regressions.history import ALARM_METRICS, TRACKED_METRICS, build_points, host_slowdown, machine_moved
from dashboard.regressions.noise import class_priors, stated_sd
from dashboard.results.compile_reference import NOT_COMPARABLE, REFERENCED_METRICS, reference_changed
from dashboard.results.host import HOST_SENSITIVE_METRICS
from dashboard.results.models import Build, BuildSummary, Result, Series
from dashboard.results.sourced_metrics import with_sourced_metrics

MIN_CHANGE = 0.03  # a change smaller than 3% never fails a build on its own
NOISE_BUILDS = 30  # builds up to the baseline that estimate each series' build-to-build noise


def verdict_against(*, build: Build, baseline: Build, machine_class: str) -> list[dict]:
    """The findings of ``build`` against ``baseline`` (``verdict_against_noted`` less its notes)."""
    return verdict_against_noted(build=build, baseline=baseline, machine_class=machine_class)[0]


def verdict_against_noted(*, build: Build, baseline: Build, machine_class: str, with_series: bool = False
                          ) -> tuple[list[dict], list[dict]]:
    """``(findings, notes)``: the findings of ``build`` against ``baseline``, and what was not
    compared (``reference_notes``: compile_cpu_ratio measured against different compile references).
    ``with_series``: each finding names its series' id too (``series_id``: detection stores a
    variant's findings, ``services.detection``)."""
    points = build_points(build_ids=[baseline.id, build.id], machine_class=machine_class)
    common = {sid: p for sid, p in points.items() if baseline.id in p and build.id in p}
    if not common:
        return [], []
    noise = _noise_by_series(baseline=baseline, machine_class=machine_class, series_ids=list(common))
    priors = class_priors(machine_class=machine_class, upto=baseline, short=True)
    names = {s.id: s for s in Series.objects.filter(pk__in=common).select_related("workload", "config")}
    found: list[dict] = []
    not_comparable: dict[tuple[str, str, str], int] = {}  # (metric, baseline's reference, build's): cases
    for sid, by_build in sorted(common.items(), key=lambda item: (names[item[0]].workload.name, str(names[item[0]].config))):
        old, new = by_build[baseline.id], by_build[build.id]
        host = host_slowdown([old], [new])
        head = {"workload": names[sid].workload.name, "config": str(names[sid].config), "machine_class": machine_class,
                **({"series_id": sid} if with_series else {})}
        for finding in compare_cases(old.case, new.case):
            if finding.regression:
                metric = REASON_METRICS.get(finding.kind, "status")  # as detection stores it (a count's: its counts)
                found.append({**head, "metric": metric, "finding": finding.kind, "kind": "regression", "magnitude": None,
                              **finding_numbers(metric=metric, before=finding.details.get("before"),
                                                after=finding.details.get("after"), kind="regression", certain=True,
                                                new_reason=reason_headline(finding.kind, finding.reasons)).as_dict(),
                              "message": finding.message, "reasons": list(finding.reasons)})
        for metric, direction in ALARM_METRICS.items():  # a compile phase explains, it raises nothing (contract.metrics)
            old_runs = old.samples.get(metric) or [[v] for v in old.run_values.get(metric, [])]
            new_runs = new.samples.get(metric) or [[v] for v in new.run_values.get(metric, [])]
            if not old_runs or not new_runs:
                continue
            if reference_changed(metric, old.reference(metric), new.reference(metric)):
                key = (metric, old.reference(metric), new.reference(metric))
                not_comparable[key] = not_comparable.get(key, 0) + 1
                continue
            by_build = noise.get((sid, metric), [])
            runs = [r for _, _, r in by_build]
            breaks = [i for i in range(1, len(by_build)) if by_build[i][1] != by_build[i - 1][1]]  # a change of reference
            model = noise_estimate([statistics.median(r) for r in runs], runs, default=BY_NAME[metric].noise_default,
                                   breaks=breaks, prior=priors.get(metric))
            if too_noisy(model.sd) or (metric in BLOCK_TIMED_METRICS and too_noisy(stated_sd([old, new]))):
                continue  # too noisy to track: never a finding (docs/noise-and-findings.md)
            # the history gives the noise only: joined to the old side, it would stand in for a
            # baseline that is itself a changed build (two runs of one variant build then differ)
            # a noise its series estimated from few runs is judged with a Student-t bar (detection.noise_bar)
            decision = confirm_with_remeasurement(old_runs, new_runs, direction, between_run_sigma=model.sd,
                                                  confirm_z=noise_bar(model))
            if decision.decision == "regression" and -decision.magnitude >= MIN_CHANGE:
                message = (f"{metric} {decision.before:.4g} -> {decision.after:.4g} ({decision.relative_change:+.1%}, "
                           f"z {decision.z:.1f}; run-to-run noise {model.sd:.2%} from the {model.source})")
                slowed = host if metric in HOST_SENSITIVE_METRICS else None
                earlier = len({b for b, _, _ in by_build})  # builds of the series up to the baseline
                young = not young_change_passes(decision.before, decision.after, earlier=earlier, sd=model.sd,
                                                measured=model.source == "series", min_factor=BY_NAME[metric].young_factor)
                shared = machine_moved(metric, [old], [new], old=decision.before, new=decision.after)
                if shared:  # the machine moved: eager latency beside it as much (contract.metrics shared_with)
                    message += (f"; not counted: {shared['metric']} moved {shared['relative_change']:+.1%} beside it "
                                "(the machine, not the build: the speedup cancels it)")
                elif young:  # a series with one or two builds up to the baseline: the class's noise, not its own
                    message += (f"; not counted: a young series ({earlier} build{'s' if earlier != 1 else ''} up to the "
                                f"baseline, one run each), and the change is short of {young_bar(model.sd, BY_NAME[metric].young_factor):.0%} in log, "
                                "what the class's noise allows there (docs/detection.md)")
                elif slowed:  # reported, not counted: the host, not the build, may explain it
                    message += (f"; not counted: host-bound, and the host ran {slowed['slowdown']:.2f}x slower "
                                f"(probe {slowed['after_probe_ms']:.2f} vs {slowed['before_probe_ms']:.2f} ms): "
                                "re-measure both builds on one host")
                found.append({**head, "metric": metric, "finding": "change_point",
                              "kind": "suspect" if slowed or young or shared else "regression",
                              "magnitude": decision.magnitude,
                              **finding_numbers(metric=metric, before=decision.before, after=decision.after, kind="regression",
                                                noise=model.sd, confidence=decision.confidence).as_dict(),
                              "message": message,
                              **({"host_slowed": slowed} if slowed else {})})
    return found, reference_notes(not_comparable)


def reference_notes(not_comparable: dict[tuple[str, str, str], int]) -> list[dict]:
    """One note per metric and pair of compile references: ``{(metric, baseline's reference,
    build's reference): cases}`` -> ``[{"metric", "kind": "not_comparable", "cases",
    "baseline_reference", "build_reference", "message"}]``."""
    def shown(reference: str) -> str:
        return reference or "none recorded"

    return [{"metric": metric, "kind": "not_comparable", "cases": cases, "baseline_reference": old, "build_reference": new,
             "message": f"{metric} not compared in {cases} case{'s' if cases != 1 else ''} ({NOT_COMPARABLE}): measured "
                        f"against compile reference {shown(new)}, the baseline against {shown(old)}; a change of "
                        "reference starts a new baseline of this metric"}
            for (metric, old, new), cases in sorted(not_comparable.items())]


def _noise_by_series(*, baseline: Build, machine_class: str, series_ids: list[int]) -> dict[tuple[int, str], list]:
    """Each series' ``(build id, compile reference, run values)`` over the last NOISE_BUILDS builds up
    to the baseline, in build order (the reference: "" but for compile_cpu_ratio, whose runs of one
    build against two references are two entries)."""
    builds = list(
        BuildSummary.objects.filter(machine_class=machine_class, ordered_at__lte=baseline.ordered_at)
        .order_by("-ordered_at", "-build_id").values_list("build_id", flat=True)[:NOISE_BUILDS]
    )
    order = {build_id: i for i, build_id in enumerate(reversed(builds))}
    rows = with_sourced_metrics(Result.objects.filter(series_id__in=series_ids, build_id__in=builds, status=Result.Status.PASS)).values_list(
        "series_id", "build_id", "compile_reference", *TRACKED_METRICS)
    values: dict[tuple[int, str], dict[tuple[int, str], list[float]]] = {}
    for series_id, build_id, reference, *metrics in rows:
        for metric, value in zip(TRACKED_METRICS, metrics):
            if value is not None and value > 0:
                segment = reference if metric in REFERENCED_METRICS else ""
                values.setdefault((series_id, metric), {}).setdefault((build_id, segment), []).append(float(value))
    return {key: [(b, ref, runs) for (b, ref), runs in sorted(by_build.items(), key=lambda item: (order[item[0][0]], item[0][1]))]
            for key, by_build in values.items()}


def reference_change_notes(*, build: Build, baseline: Build, machine_class: str) -> list[dict]:
    """The default verdict's notes: the series whose compile_cpu_ratio ``build`` measured against
    another compile reference than ``baseline`` (its previous build) did, where detection started a
    new baseline of that metric. One query: both builds' passing results that have the metric."""
    rows = (Result.objects.filter(build_id__in=[baseline.id, build.id], series__machine_class=machine_class,
                                  status=Result.Status.PASS, compile_cpu_ratio__gt=0)
            .order_by("run__ingested_at", "id").values_list("build_id", "series_id", "compile_reference"))
    newest = {(build_id, series_id): reference for build_id, series_id, reference in rows}  # the newest run's
    changed: dict[tuple[str, str, str], int] = {}
    for (build_id, series_id), reference in newest.items():
        old = newest.get((baseline.id, series_id))
        if build_id == build.id and old is not None and reference_changed("compile_cpu_ratio", old, reference):
            changed[("compile_cpu_ratio", old, reference)] = changed.get(("compile_cpu_ratio", old, reference), 0) + 1
    return reference_notes(changed)
