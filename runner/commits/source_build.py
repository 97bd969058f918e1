"""Source builds (issue #41, docs/builds.md): a commit that touches C++ is measured on a build made by
the command the worker's operator configured, never one from a message:

    PTBENCH_SOURCE_BUILD          a JSON list, the command's argv, e.g.
                                  ["/opt/ptbench/build-torch.sh", "{commit}", "{out}", "{mirror}"];
                                  {commit} is the 40-hex commit, {out} a new directory the command fills
                                  with an environment whose interpreter is {out}/bin/python, {mirror}
                                  PTBENCH_TORCH_MIRROR. Nothing else is substituted; no shell runs it.
    PTBENCH_SOURCE_BUILD_DIR      where the builds are kept (default $TMPDIR/ptbench-source-builds)
    PTBENCH_SOURCE_BUILD_TIMEOUT_S the command's limit (default 14400)
    PTBENCH_SOURCE_BUILD_KEEP     how many builds to keep, most recently used first (default 10)

Each build is made in a temporary directory and renamed into place once its interpreter exists (a
half-made build is never used); the command's output is kept beside it (``build.log``)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from contract.commits import SHA

MARKER = "source-build.json"


class SourceBuildError(RuntimeError):
    """No source build: none configured, a malformed setting, or the command failed (its log's tail)."""


@dataclass(frozen=True)
class SourceBuilder:
    argv: tuple[str, ...]
    root: Path
    timeout_s: float = 14400.0
    keep: int = 10

    @classmethod
    def from_env(cls, environ=None) -> SourceBuilder | None:
        env = os.environ if environ is None else environ
        text = env.get("PTBENCH_SOURCE_BUILD", "")
        if not text:
            return None
        try:
            argv = json.loads(text)
        except ValueError:
            raise SourceBuildError("PTBENCH_SOURCE_BUILD: not JSON (a list of strings, the command's argv)") from None
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
            raise SourceBuildError("PTBENCH_SOURCE_BUILD: a non-empty JSON list of strings (the command's argv)")
        if not os.path.isabs(argv[0]):
            raise SourceBuildError(f"PTBENCH_SOURCE_BUILD: {argv[0]!r} is not an absolute path")
        try:
            timeout = float(env.get("PTBENCH_SOURCE_BUILD_TIMEOUT_S") or 14400)
            keep = int(env.get("PTBENCH_SOURCE_BUILD_KEEP") or 10)
        except ValueError:
            raise SourceBuildError("PTBENCH_SOURCE_BUILD_TIMEOUT_S / _KEEP: not numbers") from None
        root = Path(env.get("PTBENCH_SOURCE_BUILD_DIR") or Path(tempfile.gettempdir()) / "ptbench-source-builds")
        return cls(argv=tuple(argv), root=root, timeout_s=timeout, keep=max(keep, 1))

    def command(self, *, commit: str, out: Path) -> list[str]:
        values = {"{commit}": commit, "{out}": str(out), "{mirror}": os.environ.get("PTBENCH_TORCH_MIRROR", "")}
        return [values.get(arg, arg) for arg in self.argv]

    def make(self, commit: str) -> str:
        """The interpreter of the source build at ``commit``: kept from before, else made now."""
        if not SHA.fullmatch(commit or ""):
            raise SourceBuildError(f"{commit!r}: not 40 hex digits")
        target = self.root / commit
        python = target / "env" / "bin" / "python"
        if (target / MARKER).exists():
            os.utime(target / MARKER)
            return str(python)
        self.root.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(dir=self.root, prefix=".making-"))
        started = time.monotonic()
        try:
            log = scratch / "build.log"
            with open(log, "w") as out:
                try:
                    done = subprocess.run(self.command(commit=commit, out=scratch / "env"), cwd=scratch, stdout=out,
                                          stderr=subprocess.STDOUT, timeout=self.timeout_s)
                except subprocess.TimeoutExpired:
                    raise SourceBuildError(f"the source build of {commit[:12]} did not finish within {self.timeout_s:.0f} s") from None
                except OSError as exc:
                    raise SourceBuildError(f"PTBENCH_SOURCE_BUILD {self.argv[0]}: {exc}") from None
            tail = log.read_text(errors="replace")[-2000:]
            if done.returncode != 0:
                raise SourceBuildError(f"the source build of {commit[:12]} exited {done.returncode}:\n{tail}")
            if not os.access(scratch / "env" / "bin" / "python", os.X_OK):
                raise SourceBuildError(f"the source build of {commit[:12]} left no interpreter at {{out}}/bin/python:\n{tail}")
            (scratch / MARKER).write_text(json.dumps({"commit": commit, "seconds": round(time.monotonic() - started, 1)}))
            try:
                os.rename(scratch, target)
            except OSError:  # made by another process meanwhile
                if not (target / MARKER).exists():
                    raise
                shutil.rmtree(scratch, ignore_errors=True)
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        self.prune()
        return str(python)

    def prune(self) -> None:
        made = sorted((p for p in self.root.iterdir() if (p / MARKER).exists()), key=lambda p: (p / MARKER).stat().st_mtime, reverse=True)
        for path in made[self.keep:]:
            shutil.rmtree(path, ignore_errors=True)
