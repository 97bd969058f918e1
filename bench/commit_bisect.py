"""Bisection to the commit (issue #41, docs/builds.md): what an overlay build costs, and how many
steps a bisection over commits takes.

1. **Overlay cost**: a mirror made from this interpreter's own torch (``torch/_dynamo`` and
   ``torch/_inductor`` as installed: commit 1), a commit changing ``--files`` of its files; the
   overlay of this interpreter's build at that commit is made (``runner.commits.overlay``) and
   timed, and its new disk counted (files not shared with the base by hard links, plus directories).
2. **Steps over a planted range**: ``--commits`` commits (16), one of them (each position in turn)
   changing the case's value by ``--change`` times the run-to-run noise (5x); every build's value
   drawn log-normal with that noise; the search is ``regressions.services.bisect``'s decision loop
   with ``detection.bisection``'s decisions (both ends first, midpoints good/bad/unknown with more
   attempts, the nearer end at ``max_attempts``), over ``--trials`` seeds. Printed: how often the
   planted commit is named, steps and runs (median, max).

    python -m bench.commit_bisect [--files 20] [--commits 16] [--change 5] [--trials 200] [--out FILE]

The GPU proof (a real bisection on real family models): bench/gpu/commit_bisect_gpu.sh.
"""
from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from detection.bisection import BAD, GOOD, UNKNOWN, classify, ends_differ, nearest
from runner.commits.mirror import Mirror
from runner.commits.overlay import overlay_make
from tests.runner.torch_mirror import git, mirror_from_installed


def new_disk(path: Path) -> int:
    """Bytes under ``path`` not shared by hard links with files outside it (directories counted)."""
    total = 0
    for root, dirs, files in os.walk(path):
        total += 4096 * len(dirs)
        for name in files:
            stat = os.lstat(os.path.join(root, name))
            total += stat.st_size if stat.st_nlink == 1 else 0
    return total


def overlay_cost(args) -> list[str]:
    work = Path(tempfile.mkdtemp(prefix="ptbench-overlay-bench."))
    repo = work / "mirror"
    first = mirror_from_installed(repo, areas=("_dynamo", "_inductor"))
    files = sorted((repo / "torch").rglob("*.py"))
    for file in files[:: max(1, len(files) // args.files)][: args.files]:
        file.write_text(file.read_text() + "\n# changed by bench/commit_bisect.py\n")
    git(repo, "commit", "-q", "-am", "change files")
    commit = git(repo, "rev-parse", "HEAD")
    started = time.monotonic()
    overlay = overlay_make(base_python=sys.executable, base_commit=first, commit=commit, mirror=Mirror(str(repo)), cache_dir=work / "cache")
    seconds = time.monotonic() - started
    started = time.monotonic()
    subprocess.run([overlay.python, "-c", "import torch"], check=True)
    import_s = time.monotonic() - started
    disk = new_disk(Path(overlay.path))
    subprocess.run(["rm", "-rf", str(work)], check=True)
    return [f"overlay build: {len(overlay.files)} .py files replaced of {len(files)} in the mirror; made in {seconds:.2f} s "
            f"(a venv, torch hard-linked, the files from git); new disk {disk / 1e6:.1f} MB; its first `import torch` {import_s:.1f} s"]


def search(values_of, *, builds: int, noise: float, attempts: int, max_attempts: int, max_steps: int, rng) -> tuple[int | None, int, int]:
    """The service's loop (regressions.services.bisect._advance) over simulated runs: (culprit index, steps, runs)."""
    values: dict[int, list[float]] = {}

    def run(i: int) -> None:
        values.setdefault(i, []).append(values_of(i) * rng.lognormvariate(0, noise))

    low, high, steps = 0, builds - 1, 0
    for i in (low, high):
        for _ in range(attempts):
            run(i)
    while not ends_differ(values[low], values[high], sd=noise):
        if len(values[low]) >= max_attempts:
            return None, steps, sum(map(len, values.values()))
        run(low), run(high)
    while high - low > 1 and steps < max_steps:
        mid = (low + high) // 2
        for _ in range(attempts):
            run(mid)
        while True:
            found = classify(values[low], values[high], values[mid], sd=noise)
            decision = found.decision
            if decision != UNKNOWN:
                break
            if len(values[mid]) >= max_attempts:
                decision = nearest(found)
                break
            run(mid)
        steps += 1
        if decision == BAD:
            high = mid
        elif decision == GOOD:
            low = mid
        else:
            return None, steps, sum(map(len, values.values()))
    return high, steps, sum(map(len, values.values()))


def steps_table(args) -> list[str]:
    builds = args.commits + 1  # the good build, then one per commit (the last is the bad build)
    named, steps, runs = 0, [], []
    for trial in range(args.trials):
        rng = random.Random(trial)
        culprit = 1 + trial % args.commits
        change = 1 + args.change * args.noise
        found, n_steps, n_runs = search(lambda i: change if i >= culprit else 1.0, builds=builds, noise=args.noise,
                                        attempts=args.attempts, max_attempts=6, max_steps=12, rng=rng)
        named += found == culprit
        steps.append(n_steps)
        runs.append(n_runs)
    return [f"bisection over {args.commits} commits, change {args.change}x the noise ({args.noise:.1%}), {args.attempts} "
            f"attempts a build, {args.trials} trials (the culprit at each position in turn): named {named}/{args.trials}; "
            f"steps median {statistics.median(steps):g}, max {max(steps)}; runs median {statistics.median(runs):g}, max {max(runs)}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20, help="files the overlay's commit changes")
    parser.add_argument("--commits", type=int, default=16)
    parser.add_argument("--change", type=float, default=5.0, help="the planted change in units of the noise")
    parser.add_argument("--noise", type=float, default=0.02, help="run-to-run relative sd")
    parser.add_argument("--attempts", type=int, default=2)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--out")
    args = parser.parse_args()
    lines = [f"# python -m bench.commit_bisect {' '.join(sys.argv[1:])}".rstrip(),
             f"# {platform.node()} · {os.cpu_count()} CPUs · load {os.getloadavg()[0]:.2f} · Python {platform.python_version()}",
             *overlay_cost(args), *steps_table(args)]
    print("\n".join(lines))
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
