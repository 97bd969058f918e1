"""``python -m runner list``, and naming workloads: the names a run or a listing asks for resolved to
workloads (their catalog entries: ``runner.catalog``)."""
from __future__ import annotations

import argparse
import json


def resolve_workloads(names: list[str] | None, *, allow_import: bool = False) -> list[tuple[str, object]]:
    """(name as requested, Workload) pairs; raises LookupError with a readable message.

    ``allow_import``: ``module:Class`` names may import their module (the local CLI only; see
    ``workloads.registry``)."""
    from workloads.registry import all_workloads, get_workload

    if not names:
        try:
            return [(w.name, w) for w in all_workloads()]
        except ModuleNotFoundError as exc:
            raise LookupError(f"the suite cannot be loaded ({exc}); name workloads with --workloads") from None
    resolved = []
    for name in names:
        try:
            resolved.append((name, get_workload(name, allow_import=allow_import)))
        except (KeyError, ImportError, AttributeError, ValueError) as exc:
            message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
            raise LookupError(f"workload {name!r}: {message}") from None
    return resolved


def command_list(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from runner.catalog import catalog_entry
    from runner.report import format_table

    if args.family:
        from runner.families import list_family

        try:
            return list_family(args.family, as_json=args.json, names_only=args.names)
        except LookupError as exc:
            parser.error(f"--family: {exc.args[0]}")
    try:
        workloads = resolve_workloads(args.workloads, allow_import=True)
    except LookupError as exc:
        parser.error(str(exc))
    if args.json:
        print(json.dumps([catalog_entry(requested, w) for requested, w in workloads], indent=1))
        return 0
    rows = [
        (
            w.name,
            w.category or "-",
            ", ".join(str(d) for d in w.dynamic_dims) or "-",
            w.phase,
            ", ".join(w.dtypes),
        )
        for _, w in workloads
    ]
    print(format_table(("workload", "class", "dynamic dims", "train/infer", "dtypes"), rows))
    return 0
