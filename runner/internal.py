"""The internal subcommands of ``python -m runner`` that run in a build's interpreter (which need not
have jsonschema or Django): ``case`` (one case spec in this process) and ``environment`` (describe
this build and machine). ``compile-once`` is ``runner.engine.compile_once``'s."""
from __future__ import annotations

import argparse
import json
from typing import NoReturn


def command_case(args: argparse.Namespace) -> NoReturn:
    import faulthandler

    from runner.engine.executor import STACK_DUMP_SIGNAL
    from runner.engine.gpu_lock import confine_case

    # The parent sends this before killing a case that ran out of time: the stacks land in the log.
    faulthandler.register(STACK_DUMP_SIGNAL, all_threads=True, chain=False)
    from runner.engine.case import run_case
    from runner.engine.result_file import ResultFile
    from contract.spec import CaseSpec

    started = case_start()  # torch and the case code imported: how long this process took to start
    cpus = confine_case()  # several cases on a GPU: off the cores kept for timing, before any thread starts
    if started and cpus:
        started["cpus"] = cpus
    spec = CaseSpec.read(args.spec)
    if spec.timing_budget.host_probe:  # before torch starts its threads and compile workers
        from runner.engine.host_speed import reserve_probe_cpu

        reserve_probe_cpu()
    if spec.config_overrides:  # a build variant: before anything is compiled
        from runner.engine.overrides import apply_config

        apply_config(spec.config_overrides)
    run_case(spec, ResultFile(args.result), environment={"case_process": started} if started else None)
    exit_now()


def case_start() -> dict:
    """How this case process was started and the seconds from the runner's request to here (torch and
    the case code imported): ``{"started_by": "warm fork" | "subprocess", "start_s": ...}``; {} when
    the runner did not say (a case started by hand)."""
    import os
    import time

    from runner.engine.warm_start import SPAWNED_AT_ENV, STARTED_BY_ENV

    try:
        spawned_at = float(os.environ[SPAWNED_AT_ENV])
    except (KeyError, ValueError):
        return {}
    started = {"started_by": os.environ.get(STARTED_BY_ENV, "subprocess"), "start_s": round(time.time() - spawned_at, 3),
               "pid": os.getpid(), "own_session": os.getsid(0) == os.getpid()}
    caches = {name: os.environ.get(variable) for name, variable in (("inductor", "TORCHINDUCTOR_CACHE_DIR"), ("triton", "TRITON_CACHE_DIR"))}
    # the files already in this case's caches as it starts (a cold phase's are empty; a warm phase's hold the cold one's)
    started["caches"] = {**caches, "files_at_start": sum(len(files) for path in caches.values() if path for _, _, files in os.walk(path))}
    return started


def exit_now() -> NoReturn:
    """End a case process once its result file is written (atomically, after every step): flush
    logging (a TORCH_TRACE log) and the standard streams, then ``os._exit(0)``, skipping the
    interpreter's teardown (inductor's compile-worker pool, the CUDA context, every object freed
    one by one: seconds per case; docs/families.md, "Cost"). The process group's sentinel ends
    the compile workers (runner.engine.lifetime), as it ends whatever a case leaves."""
    import logging
    import os
    import sys

    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed or gone: nothing left to lose
            pass
    os._exit(0)


def command_environment(args: argparse.Namespace) -> int:
    from runner.engine.environment import collect_environment

    environment = collect_environment()
    if args.check_config:
        from runner.engine.overrides import check_config

        environment["override_problems"] = check_config(json.loads(args.check_config.read_text()))
    if args.catalog:
        from runner.engine.overrides import config_catalog

        environment["config_catalog"] = config_catalog()
    args.out.write_text(json.dumps(environment, indent=1))
    return 0
