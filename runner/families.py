"""``python -m runner list --family PREFIX``: a family's models, and why any cannot be built here."""
from __future__ import annotations

import json

from workloads import names

# Each listed model's names as the catalog (contract/families.json) holds them: every option set,
# and its training step under each wrapper, order and checkpointing (docs/distributed.md).
DISTRIBUTED_SETS = tuple(("train", parallel, *first, *checkpoint) for parallel in names.PARALLEL
                         for first in ((), (names.COMPILE_FIRST,)) for checkpoint in ((), (names.CHECKPOINT,)))
# An LLM's steps (prefill, decode) and the whole training step: a model whose factory refuses a set
# (an image model's sequence, an LLM without its step, prefill of a non-LLM) has no such name.
OPTION_SETS = ((), ("batch",), ("sequence",), ("train",), ("train", "batch"), ("train", "sequence"), *DISTRIBUTED_SETS,
               (names.TRAIN_STEP,), (names.PREFILL,), (names.DECODE,))


def _prefixes(family: str) -> list[str]:
    from workloads.registry import families

    known = sorted(families())
    if family == "all":
        return known
    if family not in known:
        raise LookupError(f"unknown family {family!r}; known: {', '.join(known)}, all")
    return [family]


def catalog_entries(prefix: str) -> list[dict]:
    """Every name of every model ``prefix`` lists, built or not on this host: the dashboard checks
    names against these without torch."""
    from runner.catalog import catalog_entry
    from workloads.registry import family_models

    entries = []
    for model, _ in family_models(prefix):
        for options in OPTION_SETS:
            parsed = names.parse(f"{prefix}:{model.name}" + (names.OPTION_MARK + names.OPTION_JOIN.join(options) if options else ""),
                                 families=(prefix,))
            try:
                workload = model.factory(name=str(parsed), train=parsed.train, axes=parsed.axes, **names.step_kwargs(parsed), **model.args)
            except (ValueError, TypeError):  # no dim on that axis (an image model has no sequence), no such step
                continue
            entries.append(catalog_entry(str(parsed), workload))
    return entries


def _steps(model) -> str:
    """An LLM's full size is its steps' (docs/llms.md)."""
    from workloads.families._llm import LLMS, shape_of

    if model.name not in LLMS or model.args.keys() != {"model"}:
        return "-"
    shape = shape_of(LLMS[model.name], "full")
    return (f"@prefill {shape.prompts[0]} x {shape.prompt_len[0]}, "
            f"@decode {shape.sequences[0]} x 1 at {shape.position} of {shape.cache_len}")


def list_family(family: str, *, as_json: bool, names_only: bool) -> int:
    from runner.report import format_table
    from workloads.registry import family_models

    prefixes = _prefixes(family)
    if as_json:
        print(json.dumps([entry for prefix in prefixes for entry in catalog_entries(prefix)], indent=1))
        return 0
    listed = [(prefix, model, why) for prefix in prefixes for model, why in family_models(prefix)]
    if names_only:
        print(",".join(f"{prefix}:{model.name}" for prefix, model, why in listed if not why))
        return 0
    rows = [(f"{prefix}:{model.name}", ", ".join(f"{k} {v}" for k, v in model.args.items() if k in ("batch", "image")) or _steps(model),
             why or model.note or "ok") for prefix, model, why in listed]
    print(format_table(("workload", "full size", "built here"), rows))
    built = sum(1 for _, _, why in listed if not why)
    print(f"\n{built} of {len(listed)} listed models can be built here")
    return 0
