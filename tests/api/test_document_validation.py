"""Run document validation with jsonschema-rs as a first pass: the same answers as ``jsonschema``
alone (every error, its wording, its order) on valid and broken documents, and a plain
``jsonschema`` fallback where jsonschema-rs is not installed (GPU workers). No database."""
from __future__ import annotations

import copy
import decimal
import random
import sys

import pytest

from contract import document as doc_module
from contract.document import validate_document
from tests.documents import make_document

jsonschema_rs = pytest.importorskip("jsonschema_rs")


def slow(document) -> list:
    """What ``validate_document`` answers with ``jsonschema`` alone."""
    fast = doc_module._fast_validator
    doc_module._fast_validator = lambda: None
    try:
        return validate_document(document)
    finally:
        doc_module._fast_validator = fast


def test_a_valid_document_is_answered_by_jsonschema_rs_alone(monkeypatch):
    def no_jsonschema():
        raise AssertionError("jsonschema was asked about a valid document")

    monkeypatch.setattr(doc_module, "_validator", no_jsonschema)
    assert validate_document(make_document()) == []


WEIRD = [None, True, False, 0, -1, 1.0, 1.5, -0.0, 2**63, -(2**70), 1e308, float("nan"), float("inf"), float("-inf"), "", "x",
         "exploded", "2026-11-22T05:00:00", "2026-11-22 05:00:00+00:00", "2026-11-22T23:59:60Z", "{6ba7b810-9dad-11d1-80b4-00c04fd430c8}",
         "6ba7b8109dad11d180b400c04fd430c8", "abcdef1\n", "abcdef\u0661", "\udc00", "a\x00b", "\U0001f600" * 65, "x" * 300, [], [1, "a"],
         {}, {"reason": "r"}, (), (1, 2), decimal.Decimal("1.5"), b"bytes", {1: 2}]


def paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths(item, (*prefix, index))


def mutate(document: dict, rng: random.Random) -> dict:
    """One to three random changes: a value replaced by an odd one, a key deleted or added."""
    document = copy.deepcopy(document)
    for _ in range(rng.randint(1, 3)):
        path = rng.choice([p for p in paths(document) if p])
        parent = document
        for part in path[:-1]:
            parent = parent[part]
        action = rng.random()
        if action < 0.7:
            parent[path[-1]] = copy.deepcopy(rng.choice(WEIRD))
        elif action < 0.85 and isinstance(parent, dict):
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[rng.choice(["extra", "speedup", "status", "id", 7])] = copy.deepcopy(rng.choice(WEIRD))
    return document


def test_random_broken_documents_get_the_same_errors_as_with_jsonschema_alone():
    rng = random.Random(20261122)
    base = make_document()
    base["results"] = base["results"][:3]
    differing, refused = [], 0
    for _ in range(400):
        document = mutate(base, rng)
        expected = slow(document)
        refused += bool(expected)
        if validate_document(document) != expected:
            differing.append(document)
    assert not differing, differing[:3]
    assert refused > 250  # most mutations break the document: the comparison covers errors


@pytest.mark.parametrize("change, field", [
    (lambda d: d["results"][0].__setitem__("graph_breaks", ()), "results[0].graph_breaks"),  # jsonschema-rs takes a tuple
    (lambda d: d["results"][0]["metrics"].__setitem__("graph_break_count", decimal.Decimal(1)), "results[0].metrics.graph_break_count"),
    (lambda d: d["run"].__setitem__("started_at", "2026-11-22T05:00:00"), "run.started_at"),  # our own date-time check
    (lambda d: d["run"].__setitem__("id", "nope"), "run.id"),
])
def test_what_only_jsonschema_refuses_is_refused(change, field):
    document = make_document()
    change(document)
    errors = validate_document(document)
    assert errors == slow(document) and [e.field for e in errors] == [field]


def test_what_only_jsonschema_accepts_is_accepted():
    document = make_document()
    document["build"]["git_sha"] = "abcdef1\n"  # Python's $ matches before a final newline
    document["run"]["started_at"] = "2026-11-22 05:00:00+00:00"  # datetime.fromisoformat reads it
    assert validate_document(document) == slow(document) == []


def test_without_jsonschema_rs_plain_jsonschema_answers(monkeypatch):
    try:
        with monkeypatch.context() as patched:
            patched.setitem(sys.modules, "jsonschema_rs", None)  # import fails, as on a GPU worker
            doc_module._fast_validator.cache_clear()
            assert doc_module._fast_validator() is None
            assert validate_document(make_document()) == []
            document = make_document()
            document["results"][3]["status"] = "exploded"
            assert [str(e) for e in validate_document(document)] == [
                "results[3].status: 'exploded' is not one of 'pass', 'fail_accuracy', 'compile_error', 'eager_error', 'oom', 'timeout', 'crash', 'data_dependent_error'"]
    finally:
        doc_module._fast_validator.cache_clear()
    assert doc_module._fast_validator() is not None
