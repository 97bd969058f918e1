"""The admin names an interpreter; the worker decides whether to run it (issue #46 item 5): only its
own builds and interpreters under PTBENCH_BUILDS_ROOT; anything else is refused on the worker,
reported as the probe's error and never run (contract/interpreters.py)."""
from __future__ import annotations

import dataclasses
import sys

import pytest

from contract.interpreters import builds_roots, interpreter_refusal, roots_problem


@pytest.mark.parametrize("python, allowed", [
    ("/opt/builds/torch-2.13/bin/python", True), ("/opt/builds/x/../y/bin/python", True),
    ("/opt/builds/../../usr/bin/python3", False), ("/opt/buildsX/bin/python", False), ("/tmp/evil", False),
    ("python3", False), ("", False), ("/opt/builds", False),
])
def test_the_rule(python, allowed):
    refusal = interpreter_refusal(python, roots=builds_roots({"PTBENCH_BUILDS_ROOT": "/opt/builds/, /srv/envs"}))
    assert (refusal is None) == allowed, refusal
    assert interpreter_refusal("/usr/bin/python3", roots=(), known=["/usr/bin/python3"]) is None  # its own
    assert "PTBENCH_BUILDS_ROOT (unset)" in interpreter_refusal("/usr/bin/python3", roots=())
    assert roots_problem(("relative/dir",)) and roots_problem(("/abs",)) is None


def test_the_worker_refuses_a_path_outside_its_root_and_reports_it(monkeypatch):
    from runner.worker import tasks
    from runner.worker.builds import LocalBuilds
    from runner.worker.config import BuildEntry

    reports, probed = [], []
    monkeypatch.setattr(tasks, "notify", lambda kind, **report: reports.append(report))
    monkeypatch.setattr(tasks, "config", dataclasses.replace(
        tasks.config, builds=(BuildEntry(python="/srv/own/python", local_label=None),), builds_roots=("/opt/builds",)))
    monkeypatch.setattr(LocalBuilds, "probe", classmethod(lambda cls, entries: probed.append([e.python for e in entries]) or cls()))
    monkeypatch.setitem(tasks._state, "extra", ())
    monkeypatch.setitem(tasks._state, "refused", ())
    tasks.probe_builds.run(python="/tmp/evil")
    assert probed == [["/srv/own/python"]]  # never run
    assert [e["python"] for e in reports[-1]["errors"]] == ["/tmp/evil"] and "refused" in reports[-1]["errors"][0]["error"]
    tasks.probe_builds.run(python="/opt/builds/t/bin/python")
    assert probed[-1] == ["/srv/own/python", "/opt/builds/t/bin/python"] and reports[-1]["errors"] == []
    tasks.probe_builds.run(python=sys.executable)  # the worker's own interpreter: probed as before
    assert probed[-1][-1] == sys.executable
