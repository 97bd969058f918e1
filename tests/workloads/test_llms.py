"""LLMs from their published configs (docs/llms.md): the names, the full builds' sizes (on the meta
device: no memory), every LLM's prefill and decode at tiny size in eager, and through the runner's
command line one compiled LLM case (Qwen3 decode, its token dim unbacked with the hint, against the
static cache: the one inductor compile CI pays for here) and a whole training step traced by Dynamo
and AOTAutograd (aot_eager: its inductor compile cost 130-260 s on the 2-core host)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from contract.catalog import resolve_entries
from workloads import names
from workloads.families._llm_configs import LLMS
from workloads.registry import UnknownWorkload, family_models, get_workload
from tests.workloads.test_families import one_cpu_thread  # noqa: F401 (autouse: one CPU thread for the eager builds)

ROOT = Path(__file__).resolve().parents[2]
FAMILIES = {"hf", "timm"}


def test_step_options_in_the_name_grammar():
    parsed = names.parse("hf:meta-llama/Llama-3.2-1B@prefill", families=FAMILIES)
    assert (parsed.model, parsed.step, parsed.train, str(parsed)) == ("meta-llama/Llama-3.2-1B", "prefill", False,
                                                                       "hf:meta-llama/Llama-3.2-1B@prefill")
    assert str(names.parse("hf:BertForMaskedLM@batch+train_step", families=FAMILIES)) == "hf:BertForMaskedLM@train_step+batch"
    for bad, why in (("hf:X@train+train_step", "different steps"), ("hf:X@prefill+decode", "one of train_step"),
                     ("hf:X@train_step+ddp", "train_step runs in one process")):
        with pytest.raises(names.BadName, match=why):
            names.parse(bad, families=FAMILIES)
    with pytest.raises(UnknownWorkload, match="prefill is an LLM's step; hf:BertForMaskedLM is no LLM"):
        get_workload("hf:BertForMaskedLM@prefill")
    with pytest.raises(UnknownWorkload, match="an LLM runs as @prefill or @decode"):
        get_workload("hf:Qwen/Qwen3-0.6B")
    with pytest.raises(UnknownWorkload, match="dist's models take train"):
        get_workload("dist:gpt@train_step")


def test_llms_list_and_their_catalog_names():
    why = {m.name: w for m, w in family_models("hf")}
    assert set(LLMS) <= set(why) and all(why[name] == "" for name in LLMS)  # transformers 5 has every class
    entries = dict(resolve_entries(["hf:meta-llama/Llama-3.2-1B@decode", "hf:openai/whisper-tiny@prefill",
                                    "hf:BertForMaskedLM@train_step"]))
    decode = entries["hf:meta-llama/Llama-3.2-1B@decode"]
    assert (decode.category, decode.phase, decode.dynamic_dims, decode.dim_roles) == ("llm-decode", "infer", ("input_ids:0",), ("tokens",))
    assert entries["hf:openai/whisper-tiny@prefill"].dynamic_dims == ("input_ids:0", "position_ids:0")
    step = entries["hf:BertForMaskedLM@train_step"]
    assert (step.phase, step.dtypes[0]) == ("train", "amp") and "AdamW in one compiled function" in step.description
    for bad in ("hf:Qwen/Qwen3-0.6B", "hf:BertForMaskedLM@decode"):
        with pytest.raises(LookupError, match="no such model or option set"):
            resolve_entries([bad])


@pytest.mark.parametrize("name", sorted(LLMS))
def test_the_full_build_has_the_published_size(name):
    import transformers

    cls, config = get_workload(f"hf:{name}@prefill").config(transformers, "full")
    with torch.device("meta"):
        model = cls(config)
    assert sum(p.numel() for p in model.parameters()) == LLMS[name].parameters


@pytest.mark.parametrize("name", sorted(LLMS))
def test_tiny_prefill_and_decode_in_eager(name):
    prefill = get_workload(f"hf:{name}@prefill").build(size="tiny", device="cpu", dtype=torch.float32)
    first, second = prefill.make_inputs(0), prefill.make_inputs(1)
    assert [t.shape[1:] for t in first] == [t.shape[1:] for t in second]  # only the token dim changes
    logits = prefill.fn(*first)
    assert logits.shape[-1] == 512 and torch.isfinite(logits).all()
    decode = get_workload(f"hf:{name}@decode").build(size="tiny", device="cpu", dtype=torch.float32)
    (tokens,) = decode.make_inputs(0)
    out = decode.fn(tokens)
    assert out.shape == (4, 512) and torch.isfinite(out).all()
    assert decode.fn(*decode.make_inputs(1)).shape == (2, 512)  # fewer sequences: views of the same cache
    copy = decode.rebind([m for m in decode.modules])  # a second binding: its own cache, the same first step
    torch.testing.assert_close(copy(tokens), out)


def test_a_whole_training_step_updates_the_weights_and_returns_the_steps_gradients():
    instance = get_workload("hf:BertForMaskedLM@train_step").build(size="tiny", device="cpu", dtype=torch.float32)
    assert "torch.optim.AdamW(" in instance.implementation and instance.rebind is None
    weight = next(instance.modules[0].parameters())
    before = weight.detach().clone()
    loss, grads = instance.fn(*instance.make_inputs(0))
    assert loss.ndim == 0 and len(grads) == len([p for p in instance.modules[0].parameters() if p.requires_grad])
    assert not torch.equal(before, weight.detach())


def _run(tmp_path, name: str, *args: str) -> dict:
    path = tmp_path / f"{name}.json"
    argv = [sys.executable, "-m", "runner", "run", *args, "--no-warm", "--device", "cpu", "--out", str(path)]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    return {r["workload"]: r for r in json.loads(path.read_text())["results"]}


@pytest.mark.slow
def test_one_compiled_case_of_each_kind_through_the_command_line(tmp_path):
    # One compiled LLM case: decode proves what prefill would (the token dim unbacked with the hint,
    # the second shape compiling nothing new) and, beside it, the StaticCache without a graph break.
    # Prefill's own build and shapes: test_tiny_prefill_and_decode_in_eager; its marked dims:
    # test_llms_list_and_their_catalog_names.
    llm = _run(tmp_path, "llm", "--workloads", "hf:Qwen/Qwen3-0.6B@decode", "--regimes", "unbacked", "--dtypes", "float32")
    # The whole step (forward, loss, backward, AdamW) compiled as one function through Dynamo and
    # AOTAutograd, its backward and optimizer included; inductor's code for it is not what this proves.
    step = _run(tmp_path, "step", "--workloads", "hf:BertForMaskedLM@train_step", "--regimes", "static", "--dtypes", "amp",
                "--backend", "aot_eager")
    results = {**llm, **step}
    assert {name: r["status"] for name, r in results.items()} == dict.fromkeys(
        ("hf:Qwen/Qwen3-0.6B@decode", "hf:BertForMaskedLM@train_step"), "pass")
    decode = results["hf:Qwen/Qwen3-0.6B@decode"]
    # the token dim unbacked, its size the hint; the second shape (fewer tokens) compiles nothing new
    assert decode["environment"]["unbacked_hint"].startswith("mark_unbacked(hint_override")
    assert decode["metrics"]["recompile_count"] == 0 and decode["metrics"]["unique_graphs"] == 1
    assert decode["environment"]["implementation"].endswith("+ StaticCache") and decode["metrics"]["graph_break_count"] == 0
    train_step = results["hf:BertForMaskedLM@train_step"]
    assert "torch.optim.AdamW(" in train_step["environment"]["implementation"]
    assert train_step["metrics"]["compile_time_cold_s"] > 0 and train_step["metrics"]["compiled_peak_memory_bytes"] > 0
    assert train_step["metrics"]["accuracy_max_abs_error"] is not None  # compared with the eager step's loss and gradients
