"""The grammar of a workload name (docs/families.md).

    mlp_loop                          a suite workload
    hf:BertForMaskedLM                a family's model: ``<family prefix>:<model>``
    hf:BertForMaskedLM@train          options after ``@``, joined by ``+``: ``train`` (a training step
    hf:BertForMaskedLM@batch          instead of inference), ``batch`` / ``sequence`` (only the dims on
    hf:BertForMaskedLM@train+batch    that axis are dynamic; without one, every dynamic dim is)
    dist:gpt@train+ddp                a training step under DDP or FSDP (``ddp`` / ``fsdp``, with
    dist:gpt@train+fsdp+compile_first   ``train``), compiled then wrapped (``compile_first``; else
    dist:mlp@train+ddp+checkpoint       wrapped then compiled), blocks checkpointed (``checkpoint``):
                                        docs/distributed.md
    hf:BertForMaskedLM@train_step     the whole training step in one compile: forward, loss, backward
                                        and the AdamW step (``train`` stops before the optimizer)
    hf:meta-llama/Llama-3.2-1B@prefill  an LLM's prefill: the prompt's tokens flattened, as a server runs it
    hf:meta-llama/Llama-3.2-1B@decode   an LLM's decode: one new token per sequence against a static KV cache
    tests.runner.sample:MyWorkload    ``package.module:Class`` (the local command line only)

A name whose part before ``:`` is a registered family prefix is a family name and is resolved by the
family, before any import is attempted; no module named like a family prefix can be imported by name.
Pure Python (the contract never parses names: it looks them up in contract/families.json).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Collection

TRAIN = "train"
AXES: tuple[str, ...] = ("batch", "sequence")
PARALLEL: tuple[str, ...] = ("ddp", "fsdp")
COMPILE_FIRST = "compile_first"
CHECKPOINT = "checkpoint"
TRAIN_STEP = "train_step"
PREFILL = "prefill"
DECODE = "decode"
# What a name runs when not the family's own step (inference, or ``train``): at most one of these.
STEPS: tuple[str, ...] = (TRAIN_STEP, PREFILL, DECODE)
OPTIONS: tuple[str, ...] = (TRAIN, *STEPS, *AXES, *PARALLEL, COMPILE_FIRST, CHECKPOINT)
OPTION_MARK = "@"
OPTION_JOIN = "+"


class BadName(ValueError):
    """A family name whose options are not understood; ``args[0]`` says which and why."""


@dataclass(frozen=True)
class FamilyName:
    family: str  # the prefix: "hf"
    model: str  # the family's own name: "BertForMaskedLM", "convnextv2_nano.fcmae_ft_in22k_in1k"
    train: bool = False
    axes: tuple[str, ...] = ()  # empty: every dynamic dim
    parallel: str = ""  # "ddp" or "fsdp": a distributed training step (docs/distributed.md); "" for one process
    compile_first: bool = False  # compiled then wrapped (else wrapped then compiled)
    checkpoint: bool = False  # activation checkpointing of the model's blocks
    step: str = ""  # one of STEPS: the whole training step, an LLM's prefill or decode; "" for the family's own

    @property
    def base(self) -> str:
        """The listed model, options left out: ``hf:BertForMaskedLM``."""
        return f"{self.family}:{self.model}"

    def __str__(self) -> str:
        options = ([TRAIN] if self.train else []) + ([self.step] if self.step else []) + list(self.axes)
        options += [self.parallel] if self.parallel else []
        options += [word for word, on in ((COMPILE_FIRST, self.compile_first), (CHECKPOINT, self.checkpoint)) if on]
        return self.base + (OPTION_MARK + OPTION_JOIN.join(options) if options else "")


def step_kwargs(parsed: FamilyName) -> dict:
    """The factory's ``step`` argument when the name asks for one: a family whose models take no
    step (an older provider) is never passed one, and a name with a step fails there (TypeError)."""
    return {"step": parsed.step} if parsed.step else {}


def family_prefix(name: str) -> str:
    """The part before ``:`` (empty when there is none)."""
    prefix, colon, _ = name.partition(":")
    return prefix if colon else ""


def parse(name: str, *, families: Collection[str]) -> FamilyName | None:
    """The family name ``name`` spells, or None when its prefix is no family in ``families``.

    Raises ``BadName`` for an unknown or repeated option, or an empty model, and for distributed
    options that do not go together (both ``ddp`` and ``fsdp``; either without ``train``;
    ``compile_first`` or ``checkpoint`` without either). At most one of ``STEPS``, and none with ``train``: ``train_step`` is the whole step, ``train``
    the model's forward and backward only. Options are kept in their canonical order
    (train or the step, the axes in ``AXES`` order, the wrapper, compile_first, checkpoint), so each case has one name.
    """
    prefix = family_prefix(name)
    if not prefix or prefix not in families:
        return None
    rest = name[len(prefix) + 1:]
    model, mark, options_text = rest.partition(OPTION_MARK)
    if not model:
        raise BadName(f"{name!r}: no model after {prefix}:")
    options = options_text.split(OPTION_JOIN) if mark else []
    unknown = [o for o in options if o not in OPTIONS]
    if unknown or len(set(options)) != len(options) or (mark and not options):
        raise BadName(f"{name!r}: options after {OPTION_MARK} are {OPTION_JOIN}-joined words from "
                      f"{', '.join(OPTIONS)}, each at most once (got {options_text!r})")
    parallel = [o for o in PARALLEL if o in options]
    steps = [o for o in STEPS if o in options]
    problem = _step_problem(steps, options) or _distributed_problem(parallel, options)
    if problem:
        raise BadName(f"{name!r}: {problem}")
    return FamilyName(family=prefix, model=model, train=TRAIN in options, axes=tuple(a for a in AXES if a in options),
                      parallel=parallel[0] if parallel else "", compile_first=COMPILE_FIRST in options,
                      checkpoint=CHECKPOINT in options, step=steps[0] if steps else "")


def _step_problem(steps: list[str], options: list[str]) -> str:
    if len(steps) > 1:
        return f"one of {', '.join(STEPS)}, not {' and '.join(steps)}"
    if steps and any(o in PARALLEL for o in options):
        return f"{steps[0]} runs in one process; a distributed step is {TRAIN}+{' or '.join(PARALLEL)}"
    if steps and TRAIN in options:
        return (f"{steps[0]} and {TRAIN} are different steps ({TRAIN_STEP}: the whole step with the optimizer; "
                f"{TRAIN}: forward and backward only)")
    return ""


def _distributed_problem(parallel: list[str], options: list[str]) -> str:
    if len(parallel) > 1:
        return f"one of {' or '.join(PARALLEL)}, not both"
    if parallel and TRAIN not in options:
        return f"{parallel[0]} runs a training step: add {TRAIN}"
    if not parallel and (COMPILE_FIRST in options or CHECKPOINT in options):
        return f"{COMPILE_FIRST} and {CHECKPOINT} apply to a distributed step: add {' or '.join(PARALLEL)}"
    return ""


def is_import_name(name: str, *, families: Collection[str]) -> bool:
    """``package.module:Class``: a colon whose prefix is no family."""
    prefix = family_prefix(name)
    return bool(prefix) and prefix not in families
