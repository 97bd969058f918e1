"""PyTorch commits as ptbench reads them (issue #41, docs/builds.md): which files a commit touches
say whether a build of Python only can measure it (an overlay: an existing build with the ``.py``
files under ``torch/`` replaced), and which compiler area it belongs to.

Pure: both the runner (which reads the worker's git mirror) and the dashboard (which shows ranges
and bisects them) use these rules, so they cannot disagree. C++ lives in ``torch/csrc``, ``aten``,
``c10`` and the build files (PyTorch CI's ``reuse_old_whl.py`` draws the same line).
"""
from __future__ import annotations

import datetime as dt
import re

SHA = re.compile(r"[0-9a-f]{40}")
# A nightly's torch.version.git_version is a commit of the ``nightly`` branch whose subject names
# the ``main`` commit it was built from (tools/nightly.py): "2026-11-27 nightly release (<sha>)".
NIGHTLY_SUBJECT = re.compile(r"nightly release \(([0-9a-f]{40})\)")
CPP_DIRS = ("torch/csrc/", "aten/", "c10/", "caffe2/", "third_party/", "cmake/", "tools/setup_helpers/", "torchgen/")
BUILD_FILES = ("setup.py", "pyproject.toml", "CMakeLists.txt", "requirements.txt", "requirements-build.txt",
               "build_variables.bzl", "BUILD.bazel", "WORKSPACE", "version.txt")
CPP_SUFFIXES = (".c", ".cc", ".cpp", ".cu", ".cuh", ".h", ".hpp", ".cmake", ".mm", ".S", ".pyx", ".yaml")
AREAS = ("_dynamo", "_inductor", "_functorch", "fx", "export")
COMMIT_KINDS = ("cpp", "python", "none")  # needs a source build | Python under torch/ only | nothing of the build


def overlay_file(path: str) -> bool:
    """A file an overlay build replaces: a ``.py`` file under ``torch/`` outside ``torch/csrc``
    (relative, no ``..``: never a path that leaves the package)."""
    parts = path.split("/")
    return (path.startswith("torch/") and path.endswith(".py") and not path.startswith("torch/csrc/")
            and ".." not in parts and "" not in parts)


def needs_source_build(path: str) -> bool:
    """A file whose change an overlay cannot carry: C++, build files, anything non-Python in ``torch/``."""
    name = path.rsplit("/", 1)[-1]
    if path.startswith(CPP_DIRS) or name in BUILD_FILES or path in BUILD_FILES or name.endswith(CPP_SUFFIXES):
        return True
    return path.startswith("torch/") and not overlay_file(path) and not path.endswith((".pyi", ".md", ".txt"))


def area(path: str) -> str:
    """The compiler area of a file under ``torch/``: _dynamo, _inductor, _functorch, fx, export, other."""
    parts = path.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "torch" and parts[1] in AREAS else "other"


def commit_kind(paths: list[str]) -> str:
    """cpp: it needs a source build; python: only Python under ``torch/`` (and files no build holds:
    tests, docs); none: it changes nothing a build holds."""
    if any(needs_source_build(p) for p in paths):
        return "cpp"
    return "python" if any(overlay_file(p) for p in paths) else "none"


def commit_areas(paths: list[str]) -> list[str]:
    """The areas of the Python files under ``torch/`` a commit changes, in ``AREAS`` order, other last."""
    found = {area(p) for p in paths if overlay_file(p)}
    return [a for a in (*AREAS, "other") if a in found]


def main_commit_of(subject: str) -> str | None:
    """The ``main`` commit a nightly-branch commit's subject names, or None."""
    found = NIGHTLY_SUBJECT.search(subject or "")
    return found.group(1) if found else None


def commit_record(*, sha: str, subject: str, author: str, time: str, paths: list[str]) -> dict:
    """One commit of a range as the worker reports it and the dashboard stores it."""
    return {"sha": sha, "subject": subject[:300], "author": author[:200], "time": time, "kind": commit_kind(paths),
            "areas": commit_areas(paths), "python_files": sum(map(overlay_file, paths)), "files": len(paths)}


def commit_record_problem(record) -> str | None:
    """What is wrong with a commit record from a worker (None: nothing)."""
    if not isinstance(record, dict):
        return "not an object"
    if not isinstance(record.get("sha"), str) or not SHA.fullmatch(record["sha"]):
        return "sha: not 40 hex digits"
    if record.get("kind") not in COMMIT_KINDS:
        return f"kind: not one of {', '.join(COMMIT_KINDS)}"
    if not all(isinstance(record.get(k), str) for k in ("subject", "author", "time")):
        return "subject, author and time must be strings"
    try:
        if dt.datetime.fromisoformat(record["time"]).tzinfo is None:
            return "time: needs a time zone"
    except ValueError:
        return f"time: {record['time'][:40]!r} is not an ISO 8601 time"
    if not isinstance(record.get("areas"), list) or not set(record["areas"]) <= {*AREAS, "other"}:
        return "areas: a list of " + ", ".join((*AREAS, "other"))
    return None


SOURCE_LABEL = "source"  # the local label of a build the worker's source-build command made at a commit (docs/builds.md)


def overlay_label(base_git_sha: str, base_local_label: str = "") -> str:
    """The local label of an overlay build on a base build (its git sha is the commit's)."""
    return f"py-on-{base_git_sha[:12]}" + (f"-{base_local_label}" if base_local_label else "")
