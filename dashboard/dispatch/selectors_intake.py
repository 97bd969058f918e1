"""What ``/`` and the API show of the nightly intake (issue #41): per machine class, the newest build
taken in and when, and the newest intake when it failed (its error and log)."""
from __future__ import annotations

from dataclasses import dataclass

from dashboard.dispatch.models import Intake


@dataclass
class ClassIntake:
    machine_class: str
    latest: Intake  # the newest intake asked of the class, whatever its state
    taken: Intake | None  # the newest that took a build in

    @property
    def failure(self) -> Intake | None:
        return self.latest if self.latest.state == Intake.State.FAILED else None

    @property
    def waiting(self) -> bool:
        return self.latest.state == Intake.State.SENT


def intake_per_class() -> list[ClassIntake]:
    classes = sorted(set(Intake.objects.values_list("machine_class", flat=True)))
    found = []
    for machine_class in classes:
        rows = Intake.objects.filter(machine_class=machine_class).select_related("build")
        latest = rows.first()
        taken = latest if latest.state == Intake.State.TAKEN else rows.filter(state=Intake.State.TAKEN).first()
        found.append(ClassIntake(machine_class=machine_class, latest=latest, taken=taken))
    return found
