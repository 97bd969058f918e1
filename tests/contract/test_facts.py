"""The per-case facts and a finding's details (contract.facts, issue #45): the registry, the run
document's schema, the runner that writes them and the dashboard that reads them agree, so a
rename on one side cannot silently turn a rule off. Pure: no database, no torch."""
from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from contract import facts
from contract.document import load_schema

ROOT = Path(__file__).resolve().parents[2]
# How code names a key of a result's environment, as it writes or reads it.
_WRITES = re.compile(r"""environment(?:\"\])?(?:\[|\.setdefault\(|\.get\()\s*"(\w+)"|environment = \{(.*?)\}""", re.S)
_READS_PY = re.compile(r"""(?<!build\.)(?:environment__((?:[a-z0-9]|_(?!_))+)|environment\.get\(\s*"(\w+)"|environment\[\s*"(\w+)"\])""")
_READS_HTML = re.compile(r"""\.environment\.(\w+)""")
_DETAIL_READS_PY = re.compile(r"""(?<!finding\.)(?<!Regression\.)(?:details\.get\(\s*"(\w+)"|details\[\s*"(\w+)"\])""")  # not a detection Finding's, nor a docstring's
_DETAIL_READS_HTML = re.compile(r"""\.details\.(\w+)""")


def _path(module: str) -> Path:
    if "/" in module:
        return ROOT / module
    return Path(importlib.util.find_spec(module).origin)


def _source(module: str) -> str:
    return _path(module).read_text()


def _files(*tops: str, suffix: str) -> list[Path]:
    return [p for top in tops for p in (ROOT / top).rglob(f"*{suffix}") if "migrations" not in p.parts]


def _module(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts) if path.suffix == ".py" else str(path.relative_to(ROOT))


def _reads(in_python: re.Pattern, in_templates: re.Pattern) -> dict[str, set[str]]:
    """name -> the dashboard's modules and templates that read it."""
    read: dict[str, set[str]] = {}
    for path in _files("dashboard", suffix=".py"):
        for groups in in_python.findall(path.read_text()):
            read.setdefault(next(g for g in groups if g), set()).add(_module(path))
    for path in _files("dashboard", suffix=".html"):
        for name in in_templates.findall(path.read_text()):
            read.setdefault(name, set()).add(_module(path))
    return read


def _declared(found: dict[str, set[str]], registry: dict, role: str, what: str) -> None:
    """Every name found is in ``registry``, and the modules found are among its ``role`` (writers, readers)."""
    undeclared = sorted(set(found) - set(registry))
    assert not undeclared, f"{what} not declared in contract/facts.py: {undeclared}"
    for name, modules in found.items():
        named = set(getattr(registry[name], role))
        assert modules <= named, f"{what} {name}: {role} not named in contract/facts.py: {sorted(modules - named)}"


def test_the_schema_holds_the_registry():
    """``python -m contract.facts`` writes the schema's ``result.environment`` from the registry."""
    assert load_schema()["$defs"]["result"]["properties"]["environment"] == facts.environment_schema()
    assert len(facts.BY_NAME) == len(facts.FACTS) and len(facts.DETAILS_BY_NAME) == len(facts.DETAILS)


def test_a_decision_reads_only_paths_that_the_schema_declares():
    for path in facts.PATHS:
        shape = facts.BY_NAME[path[0]].shape
        for key in path[1:]:
            shape = shape["properties"][key]
        assert shape["type"] in ("number", ["number", "null"])
        # ... and its writers write every step of it by that name
        sources = "".join(_source(w) for w in facts.BY_NAME[path[0]].writers)
        assert all(f'"{key}"' in sources for key in path), path
    assert {f.name for f in facts.DECIDING} == {"timing", "compile_pairs"}
    assert facts.lookup(facts.HOST_PROBE_MEDIAN) == "environment__timing__host_probe_ms__median"


def test_every_key_the_runner_writes_is_declared_and_names_its_writer():
    written: dict[str, set[str]] = {}
    for path in _files("runner", suffix=".py"):
        for match in _WRITES.finditer(path.read_text()):
            names = [match.group(1)] if match.group(1) else re.findall(r'"(\w+)":', match.group(2))
            for name in names:
                written.setdefault(name, set()).add(_module(path))
    # what the runner's environment of a machine and a build (``python -m runner environment``) carry, not a case's
    written = {name: modules for name, modules in written.items()
               if name not in ("build", "machine", "cuda_available", "override_problems", "config_catalog")}
    _declared(written, facts.BY_NAME, "writers", "environment")
    for fact in facts.FACTS:
        assert any(f'"{fact.name}"' in _source(w) for w in fact.writers), f"no writer of environment.{fact.name} names it"


def test_every_key_the_dashboard_reads_is_declared_and_names_its_reader():
    read = _reads(_READS_PY, _READS_HTML)
    read.pop("build", None)  # a build's environment (its probe), not a case's
    _declared(read, facts.BY_NAME, "readers", "environment")
    for fact in facts.FACTS:
        for reader in fact.readers:
            text = _source(reader)
            assert fact.name in text or "contract.facts" in text or "from contract import facts" in text, (fact.name, reader)


def test_the_explain_pages_case_facts_are_declared():
    from dashboard.results.selectors.explain import _RESULT_ENVIRONMENT

    assert set(_RESULT_ENVIRONMENT) <= set(facts.BY_NAME)


def test_the_builder_takes_declared_facts_only():
    environment = facts.CaseEnvironment({"backend": "inductor"})
    environment["timing"] = {"host_probe_ms": {"median": 1.0}}
    environment.setdefault("phase_end_s", {})["start"] = 0.1
    assert json.loads(json.dumps(environment)) == {"backend": "inductor", "timing": {"host_probe_ms": {"median": 1.0}},
                                                   "phase_end_s": {"start": 0.1}}
    for write in (lambda: environment.__setitem__("timings", {}), lambda: environment.update(timings={}),
                  lambda: environment.setdefault("timings", {}), lambda: facts.CaseEnvironment(timings={})):
        with pytest.raises(KeyError, match="environment.timings is not a declared fact"):
            write()


def test_every_detail_the_dashboard_reads_is_declared_and_written():
    read = _reads(_DETAIL_READS_PY, _DETAIL_READS_HTML)
    _declared(read, facts.DETAILS_BY_NAME, "readers", "details")
    for detail in facts.DETAILS:
        assert any(f'"{detail.name}"' in _source(w) for w in detail.writers), f"no writer of details.{detail.name} names it"
    assert facts.FindingDetails(None).get("cause") is None and facts.FindingDetails({"cause": {"text": "x"}}).get("cause")
    with pytest.raises(KeyError, match="details.causes is not a declared detail"):
        facts.FindingDetails({}).get("causes")
