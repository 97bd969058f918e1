"""The per-case facts: every key of a result's ``environment`` (the run document's
``results[].environment``), described once, as the metrics are (``contract.metrics``).

A ``Fact`` says its name, its JSON shape (the schema's ``result.environment`` properties are generated
from these: ``python -m contract.facts`` writes them), the runner modules that write it, the
dashboard modules and templates that read it by this name, and whether a decision (detection, the
verdict, which results are compared) depends on it. The runner writes them through one builder,
``CaseEnvironment``, which refuses a name not declared here; the dashboard reads the nested values a
decision takes through the paths below (``HOST_PROBE_MEDIAN`` ...). ``tests/contract/test_facts.py``
checks that the registry, the schema, the writers and the readers agree.

Older stored documents carry only these keys; the schema still lets an unknown key through
(``additionalProperties``), so a document of an older or newer runner is stored, not refused.

Pure Python: no Django, no torch.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass

# JSON shapes, as JSON Schema fragments
STRING = {"type": "string"}
NULLABLE_STRING = {"type": ["string", "null"]}
NUMBER = {"type": "number"}
OBJECT = {"type": "object"}
STRINGS = {"type": "array", "items": {"type": "string"}}
_NUMBER_OR_NULL = {"type": ["number", "null"]}


def _object(**properties) -> dict:
    """An object of which these properties are known (others may stand beside them)."""
    return {"type": "object", "properties": properties}


@dataclass(frozen=True)
class Fact:
    name: str  # the key in a result's ``environment``
    shape: dict  # its JSON Schema
    writers: tuple[str, ...]  # the runner modules that write it
    about: str  # what it says (the schema's description)
    readers: tuple[str, ...] = ()  # dashboard modules (dotted) and templates (paths) that read it by name
    decides: bool = False  # a decision depends on it: renaming it silently changes a verdict

    def schema(self) -> dict:
        return {**self.shape, "description": self.about}


_CASE = "runner.engine.case"
_EXECUTOR = "runner.engine.executor"
_RANK = "runner.engine.distributed.rank"
_EXPLAIN = "dashboard.results.selectors.explain"

FACTS: tuple[Fact, ...] = (
    # -- what ran ------------------------------------------------------------------------------------
    Fact("backend", STRING, (_CASE, _EXECUTOR), "the torch.compile backend", (_EXPLAIN,)),
    Fact("size", STRING, (_CASE, _EXECUTOR), "the workload's size (tiny, full)", (_EXPLAIN,)),
    Fact("implementation", STRING, (_CASE,), "the model's class as imported (ours under workloads., else a library's)",
         (_EXPLAIN, "dashboard.results.selectors.runs", "dashboard.results.selectors.workloads", "dashboard/web/templates/web/workload.html")),
    Fact("cuda_visible_devices", NULLABLE_STRING, (_CASE,), "CUDA_VISIBLE_DEVICES of the case process (a GPU case)", (_EXPLAIN,)),
    Fact("workload_spec", STRING, (_CASE,), "the workload as requested, where it differs from its name (module:Class)", (_EXPLAIN,)),
    Fact("marked_dims", STRINGS, (_CASE,), "the declared dynamic dims the configuration's dims marked"),
    Fact("unbacked_hint", STRING, (_CASE,), "why an unbacked regime may not reach its dims (runner.engine.prepare)"),
    Fact("compile_mode_ignored", STRING, (_CASE,), "a compile mode the backend ignores"),
    Fact("compiled_instance", STRING, (_CASE,), "how the compiled side's instance was made (runner.engine.instances)"),
    Fact("second_shape", STRING, (_CASE,), "why the second shape was not compiled (a static mode)"),
    Fact("distributed", _object(parallel=STRING, world_size={"type": "integer"}, order=STRING, checkpoint={"type": "boolean"}),
         (_RANK, "runner.engine.distributed.launch"), "a distributed case: wrapper, world, order, per-rank breaks, memory and exits",
         ("dashboard.results.selectors.runs",)),
    Fact("worker", OBJECT, ("runner.worker.measure", "runner.worker.tasks"), "the worker that measured it: host, devices, when taken and handed over"),
    # -- how the case went -------------------------------------------------------------------------
    Fact("case_process", OBJECT, ("runner.internal", _EXECUTOR), "how the cold case process started (warm fork or subprocess)"),
    Fact("warm_case_process", OBJECT, (_EXECUTOR,), "how the warm case process started"),
    Fact("process_wall_s", OBJECT, (_EXECUTOR,), "wall seconds of the cold and warm case processes"),
    Fact("phase_end_s", OBJECT, ("runner.engine.result_file",), "seconds from the case's start to the end of each phase"),
    Fact("eager_parts_s", OBJECT, (_CASE,), "seconds of the eager side's parts (imports, build, inputs, first call)"),
    Fact("gpu_lock_wait_s", NUMBER, ("runner.engine.gpu_lock",), "seconds waited for the GPU lock"),
    Fact("gpu_lock", OBJECT, ("runner.engine.gpu_lock",), "the GPU lock held: file, seconds, steps, autotuning"),
    Fact("compile_lock_wait_s", NUMBER, (_CASE,), "seconds the cold first call waited for the GPU lock, left out of its compile time"),
    Fact("compile_warm_lock_wait_s", NUMBER, (_CASE, _EXECUTOR), "seconds the warm first call waited for the GPU lock, left out of its compile time"),
    Fact("timing", _object(host_probe_ms=_object(median=NUMBER, min=NUMBER),
                           host_share=_object(compiled=_NUMBER_OR_NULL, eager=_NUMBER_OR_NULL)),
         (_CASE, _RANK, "runner.engine.timing"), "how the timing went: warm-up, blocks, and on a GPU the host's speed and each side's host share",
         ("dashboard.results.host",), decides=True),
    Fact("compile", OBJECT, (_CASE,), "the host's speed while the cold compile ran (runner.engine.host_speed)"),
    Fact("compile_warm", OBJECT, (_CASE, _EXECUTOR), "the host's speed while the warm compile ran"),
    Fact("compile_caches", OBJECT, (_CASE, _RANK), "the compile caches' counters of the cold phase"),
    Fact("warm_compile_caches", OBJECT, (_EXECUTOR,), "the compile caches' counters of the warm phase"),
    Fact("warm_path_phases", OBJECT, (_EXECUTOR,), "a compile path's seconds per phase, warm"),
    Fact("warm_compile_error", STRING, (_EXECUTOR,), "why the warm phase failed (the cold result stands)"),
    Fact("compile_path", OBJECT, (_CASE,), "what a compile path found: dynamic shapes, unbacked symbols, guards",
         ("dashboard.web.filters.format",)),
    Fact("compile_pairs", _object(reference=_object(torch=NULLABLE_STRING, git_sha=NULLABLE_STRING, python=NULLABLE_STRING), method={"type": "integer"}),
         (_EXECUTOR,), "compile pairs against the reference build: its torch, sha and python, the method, the ratios",
         ("dashboard.results.compile_reference",), decides=True),
    Fact("compile_pairs_skipped", STRING, (_EXECUTOR,), "why no compile pairs were measured"),
    Fact("accuracy_fp64", OBJECT, ("runner.engine.accuracy_check",), "the float64 reference check of a low-precision case"),
    Fact("cuda_graphs", OBJECT, ("runner.engine.cuda_graph_skips",),
         "a mode that asked for CUDA graphs: how many compiled graphs inductor ran without them, and why",
         ("dashboard.results.selectors.dynamic_families",)),
    # -- what failed -------------------------------------------------------------------------------
    Fact("data_dependent", _object(expression=STRING, source=STRING, caused_by=STRING), (_CASE,),
         "a compile that guarded on a data-dependent expression: the expression and where",
         ("dashboard.results.selectors.dynamic_families",)),
    Fact("profile_error", STRING, (_CASE,), "why the kernel profile is missing"),
    Fact("explain_error", STRING, (_CASE,), "why graph breaks carry no locations"),
)
BY_NAME: dict[str, Fact] = {f.name: f for f in FACTS}
DECIDING: tuple[Fact, ...] = tuple(f for f in FACTS if f.decides)

# The nested values a decision reads (the dashboard builds its JSON lookups from these paths).
HOST_PROBE_MEDIAN = ("timing", "host_probe_ms", "median")  # the host's speed in a case (host-slowdown rule)
COMPILED_HOST_SHARE = ("timing", "host_share", "compiled")  # how host-bound the compiled side is
COMPILE_PAIRS = "compile_pairs"  # its reference and method: results compared only within one reference
PATHS = (HOST_PROBE_MEDIAN, COMPILED_HOST_SHARE)


def lookup(path: tuple[str, ...]) -> str:
    """A path's JSON lookup from a ``Result`` (``environment__timing__host_probe_ms__median``)."""
    if path[0] not in BY_NAME:
        raise KeyError(f"environment.{path[0]} is not a declared fact (contract/facts.py)")
    return "__".join(("environment", *path))


class CaseEnvironment(dict):
    """A result's ``environment`` as the runner builds it: a dict that takes only declared facts."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        self.update(*args, **kwargs)

    def __setitem__(self, name, value) -> None:
        if name not in BY_NAME:
            raise KeyError(f"environment.{name} is not a declared fact: declare it in contract/facts.py")
        super().__setitem__(name, value)

    def update(self, *args, **kwargs) -> None:
        for name, value in dict(*args, **kwargs).items():
            self[name] = value

    def setdefault(self, name, default=None):
        if name not in self:
            self[name] = default
        return self[name]


# -- a finding's details ---------------------------------------------------------------------------
# ``Regression.details`` (a JSON object per finding): the same kind of bag, declared the same way. The
# dashboard reads it through ``FindingDetails`` (one check that it is an object; a name not declared
# here is refused), and ``tests/contract/test_facts.py`` checks that every key read is declared and
# written by a writer named here.


@dataclass(frozen=True)
class Detail:
    name: str
    writers: tuple[str, ...]  # the modules that write it (the detection package's findings included)
    about: str
    readers: tuple[str, ...] = ()  # dashboard modules and templates that read it by name


_DETECT = "dashboard.regressions.services.detection"
_DETECTION = (_DETECT, "dashboard.regressions.services.detection_noisy", "dashboard.regressions.services.detection_record")
_REMEASURE = "dashboard.regressions.services.remeasure"
_EXPLAINED = (*_DETECTION, _REMEASURE, "dashboard.regressions.finding_explanation")  # any rule's finding explains itself
_DETERMINISTIC = "detection.deterministic"
_SERIALIZERS = "dashboard.api.serializers"
_LIST, _DETAIL = "dashboard/web/templates/regressions/list.html", "dashboard/web/templates/regressions/detail.html"

DETAILS: tuple[Detail, ...] = (
    Detail("message", (*_DETECTION, _REMEASURE), "the finding in one sentence", (_SERIALIZERS, "dashboard.regressions.models")),
    Detail("reasons", _DETECTION, "the new graph-break or recompile reasons, as measured",
           (_SERIALIZERS, "dashboard.alerts.compose", "dashboard.regressions.board", "dashboard.regressions.finding", _LIST)),
    Detail("locations", (_DETERMINISTIC,), "where each new reason was raised (file:line), in the reasons' order",
           ("dashboard.regressions.finding",)),
    Detail("before", (*_DETECTION, _DETERMINISTIC), "a status finding's status before (a number is Regression.before_value)",
           ("dashboard.regressions.board", "dashboard.regressions.finding")),
    Detail("after", (*_DETECTION, _DETERMINISTIC), "... and after", ("dashboard.regressions.board", "dashboard.regressions.finding")),
    Detail("noise", (*_DETECTION, _REMEASURE), "the run-to-run noise the change was judged against", ("dashboard.regressions.board",)),
    Detail("noise_source", (*_DETECTION, _REMEASURE), "where that noise came from"),
    Detail("z", (*_DETECTION, _REMEASURE), "the change in noise standard errors"),
    Detail("delay", _DETECTION, "builds between the change and its finding"),
    Detail("rule", (*_DETECTION, _REMEASURE), "the rule that found it (short_history, variant, two-build: regressions.two_build, "
           "engine_gate: an engine alert its newest build's re-run confirmed, regressions.engine_gate)",
           ("dashboard.regressions.two_build", "dashboard.regressions.engine_gate")),
    Detail("variant_of", _DETECTION, "a variant's finding: its base build's id"),
    Detail("host_slowed", _DETECTION, "the host's slowdown past the change (results.host)"),
    Detail("phases", _EXPLAINED, "a compile total's phases before and after, largest change first"),
    Detail("cause", _EXPLAINED, "the likeliest cause (regressions.explain, docs/explain.md)",
           (_SERIALIZERS, "dashboard.alerts.compose", _LIST, _DETAIL)),
    Detail("gap", (_DETERMINISTIC,), "the dynamic gap (unbacked over backed, less 1)"),
    Detail("previous_gap", (_DETERMINISTIC,), "... at the build before"),
    Detail("threshold", (_DETERMINISTIC,), "the gap a finding needs"),
    Detail("counts", (_DETERMINISTIC,), "the counts a count finding compared"),
    Detail("confirmed_by", (*_DETECTION, _REMEASURE), "what confirmed a suspect (the next build, a re-measurement)"),
)
DETAILS_BY_NAME: dict[str, Detail] = {d.name: d for d in DETAILS}


class FindingDetails:
    """A finding's stored details as the dashboard reads them: {} where they are not an object, and
    only declared keys."""

    def __init__(self, raw):
        self._raw = raw if isinstance(raw, dict) else {}

    def get(self, name: str, default=None):
        if name not in DETAILS_BY_NAME:
            raise KeyError(f"details.{name} is not a declared detail: declare it in contract/facts.py")
        return self._raw.get(name, default)


def environment_schema() -> dict:
    """The schema's ``result.environment``: the declared facts, and room for a key of another runner."""
    return {"type": "object", "description": "Per-case facts (contract/facts.py): how the case ran, beside the build's.",
            "properties": {f.name: f.schema() for f in FACTS}, "additionalProperties": True}


def _write_schema(path) -> None:
    """Write ``environment_schema()`` into the run document's schema file, keeping the rest as it is."""
    from pathlib import Path  # noqa: PLC0415 (only when writing)

    schema = json.loads(Path(path).read_text())
    schema["$defs"]["result"]["properties"]["environment"] = environment_schema()
    Path(path).write_text(json.dumps(schema, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    from contract.document import SCHEMA_PATH  # noqa: PLC0415

    _write_schema(sys.argv[1] if len(sys.argv) > 1 else SCHEMA_PATH)
    print(f"wrote result.environment ({len(FACTS)} facts) into {SCHEMA_PATH}")
