"""The compiled side's instance as a copy of the eager one (runner.engine.instances.copied_instance):
the same weights as a second seeded build, its own tensors, tied weights still tied, the same output."""
from __future__ import annotations

import threading

import torch

from contract.spec import CaseSpec
from runner.engine.instances import build_instance, copied_instance, second_instance
from workloads.families._steps import instance as family_instance
from workloads.registry import get_workload


def _spec(workload: str, dtype: str) -> CaseSpec:
    return CaseSpec(workload=workload, compile_mode="default", shape_regime="static", dtype=dtype, device="cpu", backend="eager")


def test_a_copy_after_the_eager_call_equals_a_second_build_and_shares_no_tensor():
    for name, dtype in (("hf:BertForMaskedLM", "bfloat16"), ("hf:BertForQuestionAnswering@train", "float32")):
        spec = _spec(name, dtype)
        workload = get_workload(name)
        eager = build_instance(workload, spec)
        inputs = eager.make_inputs(0)
        first = eager.fn(*inputs)  # the eager reference call happens before the copy
        copied, rebuilt = copied_instance(eager), build_instance(workload, spec)
        [original], [copy_model], [built] = eager.modules, copied.modules, rebuilt.modules
        copy_state, built_state = copy_model.state_dict(), built.state_dict()
        assert all(torch.equal(copy_state[key], built_state[key]) for key in built_state)
        assert not {p.data_ptr() for p in copy_model.parameters()} & {p.data_ptr() for p in original.parameters()}
        if "MaskedLM" in name:  # the LM head's weight is the word embeddings', in the copy too
            assert copy_model.cls.predictions.decoder.weight is copy_model.bert.embeddings.word_embeddings.weight
        again = copied.fn(*inputs)
        flat = lambda tree: [t for item in tree for t in (flat(item) if isinstance(item, tuple) else [item])]  # noqa: E731
        assert all(torch.equal(a, b) for a, b in zip(flat(first), flat(again), strict=True))


class _Locked(torch.nn.Module):
    """A module that does not deep-copy (it holds a lock)."""

    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(3), requires_grad=False)
        self.lock = threading.Lock()

    def forward(self, x):
        return x * self.scale


class _LockedWorkload:
    builds = 0

    def build(self, *, size, device, dtype, seed=0):
        type(self).builds += 1
        return family_instance(_Locked(), lambda variant: (torch.ones(3),), ("x",), loss=None, implementation="test")


def test_the_second_instance_is_a_copy_where_it_can_be_else_a_build():
    spec = _spec("hf:BertForMaskedLM", "bfloat16")
    first = build_instance(get_workload("hf:BertForMaskedLM"), spec)
    assert second_instance(get_workload("hf:BertForMaskedLM"), spec, first)[1] == "copied from eager"
    locked = _LockedWorkload()
    instance, made = second_instance(locked, spec, locked.build(size="tiny", device="cpu", dtype=torch.float32))
    assert made == "built" and locked.builds == 2 and torch.equal(instance.fn(torch.ones(3))[0], torch.ones(3))
    assert second_instance(locked, spec, None)[1] == "built"
