"""A workload's entry in the catalog (``contract.catalog``): what the dashboard knows of it without
torch, written by ``python -m runner list --json`` for single workloads and whole families alike."""
from __future__ import annotations


def catalog_entry(requested_name: str, workload) -> dict:
    """A workload's ``contract.catalog`` entry; ``source`` for one named ``module:Class``."""
    from contract.catalog import Entry

    return Entry(name=workload.name, category=workload.category, phase=workload.phase, dtypes=tuple(workload.dtypes),
                 dynamic_dims=tuple(str(d) for d in workload.dynamic_dims), description=workload.description,
                 source=requested_name if ":" in requested_name and not getattr(workload, "family", "") else "",
                 family=getattr(workload, "family", ""),
                 dim_roles=tuple(getattr(d, "role", "") for d in workload.dynamic_dims)).to_json()
