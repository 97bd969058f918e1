"""``python -m runner``: run a suite, list it, and the internal subcommands of case subprocesses.

    python -m runner run --size tiny --workloads mlp_loop --out run.json
    python -m runner list
    python -m runner ci verdict --url URL --build BUILD               (CI: see runner/ci.py)
    python -m runner case --spec SPEC.json --result RESULT.json     (internal: one case)
    python -m runner environment --out ENV.json                       (internal: describe the build)
    python -m runner compile-once --spec SPEC.json --result R.json    (internal: one side of a compile pair)

This module only dispatches: the arguments are ``runner.arguments``'s, ``run`` is ``runner.run``,
``list`` ``runner.listing``, the document's delivery ``runner.output``, the internal subcommands
``runner.internal``. Imports stay inside the subcommands: ``case`` and ``environment`` run in the
build's interpreter, which need not have jsonschema or Django.
"""
from __future__ import annotations

import sys
from typing import Sequence

from runner.arguments import build_parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["ci"]:
        from runner.ci import main as ci_main

        return ci_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command in ("case", "compile-once", "environment", "warm-server"):
        # A case process dies with the runner that started it, even after a kill -9 (its sentinel
        # takes its compile workers with it): docs/runner-processes.md. A warm process dies with its worker.
        from runner.engine.lifetime import follow_parent

        follow_parent(sentinel=args.command not in ("environment", "warm-server"))
    if args.command == "warm-server":
        from runner.engine.warm_start import serve

        serve(args.socket, main=main)
    if args.command == "run":
        from runner.engine.lifetime import stop_on_signals
        from runner.run import command_run, interrupted_status

        stop_on_signals()  # SIGTERM, SIGHUP, SIGINT: the cases in flight are killed first
        try:
            return command_run(args, argv, parser)
        except KeyboardInterrupt as exc:  # before the cases started (the build's probe): nothing to keep
            print("\ninterrupted: nothing stored", file=sys.stderr)
            return interrupted_status(exc)
    if args.command == "list":
        from runner.listing import command_list

        return command_list(args, parser)
    if args.command == "case":
        from runner.internal import command_case

        return command_case(args)
    if args.command == "compile-once":
        from runner.engine.compile_once import compile_once

        compile_once(args.spec, args.result)
        return 0
    from runner.internal import command_environment

    return command_environment(args)
