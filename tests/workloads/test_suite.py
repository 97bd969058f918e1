"""The workload suite at tiny size on CPU: every workload builds, runs, is deterministic and honest
about its dynamic dimensions. No inductor compiles here (CI budget): the graph-break checks use
Dynamo's ``explain``, which traces with the eager backend.
"""
from __future__ import annotations

import re

import pytest
import torch

from contract.planning import plan_cases
from contract.document import validate_document
from contract.vocabulary import DTYPES, SHAPE_REGIMES
from contract.vocabulary import SIZES as CONTRACT_SIZES
from tests.documents import make_document
from workloads import names
from workloads.base import SIZES, Instance, Workload
from workloads.registry import all_workloads, families, get_workload
from workloads.suite import REQUIRED_CATEGORIES
from workloads.suite._common import try_build

WORKLOADS = all_workloads()
NAMES = [w.name for w in WORKLOADS]


@pytest.fixture(autouse=True, scope="module")
def one_cpu_thread():
    """Tiny models gain nothing from intra-op threads, and on a shared 2-core machine OpenMP's
    spinning threads make each call 30-100x slower whenever another process is busy."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _flat(out) -> list[torch.Tensor]:
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for item in out for t in _flat(item)]
    if isinstance(out, dict):
        return [t for item in out.values() for t in _flat(item)]
    raise TypeError(f"unexpected output type {type(out).__name__}")


def _build(workload: Workload, seed: int = 0, dtype: torch.dtype = torch.float32) -> Instance:
    return workload.build(size="tiny", device="cpu", dtype=dtype, seed=seed)


def _run(instance: Instance, variant: int) -> list[torch.Tensor]:
    return _flat(instance.fn(*instance.make_inputs(variant)))


def _explain(name: str):
    torch._dynamo.reset()
    instance = _build(get_workload(name))
    result = torch._dynamo.explain(instance.fn)(*instance.make_inputs(0))
    torch._dynamo.reset()
    return result


# -- the suite as a whole -------------------------------------------------------------------------


def test_suite_has_every_required_workload_class():
    assert len(WORKLOADS) >= 9
    assert len(set(NAMES)) == len(NAMES)
    by_name = {w.name: w for w in WORKLOADS}
    for name, category in REQUIRED_CATEGORIES.items():
        assert name in by_name, f"missing workload {name}"
        assert by_name[name].category == category
    assert {w.phase for w in WORKLOADS} == {"infer", "train"}


@pytest.mark.parametrize("name", NAMES)
def test_get_workload_by_name(name):
    assert get_workload(name).name == name


# -- each workload's declaration -----------------------------------------------------------------


@pytest.mark.parametrize("workload", WORKLOADS, ids=NAMES)
def test_describe_is_a_valid_document_entry(workload):
    """#34: what the run document and the name grammar take, not today's spelling (a family's
    ``hf:BertForMaskedLM`` is mixed case; a model may have no dynamic dim or bf16 first)."""
    d = workload.describe()
    assert d["name"] == workload.name and set(d) >= {"name", "category", "phase", "dynamic_dims", "description"}
    assert 40 <= len(d["description"]) <= 2000
    document = make_document(results=[])
    document["workloads"] = [d]
    assert validate_document(document) == []
    assert names.parse(d["name"], families=families()) is None, "a core name must not read as a family's"
    assert all(re.fullmatch(r"\w+:\d+", s) for s in d["dynamic_dims"])
    assert workload.dtypes and len(set(workload.dtypes)) == len(workload.dtypes) and set(workload.dtypes) <= set(DTYPES)


@pytest.mark.parametrize("workload", WORKLOADS, ids=NAMES)
def test_the_plan_takes_the_first_dtype_and_dynamic_regimes_only_with_dynamic_dims(workload):
    plan = plan_cases([(workload.name, workload)], modes=["default"], regimes=list(SHAPE_REGIMES), dtypes=None,
                      device="cpu", backend="inductor", size="tiny")
    assert {c.spec.dtype for c in plan.cases} == {workload.dtypes[0]}
    assert [c.spec.shape_regime for c in plan.cases] == (list(SHAPE_REGIMES) if workload.dynamic_dims else ["static"])


@pytest.mark.parametrize("workload", WORKLOADS, ids=NAMES)
def test_unknown_size_and_variant_are_refused(workload):
    assert SIZES == CONTRACT_SIZES  # the sizes a case spec and the CLIs accept are the workloads'
    with pytest.raises(ValueError, match="unknown size 'huge'; expected one of"):
        workload.build(size="huge", device="cpu", dtype=torch.float32)
    with pytest.raises(ValueError):
        _build(workload).make_inputs(2)


def test_a_failing_library_model_falls_back_to_our_own():
    def moved_api():
        raise TypeError("unexpected keyword argument 'ddp_cache_data'")

    label, model = try_build([("transformers.X", moved_api), ("workloads.suite.x.X", lambda: "own")], seed=0)
    assert model == "own"
    assert label.startswith("workloads.suite.x.X (fallback; transformers.X: TypeError")
    assert try_build([("workloads.suite.x.X", lambda: "own")], seed=0) == ("workloads.suite.x.X", "own")
    with pytest.raises(TypeError):
        try_build([("workloads.suite.x.X", moved_api)], seed=0)


# -- building and running at tiny size -----------------------------------------------------------


@pytest.mark.parametrize("workload", WORKLOADS, ids=NAMES)
def test_builds_and_runs_on_both_variants(workload):
    instance = _build(workload)
    assert isinstance(instance, Instance)
    assert instance.implementation
    assert instance.rtol is not None and instance.atol is not None
    names = list(instance.input_names)
    assert len(set(names)) == len(names)
    assert {d.input for d in workload.dynamic_dims} <= set(names)
    for variant in (0, 1):
        inputs = instance.make_inputs(variant)
        assert len(inputs) == len(names)
        for name, t in zip(names, inputs):
            assert isinstance(t, torch.Tensor), name
            assert t.device.type == "cpu", name
            assert t.dtype in (torch.float32, torch.int64), f"{name}: {t.dtype}"
        outputs = _flat(instance.fn(*inputs))
        assert outputs
        for out in outputs:
            assert torch.isfinite(out).all(), f"non-finite output on variant {variant}"


@pytest.mark.parametrize("workload", WORKLOADS, ids=NAMES)
def test_variants_differ_exactly_in_the_dynamic_dims(workload):
    instance = _build(workload)
    first, second = instance.make_inputs(0), instance.make_inputs(1)
    dynamic = {(d.input, d.dim) for d in workload.dynamic_dims}
    for name, a, b in zip(instance.input_names, first, second):
        assert a.dim() == b.dim(), name
        assert a.dtype == b.dtype, name
        for dim in range(a.dim()):
            if (name, dim) in dynamic:
                assert a.shape[dim] != b.shape[dim], f"{name}:{dim} is declared dynamic but does not vary"
                assert min(a.shape[dim], b.shape[dim]) >= 2, f"{name}:{dim} takes a size torch specialises"
            else:
                assert a.shape[dim] == b.shape[dim], f"{name}:{dim} varies but is not declared dynamic"
    for d in workload.dynamic_dims:
        assert d.dim < len(first[list(instance.input_names).index(d.input)].shape)


@pytest.mark.parametrize("workload", WORKLOADS, ids=NAMES)
def test_inputs_are_deterministic(workload):
    a, b = _build(workload).make_inputs(0), _build(workload).make_inputs(0)
    for x, y in zip(a, b):
        assert torch.equal(x, y)


@pytest.mark.parametrize("workload", WORKLOADS, ids=NAMES)
def test_same_seed_gives_identical_first_outputs(workload):
    """The engine's contract: two builds with one seed start identical (training steps too)."""
    first = _run(_build(workload, seed=0), 0)
    second = _run(_build(workload, seed=0), 0)
    assert len(first) == len(second)
    for x, y in zip(first, second):
        assert torch.equal(x, y)
    other = _run(_build(workload, seed=1), 0)
    assert not all(torch.equal(x, y) for x, y in zip(first, other)), "the seed has no effect"


@pytest.mark.parametrize("workload", [w for w in WORKLOADS if w.phase == "train"], ids=lambda w: w.name)
def test_training_step_updates_the_weights(workload):
    instance = _build(workload)
    inputs = instance.make_inputs(0)
    loss_before = _flat(instance.fn(*inputs))[0]
    loss_after = _flat(instance.fn(*inputs))[0]
    assert loss_before.dim() == 0
    assert not torch.equal(loss_before, loss_after), "a second step on the same batch should change the loss"


@pytest.mark.parametrize(
    "workload, dtype_name",
    [(w, d) for w in WORKLOADS for d in w.dtypes if d == "bfloat16"],
    ids=lambda x: x if isinstance(x, str) else x.name,
)
def test_low_precision_inputs_follow_the_dtype(workload, dtype_name):
    dtype = getattr(torch, dtype_name)
    instance = _build(workload, dtype=dtype)
    inputs = instance.make_inputs(0)
    assert {t.dtype for t in inputs} <= {dtype, torch.int64}
    assert any(t.dtype == dtype for t in inputs) or any(
        p.dtype == dtype for m in instance.modules for p in m.parameters()
    )
    for out in _run(instance, 0):
        assert torch.isfinite(out.float()).all()


# -- graph breaks (Dynamo tracing with the eager backend; no inductor) ---------------------------


def test_positional_graph_break_breaks_deterministically():
    first = _explain("positional_graph_break")
    assert first.graph_count >= 2
    assert len(first.break_reasons) >= 1
    assert any("item" in str(r.reason) for r in first.break_reasons)
    again = _explain("positional_graph_break")
    assert (again.graph_count, len(again.break_reasons)) == (first.graph_count, len(first.break_reasons))


def test_mlp_loop_has_no_graph_break():
    result = _explain("mlp_loop")
    assert result.graph_count == 1
    assert not result.break_reasons
