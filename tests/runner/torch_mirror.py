"""A git mirror made from the installed torch's own Python files (issue #41): commit 1 is the files
as installed; helpers add harmless commits, planted ones and one that touches C++."""
from __future__ import annotations

import itertools
import os
import subprocess
from pathlib import Path

import torch

TORCH_DIR = Path(torch.__file__).parent
PLANT_KEY = "debug_force_graph_break_on_leaf_return = False"  # torch/_dynamo/config.py: a graph break on each leaf return


_clock = itertools.count()


def git(repo: Path, *args: str) -> str:
    """git in ``repo``; each commit an hour after the one before (their order on trends)."""
    tick = next(_clock)
    when = f"2026-11-{1 + tick // 24 % 28:02d}T{tick % 24:02d}:00:00+00:00"
    env = {**os.environ, "GIT_AUTHOR_NAME": "Ada Planter", "GIT_AUTHOR_EMAIL": "ada@example.com",
           "GIT_COMMITTER_NAME": "Ada Planter", "GIT_COMMITTER_EMAIL": "ada@example.com",
           "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env).stdout.strip()


def mirror_from_installed(repo: Path, areas=("_dynamo",), torch_dir: Path = TORCH_DIR) -> str:
    """A repository whose first commit holds torch/<area>/**.py as installed (this interpreter's
    torch, or ``torch_dir``); returns its sha. (bench/commit_bisect*.py use it too.)"""
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    for area in areas:
        for source in sorted((torch_dir / area).rglob("*.py")):
            target = repo / "torch" / source.relative_to(torch_dir)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "torch as installed")
    return git(repo, "rev-parse", "HEAD")


def commit_change(repo: Path, path: str, subject: str, *, old: str | None = None, new: str | None = None,
                  append: str | None = None) -> str:
    file = repo / path
    file.parent.mkdir(parents=True, exist_ok=True)
    text = file.read_text() if file.exists() else ""
    if old is not None:
        assert old in text, f"{old!r} not in {path}"
        text = text.replace(old, new, 1)
    if append is not None:
        text += append
    file.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", subject)
    return git(repo, "rev-parse", "HEAD")


def harmless(repo: Path, n: int) -> str:
    return commit_change(repo, "torch/_dynamo/config.py", f"dynamo: comment {n}", append=f"# harmless change {n}\n")


def planted(repo: Path) -> str:
    return commit_change(repo, "torch/_dynamo/config.py", "dynamo: force a graph break on leaf returns (planted)",
                         old=PLANT_KEY, new=PLANT_KEY.replace("False", "True"))
