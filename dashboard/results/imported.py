"""Imported sample data (``manage.py ingest --imported``): documents measured elsewhere, kept apart
from what is measured here. Their build gets its own ``local_label`` (a local measurement of the
same torch is never merged into it) and a label that every page showing the build prints:
"torch 2.13.0 · imported (host, 2026-11-22)"."""
from __future__ import annotations

from contract.data_dependent import reclassify

IMPORTED_SUFFIX = "imported"


def is_imported_label(local_label: str) -> bool:
    """Whether a build's ``local_label`` marks imported sample data (``imported_local_label``)."""
    return local_label == IMPORTED_SUFFIX or local_label.endswith("." + IMPORTED_SUFFIX)


def imported_local_label(local_label: str) -> str:
    return f"{local_label}.{IMPORTED_SUFFIX}" if local_label else IMPORTED_SUFFIX


def _host(hostname: str, machine_class: str) -> str:
    """A host named like "(unassigned)" (a dispatched run's placeholder) is shown by its machine class."""
    return hostname if hostname[:1].isalnum() else machine_class


def imported_build_label(*, torch_version: str, machine: dict, started_at: str | None) -> str:
    day = (started_at or "")[:10] or "undated"
    return f"torch {torch_version} · imported ({_host(machine['hostname'], machine['machine_class'])}, {day})"


def imported_sources_label(*, torch_version: str, sources: list[tuple[str, str, str]]) -> str:
    """The label of a build imported from several documents, (hostname, machine class, day) each:
    every host and the span of days, so that a build imported from a CPU and then from an H100
    never reads "imported (cpu, ...)" above its H100 figures."""
    hosts = sorted({_host(hostname, machine_class) for hostname, machine_class, _ in sources})
    days = sorted({day or "undated" for _, _, day in sources})
    span = days[0] if len(days) == 1 else f"{days[0]} to {days[-1]}"
    return f"torch {torch_version} · imported ({', '.join(hosts)}, {span})"


def document_as_imported(doc: dict) -> None:
    """Mark a checked run document as imported sample data, in place (an ``run_ingest`` prepare step);
    its results get today's status names (``contract.data_dependent.reclassify``: a data-dependent
    ``compile_error`` of a document measured before that status existed is a ``data_dependent_error``)."""
    for result in doc.get("results", []):
        reclassify(result)
    build = doc["build"]
    build["local_label"] = imported_local_label(build.get("local_label", ""))
    build["label"] = imported_build_label(torch_version=build["torch_version"], machine=doc["machine"],
                                          started_at=doc["run"].get("started_at"))
