"""A worker that starts on a device first ends the case processes an earlier, dead runner left on it
(``runner.engine.lifetime.end_stale_cases``, docs/runner-processes.md): an orphaned case would keep
GPU memory and share the GPU with this worker's measurements."""
from __future__ import annotations

from celery import signals
from celery.utils.log import get_logger

from runner.engine.lifetime import device_slot, end_stale_cases, runtime_dir

# Under Celery's logger: its handlers print this (the worker does not hijack the root logger).
log = get_logger("ptbench.worker.startup")


def end_stale_case_processes() -> list[dict]:
    """End the stale case processes of this worker's device and say so in the log; what was ended."""
    slot = device_slot()
    ended = end_stale_cases(slot)
    for group in ended:
        log.warning("ended stale case process group %d on %s left by runner pid %d (gone): %s; killed pids %s%s",
                    group["pid"], slot, group["owner"], group["command"], ", ".join(map(str, group["killed"])),
                    f"; still there: {group['left']}" if group["left"] else "")
    if not ended:
        log.info("no stale case processes on %s (%s)", slot, runtime_dir() / slot)
    return ended


@signals.celeryd_after_setup.connect
def _end_stale_cases(**_) -> None:
    """Once the worker's logging is set up, before its pool and consumer start: before any case of
    this worker runs."""
    end_stale_case_processes()
