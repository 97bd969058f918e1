"""The worker's source-build command (issue #41, docs/builds.md): only its own PTBENCH_SOURCE_BUILD
(an argv list; the message names a commit), run once per commit into a directory renamed into place
once it holds an interpreter; a failing command leaves nothing and says why; the build a case of a
C++ commit runs on. The command here is a trivial script: a venv of this interpreter (its torch seen
through a .pth) that records it was called."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from runner.commits.source_build import SourceBuilder, SourceBuildError
from runner.worker import overlays
from runner.worker.builds import BuildUnavailable, LocalBuilds

COMMIT = "c0ffee" + "0" * 34
SCRIPT = """#!/bin/sh
# argv: commit out record
set -e
echo "building $1"
[ "$1" = "%s" ] || { echo "refusing $1"; exit 3; }
"%s" -m venv --without-pip "$2"
echo "import site; site.addsitedir('%s')" > "$2/lib/python%d.%d/site-packages/_base.pth"
echo "$1" >> "$3"
"""


@pytest.fixture
def builder(tmp_path, monkeypatch):
    site = next(p for p in sys.path if p.endswith("site-packages"))
    script = tmp_path / "build.sh"
    script.write_text(SCRIPT % (COMMIT, sys.executable, site, *sys.version_info[:2]))
    script.chmod(0o755)
    record = tmp_path / "called.txt"
    monkeypatch.setenv("PTBENCH_SOURCE_BUILD", json.dumps([str(script), "{commit}", "{out}", str(record)]))
    monkeypatch.setenv("PTBENCH_SOURCE_BUILD_DIR", str(tmp_path / "builds"))
    return SourceBuilder.from_env(), record


def test_settings_are_the_workers_own_and_checked(monkeypatch):
    assert SourceBuilder.from_env({}) is None
    for text in ("make torch", '["relative/build.sh"]', "[]", '["/bin/sh", 3]'):
        with pytest.raises(SourceBuildError, match="PTBENCH_SOURCE_BUILD"):
            SourceBuilder.from_env({"PTBENCH_SOURCE_BUILD": text})
    builder = SourceBuilder.from_env({"PTBENCH_SOURCE_BUILD": '["/b", "{commit}", "--out={out}", "{out}"]'})
    assert builder.command(commit=COMMIT, out=Path("/o")) == ["/b", COMMIT, "--out={out}", "/o"]  # whole arguments only


def test_a_source_build_is_made_once_atomically_and_a_failure_leaves_nothing(builder, tmp_path):
    source, record = builder
    python = source.make(COMMIT)
    assert Path(python).is_file() and python == str(tmp_path / "builds" / COMMIT / "env" / "bin" / "python")
    assert "building " + COMMIT in (tmp_path / "builds" / COMMIT / "build.log").read_text()
    assert source.make(COMMIT) == python and record.read_text().split() == [COMMIT]  # kept: called once
    other = "b" * 40
    with pytest.raises(SourceBuildError, match=f"exited 3:\nbuilding {other}\nrefusing {other}"):
        source.make(other)
    assert sorted(p.name for p in (tmp_path / "builds").iterdir()) == [COMMIT]  # nothing half-made
    with pytest.raises(SourceBuildError, match="not 40 hex"):
        source.make("../../etc")


def test_a_case_of_a_source_build_runs_on_what_the_command_made(builder, monkeypatch):
    source, record = builder
    monkeypatch.setattr(overlays, "probe_environment", lambda python, timeout_s: {
        "build": {"git_sha": "f" * 40, "local_label": "", "torch_version": "2.14.0a0+gitc0ffee0", "environment": {}}})
    build = {"git_sha": COMMIT, "local_label": "source", "torch_version": "2.14.0.dev20261127+cpu",
             "source_build": {"commit": COMMIT}}
    found = overlays.find_or_overlay(LocalBuilds(), build)
    assert found.python.endswith(f"{COMMIT}/env/bin/python")
    facts = found.environment["build"]
    assert (facts["git_sha"], facts["local_label"], facts["torch_version"]) == (COMMIT, "source", "2.14.0.dev20261127+cpu")
    assert facts["environment"]["source_build"] == {"commit": COMMIT, "subject": "", "torch_version": "2.14.0a0+gitc0ffee0"}
    with pytest.raises(BuildUnavailable, match="malformed source build"):
        overlays.find_or_overlay(LocalBuilds(), {**build, "source_build": {"commit": "a" * 40}})
    monkeypatch.delenv("PTBENCH_SOURCE_BUILD")
    with pytest.raises(BuildUnavailable, match="no PTBENCH_SOURCE_BUILD"):
        overlays.find_or_overlay(LocalBuilds(), {**build, "git_sha": "d" * 40, "source_build": {"commit": "d" * 40}})
