"""Bisection over commits (issue #41) through the services, the workers played by the test
(tests/bisect/planted.py): a listed range with a C++ commit in the middle becomes overlay builds on
the good build before it and on the bad build after it; the planted commit is named with its values
on both sides, or, when the change lies across the C++ commit, the commits that need a source build.
The API, the verdict and the CSV show it. The real mirror and workers: tests/dispatch/test_commit_bisect_workers.py."""
from __future__ import annotations

import pytest
from django.test import Client

from dashboard.regressions.models import Bisection, CommitRange
from dashboard.regressions.services import commits as commit_services
from dashboard.regressions.services.bisect import BisectError, bisection_start
from dashboard.regressions.services.commits import commit_range_listed, commit_range_request
from tests.fixtures.api import fields
from tests.bisect.planted import SHAS, measure, nightly, no_broker, plant

pytestmark = pytest.mark.django_db
COMMITS = [f"a{n}" * 20 for n in range(7)] + [SHAS[5]]  # seven commits after the good one, the bad one's last
KINDS = ["python", "python", "python", "cpp", "python", "python", "python", "python"]


def answer(kinds=KINDS) -> dict:
    commits = [{"sha": sha, "subject": f"change {n}", "author": f"Dev {n}", "time": f"2026-11-0{1 + n % 5}T0{n}:00:00+00:00",
                "kind": kind, "areas": ["_inductor"] if kind == "python" else [], "python_files": 1, "files": 1}
               for n, (sha, kind) in enumerate(zip(COMMITS, kinds))]
    return {"good_commit": SHAS[0], "bad_commit": SHAS[5], "commits": commits}


@pytest.fixture
def listed(monkeypatch):
    no_broker(monkeypatch)
    asked = []
    monkeypatch.setattr(commit_services, "_send", lambda row, **kw: asked.append(kw))
    regression = plant(known=(0, 5))  # no build between is known: only commits can narrow it
    with pytest.raises(BisectError) as refused:
        bisection_start(regression=regression, kind="commits", requested_by="test")
    assert refused.value.field == "commits" and "not listed yet" in refused.value.message
    row = commit_range_request(good=nightly(0), bad=nightly(5), machine_class="cpu")  # asked once (the refusal rolled back)
    assert asked == [{"good_sha": SHAS[0], "bad_sha": SHAS[5]}]
    return regression, row


def commit_value(change_at: str):
    """The planted change: 3 ms from commit ``change_at`` on (an overlay's git sha is its commit's)."""
    order = [SHAS[0], *COMMITS]
    return lambda build: 3.0 if order.index(build.git_sha) >= order.index(change_at) else 2.0


def test_the_planted_python_commit_is_named_with_the_values_on_both_sides(listed):
    regression, row = listed
    row = commit_range_listed(range_id=row.id, answer=answer())
    assert row.status == "listed" and len(row.commits) == 8
    bisection = bisection_start(regression=regression, kind="commits", requested_by="test", attempts=2)
    builds = [nightly(0).id, *bisection.builds[1:-1], nightly(5).id]
    assert bisection.builds == builds and len(builds) == 9 and bisection.result["gap"] == {"after": 3, "shas": [COMMITS[3]], "cpp": 1}
    from dashboard.results.models import Build

    overlays = [Build.objects.get(pk=i) for i in builds[1:-1]]
    assert [b.git_sha for b in overlays] == COMMITS[:7]  # three on the good build, then the C++ one and three more on the bad
    assert {b.environment["overlay"]["base_build"] for b in overlays[:3]} == {nightly(0).id}
    assert {b.environment["overlay"]["base_build"] for b in overlays[3:]} == {nightly(5).id}
    assert overlays[0].local_label == f"py-on-{SHAS[0][:12]}"

    bisection = measure(bisection, value=commit_value(COMMITS[1]), rounds=6)
    assert bisection.status == "done", bisection.result
    culprit = bisection.result["commit"]
    assert culprit["sha"] == COMMITS[1] and culprit["subject"] == "change 1" and culprit["author"] == "Dev 1"
    assert culprit["link"] == f"https://github.com/pytorch/pytorch/commit/{COMMITS[1]}"
    assert 1.9 < culprit["before"] < 2.1 and 2.9 < culprit["after"] < 3.1 and culprit["last_good"] == COMMITS[0]
    assert len(bisection.steps) <= 3
    regression.refresh_from_db()
    assert regression.culprit_commit["sha"] == COMMITS[1]

    client = Client()
    found = client.get(f"/api/v1/regressions/{regression.id}/").json()
    assert found["culprit_commit"]["sha"] == COMMITS[1] and found["commit_range"]["count"] == 8
    assert found["commit_range"]["cpp"] == 1 and found["commit_range"]["areas"] == {"_inductor": 7}
    assert found["commit_range"]["commits"][3]["kind"] == "cpp"
    verdict = client.get("/api/v1/verdict/", {"build": SHAS[5][:12], "machine_class": "cpu", "baseline": SHAS[0][:12]}).json()
    if any(r.get("id") == regression.id for r in verdict["regressions"]):
        assert verdict["culprits"][0]["sha"] == COMMITS[1]
    csv = client.get("/regressions/?format=csv").content.decode()
    assert COMMITS[1] in csv and "8 commits: 1 touching C++, 7 only Python under torch/ (_inductor 7)" in csv
    page = client.get(f"/regressions/{regression.id}/").content.decode()
    assert 'id="culprit-commit"' in page and "change 1" in page and "C++ (needs a source build)" in page


def test_a_change_across_the_cpp_commit_names_the_commits_that_need_a_source_build(listed):
    regression, row = listed
    commit_range_listed(range_id=row.id, answer=answer())
    bisection = bisection_start(regression=regression, kind="commits", requested_by="test", attempts=2)
    bisection = measure(bisection, value=commit_value(COMMITS[3]), rounds=6)
    assert bisection.status == "done", bisection.result
    culprit = bisection.result["commit"]
    assert [c["sha"] for c in culprit["needs_source_build"]] == [COMMITS[3]] and culprit["cpp"] == 1
    assert culprit["message"].startswith("needs a source build: 1 commit (1 touching C++)")


def test_with_a_source_build_command_the_commits_between_cpp_ones_are_source_builds_and_the_culprit_is_named(listed):
    """The worker that listed the range has PTBENCH_SOURCE_BUILD: the commits from the first C++ one
    up to the last are measured on source builds (the last C++ one is an overlay on the bad build)."""
    regression, row = listed
    kinds = ["python", "python", "cpp", "python", "cpp", "python", "python", "python"]
    row = commit_range_listed(range_id=row.id, answer={**answer(kinds), "source_build": True})
    assert row.source_build is True
    bisection = bisection_start(regression=regression, kind="commits", requested_by="test", attempts=2)
    from dashboard.dispatch.services.runs import case_message
    from dashboard.results.models import Build

    chain = [Build.objects.get(pk=i) for i in bisection.builds]
    assert [b.git_sha for b in chain[1:-1]] == COMMITS[:7] and "gap" not in bisection.result
    assert [b.local_label for b in chain[3:5]] == ["source", "source"]
    assert chain[3].environment["source_build"]["commit"] == COMMITS[2]
    bisection = measure(bisection, value=commit_value(COMMITS[3]), rounds=6)  # the Python commit between the C++ ones
    assert bisection.status == "done" and bisection.result["commit"]["sha"] == COMMITS[3], bisection.result
    from dashboard.dispatch.models import CaseTask

    source_cases = CaseTask.objects.filter(run__build__local_label="source")
    assert source_cases.exists() and all(case_message(c)["build"]["source_build"]["commit"] == c.run.build.git_sha
                                         for c in source_cases)
    # the same range listed by a worker without the command: those commits are named, not built
    row.source_build = False
    row.save()
    regression.refresh_from_db()
    again = bisection_start(regression=regression, kind="commits", requested_by="test", attempts=2)
    assert again.result["gap"] == {"after": 2, "shas": COMMITS[2:5], "cpp": 2}


def test_malformed_answers_fail_the_range_naming_the_field_and_all_cpp_cannot_be_bisected(listed, writer):
    regression, row = listed
    bad = answer()
    bad["commits"][2]["sha"] = "not-a-sha"
    row = commit_range_listed(range_id=row.id, answer=bad)
    assert row.status == "failed" and row.error.startswith("commits[2].sha")
    assert commit_range_listed(range_id=row.id + 1, answer=answer()) is None and commit_range_listed(range_id="1", answer={}) is None
    row = commit_range_listed(range_id=row.id, answer={"error": "no PyTorch mirror on this worker"})
    assert row.status == "failed" and "no PyTorch mirror" in row.error
    response = writer.post(f"/api/v1/regressions/{regression.id}/bisect/", {"kind": "commits"}, format="json")
    assert response.status_code == 400 and fields(response) == ["commits"] and not Bisection.objects.exists()
    CommitRange.objects.filter(pk=row.id).update(status="pending")
    commit_range_listed(range_id=row.id, answer=answer(kinds=["cpp"] * 8))
    with pytest.raises(BisectError, match="needs a source build: all 8 commits"):
        bisection_start(regression=regression, kind="commits", requested_by="test")


def test_a_bisection_over_builds_is_followed_by_one_over_the_commits_of_its_culprit_pair(monkeypatch, settings,
                                                                                        django_capture_on_commit_callbacks):
    from dashboard.regressions.services.bisect_auto import commit_bisections_start_auto

    no_broker(monkeypatch)
    asked = []
    monkeypatch.setattr(commit_services, "_send", lambda row, **kw: asked.append(kw))
    settings.BISECT_AUTO_CLASSES = ["cpu"]
    regression = plant()  # six builds the class knows: over builds first
    with django_capture_on_commit_callbacks(execute=True):
        bisection = measure(bisection_start(regression=regression, requested_by="automatic"), rounds=4)
    assert bisection.status == "done" and bisection.culprit_build == nightly(2)
    assert asked == [{"good_sha": SHAS[1], "bad_sha": SHAS[2]}]  # the culprit pair's commits, asked of a worker
    pair = [f"b{n}" * 20 for n in range(2)] + [SHAS[2]]
    row = commit_range_listed(range_id=CommitRange.objects.get(good_build=nightly(1), bad_build=nightly(2)).id, answer={
        "good_commit": SHAS[1], "bad_commit": SHAS[2], "commits": [
            {"sha": sha, "subject": f"pair {n}", "author": "Dev", "time": f"2026-11-02T0{n}:00:00+00:00", "kind": "python",
             "areas": ["_dynamo"], "python_files": 1, "files": 1} for n, sha in enumerate(pair)]})
    [started] = commit_bisections_start_auto(commit_range=row)
    follow = Bisection.objects.get(pk=started)
    assert follow.regression == regression and follow.kind == "commits" and len(follow.builds) == 4
    assert follow.builds[0] == nightly(1).id and follow.builds[-1] == nightly(2).id
    follow = measure(follow, value=lambda b: 3.0 if b.git_sha in (pair[1], SHAS[2]) else 2.0, rounds=4)
    assert follow.status == "done" and follow.result["commit"]["sha"] == pair[1]
    assert commit_bisections_start_auto(commit_range=row) == []  # once
