"""The home page's first block, "last night": per machine class its newest build, when it was
measured (its latest run, not the build's date), its verdict against the build before it
(``regressions.selectors.build_verdict``: the same answer as ``runner ci verdict``), what did not
pass beside it (a verdict of "pass" is about regressions, not about every case passing), its
findings and the commit range since that build (docs/pages.md). The block is headed "Last night"
only when every class's newest build was measured since yesterday began; a row measured earlier says
"newest build, measured <date>"."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.urls import reverse
from django.utils import timezone

from dashboard.alerts.compose import commits_url
from dashboard.regressions.selectors import build_verdict
from dashboard.results.selectors.builds import build_not_passed
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
    cases: int = 0
    passed: int = 0
    not_passed: dict[str, int] = field(default_factory=dict)  # status -> cases, most first
    last_night: bool = False  # measured since yesterday began (the server's time zone)

    @property
    def outcome(self) -> str:
        """"204 cases, 173 passed, 31 did not: 20 compile_error, 11 timeout" (all passed: no tail)."""
        text = f"{self.cases} case{'s' if self.cases != 1 else ''}, {self.passed} passed"
        failed = self.cases - self.passed
        if failed:
            text += f", {failed} did not: " + ", ".join(f"{n} {status}" for status, n in self.not_passed.items())
        return text


def _shown(value) -> str:
    """A finding's before or after: a number to four figures, a status ("pass") as it is."""
    return f"{value:.4g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


def _finding(found: dict, *, machine_class: str, ref: str) -> Finding:
    change = f" {_shown(found['before'])} -> {_shown(found['after'])}" if found.get("before") is not None and found.get("after") is not None else ""
    query = {"machine": machine_class, "build": ref, "workload": found["workload"], "status": "all"}
    return Finding(text=f"{found['workload']} · {found['config']} · {found['metric']}{change}", kind=found["kind"],
                   url=f"{reverse('regressions:list')}?{urlencode(query)}")


def measured_last_night(measured_at: dt.datetime | None, *, now: dt.datetime | None = None) -> bool:
    """Measured since yesterday began, in the server's time zone."""
    if measured_at is None:
        return False
    today = timezone.localdate(now or timezone.now())
    return timezone.localdate(measured_at) >= today - dt.timedelta(days=1)


def heading(nights: list[Night]) -> str:
    """"Last night" when every class's newest build was measured last night, else what it is."""
    return "Last night" if nights and all(n.last_night for n in nights) else "Newest builds"


def last_night(*, blocks) -> list[Night]:
    """One entry per overview block (``results.selectors.overview.ClassOverview``), in its order."""
    nights = []
    for block in blocks:
        latest, previous = block.latest, block.previous
        run = latest.latest_run
        ref = build_ref(latest.build)
        verdict = build_verdict(build=latest.build, machine_class=block.machine_class)
        measured_at = (run.started_at or run.ingested_at) if run else None
        nights.append(Night(
            machine_class=block.machine_class, ref=ref, label=block.build_label or str(latest.build), run_id=str(run.id) if run else None,
            measured_at=measured_at, built_at=latest.ordered_at, last_night=measured_last_night(measured_at),
            cases=latest.cases, passed=latest.passed,
            not_passed=(block.not_passed if block.not_passed is not None else
                        build_not_passed(build_id=latest.build_id, machine_class=block.machine_class, cases=block.cases))
            if latest.passed < latest.cases else {},
            verdict=verdict.verdict, reason=verdict.reason.replace("_", " "),
            baseline_ref=build_ref(previous.build) if previous else None,
            findings=[_finding(f, machine_class=block.machine_class, ref=ref) for f in verdict.regressions],
            commits=commits_url(previous.build, latest.build) if previous else None,
            same_commit=bool(previous and previous.build.git_sha == latest.build.git_sha),
            copy_ref=build_ref(block.copy.build) if block.copy else None,
            regressions_url=f"{reverse('regressions:list')}?{urlencode({'machine': block.machine_class, 'build': ref})}",
        ))
    return nights
