"""The worker's mirror and overlay builds (issue #41) on a mirror made from the installed torch's
own Python files: commits listed and classified, an overlay that carries a planted change in
torch/_dynamo without touching the base, and one refused across a commit touching torch/csrc."""
from __future__ import annotations

import subprocess
import sys

import pytest

from runner.commits.mirror import BUILD_REF, Mirror, MirrorError
from runner.commits.overlay import OverlayRefused, overlay_make, overlays_prune
from tests.runner.torch_mirror import PLANT_KEY, TORCH_DIR, commit_change, git, harmless, mirror_from_installed, planted

FLAG = "import torch._dynamo.config as c; print(c.debug_force_graph_break_on_leaf_return)"


@pytest.fixture(scope="module")
def mirror(tmp_path_factory):
    repo = tmp_path_factory.mktemp("mirror")
    first = mirror_from_installed(repo)
    commits = [first, harmless(repo, 1), planted(repo), harmless(repo, 2)]
    cpp = commit_change(repo, "torch/csrc/dynamo/guards.cpp", "dynamo: C++ guard change", append="// x\n")
    commits += [cpp, harmless(repo, 3)]
    return Mirror(str(repo)), commits


def test_the_range_lists_subjects_authors_and_what_each_commit_touches(mirror):
    m, commits = mirror
    listed = m.commits_between(commits[0], commits[-1])
    assert [c["sha"] for c in listed] == commits[1:]
    assert [c["kind"] for c in listed] == ["python", "python", "python", "cpp", "python"]
    assert listed[1]["subject"].endswith("(planted)") and listed[1]["author"] == "Ada Planter" and listed[1]["areas"] == ["_dynamo"]
    with pytest.raises(MirrorError, match="not an ancestor"):
        m.commits_between(commits[2], commits[1])


def test_a_build_maps_to_its_main_commit_through_a_nightly_subject_or_a_ref(mirror):
    m, commits = mirror
    assert m.main_commit(commits[2]) == commits[2]
    git_repo = m.path
    nightly = git(git_repo, "commit-tree", f"{commits[1]}^{{tree}}", "-m", f"2026-11-27 nightly release ({commits[1]})")
    assert m.main_commit(nightly) == commits[1]
    installed = "c" * 40  # a build whose sha the mirror lacks: an operator's ref maps it
    with pytest.raises(MirrorError, match="not in the mirror"):
        m.main_commit(installed)
    git(git_repo, "update-ref", BUILD_REF.format(git_sha=installed), commits[0])
    assert m.main_commit(installed) == commits[0]


def test_an_overlay_carries_the_planted_commit_and_leaves_the_base_alone(mirror, tmp_path):
    m, commits = mirror
    base_file = TORCH_DIR / "_dynamo" / "config.py"
    before = base_file.read_bytes()
    overlay = overlay_make(base_python=sys.executable, base_commit=commits[0], commit=commits[3], mirror=m, cache_dir=tmp_path)
    assert overlay.files == ("torch/_dynamo/config.py",) and overlay.new_bytes > 0
    shown = subprocess.run([overlay.python, "-c", FLAG + "; import torch; print(torch.__file__)"], capture_output=True, text=True, check=True).stdout.split()
    assert shown[0] == "True" and shown[1].startswith(overlay.path)
    assert base_file.read_bytes() == before and PLANT_KEY.encode() in before
    again = overlay_make(base_python=sys.executable, base_commit=commits[0], commit=commits[3], mirror=m, cache_dir=tmp_path)
    assert again.python == overlay.python and again.seconds == 0  # the cache answers
    assert overlays_prune(cache_dir=tmp_path, keep=0) == [overlay.path]


def test_an_overlay_across_a_commit_touching_torch_csrc_is_refused(mirror, tmp_path):
    m, commits = mirror
    with pytest.raises(OverlayRefused, match="needs a source build.*torch/csrc/dynamo/guards.cpp"):
        overlay_make(base_python=sys.executable, base_commit=commits[0], commit=commits[5], mirror=m, cache_dir=tmp_path)
    # from the C++ commit on, Python-only again: an overlay on a build at the C++ commit is fine
    m.overlay_changes(commits[4], commits[5])
    assert not list(tmp_path.iterdir())  # nothing half-made left
