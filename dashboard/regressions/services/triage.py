"""Triage: move regressions between statuses, one or many at once, recording who, when and why."""
from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from dashboard.regressions.models import Regression, RegressionStatusChange


def regression_triage(*, regression_ids: list[int], status: str, user: str, note: str = "") -> int:
    """Set ``status`` on every listed regression (all or none); returns how many changed.

    Raises ValidationError({field: message}) on an unknown status, an empty or unknown id list, or no user.
    """
    if status not in Regression.Status.values:
        raise ValidationError({"status": f"unknown status {status!r}; expected one of {', '.join(Regression.Status.values)}"})
    if not user:
        raise ValidationError({"user": "who triages must be known"})
    ids = sorted({int(i) for i in regression_ids})
    if not ids:
        raise ValidationError({"regression_ids": "select at least one regression"})
    with transaction.atomic():
        regressions = list(Regression.objects.select_for_update().filter(pk__in=ids))
        missing = set(ids) - {r.id for r in regressions}
        if missing:
            raise ValidationError({"regression_ids": f"unknown regression ids: {', '.join(map(str, sorted(missing)))}"})
        now = timezone.now()
        changed = [r for r in regressions if r.status != status or note]
        RegressionStatusChange.objects.bulk_create(
            RegressionStatusChange(regression=r, from_status=r.status, to_status=status, changed_by=user, note=note)
            for r in changed
        )
        for regression in changed:
            regression.status = status
            regression.status_changed_by = user
            regression.status_changed_at = now
            if note:
                regression.note = note
        Regression.objects.bulk_update(changed, ["status", "status_changed_by", "status_changed_at", "note"])
        return len(changed)
