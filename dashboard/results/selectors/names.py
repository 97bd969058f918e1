"""The names this server knows, for telling a typo from a name that has nothing yet (issue #42 item 6):
an unknown one is a 400 naming it with a did-you-mean (``contract.suggest``), a known one without
data an empty answer."""
from __future__ import annotations

from contract.catalog import family_entries, suite_entries
from dashboard.results.models import BuildSummary, Machine, Workload


def machine_class_names() -> set[str]:
    """Every machine class a host registered, a run was requested on or results were stored for."""
    return set(Machine.objects.values_list("machine_class", flat=True)) | set(
        BuildSummary.objects.values_list("machine_class", flat=True).distinct())


def workload_names() -> set[str]:
    """Every stored workload, and every one the suite and the families can run."""
    return (stored_workload_names() | {e.name for e in suite_entries()}
            | set(family_entries()))


def stored_workload_names() -> set[str]:
    """The workloads with results here (those with a page)."""
    return set(Workload.objects.values_list("name", flat=True))
