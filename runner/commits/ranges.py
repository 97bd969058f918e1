"""A worker's answer to "which commits lie between these two builds?" (issue #41): each build's
``main`` commit and the commits after the good one up to the bad one, read from its mirror."""
from __future__ import annotations

from runner.commits.mirror import Mirror, MirrorError


def commit_range(*, good_sha: str, bad_sha: str, mirror: Mirror | None = None) -> dict:
    """``{"good_commit", "bad_commit", "commits": [...]}``, or ``{"error": ...}`` (no mirror, an
    unknown commit): an answer either way, never an exception."""
    mirror = mirror or Mirror.from_env()
    if mirror is None:
        return {"error": "no PyTorch mirror on this worker (set PTBENCH_TORCH_MIRROR to a clone kept fetched)"}
    try:
        good, bad = mirror.main_commit(good_sha), mirror.main_commit(bad_sha)
        return {"good_commit": good, "bad_commit": bad, "commits": mirror.commits_between(good, bad)}
    except MirrorError as exc:
        return {"error": str(exc)[:2000]}
