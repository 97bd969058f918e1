"""Commits between builds and overlay builds (issue #41, docs/builds.md).

``commit_range_request`` asks a worker of the class (its PyTorch mirror, ``PTBENCH_TORCH_MIRROR``,
is the worker's own) to list the commits between two builds; ``commit_range_listed`` stores its
answer, checked field by field. ``commit_chain`` turns a listed range into the builds a bisection
over commits measures: overlay builds (a base build + the Python files under ``torch/`` of a
commit, made by the worker) for the Python-only stretches, the C++ commits between them named as
needing a source build. ``commit_culprit`` says what a finished search found."""
from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from contract.commits import SHA, SOURCE_LABEL, commit_record_problem, overlay_label
from contract.messages import COMMIT_RANGE
from dashboard.regressions.models import CommitRange
from dashboard.regressions.signals import commit_range_stored
from dashboard.results.models import Build
from dashboard.results.services import build_get_or_create

log = logging.getLogger(__name__)


def commit_link(sha: str) -> str:
    return settings.COMMIT_URL.format(sha=sha)


def commit_range_of(*, good: Build | None, bad: Build | None) -> CommitRange | None:
    if good is None or bad is None:
        return None
    return CommitRange.objects.filter(good_build=good, bad_build=bad).first()


def commit_range_request(*, good: Build, bad: Build, machine_class: str, again: bool = False) -> CommitRange:
    """The range between two builds, asked of a worker of ``machine_class`` when new (or, with
    ``again``, when the last answer was a failure). Sent once the caller's transaction commits;
    without a broker (the quick start) listed in this process from its own mirror."""
    with transaction.atomic():
        row, created = CommitRange.objects.select_for_update().get_or_create(
            good_build=good, bad_build=bad, defaults={"machine_class": machine_class})
        if not created and not (again and row.status == CommitRange.Status.FAILED):
            return row
        row.status, row.machine_class, row.error = CommitRange.Status.PENDING, machine_class, ""
        row.save(update_fields=["status", "machine_class", "error"])
        _send(row, good_sha=_build_sha(good), bad_sha=_build_sha(bad))
    return row


def _build_sha(build: Build) -> str:
    """The sha a worker's mirror knows a build by: an overlay's is its commit's (its git_sha)."""
    return build.git_sha


def _send(row: CommitRange, *, good_sha: str, bad_sha: str) -> None:
    kwargs = {"range_id": row.id, "good_sha": good_sha, "bad_sha": bad_sha}
    if settings.CELERY_TASK_ALWAYS_EAGER:
        from dashboard.dispatch.inprocess import commit_range_inprocess  # noqa: PLC0415 (no broker: this process lists)

        transaction.on_commit(lambda: _listed_and_bisected(row.id, commit_range_inprocess(good_sha=good_sha, bad_sha=bad_sha)))
        return
    from kombu import Queue  # noqa: PLC0415

    from dashboard.celery import app  # noqa: PLC0415
    from dashboard.durable import send_after_commit  # noqa: PLC0415

    send_after_commit(lambda: app.send_task(COMMIT_RANGE, kwargs=kwargs, queue=Queue(row.machine_class)),
                      what=f"the commit range {row.id} of {row.machine_class}")


def _listed_and_bisected(range_id: int, answer: dict) -> None:
    row = commit_range_listed(range_id=range_id, answer=answer)
    if row is not None:
        commit_range_stored.send(sender=CommitRange, commit_range=row)  # bisected over its commits (bisect_auto)


def answer_problem(answer) -> str | None:
    """What is wrong with a worker's answer (None: nothing)."""
    if not isinstance(answer, dict):
        return "answer: not an object"
    if "error" in answer:
        return None
    for field in ("good_commit", "bad_commit"):
        if not isinstance(answer.get(field), str) or not SHA.fullmatch(answer[field]):
            return f"{field}: not 40 hex digits"
    commits = answer.get("commits")
    if not isinstance(commits, list):
        return "commits: not a list"
    for index, record in enumerate(commits):
        if problem := commit_record_problem(record):
            return f"commits[{index}].{problem}"
    if commits and commits[-1]["sha"] != answer["bad_commit"]:
        return "commits: the last is not the bad build's commit"
    return None


def commit_range_listed(*, range_id: int, answer) -> CommitRange | None:
    """Store a worker's answer: the range listed, or failed with its reason (a malformed answer too).
    An answer for no range this dashboard asked for is dropped (None)."""
    with transaction.atomic():
        row = CommitRange.objects.select_for_update().filter(pk=range_id).first() if isinstance(range_id, int) else None
        if row is None:
            log.warning("commit range %r: an answer for no range asked for, dropped", range_id)
            return None
        problem = answer_problem(answer)
        if problem or "error" in answer:
            row.status, row.error = CommitRange.Status.FAILED, (problem or str(answer["error"]))[:4000]
        else:
            row.status, row.error = CommitRange.Status.LISTED, ""
            row.good_commit, row.bad_commit, row.commits = answer["good_commit"], answer["bad_commit"], answer["commits"]
            row.source_build = answer.get("source_build") is True
        row.listed_at = timezone.now()
        row.save()
    if row.status == CommitRange.Status.FAILED:
        log.warning("commit range %s not listed: %s", row.id, row.error)
    return row


def overlay_root(build: Build) -> Build:
    """The build an overlay stands on (a plain build is its own)."""
    spec = (build.environment or {}).get("overlay") or {}
    return Build.objects.get(pk=spec["base_build"]) if spec.get("base_build") else build


def overlay_build_get_or_create(*, base: Build, commit: dict) -> Build:
    """The overlay build of ``commit`` (a commit record) on ``base`` (on its root, when ``base`` is
    an overlay itself): its git sha the commit's, its label ``py-on-<base sha>``, its environment
    naming the base and the commit (what the worker's overlay reads)."""
    root = overlay_root(base)
    if root.overrides:
        raise ValueError(f"build {root} is a variant: an overlay stands on a plain build")
    sha = commit["sha"]
    label = f"{root.label or root.torch_version} + torch/*.py of {sha[:10]}"
    return build_get_or_create({
        "git_sha": sha, "local_label": overlay_label(root.git_sha, root.local_label), "torch_version": root.torch_version,
        "label": label[:200], "commit_time": commit.get("time") or None, "python_version": root.python_version,
        "triton_version": root.triton_version, "cuda_version": root.cuda_version,
        "environment": {"overlay": {"base": {"git_sha": root.git_sha, "local_label": root.local_label}, "base_build": root.id,
                                    "commit": sha, "subject": commit.get("subject", "")}},
    })


def source_build_get_or_create(*, commit: dict, like: Build) -> Build:
    """The build of ``commit`` that a worker's own source-build command makes (label ``source``; its
    environment names the commit, all a worker reads of it)."""
    sha = commit["sha"]
    return build_get_or_create({
        "git_sha": sha, "local_label": SOURCE_LABEL, "torch_version": like.torch_version, "label": f"source build of {sha[:10]}",
        "commit_time": commit.get("time") or None, "python_version": like.python_version,
        "environment": {"source_build": {"commit": sha, "subject": commit.get("subject", "")}},
    })


def commit_chain(*, commit_range: CommitRange, good: Build, bad: Build) -> tuple[list[Build], dict]:
    """The builds a bisection over the range's commits measures, good end first, and what it needs
    to say what it found: ``shas`` (each index's commit), ``gap`` (the commits between the last one
    an overlay on ``good`` can carry and the first one an overlay on ``bad`` can: C++ ones, which
    only a source build tells apart; absent without C++, or when the range's workers have a
    source-build command: then those commits are source builds)."""
    commits = commit_range.commits
    cpp = [i for i, c in enumerate(commits) if c["kind"] == "cpp"]
    if cpp:
        low, high = commits[:cpp[0]], commits[cpp[-1]:-1]
    else:
        low, high = commits[:-1], []
    built = commits[cpp[0]:cpp[-1]] if cpp and commit_range.source_build else []
    builds = [good, *(overlay_build_get_or_create(base=good, commit=c) for c in low),
              *(source_build_get_or_create(commit=c, like=bad) for c in built),
              *(overlay_build_get_or_create(base=bad, commit=c) for c in high), bad]
    meta = {"shas": [commit_range.good_commit, *(c["sha"] for c in (*low, *built, *high)), commit_range.bad_commit],
            "commit_range": commit_range.id}
    if built:
        meta["source_builds"] = len(built)
    elif cpp:
        gap = commits[cpp[0]:cpp[-1] + 1]
        meta["gap"] = {"after": len(low), "shas": [c["sha"] for c in gap], "cpp": len(cpp)}
    return builds, meta


def _facts(commit_range: CommitRange, sha: str) -> dict:
    record = next((c for c in commit_range.commits if c["sha"] == sha), {"sha": sha})
    return {k: record.get(k, "") for k in ("sha", "subject", "author", "time", "kind", "areas")} | {"link": commit_link(sha)}


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def commit_culprit(*, bisection, values: dict[int, list[float]]) -> dict:
    """What a finished bisection over commits found: the culprit commit with the values measured on
    both sides, or the commits that need a source build to tell apart."""
    commit_range = CommitRange.objects.get(pk=bisection.result["commit_range"])
    shas, gap = bisection.result["shas"], bisection.result.get("gap")
    low, high = bisection.low, bisection.high
    sides = {"before": _mean(values.get(low, [])), "after": _mean(values.get(high, [])),
             "before_values": values.get(low, []), "after_values": values.get(high, []), "last_good": shas[low]}
    if gap and low == gap["after"] and high == gap["after"] + 1:
        candidates = [_facts(commit_range, sha) for sha in gap["shas"]]
        return {"needs_source_build": candidates, "count": len(candidates), "cpp": gap["cpp"], **sides,
                "message": f"needs a source build: {len(candidates)} commit{'s' * (len(candidates) != 1)} "
                           f"({gap['cpp']} touching C++), {gap['shas'][0][:12]}..{gap['shas'][-1][:12]}"}
    culprit = _facts(commit_range, shas[high])
    return {**culprit, **sides, "message": f"culprit commit {culprit['sha'][:12]} \"{culprit['subject']}\" by {culprit['author']}"}
