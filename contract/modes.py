"""What each compile mode is and which cases it can run (docs/compile-paths.md).

The HUD lists its configurations as one list (default, cudagraphs, cpp_wrapper, freezing,
aot_inductor, export, max_autotune), so a compile path is a compile mode here: the four
``torch.compile`` modes (``reduce-overhead`` is the HUD's "cudagraphs") and the paths users deploy
with. Each mode declares the shape regimes and workload phases it supports; the planner leaves out
the rest with this module's reason, never silently.

Pure Python: no Django, no torch.
"""
from __future__ import annotations

from dataclasses import dataclass

from contract.vocabulary import COMPILE_MODES, SHAPE_REGIMES, WORKLOAD_PHASES


@dataclass(frozen=True)
class Mode:
    name: str
    path: bool  # a compile path (export, AOTInductor, an inductor setting), not a torch.compile mode
    regimes: tuple[str, ...] = SHAPE_REGIMES
    phases: tuple[str, ...] = WORKLOAD_PHASES
    why_not: str = ""  # why the phases left out are left out
    hud_name: str = ""  # the HUD's name of this configuration, where it differs

    def skip_reason(self, *, regime: str, phase: str) -> str | None:
        """Why a case of ``regime`` and ``phase`` cannot run in this mode, or None."""
        if regime not in self.regimes:
            return f"mode {self.name} supports regimes {', '.join(self.regimes)}, not {regime}"
        if phase not in self.phases:
            return f"mode {self.name} runs {', '.join(self.phases)} only ({self.why_not}); this workload's phase is {phase}"
        return None


_INFERENCE = ("infer",)
MODES: dict[str, Mode] = {m.name: m for m in (
    Mode("default", path=False),
    Mode("reduce-overhead", path=False, hud_name="cudagraphs"),
    Mode("max-autotune", path=False, hud_name="max_autotune"),
    Mode("max-autotune-no-cudagraphs", path=False),
    # torch.export (non-strict) of the inference call, then its module compiled with torch.compile.
    Mode("export", path=True, phases=_INFERENCE, why_not="an exported program is an inference graph"),
    # Exported, compiled into a package with aoti_compile_and_package, loaded with aoti_load_package.
    Mode("aot_inductor", path=True, phases=_INFERENCE, why_not="an AOTInductor package is an inference graph"),
    # torch.compile with inductor's cpp_wrapper (the HUD's TORCHINDUCTOR_CPP_WRAPPER=1).
    Mode("cpp_wrapper", path=True),
    # torch.compile with inductor's freezing: weights folded as constants, under no_grad only.
    Mode("freezing", path=True, phases=_INFERENCE, why_not="freezing folds weights as constants under no_grad"),
)}

# A run that names no modes measures these on a GPU: the paths are asked for by name
# (``--modes export,aot_inductor``), as the HUD runs each configuration as a job of its own.
TORCH_COMPILE_MODES: tuple[str, ...] = tuple(name for name, mode in MODES.items() if not mode.path)
PATH_MODES: tuple[str, ...] = tuple(name for name, mode in MODES.items() if mode.path)
# The paths whose cases export first (``path_phases.export_s``: /dynamic/ shows it backed vs unbacked).
EXPORTING_MODES: tuple[str, ...] = ("export", "aot_inductor")

if tuple(MODES) != COMPILE_MODES:  # the schema's enum and this table name the same modes, in order
    raise RuntimeError(f"contract.modes lists {tuple(MODES)}, the run document's schema {COMPILE_MODES}")


def skip_reason(mode: str, *, regime: str, phase: str) -> str | None:
    return MODES[mode].skip_reason(regime=regime, phase=phase)
