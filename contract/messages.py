"""Worker messages: the task names, queues and keys the dashboard and the runner workers share.

Both sides import these names (this module is Django-free), so a rename cannot split them.
"""
from __future__ import annotations

# Runner side: one queue per machine class (the queue's name is the class, e.g. "gpu-h100").
RUN_CASE = "runner.run_case"
PROBE_BUILDS = "runner.probe_builds"
COMMIT_RANGE = "runner.commit_range"  # list the commits between two builds from the worker's mirror (issue #41)
INTAKE = "runner.intake"  # take in the newest build from the worker's own package index (issue #41)

# Dashboard side, on its "ingest" queue: what a worker reports.
DASHBOARD_QUEUE = "ingest"
CASE_STARTED = "dispatch.case_started"
CASE_FINISHED = "dispatch.case_finished"
CASE_FAILED = "dispatch.case_failed"
WORKER_REPORT = "dispatch.worker_report"
COMMIT_RANGE_LISTED = "regressions.commit_range_listed"  # its answer
INTAKE_DONE = "pipeline.intake_done"  # an intake's answer: the build taken in, or the failure and its log

# A cancelled run: the dashboard sets this Redis key (on the broker's database); workers read it
# before a case and every few seconds while one runs.
CANCELLED_KEY = "ptbench:cancelled-run:{run_id}"
CANCELLED_TTL_S = 14 * 24 * 3600


def cancelled_key(run_id: str) -> str:
    return CANCELLED_KEY.format(run_id=run_id)
