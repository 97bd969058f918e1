"""Writes of the summary tables (``BuildSummary``, ``ConfigSummary``, ``DynamicSummary``).

``build_summary_refresh`` recomputes the rows of one build on one machine class from its stored
results (the home page judges a build against the previous one on its own: the regressions app's
``home_cells``, stored after the noise bands). The ingest service calls it inside its transaction,
so the summaries always say what the results say: idempotent (a document posted again gives the
same rows), a run posted in parts is summed once it is whole, a build ingested late slots in.
``bench/dashboard_load.py`` calls it after bulk loading, migration 0002 for older data.
"""
from __future__ import annotations

from types import SimpleNamespace

from django.db import transaction

from contract.case_config import CaseConfig
from contract.metrics import DYNAMIC_SIDE  # DynamicSummary.pairs' sides (results.selectors.dynamic.Side)
from dashboard.results.aggregates import FIGURE_COLUMNS, PASS, aggregate, geomean, latest_per_series
from dashboard.results.selectors.dynamic import (BACKED_EVERY_DIM, DYNAMIC_REGIMES, dynamic_pair_key, pairs_geomeans, pairs_marks,
                                                summary_pairs)

OPEN_RUN_STATUSES = ("pending", "running")
EXPORT_S = "path_phases__export_s"


def _models():
    from dashboard.results import models  # noqa: PLC0415 (the app's models: migrations pass their historical ones)

    return models


def _export_column(m) -> tuple[str, ...]:
    """An exporting path's export time (``Result.path_phases``), where the model has it (migrations
    before 0013 pass models without it)."""
    return (EXPORT_S,) if any(f.name == "path_phases" for f in m.Result._meta.get_fields()) else ()


def _cases(m, *, build_id: int, machine_class: str) -> dict[int, dict]:
    """The build's cases on the class, one per series (the one stored last)."""
    rows = (
        m.Result.objects.filter(build_id=build_id, series__machine_class=machine_class)
        .order_by("id")
        .values("id", "series_id", "workload_id", "config_id", "status", "speedup_noise", *FIGURE_COLUMNS, *_export_column(m))
    )
    return latest_per_series(rows)


def build_summary_refresh(*, build_id: int, machine_class: str, models: SimpleNamespace | None = None) -> None:
    """Recompute the summary rows of ``build_id`` on ``machine_class``.

    Locks the build row first: two ingests of one build refresh one after the other, and the
    second sees the first's committed results. ``models`` lets a migration pass its historical models.
    """
    m = models or _models()
    with transaction.atomic():
        ordered_at = m.Build.objects.select_for_update().filter(pk=build_id).values_list("ordered_at", flat=True).first()
        if ordered_at is None:
            return
        runs = list(
            m.Run.objects.filter(build_id=build_id, machine__machine_class=machine_class)
            .order_by("ingested_at", "id")
            .values_list("id", "status", "synthetic")
        )
        m.ConfigSummary.objects.filter(build_id=build_id, machine_class=machine_class).delete()
        dynamic = getattr(m, "DynamicSummary", None)  # absent from the models of migrations before 0009
        if dynamic:
            dynamic.objects.filter(build_id=build_id, machine_class=machine_class).delete()
        if not runs:
            m.BuildSummary.objects.filter(build_id=build_id, machine_class=machine_class).delete()
            return
        cases = _cases(m, build_id=build_id, machine_class=machine_class)
        everything = list(cases.values())
        m.BuildSummary.objects.update_or_create(
            build_id=build_id,
            machine_class=machine_class,
            defaults={
                "ordered_at": ordered_at,
                "synthetic": any(synthetic for _, _, synthetic in runs),
                "runs": len(runs),
                "latest_run_id": runs[-1][0],
                "in_progress": any(status in OPEN_RUN_STATUSES for _, status, _ in runs),
                "cases": len(everything),
                "passed": sum(1 for r in everything if r["status"] == PASS),
                "speedup_geomean": geomean(r["speedup"] for r in everything if r["status"] == PASS),
            },
        )
        by_config: dict[int, list[dict]] = {}
        for row in everything:
            by_config.setdefault(row["config_id"], []).append(row)
        m.ConfigSummary.objects.bulk_create(
            [
                m.ConfigSummary(
                    build_id=build_id, machine_class=machine_class, config_id=config_id, ordered_at=ordered_at,
                    **aggregate(config_rows),
                )
                for config_id, config_rows in sorted(by_config.items())
            ]
        )
        if dynamic:
            dynamic.objects.bulk_create(_dynamic_summaries(m, build_id=build_id, machine_class=machine_class,
                                                           ordered_at=ordered_at, cases=cases))


def _dynamic_summaries(m, *, build_id: int, machine_class: str, ordered_at, cases: dict[int, dict]) -> list:
    """Per compile mode and dtype, each workload's backed and unbacked case (of several series of
    one workload and regime, e.g. two devices, the result stored last), in the order the build's
    results were stored (``cases``' order), so the page adds them up in the order it always did."""
    configs = {c.id: CaseConfig.from_document(c.tags) for c in m.Config.objects.filter(tags__shape_regime__in=DYNAMIC_REGIMES)}
    found: dict[str, dict[int, dict[str, dict]]] = {}  # dynamic_pair_key -> workload -> regime -> row
    for row in cases.values():
        config = configs.get(row["config_id"])
        if config is None:
            continue
        sides = found.setdefault(dynamic_pair_key(config), {}).setdefault(row["workload_id"], {})
        if config.shape_regime not in sides or row["id"] > sides[config.shape_regime]["id"]:
            sides[config.shape_regime] = row
    names = dict(m.Workload.objects.filter(id__in={w for workloads in found.values() for w in workloads}).values_list("id", "name"))

    def side(row: dict | None) -> list | None:
        return [row.get(f) for f in (*DYNAMIC_SIDE, EXPORT_S)] if row else None  # export_s last (Side)

    out = []
    for config_key, workloads in sorted(found.items()):
        every_dim = found.get(_every_dim_key(config_key), {})
        pairs = []
        for w, sides in workloads.items():
            pair = [names[w], side(sides.get("backed")), side(sides.get("unbacked"))]
            fallback = every_dim.get(w, {}).get("backed") if every_dim is not workloads else None
            if pair[1] is None and pair[2] is not None and fallback is not None:
                # Unbacked on some dims, no backed case of those dims: against backed on every dim
                # (docs/families.md, "What the pages show"); the pair's fourth item says so.
                pair[1:] = [side(fallback), pair[2], BACKED_EVERY_DIM]
            pairs.append(pair)
        built = summary_pairs(pairs)
        geomean_gap, geomean_compile_ratio = pairs_geomeans(built)
        out.append(m.DynamicSummary(build_id=build_id, machine_class=machine_class, config_key=config_key,
                                    ordered_at=ordered_at, pairs=pairs, gaps={p.workload: p.gap for p in built},
                                    geomean_gap=geomean_gap, geomean_compile_ratio=geomean_compile_ratio,
                                    **({"marks": pairs_marks(pairs)} if _has_marks(m) else {})))
    return out


def _has_marks(m) -> bool:
    """Whether the model has ``DynamicSummary.marks`` (migrations before 0024 pass models without it)."""
    return any(f.name == "marks" for f in m.DynamicSummary._meta.get_fields())


def _every_dim_key(config_key: str) -> str:
    """The ``dynamic_pair_key`` of the same mode and dtype on every declared dim (``.../dims=batch``
    without its dims part; a key without dims is its own)."""
    return config_key.split("/dims=", 1)[0]


def summaries_refresh_all(*, models: SimpleNamespace | None = None) -> int:
    """Refresh every (build, machine class) that has a run, oldest build first; returns how many."""
    m = models or _models()
    pairs = (
        m.Run.objects.values_list("build_id", "machine__machine_class", "build__ordered_at")
        .distinct()
        .order_by("build__ordered_at", "build_id")
    )
    count = 0
    for build_id, machine_class, _ in pairs:
        build_summary_refresh(build_id=build_id, machine_class=machine_class, models=m)
        count += 1
    return count
