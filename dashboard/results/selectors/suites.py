"""The overview's per-suite table: one build on one machine class, per suite (``core``, ``hf``,
``timm``, ``torchvision``, then ``all``: ``contract.suites``), its cases, pass rate and geomean
speedup over the passing cases, as the HUD groups its summary by suite; with the notes of the runs
that measured each suite (docs/families.md, "On the dashboard")."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from contract.suites import ALL, suite_names, suite_of
from dashboard.results.aggregates import PASS, geomean, latest_per_series
from dashboard.results.models import Result, Run
from dashboard.results.selectors.build_cases import cases_of_configs

# The sentence ``python -m runner run`` writes into a document it ends early (runner/cli.py):
# counted per suite as partial runs instead of repeated in each note.
PARTIAL_NOTE = re.compile(r"^partial: \d+ of \d+ cases \(the run is still going or was stopped\)[.;]?\s*")


@dataclass
class SuiteRow:
    suite: str
    cases: int = 0
    passed: int = 0
    speedup_geomean: float | None = None
    runs: int = 0
    partial_runs: int = 0
    # Distinct notes, the partial sentence left out, each with the number of runs that carry it.
    notes: dict[str, int] = field(default_factory=dict)

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.cases if self.cases else None


def run_note(notes: str) -> tuple[bool, str]:
    """(whether the run ended early, what else its notes say)."""
    rest = PARTIAL_NOTE.sub("", notes.strip())
    return rest != notes.strip(), rest.strip()


def notes_distinct(notes) -> list[str]:
    """Runs' notes, each once, in order, the partial sentence left out (pages print them where
    they show the runs' figures: how a run was measured, e.g. five cases sharing one GPU)."""
    return list(dict.fromkeys(rest for n in notes if (rest := run_note(n or "")[1])))


def notes_grouped(pairs) -> list[tuple[str, list[str]]]:
    """(run notes, what the case is: a configuration's label) pairs as each distinct note once, in
    order, with the labels of the cases it covers: a workload page says which of its latest
    figures each note is about (e.g. which were measured with other processes on the GPU)."""
    grouped: dict[str, list[str]] = {}
    for notes, label in pairs:
        rest = run_note(notes or "")[1]
        if rest and label not in grouped.setdefault(rest, []):
            grouped[rest].append(label)
    return list(grouped.items())


def suite_table(*, build_id: int, machine_class: str, config_ids: list[int] | None = None,
                cases: dict[int, dict] | None = None) -> list[SuiteRow]:
    """Per suite of the build's cases on the class (the case stored last of each series), then
    ``all`` when there is more than one suite; ``config_ids`` limits the cases to some configurations;
    ``cases``: the build's cases as ``build_cases`` read them, where the page has them."""
    if cases is not None:
        cases = cases_of_configs(cases, config_ids)
    else:
        rows = Result.objects.filter(build_id=build_id, series__machine_class=machine_class)
        if config_ids is not None:
            rows = rows.filter(config_id__in=config_ids)
        cases = latest_per_series(rows.order_by("id").values("id", "series_id", "workload__name", "status", "speedup", "run_id"))
    notes = dict(Run.objects.filter(id__in={c["run_id"] for c in cases.values()}).values_list("id", "notes"))
    grouped: dict[str, list[dict]] = {}
    for case in cases.values():
        grouped.setdefault(suite_of(case["workload__name"]), []).append(case)
    if len(grouped) > 1:
        grouped[ALL] = list(cases.values())
    return [_row(suite, grouped[suite], notes) for suite in suite_names() if suite in grouped]


def _row(suite: str, cases: list[dict], notes: dict) -> SuiteRow:
    passing = [c for c in cases if c["status"] == PASS]
    row = SuiteRow(suite=suite, cases=len(cases), passed=len(passing), speedup_geomean=geomean(c["speedup"] for c in passing))
    for run_id in sorted({c["run_id"] for c in cases}, key=str):
        partial, rest = run_note(notes.get(run_id, ""))
        row.runs += 1
        row.partial_runs += partial
        if rest:
            row.notes[rest] = row.notes.get(rest, 0) + 1
    return row
