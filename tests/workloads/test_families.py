"""Model families (docs/families.md): the provider API with a fake family, the name grammar, the hf
family's tiny models on CPU (eager: built, seeded, shapes that vary only on the chosen axes), the
catalog the dashboard reads, and families whose package does not import saying why."""
from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from contract.catalog import FAMILIES_PATH, resolve_entries
from contract.planning import plan_cases
from workloads import names
from workloads.base import DynamicDim, Instance
from workloads.families._api import Family, FamilyModel, FamilyWorkload, import_problem
from workloads.families.timm_models import TimmWorkload
from workloads.registry import UnknownWorkload, _FAMILIES, family_models, get_workload, register_family

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True, scope="module")
def one_cpu_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# -- a fake family: adding one needs nothing outside its provider -------------------------------------


class _Scaled(FamilyWorkload):
    def __init__(self, *, name, train, axes, width):
        super().__init__(name=name, train=train, axes=axes, dims={DynamicDim("x", 0): "batch", DynamicDim("x", 1): "sequence"})
        self.width = width

    def build(self, *, size, device, dtype, seed=0):
        torch.manual_seed(seed)
        layer = torch.nn.Linear(self.width, self.width).to(device=device, dtype=dtype)

        def make_inputs(variant):
            batch = 6 if variant and self.varies("batch") else 3
            seq = 10 if variant and self.varies("sequence") else 5
            return (torch.ones(batch, seq, self.width, dtype=dtype, device=device),)

        return Instance(fn=layer, make_inputs=make_inputs, input_names=("x",), modules=(layer,))


class _FakeFamily(Family):
    prefix = "fake"
    description = "a test family"

    def models(self):
        return [FamilyModel("net", factory=_Scaled, args={"width": 4}), FamilyModel("absent", factory=_Scaled, args={"width": 4})]

    def missing(self, model):
        return "fakelib 0.0 has no absent" if model.name == "absent" else ""


@pytest.fixture
def fake_family():
    register_family(_FakeFamily())
    yield
    _FAMILIES.pop("fake")


def test_a_registered_family_resolves_builds_lists_and_plans(fake_family, capsys):
    from runner.cli import main

    workload = get_workload("fake:net@batch")
    assert (workload.name, workload.family, workload.phase) == ("fake:net@batch", "fake", "infer")
    assert workload.dynamic_dims == (DynamicDim("x", 0),)
    instance = workload.build(size="tiny", device="cpu", dtype=torch.float32)
    assert tuple(instance.make_inputs(1)[0].shape) == (6, 5, 4)  # only the batch varies
    with pytest.raises(UnknownWorkload, match="cannot be built here: fakelib 0.0 has no absent"):
        get_workload("fake:absent")

    assert main(["list", "--family", "fake"]) == 0
    listed = capsys.readouterr().out
    assert "fake:net" in listed and "fakelib 0.0 has no absent" in listed and "1 of 2 listed models" in listed

    for name, why in (("fake:absent", "cannot be built here: fakelib 0.0 has no absent"), ("fake:net@fast", "options after @")):
        with pytest.raises(SystemExit) as exited:
            main(["run", "--workloads", name, "--out", "run.json"])
        assert exited.value.code == 2 and why in capsys.readouterr().err

    plan = plan_cases([("fake:net", get_workload("fake:net"))], modes=["default"], regimes=["static", "unbacked"],
                      dtypes=None, device="cpu", backend="eager", size="tiny", import_allowed=True)
    assert [(c.spec.workload, c.spec.shape_regime, c.spec.dtype, c.spec.import_allowed) for c in plan.cases] == [
        ("fake:net", "static", "bfloat16", False), ("fake:net", "unbacked", "bfloat16", False)]
    assert "--dtypes bfloat16" in plan.cases[0].repro


def test_a_family_prefix_is_resolved_before_any_import(fake_family, monkeypatch):
    imported = []
    monkeypatch.setattr("importlib.import_module", lambda name, *a: imported.append(name))
    with pytest.raises(UnknownWorkload, match="family fake lists no 'nothing'; it lists: net, absent"):
        get_workload("fake:nothing", allow_import=True)
    assert set(imported) <= {"workloads.families"}  # the providers themselves; never a module "fake"


def test_the_name_grammar():
    families = {"hf", "timm"}
    parsed = names.parse("hf:BertForMaskedLM@batch+train", families=families)
    assert (parsed.base, parsed.train, parsed.axes, str(parsed)) == ("hf:BertForMaskedLM", True, ("batch",), "hf:BertForMaskedLM@train+batch")
    assert names.parse("timm:convnextv2_nano.fcmae_ft_in22k_in1k", families=families).model == "convnextv2_nano.fcmae_ft_in22k_in1k"
    assert names.parse("tests.runner.sample_workloads:TinyMLP", families=families) is None
    assert names.parse("mlp_loop", families=families) is None
    assert names.is_import_name("os:abort", families=families) and not names.is_import_name("hf:X", families=families)
    for bad in ("hf:", "hf:X@", "hf:X@fast", "hf:X@batch+batch"):
        with pytest.raises(names.BadName):
            names.parse(bad, families=families)
    with pytest.raises(UnknownWorkload, match="options after @"):
        get_workload("hf:BertForMaskedLM@fast")
    with pytest.raises(ValueError, match="no dynamic dim on axis sequence"):  # an image model has no sequence
        TimmWorkload(name="timm:resnet50@sequence", train=False, axes=("sequence",), model="resnet50", batch=2)


# -- the hf family at tiny size (eager only: CI's budget) -------------------------------------------


def _tensors(out):
    return [t for t in (out if isinstance(out, tuple) else (out,)) for t in (t if isinstance(t, tuple) else (t,))]


@pytest.mark.parametrize("name, dtype", [("hf:BertForMaskedLM", torch.bfloat16), ("hf:GPT2ForSequenceClassification", torch.bfloat16),
                                         ("hf:T5Small", torch.float32)])
def test_tiny_hf_inference_is_seeded_and_varies_the_marked_axes(name, dtype):
    workload = get_workload(name)
    assert workload.dtypes[0] == "bfloat16" and workload.phase == "infer"
    first, second = (workload.build(size="tiny", device="cpu", dtype=dtype, seed=0) for _ in range(2))
    assert first.implementation.startswith("transformers.")
    out_a, out_b = first.fn(*first.make_inputs(0)), second.fn(*second.make_inputs(0))
    assert all(torch.equal(a, b) for a, b in zip(out_a, out_b))  # two eager runs agree
    assert out_a[0].dtype == dtype and torch.isfinite(out_a[0].float()).all()
    ids0, ids1 = first.make_inputs(0)[0], first.make_inputs(1)[0]
    assert tuple(ids0.shape) == (2, 32) and tuple(ids1.shape) == (4, 16)
    only_batch = get_workload(name + "@batch").build(size="tiny", device="cpu", dtype=dtype)
    assert tuple(only_batch.make_inputs(1)[0].shape) == (4, 32)


def test_tiny_hf_training_step_returns_loss_and_gradients():
    workload = get_workload("hf:BertForQuestionAnswering@train+sequence")
    assert (workload.phase, workload.dtypes[0]) == ("train", "amp")
    assert workload.dynamic_dims == (DynamicDim("input_ids", 1),)  # start/end positions have no sequence
    instance = workload.build(size="tiny", device="cpu", dtype=torch.float32)
    loss, grads = instance.fn(*instance.make_inputs(0))
    assert loss.ndim == 0 and torch.isfinite(loss)
    assert len(grads) > 10 and all(g is not None for g in grads)


def test_a_family_step_rebinds_to_a_float64_copy_of_its_model():
    """The runner's float64 reference (docs/explain.md): the same step over the model deep-copied
    and upcast: the same weights, the same output to float32 rounding, and the original untouched."""
    for name in ("hf:BertForMaskedLM", "hf:BertForQuestionAnswering@train"):
        built = get_workload(name).build(size="tiny", device="cpu", dtype=torch.float32)
        inputs = built.make_inputs(0)
        [model] = built.modules
        copy64 = copy.deepcopy(model).to(torch.float64)
        want, got = built.fn(*inputs), built.rebind([copy64])(*inputs)
        pairs = list(zip(_flat(want), _flat(got)))
        assert pairs and pairs[-1][1].dtype == torch.float64  # logits; a training step's last gradient
        assert all(torch.allclose(w.double(), g.double(), rtol=1e-4, atol=1e-4) for w, g in pairs)
        assert next(model.parameters()).dtype == torch.float32


def _flat(tree):
    return [t for item in tree for t in (_flat(item) if isinstance(item, tuple) else [item])]


def test_float32_only_models():
    assert get_workload("hf:GoogleFnet").dtypes == ("float32",)
    why = dict((m.name, w) for m, w in family_models("hf"))
    assert why["BertForMaskedLM"] == ""  # the LLMs: tests/workloads/test_llms.py


# -- vision families: built where their package imports, a reason where it does not ---------------


@pytest.mark.parametrize("prefix, model", [("timm", "resnet50"), ("torchvision", "resnet18")])
def test_vision_families_build_or_say_why(prefix, model):
    package = {"timm": "timm", "torchvision": "torchvision"}[prefix]
    module, problem = import_problem(package)
    why = dict((m.name, w) for m, w in family_models(prefix))[model]
    if module is None:
        assert why == problem and package in why
        with pytest.raises(UnknownWorkload, match="cannot be built here"):
            get_workload(f"{prefix}:{model}")
        return
    assert why == ""
    instance = get_workload(f"{prefix}:{model}").build(size="tiny", device="cpu", dtype=torch.float32)
    (logits,) = instance.fn(*instance.make_inputs(0))
    assert logits.shape[0] == 2


def test_torchvision_resnet50_trains_at_the_background_readings_batch_of_256():
    # ResNet-50 training at 224x224, batch 256 (issue #28): its own training batch, inference unchanged
    from workloads.families.torchvision_models import TorchvisionWorkload

    args = {"model": "resnet50", "batch": 64, "image": 224, "train_batch": 256}
    assert TorchvisionWorkload(name="torchvision:resnet50@train", train=True, axes=(), **args).batch == 256
    assert TorchvisionWorkload(name="torchvision:resnet50", train=False, axes=(), **args).batch == 64
    entries = dict(resolve_entries(["torchvision:resnet50@train", "torchvision:resnet50", "torchvision:resnet18@train"]))
    assert "full: batch 256 at 224x224" in entries["torchvision:resnet50@train"].description
    assert "full: batch 64 at 224x224" in entries["torchvision:resnet50"].description
    assert "full: batch 64 at 224x224" in entries["torchvision:resnet18@train"].description


# -- the catalog the dashboard reads ---------------------------------------------------------------


def test_families_json_is_what_the_runner_lists():
    argv = [sys.executable, "-m", "runner", "list", "--family", "all", "--json"]
    listed = json.loads(subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=True).stdout)
    assert json.loads(FAMILIES_PATH.read_text()) == listed, "regenerate: python -m runner list --family all --json > contract/families.json"
    (_, entry), = resolve_entries(["hf:BertForMaskedLM@train+batch"])
    assert (entry.family, entry.phase, entry.dtypes, entry.dynamic_dims) == ("hf", "train", ("amp", "float32"), ("input_ids:0", "labels:0"))
    for bad in ("hf:NoSuchModel", "timm:resnet50@sequence", "hf:BertForMaskedLM@fast"):
        with pytest.raises(LookupError, match="no such model or option set"):
            resolve_entries([bad])


def test_run_a_tiny_hf_case_through_the_command_line(tmp_path):
    """One family case end to end, eager backend (no inductor compile): a valid run document."""
    out = tmp_path / "run.json"
    argv = [sys.executable, "-m", "runner", "run", "--workloads", "hf:BertForMaskedLM@batch",
            "--regimes", "unbacked", "--backend", "eager", "--no-warm", "--device", "cpu", "--out", str(out)]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    document = json.loads(out.read_text())
    (result,) = document["results"]
    assert (result["workload"], result["config"]["dtype"], result["config"]["shape_regime"], result["status"]) == (
        "hf:BertForMaskedLM@batch", "bfloat16", "unbacked", "pass")
    assert result["metrics"]["recompile_count"] == 0
    assert [w["dynamic_dims"] for w in document["workloads"]] == [["input_ids:0"]]
