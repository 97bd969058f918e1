"""The words both sides use for a case and its result, read from the run document's schema where the
schema has them (compile modes, shape regimes, dtypes, devices, result statuses, workload phases,
the machine-class pattern); backends and sizes (tiny, full) are the runner's and live only here.

Pure Python: no Django, no torch, no jsonschema.
"""
from __future__ import annotations

import re

from contract.document import RESULT_STATUSES, load_schema

_SCHEMA = load_schema()
__all__ = ["BACKENDS", "COMPILE_MODES", "DEVICES", "DTYPES", "MACHINE_CLASS", "MACHINE_CLASS_HELP", "MACHINE_CLASS_PATTERN",
           "RESULT_STATUSES", "SHAPE_REGIMES", "SIZES", "WORKLOAD_PHASES", "is_machine_class"]
_CONFIG = _SCHEMA["$defs"]["result"]["properties"]["config"]["properties"]

COMPILE_MODES: tuple[str, ...] = tuple(_CONFIG["compile_mode"]["enum"])
SHAPE_REGIMES: tuple[str, ...] = tuple(_CONFIG["shape_regime"]["enum"])
DTYPES: tuple[str, ...] = tuple(_CONFIG["dtype"]["enum"])
DEVICES: tuple[str, ...] = tuple(_CONFIG["device"]["enum"])
WORKLOAD_PHASES: tuple[str, ...] = tuple(_SCHEMA["properties"]["workloads"]["items"]["properties"]["phase"]["enum"])
# A machine class names its runner workers' queue: ``^[a-z0-9][a-z0-9_-]{0,63}$``.
MACHINE_CLASS_PATTERN: str = _SCHEMA["properties"]["machine"]["properties"]["machine_class"]["pattern"]
MACHINE_CLASS = re.compile(MACHINE_CLASS_PATTERN.removeprefix("^").removesuffix("$"))
MACHINE_CLASS_HELP = "lower-case letters, digits, '-' and '_' (at most 64), e.g. gpu-h100"

# Not in the document: how a case is compiled (eager / aot_eager exercise the engine without
# inductor) and which size of the suite's inputs it uses.
BACKENDS: tuple[str, ...] = ("inductor", "eager", "aot_eager")
SIZES: tuple[str, ...] = ("tiny", "full")


def is_machine_class(text: object) -> bool:
    """Whether ``text`` has a machine class's form (reserved names are ``contract.queues``'s business)."""
    return isinstance(text, str) and MACHINE_CLASS.fullmatch(text) is not None
