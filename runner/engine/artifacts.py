"""What a case keeps of the compiler's own records: its ``TORCH_TRACE`` structured log, bounded.

The cold phase of a case runs with ``TORCH_TRACE`` pointing into the case's working directory (set
for that process only, ``runner.engine.executor``). Afterwards :class:`ArtifactKeeper` writes the
log, gzip-compressed, as one file in its directory, at most ``max_bytes`` compressed: when the whole
log does not fit, the records worth least are dropped kind by kind (tensor descriptions and
intermediate graphs before guards, graphs and output code, never the string table tlparse needs),
then, if still too large, the log is cut after the last record that fits. What was dropped is said
in the reference the result carries (``dropped``, ``truncated``). No torch here: this runs in the
parent. docs/artifacts.md describes the format and the bounds.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

DEFAULT_MAX_BYTES = 4 * 1024 * 1024
MAX_BYTES_ENV = "PTBENCH_ARTIFACT_MAX_BYTES"
KIND = "torch_trace"
SUFFIX = ".torch_trace.log.gz"

# Kept first to last: a record kind missing here counts as "other" (between the two groups).
# The first group is what a compiler engineer reads first in tlparse: the frames, their graphs,
# guards, breaks and generated code. "str" is the string table every record's filenames point into.
ESSENTIAL = ("str", "dynamo_start", "compilation_metrics", "dynamo_output_graph", "dynamo_guards",
             "dynamo_cpp_guards_str", "inductor_output_code", "graph_break", "recompile_reasons")
DROPPED_FIRST = ("describe_storage", "describe_tensor", "describe_source", "chromium_event", "artifact",
                 "aot_joint_graph", "aot_forward_graph", "aot_backward_graph", "aot_inference_graph",
                 "inductor_pre_grad_graph", "inductor_post_grad_graph", "optimize_ddp_split_graph",
                 "optimize_ddp_split_child", "compiled_autograd_graph", "bwd_compilation_metrics")
_HEADER = re.compile(r"^[A-Z]\d{4} [\d:.]+ +\d+ [^\]]*\] (\{.*)$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def max_bytes_from_environ(environ=None) -> int:
    """PTBENCH_ARTIFACT_MAX_BYTES (0: keep nothing); a malformed value raises ValueError naming it."""
    text = (os.environ if environ is None else environ).get(MAX_BYTES_ENV, "")
    if not text:
        return DEFAULT_MAX_BYTES
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{MAX_BYTES_ENV}={text!r}: not a whole number of bytes") from None
    if value < 0:
        raise ValueError(f"{MAX_BYTES_ENV}={text!r}: must not be negative")
    return value


def artifact_name(label: str) -> str:
    """A file name for a case's artifact: letters, digits, '.', '_' and '-' only."""
    return (_UNSAFE.sub("_", label).strip("._-") or "case")[:150] + SUFFIX


@dataclass(frozen=True)
class Record:
    kind: str
    text: str  # the header line and its payload lines, each ending in a newline


def parse_records(text: str) -> list[Record]:
    """A trace log's records: a header line (glog prefix, then a JSON object whose first key names
    the kind) followed by its payload lines (each starting with a tab)."""
    records: list[Record] = []
    for line in text.splitlines(keepends=True):
        if line.startswith("\t") and records:
            records[-1] = Record(records[-1].kind, records[-1].text + line)
            continue
        records.append(Record(_kind(line), line))
    return records


def _kind(line: str) -> str:
    match = _HEADER.match(line.rstrip("\n"))
    if not match:
        return "other"
    try:
        header = json.loads(match.group(1))
    except ValueError:
        return "other"
    return next(iter(header), "other") if isinstance(header, dict) else "other"


def _rank(kind: str) -> int:
    """Lower ranks are dropped first."""
    if kind in ESSENTIAL:
        return 1000 - ESSENTIAL.index(kind)
    if kind in DROPPED_FIRST:
        return DROPPED_FIRST.index(kind)
    return 500


def _compressed(records: list[Record]) -> bytes:
    return gzip.compress("".join(r.text for r in records).encode("utf-8", "replace"), compresslevel=6, mtime=0)


def bound_records(records: list[Record], max_bytes: int) -> tuple[bytes, list[dict], int]:
    """(gzip bytes of at most ``max_bytes``, the kinds dropped with their record counts and raw
    bytes, how many records were cut off the end). Whole kinds outside ESSENTIAL go first, least
    worth first; then the end of the log."""
    data = _compressed(records)
    dropped: list[dict] = []
    kinds = sorted({r.kind for r in records if r.kind not in ESSENTIAL}, key=_rank)
    while len(data) > max_bytes and kinds:
        kind = kinds.pop(0)
        gone = [r for r in records if r.kind == kind]
        records = [r for r in records if r.kind != kind]
        dropped.append({"kind": kind, "records": len(gone), "bytes": sum(len(r.text) for r in gone)})
        data = _compressed(records)
    cut = 0
    while len(data) > max_bytes and records:
        keep = int(len(records) * max(0.0, min(0.9, max_bytes / len(data) * 0.95)))
        cut += len(records) - keep
        records = records[:keep]
        data = _compressed(records)
    return data, dropped, cut


def _trace_text(trace_dir: Path) -> tuple[str, list[dict]]:
    """The main process's log (the largest file) and what was left of the others."""
    files = sorted((p for p in trace_dir.glob("*.log") if p.is_file()), key=lambda p: p.stat().st_size, reverse=True)
    if not files:
        return "", []
    others = [{"kind": "other_process_log", "records": 1, "bytes": p.stat().st_size} for p in files[1:]]
    return files[0].read_text(encoding="utf-8", errors="replace"), others


@dataclass(frozen=True)
class ArtifactKeeper:
    """Keeps each case's trace in ``directory`` (the run's artifact directory), each file at most
    ``max_bytes`` compressed; ``relative_to``: where the run document lies (the reference then
    carries the file's path from there)."""

    directory: Path
    max_bytes: int = DEFAULT_MAX_BYTES
    relative_to: Path | None = None

    @property
    def enabled(self) -> bool:
        return self.max_bytes > 0

    def keep(self, trace_dir: Path, *, label: str) -> dict | None:
        """The reference to the kept file, or None when the case left no trace (it failed before
        compiling, or keeping is off)."""
        if not self.enabled or not trace_dir.is_dir():
            return None
        text, others = _trace_text(trace_dir)
        if not text:
            return None
        records = parse_records(text)
        data, dropped, cut = bound_records(records, self.max_bytes)
        self.directory.mkdir(parents=True, exist_ok=True)
        name = artifact_name(label)
        path = self.directory / name
        temporary = path.with_name(name + ".partial")
        temporary.write_bytes(data)
        os.replace(temporary, path)
        reference = {
            "kind": KIND,
            "name": name,
            "sha256": hashlib.sha256(data).hexdigest(),
            "size_bytes": len(data),
            "raw_bytes": len(text.encode("utf-8", "replace")),
            "max_bytes": self.max_bytes,
            "dropped": (dropped + others)[:50],
            "truncated_records": cut,
        }
        if self.relative_to is not None:
            reference["path"] = os.path.relpath(path, self.relative_to)
        return reference

    def local_path(self, reference: dict) -> Path:
        return self.directory / reference["name"]
