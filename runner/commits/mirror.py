"""Reading the worker's PyTorch git mirror (``PTBENCH_TORCH_MIRROR``: a clone the operator keeps
fetched; never a path from a message): a build's ``main`` commit, the commits between two builds,
and the Python files under ``torch/`` at a commit. Every call is ``git`` with arguments made here
from validated shas."""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

from contract.commits import SHA, commit_record, main_commit_of, needs_source_build, overlay_file

MAX_COMMITS = 5000  # a range longer than this is refused: bounded work per request
BUILD_REF = "refs/ptbench/builds/{git_sha}"  # a build the mirror lacks (a local build): the commit it was made from


class MirrorError(RuntimeError):
    """The mirror is missing, or cannot answer (an unknown commit, a range too long)."""


@dataclass(frozen=True)
class Mirror:
    path: str

    @classmethod
    def from_env(cls, environ=None) -> Mirror | None:
        path = (os.environ if environ is None else environ).get("PTBENCH_TORCH_MIRROR", "")
        return cls(path) if path else None

    def git(self, *args: str, binary: bool = False, check: bool = True):
        if not os.path.isdir(self.path):
            raise MirrorError(f"PTBENCH_TORCH_MIRROR={self.path!r}: not a directory")
        done = subprocess.run(["git", "-C", self.path, *args], capture_output=True, timeout=300,
                              text=not binary, env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
        if check and done.returncode != 0:
            err = done.stderr if isinstance(done.stderr, str) else done.stderr.decode(errors="replace")
            raise MirrorError(f"git {args[0]}: {err.strip()[-500:]}")
        return done

    def has(self, rev: str) -> bool:
        return self.git("cat-file", "-e", f"{rev}^{{commit}}", check=False).returncode == 0

    def main_commit(self, git_sha: str) -> str:
        """The ``main`` commit a build was made from: a nightly's names it in its subject; a ref
        ``refs/ptbench/builds/<git_sha>`` maps a build the mirror lacks; else the commit itself."""
        if not SHA.fullmatch(git_sha or ""):
            raise MirrorError(f"build sha {git_sha!r}: not 40 hex digits (the build does not say its commit)")
        ref = BUILD_REF.format(git_sha=git_sha)
        if self.has(ref):
            return self.git("rev-parse", f"{ref}^{{commit}}").stdout.strip()
        if not self.has(git_sha):
            raise MirrorError(f"commit {git_sha[:12]} is not in the mirror {self.path} (fetch it, or add {ref})")
        subject = self.git("log", "-1", "--format=%s", git_sha).stdout.strip()
        main = main_commit_of(subject)
        if main and not self.has(main):
            raise MirrorError(f"nightly {git_sha[:12]} names main commit {main[:12]}, which the mirror lacks")
        return main or git_sha

    def commits_between(self, good: str, bad: str) -> list[dict]:
        """The commits after ``good`` up to ``bad`` (both main commits), oldest first, each with
        what it touches (``contract.commits.commit_record``)."""
        for sha in (good, bad):
            if not SHA.fullmatch(sha):
                raise MirrorError(f"{sha!r}: not 40 hex digits")
        count = int(self.git("rev-list", "--count", "--first-parent", f"{good}..{bad}").stdout.strip() or 0)
        if count > MAX_COMMITS:
            raise MirrorError(f"{count} commits between {good[:12]} and {bad[:12]}: more than {MAX_COMMITS}")
        if count == 0 and self.git("merge-base", "--is-ancestor", good, bad, check=False).returncode != 0:
            raise MirrorError(f"{good[:12]} is not an ancestor of {bad[:12]}")
        text = self.git("log", "--reverse", "--first-parent", "-m", "--name-only", "-z",
                        "--format=%x01%H%x00%an%x00%aI%x00%s%x00", f"{good}..{bad}").stdout
        commits = []
        for chunk in text.split("\x01")[1:]:
            sha, author, time, subject, *rest = chunk.split("\x00")
            paths = [p.strip("\n") for p in rest if p.strip("\n")]
            commits.append(commit_record(sha=sha, subject=subject, author=author, time=time, paths=paths))
        return commits

    def changed_paths(self, a: str, b: str) -> list[str]:
        """Every path that differs between two commits."""
        return [p for p in self.git("diff", "--name-only", "-z", a, b).stdout.split("\x00") if p]

    def overlay_changes(self, base: str, commit: str) -> tuple[list[str], list[str]]:
        """The Python files under ``torch/`` that differ between ``base`` and ``commit``, as (changed
        or added, deleted). Raises ``MirrorError`` when anything else a build holds differs (C++,
        build files): that range needs a source build."""
        paths = self.changed_paths(base, commit)
        blocking = [p for p in paths if needs_source_build(p)]
        if blocking:
            raise MirrorError(f"{base[:12]}..{commit[:12]} changes {len(blocking)} file(s) an overlay cannot carry "
                              f"(needs a source build), e.g. {', '.join(blocking[:3])}")
        present = set(self.git("ls-tree", "-r", "--name-only", "-z", commit, "--", "torch").stdout.split("\x00"))
        files = [p for p in paths if overlay_file(p)]
        return [p for p in files if p in present], [p for p in files if p not in present]

    def read(self, commit: str, path: str) -> bytes:
        return self.git("show", f"{commit}:{path}", binary=True).stdout

    def commit_facts(self, sha: str) -> dict:
        subject, author, time = self.git("log", "-1", "--format=%s%x00%an%x00%aI", sha).stdout.rstrip("\n").split("\x00")
        return {"sha": sha, "subject": subject, "author": author, "time": time}
