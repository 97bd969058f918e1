"""The committed catalogs are what ``python -m runner list --json`` prints for the workloads."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from contract.catalog import CATALOG_PATH, resolve_entries, suite_entries

ROOT = Path(__file__).resolve().parents[2]
TEST_CATALOG = ROOT / "tests" / "catalog.json"


def _listed(*names: str) -> list[dict]:
    argv = [sys.executable, "-m", "runner", "list", "--json", *(["--workloads", ",".join(names)] if names else [])]
    return json.loads(subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=True).stdout)


def test_contract_catalog_json_is_the_suite():
    assert json.loads(CATALOG_PATH.read_text()) == _listed(), "regenerate: python -m runner list --json > contract/catalog.json"


def test_the_test_workloads_catalog_is_theirs():
    committed = json.loads(TEST_CATALOG.read_text())
    assert committed == _listed(*(e["source"] for e in committed))


def test_catalog_entries_describe_as_the_workloads_do():
    from runner.listing import resolve_workloads

    described = {w.name: w.describe() for _, w in resolve_workloads(None)}
    assert {e.name: e.describe() for e in suite_entries()} == described


def test_resolve_entries_refuses_what_resolve_workloads_refuses(monkeypatch):
    from runner.listing import resolve_workloads

    monkeypatch.setenv("PTBENCH_WORKLOAD_MODULES", "")
    for name in ("no_such_workload", "tests.runner.sample_workloads:TinyMLP", "os:abort"):
        with pytest.raises(LookupError) as expected:
            resolve_workloads([name])
        with pytest.raises(LookupError) as got:
            resolve_entries([name])
        assert str(got.value) == str(expected.value)


def test_an_allowed_module_class_resolves_from_the_extra_catalog():
    [(name, entry)] = resolve_entries(["tests.runner.sample_workloads:TinyMLP"])
    assert (name, entry.name) == ("tests.runner.sample_workloads:TinyMLP", "test_tiny_mlp")
