"""What one case is: the JSON-serialisable spec the parent hands to the case subprocess."""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

from contract.case_config import CaseConfig
from contract.vocabulary import BACKENDS, SIZES

# The case subprocess runs either every phase ("cold") or only build + compile + first call with a
# cache directory that the cold phase filled ("warm").
PHASES = ("cold", "warm")


@dataclass(frozen=True)
class TimingBudget:
    """How long the interleaved timing of one case may take, and how long one block should last."""

    budget_s: float
    target_block_s: float
    warmup_s: float
    min_pairs: int = 10
    max_pairs: int = 500
    # Past ``budget_s``, timing goes on (up to ``max_budget_s``) while the speedup's 95% interval is
    # wider than +-``noise_target``: noisy, launch-bound cases get more pairs, quiet ones do not pay.
    noise_target: float = 0.01
    max_budget_s: float | None = None
    # Time a fixed piece of host work before each pair (runner.engine.timing): how fast the host was.
    host_probe: bool = False
    # One profiled call per side after timing (runner.engine.kernel_profile, docs/explain.md).
    profile: bool = True

    @classmethod
    def for_device(cls, device: str) -> "TimingBudget":
        # GPU: ~25 ms blocks (one pair of events around many calls) for ~2.5 s, docs/architecture.md (timing).
        # CPU (tests, tiny suite): shorter blocks and a short budget keep a case to a few seconds.
        if device == "cuda":
            # Up to 40 s (2,000 pairs) for a case still noisier than +-1% after 2.5 s: a compiled
            # training step with graph breaks varies ~10% call to call (host-bound: the host takes as
            # long to launch its ~800 kernels as the GPU takes to run them). The host probe records
            # how fast the host was meanwhile (bench/timing_jitter.py, bench/results/README.md).
            return cls(budget_s=2.5, target_block_s=0.025, warmup_s=0.5, max_budget_s=40.0, max_pairs=2000,
                       host_probe=True)
        return cls(budget_s=0.6, target_block_s=0.01, warmup_s=0.1)


@dataclass(frozen=True)
class CaseSpec:
    """One case: workload x compile mode x shape regime x dtype x device, with a backend and a size.

    ``workload`` is what ``workloads.registry.get_workload`` accepts: a catalog name, or
    ``package.module:ClassName`` when ``import_allowed`` (set only by the local CLI; a worker always
    clears it) or when the module is listed in ``PTBENCH_WORKLOAD_MODULES``.
    """

    workload: str
    compile_mode: str
    shape_regime: str
    dtype: str
    device: str
    backend: str = "inductor"
    size: str = "tiny"
    seed: int = 0
    phase: str = "cold"
    timing: TimingBudget | None = None
    import_allowed: bool = False
    # A build variant's overrides (contract.variants): config keys set in the case process before
    # anything compiles, environment variables set on it before torch is imported.
    config_overrides: dict = dataclasses.field(default_factory=dict)
    env_overrides: dict = dataclasses.field(default_factory=dict)
    # Which declared dynamic dims the regime marks, by role or input_name:dim (contract.dims);
    # None: every declared dim. Last, so that positional and older messages read as before.
    dims: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.dims is not None:
            object.__setattr__(self, "dims", tuple(self.dims))
        self.case_config  # noqa: B018 (checks the configuration's fields: CaseConfigError names the one at fault)
        for value, allowed, what in (
            (self.backend, BACKENDS, "backend"),
            (self.size, SIZES, "size"),
            (self.phase, PHASES, "phase"),
        ):
            if value not in allowed:
                raise ValueError(f"unknown {what} {value!r}; expected one of {', '.join(allowed)}")

    @property
    def timing_budget(self) -> TimingBudget:
        return self.timing or TimingBudget.for_device(self.device)

    @property
    def case_config(self) -> CaseConfig:
        """Its configuration (contract.case_config): the fields stay flat here, as the case
        process and worker messages have always carried them."""
        return CaseConfig(compile_mode=self.compile_mode, shape_regime=self.shape_regime, dtype=self.dtype, device=self.device,
                          dims=self.dims)

    @property
    def label(self) -> str:
        return f"{self.workload} {self.case_config.key}"

    def config(self) -> dict:
        """The result's ``config`` object in the run document."""
        return self.case_config.as_document()

    def with_phase(self, phase: str) -> "CaseSpec":
        return dataclasses.replace(self, phase=phase)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> "CaseSpec":
        data = json.loads(text)
        timing = data.pop("timing", None)
        return cls(**data, timing=TimingBudget(**timing) if timing else None)

    def write(self, path: Path) -> None:
        path.write_text(self.to_json())

    @classmethod
    def read(cls, path: Path) -> "CaseSpec":
        return cls.from_json(Path(path).read_text())
