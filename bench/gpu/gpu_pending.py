"""What of a GPU stream is still to run: its runner arguments with ``--workloads`` cut to the workloads
that no run document in DIR has a result for under the same configuration (mode, regime, dtype, dims).

A later GPU call of the same lease (bench/gpu/gpu_2026-11-28.sh) goes on where an earlier one was cut off
(the arguments read by the runner's own parser; a workload counts as run once every configuration
the arguments name has a result):

    python -m bench.gpu.gpu_pending DIR '--modes export --regimes static --dtypes float32 --workloads a,b,c'

prints the arguments with the workloads still to run, or nothing when none is left. A case that ended
in any status counts as run (a crash is a result); a document still being written is read as it stands.
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from runner.arguments import build_parser  # the runner's own reading of its arguments

# the arguments bench/gpu/families_gpu.sh gives every run before a stream's own (a later one wins)
STREAM_DEFAULTS = ["run", "--device", "cuda", "--modes", "default", "--dtypes", "bfloat16"]


def done_keys(folder: Path) -> set[tuple]:
    keys = set()
    for path in folder.glob("**/*.json"):
        try:
            document = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        for result in document.get("results", []) if isinstance(document, dict) else []:
            config = result.get("config") or {}
            keys.add((result.get("workload"), config.get("compile_mode"), config.get("shape_regime"),
                      config.get("dtype"), ",".join(config.get("dims") or [])))
    return keys


def pending(folder: Path, args: str) -> str:
    words = shlex.split(args)
    parsed = build_parser().parse_args([*STREAM_DEFAULTS, *words])
    configs = {(mode, regime, dtype, ",".join(parsed.dims or ())) for mode in parsed.modes
               for regime in parsed.regimes for dtype in parsed.dtypes}
    done = done_keys(folder)
    left = [w for w in parsed.workloads if not all((w, *config) in done for config in configs)]
    if not left:
        return ""
    at = next(i for i, word in enumerate(words) if word == "--workloads")
    return shlex.join([*words[:at + 1], ",".join(left), *words[at + 2:]])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("args")
    options = parser.parse_args()
    print(pending(options.folder, options.args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
