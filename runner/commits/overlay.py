"""Overlay builds (issue #41, docs/builds.md): an existing build's environment with the Python files
under ``torch/`` of another commit, as PyTorch's CI does when a range changes no C++
(``reuse_old_whl.py``).

An overlay is a small virtual environment made from the base build's interpreter: its own
site-packages holds a copy of the base's ``torch`` package made of hard links (reflinks or a copy
where the cache is on another file system), and a ``.pth`` file that adds the base's
site-packages after it (every other package, torch's compiled libraries among the links). Only the
``.py`` files under ``torch/`` that differ between the base's commit and the wanted one are
replaced, read from the mirror at that commit (``git show``); a replaced file is unlinked first, so
the base's file is never written. Nothing from a message decides a path: the files come from
``git diff`` of two validated shas, each checked by ``contract.commits.overlay_file``. A range that
changes C++ or build files is refused (``mirror.overlay_changes``). Made in a temporary directory
and renamed into place: a half-made overlay is never used."""
from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from contract.commits import SHA, overlay_file
from runner.commits.mirror import Mirror, MirrorError

MARKER = "overlay.json"
_PROBE = ("import importlib.util, json, sys; spec = importlib.util.find_spec('torch'); "
          "print(json.dumps({'torch': list(spec.submodule_search_locations)[0], 'version': '%d.%d' % sys.version_info[:2], "
          "'sites': [p for p in sys.path if p.endswith(('site-packages', 'dist-packages'))]}))")


class OverlayRefused(MirrorError):
    """An overlay that cannot be made: a range with C++, a commit the mirror lacks, no mirror."""


@dataclass(frozen=True)
class Overlay:
    python: str
    path: str
    base_python: str
    base_commit: str
    commit: str
    files: tuple[str, ...]  # replaced or added
    deleted: tuple[str, ...]
    seconds: float = 0.0  # to make it (0: found in the cache)
    new_bytes: int = 0  # disk the replaced files took

    def as_document(self) -> dict:
        return {"base_commit": self.base_commit, "commit": self.commit, "files": list(self.files),
                "deleted": list(self.deleted), "seconds": round(self.seconds, 3), "new_bytes": self.new_bytes}


def cache_dir_from_env(environ=None) -> Path:
    env = os.environ if environ is None else environ
    return Path(env.get("PTBENCH_OVERLAY_DIR") or Path(tempfile.gettempdir()) / "ptbench-overlays")


def _link_tree(source: Path, target: Path) -> None:
    """``target`` as a tree of hard links to ``source``'s files (a copy, reflinked where the file
    system can, when they are on different file systems)."""
    for root, dirs, files in os.walk(source):
        relative = Path(root).relative_to(source)
        (target / relative).mkdir(parents=True, exist_ok=True)
        for name in files:
            src, dst = Path(root) / name, target / relative / name
            try:
                os.link(src, dst, follow_symlinks=False)
            except OSError as exc:
                if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK):
                    raise
                subprocess.run(["cp", "--reflink=auto", "-P", str(src), str(dst)], check=True)


def _replace(site: Path, relative: str, content: bytes | None) -> int:
    """Write (or, with None, delete) ``site/relative`` without touching the file it was linked to,
    and drop its compiled ``__pycache__`` entries. Returns the bytes written."""
    if not overlay_file(relative):  # defence in depth: only .py files under torch/
        raise OverlayRefused(f"{relative!r}: not a Python file under torch/")
    path = site / relative
    if path.is_symlink() or path.exists():
        path.unlink()
    cache = path.parent / "__pycache__"
    if cache.is_dir():
        for compiled in cache.glob(f"{path.stem}.*.pyc"):
            compiled.unlink()
    if content is None:
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return len(content)


def _base_layout(python: str) -> dict:
    done = subprocess.run([python, "-c", _PROBE], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise OverlayRefused(f"{python} cannot say where its torch is: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout)


def overlay_make(*, base_python: str, base_commit: str, commit: str, mirror: Mirror, cache_dir: Path,
                 keep: int = 50) -> Overlay:
    """The overlay of ``base_python``'s build (made from main commit ``base_commit``) at ``commit``:
    from the cache when made before, else made now. Raises ``OverlayRefused``."""
    for sha in (base_commit, commit):
        if not SHA.fullmatch(sha or ""):
            raise OverlayRefused(f"{sha!r}: not 40 hex digits")
    started = time.monotonic()
    try:
        changed, deleted = mirror.overlay_changes(base_commit, commit)
    except MirrorError as exc:
        raise OverlayRefused(str(exc)) from None
    # keyed by the base interpreter's own path (a venv's, not the interpreter it links to: two builds of
    # one commit, e.g. two CUDA variants, are two bases)
    key = f"{commit[:16]}-on-{hashlib.sha256(f'{os.path.abspath(base_python)} {base_commit}'.encode()).hexdigest()[:10]}"
    cache_dir.mkdir(parents=True, exist_ok=True)
    target = cache_dir / key
    layout = _base_layout(base_python)
    python = str(target / "env" / "bin" / "python")
    if (target / MARKER).exists():
        os.utime(target)  # recently used: kept longest
        return Overlay(python=python, path=str(target), base_python=base_python, base_commit=base_commit,
                       commit=commit, files=tuple(changed), deleted=tuple(deleted))
    scratch = Path(tempfile.mkdtemp(dir=cache_dir, prefix=".making-"))
    try:
        subprocess.run([base_python, "-m", "venv", "--without-pip", str(scratch / "env")], check=True,
                       capture_output=True, timeout=120)
        site = scratch / "env" / "lib" / f"python{layout['version']}" / "site-packages"
        _link_tree(Path(layout["torch"]), site / "torch")
        sites = list(dict.fromkeys([*layout["sites"], str(Path(layout["torch"]).parent)]))
        # After this environment's own site-packages (its torch first): the base's, .pth files included.
        (site / "_ptbench_overlay_base.pth").write_text(
            "".join(f"import site; site.addsitedir({s!r})\n" for s in sites))
        new_bytes = sum(_replace(site, p, mirror.read(commit, p)) for p in changed)
        for path in deleted:
            _replace(site, path, None)
        overlay = Overlay(python=python, path=str(target), base_python=base_python, base_commit=base_commit, commit=commit,
                          files=tuple(changed), deleted=tuple(deleted), seconds=time.monotonic() - started, new_bytes=new_bytes)
        (scratch / MARKER).write_text(json.dumps({**overlay.as_document(), "base_python": base_python}, indent=1))
        try:
            os.rename(scratch, target)
        except OSError:  # another process made it meanwhile: use theirs
            shutil.rmtree(scratch, ignore_errors=True)
            if not (target / MARKER).exists():
                raise
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    overlays_prune(cache_dir=cache_dir, keep=keep)
    return overlay


def overlays_prune(*, cache_dir: Path, keep: int) -> list[str]:
    """Remove all but the ``keep`` most recently used overlays (and half-made ones older than a day)."""
    made = sorted((p for p in cache_dir.iterdir() if (p / MARKER).exists()), key=lambda p: p.stat().st_mtime, reverse=True)
    stale = [p for p in cache_dir.glob(".making-*") if time.time() - p.stat().st_mtime > 86400]
    removed = made[keep:] + stale
    for path in removed:
        shutil.rmtree(path, ignore_errors=True)
    return [str(p) for p in removed]


def main(argv: list[str] | None = None) -> int:
    """``python -m runner.commits.overlay BASE_PYTHON BASE_COMMIT COMMIT``: make one (bench, operators)."""
    args = sys.argv[1:] if argv is None else argv
    mirror = Mirror.from_env()
    if len(args) != 3 or mirror is None:
        print("usage: PTBENCH_TORCH_MIRROR=... python -m runner.commits.overlay BASE_PYTHON BASE_COMMIT COMMIT", file=sys.stderr)
        return 2
    try:
        overlay = overlay_make(base_python=args[0], base_commit=args[1], commit=args[2], mirror=mirror, cache_dir=cache_dir_from_env())
    except OverlayRefused as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return 2
    print(json.dumps({"python": overlay.python, **overlay.as_document()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
