"""``python -m runner.intake [--version V]``: take in a build by hand, from this machine's intake
settings (PTBENCH_INTAKE_*, runner.intake.config), and print the answer a worker would send (the
config catalog left out). Exit 0 taken in, 1 failed, 2 no or bad settings."""
from __future__ import annotations

import argparse
import json
import sys

from runner.intake.config import IntakeConfig, IntakeConfigError
from runner.intake.take import intake_run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runner.intake", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", default="", help="a version the index holds (default: what PTBENCH_INTAKE_TAKE names)")
    args = parser.parse_args(argv)
    try:
        config = IntakeConfig.from_env()
    except IntakeConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if config is None:
        print("error: PTBENCH_INTAKE_INDEX is not set (a directory of wheels or a simple index's URL)", file=sys.stderr)
        return 2
    answer = intake_run(config, version=args.version)
    answer.pop("config_catalog", None)
    print(json.dumps(answer, indent=1, default=str))
    return 0 if answer["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
