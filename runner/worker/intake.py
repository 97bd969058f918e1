"""The intake task of a runner worker (issue #41, docs/builds.md): take in the newest build from this
worker's own index (``runner.intake``), add it to the builds this worker runs, and hand the answer
to the dashboard, which records the build and requests the class's nightly run on it. The message
carries only the intake's id and the shas and versions of builds that must not be pruned."""
from __future__ import annotations

import logging
import re

from contract.messages import INTAKE, INTAKE_DONE
from runner.intake.config import IntakeConfigError
from runner.intake.take import intake_run
from runner.worker.app import app, config
from runner.worker.builds import LocalBuild, add_taken_in, intake_config  # noqa: F401 (callers read the last two here too)
from runner.worker.tasks import local_builds, notify

log = logging.getLogger("ptbench.worker.intake")
_KEPT = re.compile(r"^[0-9A-Za-z.+!_-]{1,100}$")  # a git sha or a version


@app.task(name=INTAKE, bind=True, acks_late=True)
def intake(self, *, intake_id: int, protect: list | None = None) -> dict:
    """Take in one build; a worker without intake settings answers so (a failure the dashboard shows)."""
    kept = {str(item) for item in (protect or [])[:100000] if isinstance(item, str) and _KEPT.fullmatch(item)}
    try:
        settings = intake_config()
    except IntakeConfigError as exc:
        settings, answer = None, {"ok": False, "version": "", "error": str(exc), "log": ""}
    else:
        answer = None if settings else {"ok": False, "version": "", "log": "",
                                        "error": "this worker has no PTBENCH_INTAKE_INDEX (its intake settings: docs/builds.md)"}
    if answer is None:
        answer = intake_run(settings, protect=kept)
    if answer["ok"]:
        builds = local_builds()
        gone = {p["python"] for p in answer.get("pruned", [])}
        builds.builds[:] = [b for b in builds.builds if b.python not in gone]
        if answer["python"] not in {b.python for b in builds.builds}:
            builds.builds.append(LocalBuild(python=answer["python"], environment=answer["environment"],
                                            catalog=answer.get("config_catalog") or {}))
        log.info("took in torch %s at %s (%.1f s%s)", answer["version"], answer["python"], answer["seconds"],
                 ", found made" if answer["cached"] else "")
    else:
        log.error("intake %s failed: %s", intake_id, answer["error"])
    notify(INTAKE_DONE, intake_id=intake_id, hostname=config.hostname, worker=self.request.hostname,
           machine_class=config.machine_class, answer=answer)
    return {"ok": answer["ok"], "version": answer.get("version", "")}
