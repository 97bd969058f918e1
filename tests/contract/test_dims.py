"""Regime dims (contract.dims) and AMP planning: which declared dims a configuration marks, how a
case carries them, and what the planner leaves out with its reason (docs/case-config.md)."""
import json

import pytest

from contract import dims
from contract.case_config import CaseConfig, CaseConfigError
from contract.catalog import resolve_entries
from contract.planning import plan_cases
from contract.spec import CaseSpec

TWO_ROLES = (("input_ids:0", "batch"), ("input_ids:1", "sequence"), ("labels:0", "batch"))


def _plan(names, **kwargs):
    options = {"modes": ["default"], "regimes": ["static", "unbacked"], "dtypes": None, "device": "cpu", "backend": "inductor", "size": "tiny"}
    return plan_cases(resolve_entries(names), **{**options, **kwargs})


def test_dims_are_parsed_in_order_without_duplicates_and_bad_names_are_refused():
    assert dims.parse("batch, sequence,batch") == ("batch", "sequence")
    assert dims.parse(["input_ids:1"]) == ("input_ids:1",)
    assert dims.parse(None) is None and dims.parse("") is None
    for bad in ("batch,", "a/b", "x=1", 3, ["batch", 7]):
        with pytest.raises(dims.DimsError) as caught:
            dims.parse(bad)
        assert caught.value.field == "dims"


def test_a_role_selects_every_dim_of_that_role_and_a_name_selects_one():
    assert dims.select(TWO_ROLES, ["batch"]) == dims.Selection(marked=(0, 2), unmatched=())
    assert dims.select(TWO_ROLES, ["input_ids:1"]) == dims.Selection(marked=(1,), unmatched=())
    assert dims.select(TWO_ROLES, None).marked == (0, 1, 2)
    assert dims.select(TWO_ROLES, ["height", "sequence"]) == dims.Selection(marked=(1,), unmatched=("height",))


def test_a_dim_the_workload_does_not_declare_is_left_out_with_its_reason():
    kept, why = dims.skip_reason("w", TWO_ROLES, ("sequence", "height"))
    assert kept == ("sequence",)
    assert why == ("w: dims height skipped: declares no such dynamic dim (declares input_ids:0 (batch), input_ids:1 (sequence), "
                   "labels:0 (batch)); marks sequence only")
    kept, why = dims.skip_reason("w", (("x:1", "sequence"),), ("batch",))
    assert kept == () and why == "w: dims batch: declares no such dynamic dim (declares x:1 (sequence))"
    assert dims.skip_reason("w", TWO_ROLES, None) == (None, "")


def test_a_configuration_with_dims_has_its_own_key_label_and_document_and_one_without_keeps_its_key():
    every = CaseConfig("default", "unbacked", "bfloat16", "cuda")
    batch = every.replace(dims=("batch",))
    assert every.key == "default/unbacked/bfloat16/cuda" and "dims" not in every.as_document()
    assert batch.key == "default/unbacked/bfloat16/cuda/dims=batch"
    assert batch.label == "default · unbacked (batch) · bfloat16"
    assert batch.as_document() == {**every.as_document(), "dims": ["batch"]}
    assert CaseConfig.from_key(batch.key) == batch == CaseConfig.from_document(json.loads(json.dumps(batch.as_document())))
    with pytest.raises(CaseConfigError) as caught:
        every.replace(shape_regime="static", dims=("batch",))
    assert caught.value.field == "dims"


def test_a_case_spec_carries_its_dims_through_json_and_its_repro_names_them():
    spec = CaseSpec(workload="hf:BertForMaskedLM", compile_mode="default", shape_regime="unbacked", dtype="bfloat16",
                    device="cuda", dims=["batch"])
    again = CaseSpec.from_json(spec.to_json())
    assert again == spec and again.dims == ("batch",)
    assert spec.case_config.key == "default/unbacked/bfloat16/cuda/dims=batch"
    assert CaseConfig.picked_from(json.loads(spec.to_json())) == spec.case_config
    # A message without the field (older dashboards) is a case that marks every dim.
    message = json.loads(spec.to_json())
    del message["dims"]
    assert CaseSpec(**message).dims is None and CaseSpec(**message).case_config.key == "default/unbacked/bfloat16/cuda"


def test_the_planner_marks_only_the_named_dims_and_static_cases_carry_none():
    plan = _plan(["hf:BertForMaskedLM", "bert_encoder"], dims=["batch"])
    by_case = {(c.workload_name, c.spec.shape_regime): c.spec for c in plan.cases}
    assert by_case[("hf:BertForMaskedLM", "unbacked")].dims == ("batch",)
    assert by_case[("hf:BertForMaskedLM", "static")].dims is None
    assert "--dims batch" in next(c.repro for c in plan.cases if c.spec.dims)
    # bert_encoder's dims are its sequence length only: no unbacked case, and the plan says why.
    assert ("bert_encoder", "unbacked") not in by_case and ("bert_encoder", "static") in by_case
    assert "bert_encoder: dims batch: declares no such dynamic dim (declares input_ids:1 (sequence), attention_mask:1 (sequence))" in plan.skipped
    # Without dims, the configuration is the one stored series always had.
    assert all(c.spec.dims is None for c in _plan(["hf:BertForMaskedLM"]).cases)


def test_amp_plans_training_workloads_and_the_planner_refuses_it_for_inference_with_its_reason():
    plan = _plan(["transformer_train_step", "mlp_loop", "hf:BertForMaskedLM@train"], dtypes=["amp"], regimes=["static"])
    assert sorted(c.workload_name for c in plan.cases) == ["hf:BertForMaskedLM@train", "transformer_train_step"]
    assert plan.skipped == ["mlp_loop: dtype amp is autocast for training steps, as PyTorch's harness runs training; "
                            "an inference workload runs bfloat16 or float32"]
