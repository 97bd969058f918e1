"""Automatic bisection (docs/bisect.md): a new regression of a machine class listed in
``BISECT_AUTO_CLASSES`` ("*": every class) is bisected when workers of the class know builds between
its last good and first bad build."""
from __future__ import annotations

import logging

from django.conf import settings

from dashboard.regressions.models import Bisection, Regression
from dashboard.regressions.services.bisect import BisectError, bisection_start

log = logging.getLogger(__name__)


def auto_bisect_class(machine_class: str) -> bool:
    classes = settings.BISECT_AUTO_CLASSES
    return "*" in classes or machine_class in classes


def bisections_start_auto(*, regression_ids: list[int]) -> list[int]:
    """Start a bisection of each of these regressions that qualifies and was never bisected; returns
    the new bisections' ids. One that cannot start (adjacent builds, a build no worker has) is skipped."""
    started = []
    rows = (Regression.objects.filter(pk__in=regression_ids, kind=Regression.Kind.REGRESSION, last_good_build__isnull=False)
            .select_related("series", "first_bad_build", "last_good_build").order_by("id"))
    for regression in rows:
        if not auto_bisect_class(regression.series.machine_class) or Bisection.objects.filter(regression=regression).exists():
            continue
        try:
            started.append(bisection_start(regression=regression, requested_by="automatic").id)
        except BisectError as exc:
            log.info("regression %s not bisected: %s: %s", regression.id, exc.field, exc.message)
    return started
