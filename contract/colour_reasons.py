"""Why a coloured cell is coloured and, where no finding is linked, why it is not a finding (issue #42:
one judgement behind every colour). Every page takes its tooltip wording from here, and the shared
legend (``web/_judged_legend.html``) says the same: red or green only where a finding is linked or
the change is past noise and the cell's tooltip says why it is not a finding.

Pure Python: no Django, no torch.
"""
from __future__ import annotations

import math

from contract.findings import TOO_NOISY_SD

# The noise a change was judged against (``noise_source``): repeated runs of one build, else the class's prior.
FROM_REPEATS = "the noise its own runs show (repeated runs of one build, or the scatter of each run's timed samples)"
FROM_PRIOR = "the class's prior noise for this metric (each build ran this case once: no repeated runs of its own)"

NOT_FINDING = "not a finding: "
ONE_BUILD = "one build so far before it on this series, nothing to detect a change against"
YOUNG = "a young series ({builds} builds before it): detection raises no finding until a change is far outside the class's noise"
PHASE = "a compile phase: it explains its compile total's change and raises no finding of its own"
TOO_NOISY_PAST = ("its own runs' noise is past {bound:.0%} (sd {sd:.0%}), a series too noisy to track raises no finding; "
                  "this change is past even that noise")
NOT_NEIGHBOURS = ("these two builds are not neighbours on the series: detection judges each build against the ones "
                  "just before it")
DETECTION_QUIET = ("detection, which judges each build against its series' whole history (not this pair alone), "
                   "found no change point here")
UNTRACKED = "detection does not track this metric: shown, never a finding"
COUNT = "a count that changed: a finding names a new graph-break or recompile reason, not the count"
POOLED = "a row pooled over cases, never a finding itself: its cases' cells on /compare/ link theirs or say why not"
WAITING = "a suspect waiting for re-measurement"
VARIANT_SHORT = ("the variant's verdict compares both builds' runs with the run-to-run noise model: this change is short "
                 "of its noise test or of 3 %")
VARIANT_BETTER = "a variant's comparison stores its regressions: an improvement is shown, never a finding"
LEVEL_GAP = ("a gap within one build (unbacked against backed), past both speedups' own noise: a finding only when it "
             "changes between builds")
LEVEL_COMPILE = ("unbacked against backed cold compile within one build, past the series' compile noise: a finding only "
                 "when it changes between builds")
MACHINE_FAILURE = "a failure that changes with the machine (oom, timeout) is no regression"
RECOVERED = "a case that passes again is shown, not a finding"
FAILED = ("a case that did not pass in this build (red: a failure, not a change; a pass turning into it is a "
          "status finding on /regressions/)")


def noisy_reason(sd: float | None) -> str:
    """``TOO_NOISY_PAST`` for a case's sd ('' when not finite)."""
    if sd is None or not math.isfinite(sd):
        return ""
    return TOO_NOISY_PAST.format(bound=TOO_NOISY_SD, sd=sd)


def young_reason(builds_before: int) -> str:
    """``ONE_BUILD`` or ``YOUNG`` for a series with this many builds before the head."""
    return ONE_BUILD if builds_before <= 1 else YOUNG.format(builds=builds_before)


def not_finding(reason: str) -> str:
    """A tooltip: ``not a finding: <reason>``."""
    return NOT_FINDING + reason


MACHINE_FAILURES = ("oom", "timeout")  # detection.MACHINE_FAILURES


def status_reason(head_status: str, *, builds_before: int) -> str:
    """Why a status change is no finding: it passes again, the machine's failure, a young series, or
    detection found none."""
    if head_status == "pass":
        return RECOVERED
    if head_status in MACHINE_FAILURES:
        return MACHINE_FAILURE
    if builds_before <= 2:
        return young_reason(builds_before)
    return DETECTION_QUIET
