"""What of a GPU stream is still to run: its runner arguments with ``--workloads`` cut to the workloads
that no run document in DIR has a result for under the same configuration (mode, regime, dtype, dims).

A later GPU call of the same lease (bench/gpu_2026-11-28.sh) goes on where an earlier one was cut off:

    python bench/gpu_pending.py DIR '--modes export --regimes static --dtypes float32 --workloads a,b,c'

prints the arguments with the workloads still to run, or nothing when none is left. A case that ended
in any status counts as run (a crash is a result); a document still being written is read as it stands.
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path


def _option(words: list[str], name: str, default: str | None = None) -> str | None:
    for i, word in enumerate(words):
        if word == name and i + 1 < len(words):
            return words[i + 1]
        if word.startswith(name + "="):
            return word.split("=", 1)[1]
    return default


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
    workloads = (_option(words, "--workloads") or "").split(",")
    mode = _option(words, "--modes", "default")
    regime = _option(words, "--regimes", "static")
    dtype = _option(words, "--dtypes", "bfloat16")  # bench/families_gpu.sh's default
    dims = _option(words, "--dims", "")
    done = done_keys(folder)
    left = [w for w in workloads if w and not any(
        key[0] == w and key[1] == mode and key[2] == regime and key[3] == dtype and key[4] == dims for key in done)]
    if not left:
        return ""
    out, skip = [], False
    for word in words:
        if skip:
            skip = False
            continue
        if word == "--workloads":
            out += [word, ",".join(left)]
            skip = True
        elif word.startswith("--workloads="):
            out.append("--workloads=" + ",".join(left))
        else:
            out.append(word)
    return shlex.join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("args")
    options = parser.parse_args()
    print(pending(options.folder, options.args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
