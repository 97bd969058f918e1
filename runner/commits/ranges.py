"""A worker's answer to "which commits lie between these two builds?" (issue #41): each build's
``main`` commit and the commits after the good one up to the bad one, read from its mirror."""
from __future__ import annotations

from runner.commits.mirror import Mirror, MirrorError
from runner.commits.source_build import SourceBuilder, SourceBuildError


def source_build_configured() -> bool:
    """Whether this worker's operator configured a source-build command (a malformed one is not)."""
    try:
        return SourceBuilder.from_env() is not None
    except SourceBuildError:
        return False


def commit_range(*, good_sha: str, bad_sha: str, mirror: Mirror | None = None) -> dict:
    """``{"good_commit", "bad_commit", "commits": [...]}``, or ``{"error": ...}`` (no mirror, an
    unknown commit): an answer either way, never an exception."""
    mirror = mirror or Mirror.from_env()
    if mirror is None:
        return {"error": "no PyTorch mirror on this worker (set PTBENCH_TORCH_MIRROR to a clone kept fetched)"}
    try:
        good, bad = mirror.main_commit(good_sha), mirror.main_commit(bad_sha)
        return {"good_commit": good, "bad_commit": bad, "commits": mirror.commits_between(good, bad),
                "source_build": source_build_configured()}  # C++ commits can be built here (docs/builds.md)
    except MirrorError as exc:
        return {"error": str(exc)[:2000]}
