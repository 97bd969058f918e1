"""Nightly intake (issue #41, docs/builds.md): how long a worker takes to take in a version already in
its cache (the figure to reach: at most 60 s), and what it costs on disk.

A local index (``--index``, default /opt/wheels: a real torch wheel), its newest release or the
version ``--take`` names; uv's cache warmed once (not counted: the first intake of a version unpacks
the wheel into it), then ``--repeat`` intakes, each into a fresh intake directory sharing that cache,
each through ``runner.intake.take.intake_run`` exactly as the worker's task runs it: resolve, ``uv
venv`` + ``uv pip install`` (hard links from the cache), the probe (``python -m runner environment
--catalog``: it imports torch), the rename into place. Then the same version asked again (found
made). Printed: seconds per intake (all, and the probe alone), the new environment's disk not shared
with the cache (hard links counted once), the cold first intake for reference.

    python -m bench.intake [--index /opt/wheels] [--take release] [--repeat 3] [--inherit 1] [--out FILE]
"""
from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import runner.intake.take as take
from runner.intake.config import IntakeConfig


def new_bytes(path: Path, cache: Path) -> int:
    """Bytes under ``path`` whose files are not hard links into ``cache``'s (inodes seen there)."""
    cached = {os.lstat(p).st_ino for p in cache.rglob("*") if p.is_file() and not p.is_symlink()}
    seen, total = set(), 0
    for p in path.rglob("*"):
        if p.is_file() and not p.is_symlink():
            stat = os.lstat(p)
            if stat.st_ino not in cached and stat.st_ino not in seen:
                seen.add(stat.st_ino)
                total += stat.st_size
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", default="/opt/wheels")
    parser.add_argument("--take", default="release")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--inherit", default="1", help="1: only torch installed, the rest seen from this interpreter (as the tests)")
    parser.add_argument("--out", help="also write the table here")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ptbench-intake-bench-"))
    cache = work / "cache"
    probes: list[float] = []
    real_probe = take._probe

    def timed_probe(python: str) -> dict:
        started = time.monotonic()
        try:
            return real_probe(python)
        finally:
            probes.append(time.monotonic() - started)

    take._probe = timed_probe

    def config(name: str) -> IntakeConfig:
        return IntakeConfig.parse({"index": args.index, "take": args.take, "dir": str(work / name), "cache": str(cache),
                                   "inherit": args.inherit})

    rows = []
    try:
        for name in ["cold", *(f"warm{i}" for i in range(args.repeat)), "again"]:
            answer = take.intake_run(config("warm0" if name == "again" else name))
            if not answer["ok"]:
                print(f"intake failed: {answer['error']}\n{answer['log'][-3000:]}", file=sys.stderr)
                return 1
            probe = probes[-1] if not answer["cached"] else 0.0
            disk = new_bytes(work / name / "envs", cache) if name != "again" else 0
            rows.append((name, answer["version"], answer["seconds"], probe, disk, answer["cached"]))
    finally:
        take._probe = real_probe
        shutil.rmtree(work, ignore_errors=True)
    load = os.getloadavg()[0]
    lines = [f"# python -m bench.intake on {platform.node()} ({os.cpu_count()} CPUs, load {load:.1f}), index {args.index}, "
             f"installer {config('x').installer}, inherit {args.inherit}",
             "| intake | version | seconds | of which probe | new disk (MB) | found made |", "| --- | --- | ---: | ---: | ---: | --- |"]
    lines += [f"| {n} | {v} | {s:.1f} | {p:.1f} | {d / 1e6:.1f} | {'yes' if c else 'no'} |" for n, v, s, p, d, c in rows]
    warm = [s for n, _, s, _, _, _ in rows if n.startswith("warm")]
    lines.append(f"\nA version already in the cache: median {statistics.median(warm):.1f} s, max {max(warm):.1f} s "
                 f"over {len(warm)} intakes (figure to reach: at most 60 s).")
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
