"""Which compiler settings a build variant may carry: only settings that are data (issue #33).

A variant's overrides reach GPU workers (``contract.variants``): an environment variable or a
config key whose value is a path, a program, a compiler, a library, a module or a callable would let
whoever defines a variant choose what the fleet runs (``TRITON_PTXAS_PATH=/tmp/evil.sh``,
``inductor.cpp.cxx``). So a setting is admitted only when it is data, by an allow-list:

- its name holds no word of ``SERVICE_WORDS`` (a remote cache, a server), and no config key is private
  (``inductor._x``);
- its value is data: for a config key true/false or a number; null or a string only when its name
  holds no word of ``PROGRAM_WORDS`` (path, dir, cxx, ptxas, lib...), and a string only for the
  known enumerations of ``CONFIG_WORDS``; for an environment variable (whose name may hold no program
  word) a number, a boolean word (0/1, true/false, on/off, yes/no), empty, or a value of the known
  enumerations of ``ENV_WORDS``. Values that are paths, shell, modules or callables never fit.

Everything else is refused, naming the setting, through every entry point (``Overrides.build``).
An operator may admit more on the worker side only (``PTBENCH_ALLOW_SETTINGS``, ``Allowance``):
never through the dashboard. docs/variants-and-settings.md describes the rule and the allow-list.
Pure: no Django, no torch.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

ALLOW_VARIABLE = "PTBENCH_ALLOW_SETTINGS"
DOCS = "docs/variants-and-settings.md"

# Words of a name (split at '_' and '.', lower case). A service word says the setting reaches another
# machine (a remote cache holds compiled code): refused whatever the value. A program word says its
# value names a path, a program, a compiler or a library: refused unless the value is a flag or a
# number, which name nothing (``inductor.cuda.enable_ptxas_info=true`` is data).
SERVICE_WORDS = frozenset("remote redis upload host port url uri".split())
PROGRAM_WORDS = frozenset("""
    path paths dir dirs directory home root prefix include cxx cc nvcc ptxas cuobjdump nvdisasm clang gcc hipcc ld
    linker compiler compilers toolchain preload exe executable bin cmd command shell script interpreter python
    pythonpath file files filename lib libs library so dll
""".split())
_PROGRAM_ENDINGS = ("path", "paths", "dir", "dirs", "home", "cxx")  # logpath, cutlassdir
_PROGRAM_PARTS = ("preload", "python", "executable")

_WORD_LIST = re.compile(r"[A-Za-z][A-Za-z0-9_]*(,[A-Za-z][A-Za-z0-9_]*)*")  # ATEN,TRITON
_LOG_LIST = re.compile(r"[+-]?[A-Za-z_][A-Za-z0-9_.]*(,[+-]?[A-Za-z_][A-Za-z0-9_.]*)*")  # +dynamo,recompiles
_NUMBER = re.compile(r"[+-]?\d+(\.\d+)?([eE][+-]?\d+)?")
BOOLEAN_WORDS = frozenset({"0", "1", "true", "false", "on", "off", "yes", "no"})
# Numbers are data, within bounds (issue #46 item 6: TORCHINDUCTOR_COMPILE_THREADS=100000 and
# inductor.max_fusion_size=1e18 reached the case process): every number within +-NUMBER_BOUND, and a
# count of threads, workers or jobs within COUNT_RANGE (a machine's operator admits more through
# PTBENCH_ALLOW_SETTINGS). docs/variants-and-settings.md lists them.
NUMBER_BOUND = 1e9
COUNT_RANGE = (0, 512)
_COUNT_WORDS = re.compile(r"(^|[._])(threads?|workers?|jobs|parallel|parallelism|processes)($|[._])", re.IGNORECASE)


def number_problem(name: str, value: object) -> str | None:
    """Why a numeric setting (a number, or an environment value that reads as one) is out of bounds."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        if not _NUMBER.fullmatch(value.strip()):
            return None
        value = float(value)
    if not isinstance(value, (int, float)):
        return None
    if _COUNT_WORDS.search(name) and not COUNT_RANGE[0] <= value <= COUNT_RANGE[1]:
        return f"refused: a count of threads, workers or jobs lies within {COUNT_RANGE[0]}..{COUNT_RANGE[1]} ({DOCS})"
    if abs(value) > NUMBER_BOUND:
        return f"refused: numbers lie within -{NUMBER_BOUND:.0e}..{NUMBER_BOUND:.0e} ({DOCS})"
    return None
_GEMM_SPACE = frozenset({"DEFAULT", "EXHAUSTIVE"})
_LAYOUTS = frozenset({"needs_fixed_stride_order", "flexible_layout"})
_NAMES = frozenset({"torch", "original_aten", "inductor_node"})

# Config keys that take a string: the known enumerations of inductor, dynamo and functorch.
CONFIG_WORDS: dict[str, frozenset | re.Pattern] = {
    "inductor.max_autotune_gemm_backends": _WORD_LIST,
    "inductor.max_autotune_conv_backends": _WORD_LIST,
    "inductor.max_autotune_conv_bwd_input_backends": _WORD_LIST,
    "inductor.max_autotune_conv_bwd_weight_backends": _WORD_LIST,
    "inductor.max_autotune_gemm_search_space": _GEMM_SPACE,
    "inductor.max_autotune_flex_search_space": _GEMM_SPACE,
    "inductor.triton.descriptive_names": _NAMES,
    "inductor.cpp.descriptive_names": _NAMES,
    "inductor.cpu_backend": frozenset({"cpp", "triton", "halide"}),
    "inductor.cuda_backend": frozenset({"triton", "halide"}),
    "inductor.memory_pool": frozenset({"none", "intermediates", "outputs", "combined"}),
    "inductor.mixed_mm_choice": frozenset({"default", "triton", "aten", "heuristic"}),
    "inductor.layout_opt_default": frozenset({"0", "1"}),
    "inductor.triton_kernel_default_layout_constraint": _LAYOUTS,
    "dynamo.automatic_dynamic_shapes_mark_as": frozenset({"dynamic", "unbacked"}),
    "functorch.activation_memory_budget_solver": frozenset({"dp", "greedy", "ilp"}),
    "functorch.activation_memory_budget_runtime_estimator": frozenset({"flops", "profile"}),
    "functorch.custom_op_default_layout_constraint": _LAYOUTS | {"needs_exact_strides"},
}
# Environment variables that take a word (besides numbers and booleans, which every name may take).
ENV_WORDS: dict[str, frozenset | re.Pattern] = {
    "TORCH_LOGS": _LOG_LIST,
    "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS": _WORD_LIST,
    "TORCHINDUCTOR_MAX_AUTOTUNE_CONV_BACKENDS": _WORD_LIST,
    "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_SEARCH_SPACE": _GEMM_SPACE,
    "TORCHINDUCTOR_WORKER_START": frozenset({"subprocess", "fork", "spawn"}),
}
_ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")
_CONFIG_KEY = re.compile(r"[a-z]+\.[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def _words(name: str) -> list[str]:
    return [w for w in re.split(r"[._]+", name.lower()) if w]


def service_word(name: str) -> str | None:
    """The word of ``name`` that says it reaches another machine (``fx_graph_remote_cache``), or None."""
    return next((w for w in _words(name) if w in SERVICE_WORDS or "remote" in w), None)


def program_word(name: str) -> str | None:
    """The word of ``name`` that says its value names a program or a path (``TRITON_PTXAS_PATH``), or None."""
    return next((w for w in _words(name) if w in PROGRAM_WORDS or w.endswith(_PROGRAM_ENDINGS)
                 or any(p in w for p in _PROGRAM_PARTS)), None)


def _fits(value: str, allowed: frozenset | re.Pattern) -> bool:
    return value in allowed if isinstance(allowed, frozenset) else bool(allowed.fullmatch(value))


def _word_problem(word: str, what: str) -> str:
    return f"refused: {word!r} in its name says it {what}; only settings that are data may be set ({DOCS})"


def _service_problem(name: str) -> str | None:
    word = service_word(name)
    return _word_problem(word, "reaches another machine (a remote cache, a server)") if word else None


def _program_problem(name: str) -> str | None:
    word = program_word(name)
    return _word_problem(word, "names a path, a program, a compiler or a library") if word else None


def config_problem(key: str, value: object) -> str | None:
    """Why config key ``key`` (``inductor.KEY``) may not be set to ``value``, or None when it is data."""
    if any(part.startswith("_") for part in key.split(".")[1:]):
        return f"refused: a private setting; only settings that are data may be set ({DOCS})"
    if problem := _service_problem(key):
        return problem
    if isinstance(value, (bool, int, float)):
        return number_problem(key, value)
    if problem := _program_problem(key):
        return problem
    if value is None:
        return None
    allowed = CONFIG_WORDS.get(key)
    if allowed is None:
        return (f"refused: a string value is taken only by the known enumerations ({DOCS}); null, true/false and "
                "numbers are taken by every key")
    if not isinstance(value, str) or not _fits(value, allowed):
        listed = f"one of {', '.join(sorted(allowed))}" if isinstance(allowed, frozenset) else "comma-separated words"
        return f"refused: expects {listed}"
    return None


def env_problem(name: str, value: object) -> str | None:
    """Why environment variable ``name`` may not be set to ``value``, or None when it is data."""
    if problem := _service_problem(name) or _program_problem(name):
        return problem
    if not isinstance(value, str):
        return "environment values are strings"
    if value == "" or value.lower() in BOOLEAN_WORDS:
        return None
    if _NUMBER.fullmatch(value):
        return number_problem(name, value)
    allowed = ENV_WORDS.get(name)
    if allowed is not None and _fits(value, allowed):
        return None
    return (f"refused: environment values are numbers, 0/1, true/false, on/off, yes/no"
            f"{', or the known words of ' + name if allowed is not None else ''}; paths, programs and code are not "
            f"data ({DOCS})")


def _as_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else str(value)


@dataclass(frozen=True)
class Allowance:
    """Settings an operator admits beyond data, on one machine (``PTBENCH_ALLOW_SETTINGS``): each
    entry a config key (``inductor.cpp.cxx``) or an environment name (``TRITON_PTXAS_PATH``), alone
    (any value) or ``NAME=VALUE`` (that value only). ``everything``: records of what was already
    run (stored builds, documents from workers), whose settings the worker checked."""

    names: frozenset[str] = frozenset()
    pinned: frozenset[tuple[str, str]] = frozenset()
    everything: bool = False

    @classmethod
    def parse(cls, text: str, *, source: str = ALLOW_VARIABLE) -> Allowance:
        """Entries separated by commas or white space; raises ValueError naming a bad entry."""
        names, pinned = set(), set()
        for entry in (e for e in re.split(r"[,\s]+", text or "") if e):
            name, sep, value = entry.partition("=")
            if not (_ENV_NAME.fullmatch(name) or _CONFIG_KEY.fullmatch(name)):
                raise ValueError(f"{source}: {entry!r} is not NAME or NAME=VALUE with NAME an environment variable "
                                 "(TRITON_PTXAS_PATH) or a config key (inductor.cpp.cxx)")
            if sep:
                pinned.add((name, value))
            else:
                names.add(name)
        return cls(names=frozenset(names), pinned=frozenset(pinned))

    @classmethod
    def from_environ(cls, environ) -> Allowance:
        return cls.parse(environ.get(ALLOW_VARIABLE, ""))

    def admits(self, name: str, value: object) -> bool:
        return self.everything or name in self.names or (name, _as_text(value)) in self.pinned

    def __bool__(self) -> bool:
        return bool(self.everything or self.names or self.pinned)


class SettingsRefused(ValueError):
    """A worker's case message carries settings its machine does not admit (``runner.worker.screening``);
    ``problems``: [{field, message}]."""

    def __init__(self, problems: list[dict]):
        self.problems = problems
        named = "; ".join(f"{p['field']}: {p['message']}" for p in problems)
        super().__init__(f"settings refused, nothing was run: {named} (this machine admits settings that are data, "
                         f"and what its {ALLOW_VARIABLE} lists)")


DATA_ONLY = Allowance()
RECORDED = Allowance(everything=True)


def setting_refusal(kind: str, name: str, value: object, allow: Allowance = DATA_ONLY) -> str | None:
    """Why a setting (``kind`` ``config`` or ``env``) is refused under ``allow``, or None."""
    problem = config_problem(name, value) if kind == "config" else env_problem(name, value)
    if problem is None or allow.admits(name, value):
        return None
    return problem


def settings_refused(config: dict, env: dict, allow: Allowance = DATA_ONLY) -> list[dict]:
    """[{field, message}] for every refused setting of a variant (``config.KEY``, ``env.NAME``)."""
    found = [(f"config.{k}", setting_refusal("config", k, v, allow)) for k, v in (config or {}).items()]
    found += [(f"env.{k}", setting_refusal("env", k, v, allow)) for k, v in (env or {}).items()]
    return [{"field": field, "message": message} for field, message in found if message]
