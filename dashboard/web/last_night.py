"""The home page's first block, "last night": per machine class its newest build, when it was
measured (its latest run, not the build's date), its verdict against the build before it
(``regressions.selectors.build_verdict``: the same answer as ``runner ci verdict``), its findings
and the commit range since that build (docs/pages.md)."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.urls import reverse

from dashboard.alerts.compose import commits_url
from dashboard.regressions.selectors import build_verdict
from dashboard.results.selectors.common import build_ref


@dataclass
class Finding:
    text: str
    kind: str  # "regression" or "suspect"
    url: str


@dataclass
class Night:
    machine_class: str
    ref: str
    label: str
    run_id: str | None
    measured_at: dt.datetime | None
    built_at: dt.datetime
    verdict: str  # pass | regressed | suspect | pending
    reason: str
    baseline_ref: str | None
    findings: list[Finding] = field(default_factory=list)
    commits: str | None = None  # the commit range's URL, when both builds are real shas
    same_commit: bool = False  # the build before it has the same sha (another measurement of it)
    copy_ref: str | None = None  # no build before it: another stored build of the same commit on the class
    regressions_url: str = ""


def _finding(found: dict, *, machine_class: str, ref: str) -> Finding:
    change = f" {found['before']:.4g} -> {found['after']:.4g}" if found.get("before") is not None and found.get("after") is not None else ""
    query = {"machine": machine_class, "build": ref, "workload": found["workload"], "status": "all"}
    return Finding(text=f"{found['workload']} · {found['config']} · {found['metric']}{change}", kind=found["kind"],
                   url=f"{reverse('regressions:list')}?{urlencode(query)}")


def last_night(*, blocks) -> list[Night]:
    """One entry per overview block (``results.selectors.overview.ClassOverview``), in its order."""
    nights = []
    for block in blocks:
        latest, previous = block.latest, block.previous
        run = latest.latest_run
        ref = build_ref(latest.build)
        verdict = build_verdict(build=latest.build, machine_class=block.machine_class)
        nights.append(Night(
            machine_class=block.machine_class, ref=ref, label=block.build_label or str(latest.build), run_id=str(run.id) if run else None,
            measured_at=(run.started_at or run.ingested_at) if run else None, built_at=latest.ordered_at,
            verdict=verdict.verdict, reason=verdict.reason.replace("_", " "),
            baseline_ref=build_ref(previous.build) if previous else None,
            findings=[_finding(f, machine_class=block.machine_class, ref=ref) for f in verdict.regressions],
            commits=commits_url(previous.build, latest.build) if previous else None,
            same_commit=bool(previous and previous.build.git_sha == latest.build.git_sha),
            copy_ref=build_ref(block.copy.build) if block.copy else None,
            regressions_url=f"{reverse('regressions:list')}?{urlencode({'machine': block.machine_class, 'build': ref})}",
        ))
    return nights
