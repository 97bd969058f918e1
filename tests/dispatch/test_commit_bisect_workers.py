"""Bisection to the commit (issue #41) through real processes: a mirror made from the installed
torch's own Python files (commit 1 as installed, mapped to the installed build by a ref), harmless
commits and one planted in torch/_dynamo that makes every leaf return a graph break. Two builds
taken in as overlays measure a tiny MLP (eager backend: graph breaks are counts, nothing is
timed); detection flags more graph breaks; the class bisects automatically, so the dashboard asks
the runner worker for the commits between them, and bisects over overlay builds the worker makes
from its mirror, down to the planted commit."""
from __future__ import annotations

import pytest

from dashboard.regressions.models import Bisection, CommitRange, Regression
from dashboard.regressions.services.commits import overlay_build_get_or_create
from dashboard.results.models import Result, Run
from runner.commits.mirror import BUILD_REF, Mirror
from tests.fixtures.workers import QUICK, wait_for
from tests.dispatch.test_bisect_workers import ended
from tests.dispatch.test_workers import finished, reported_build, request
from tests.runner.torch_mirror import git, harmless, mirror_from_installed, planted

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_the_planted_commit_is_named_through_overlay_builds(start_workers, queue_name, tmp_path):
    repo = tmp_path / "mirror"
    first = mirror_from_installed(repo)
    commits = [first, harmless(repo, 1), harmless(repo, 2), planted(repo), harmless(repo, 3)]
    runner, dashboard = start_workers
    dashboard(PTBENCH_BISECT_AUTO_CLASSES=queue_name)
    installed = reported_build(runner("w0", PTBENCH_TORCH_MIRROR=str(repo), PTBENCH_OVERLAY_DIR=str(tmp_path / "overlays")), queue_name)
    git(repo, "update-ref", BUILD_REF.format(git_sha=installed.git_sha), first)  # the installed build is commit 1
    mirror = Mirror(str(repo))
    good, bad = (overlay_build_get_or_create(base=installed, commit=mirror.commit_facts(sha)) for sha in (commits[1], commits[-1]))
    for build in (good, bad):  # the nightly measurements of two builds taken in as overlays
        run = request(build, queue_name, [QUICK], regimes=["static"])
        run = wait_for(lambda r=run: finished(r.id), timeout=240, what=f"the run of {build}")
        assert run.status == Run.Status.COMPLETED
    before, after = (Result.objects.get(build=b, run__reason="requested") for b in (good, bad))
    assert before.graph_break_count == 0 < after.graph_break_count
    assert after.run.build_facts["environment"]["overlay"]["files"] == ["torch/_dynamo/config.py"]

    found = wait_for(lambda: Regression.objects.filter(metric="graph_breaks", first_bad_build=bad).first(),
                     timeout=120, what="detection's finding")
    assert found.last_good_build == good
    listed = wait_for(lambda: CommitRange.objects.filter(good_build=good, bad_build=bad).exclude(status="pending").first(),
                      timeout=120, what="the worker's list of commits")
    assert listed.status == "listed", listed.error
    assert [c["sha"] for c in listed.commits] == commits[2:] and {c["kind"] for c in listed.commits} == {"python"}
    bisection = wait_for(lambda: Bisection.objects.filter(kind="commits").first(), timeout=60,
                         what="the automatic bisection over commits")
    regression = bisection.regression
    assert regression.metric == "graph_breaks" and bisection.attempts == 1
    bisection = wait_for(lambda: ended(bisection.id), timeout=480, what="the bisection to end")
    assert bisection.status == Bisection.Status.DONE, bisection.result
    culprit = bisection.result["commit"]
    assert culprit["sha"] == commits[3] and culprit["subject"].endswith("(planted)") and culprit["author"] == "Ada Planter"
    assert culprit["before"] == 0 and culprit["after"] > 0 and culprit["last_good"] == commits[2]
    # one run a build (a count), both ends and two midpoints; one search for the series' findings
    assert [s["decision"] for s in bisection.steps] == ["good", "bad"] and bisection.result["runs"] == 4
    assert Bisection.objects.filter(kind="commits").count() == 1
    regression.refresh_from_db()
    assert regression.culprit_commit["sha"] == commits[3]
