"""Helpers shared by the suite's workloads: seeded inputs, tolerances, library models and imports.

Nothing here knows about a particular model; each workload module keeps its own sizes and layers.
"""
from __future__ import annotations

import importlib
import types
from typing import Callable, Sequence, TypeVar

import torch

from workloads.base import Instance, Size

T = TypeVar("T")


def pick(size: Size, sizes: dict[str, T]) -> T:
    """The configuration for ``size``; a clear error for a size the workload does not define."""
    try:
        return sizes[size]
    except KeyError:
        raise ValueError(f"unknown size {size!r}; expected one of {sorted(sizes)}") from None


def variant_value(values: Sequence[int], variant: int, what: str) -> int:
    """The dynamic dimension's value for ``variant`` (0 = timed shape, 1 = the second shape)."""
    if not 0 <= variant < len(values):
        raise ValueError(f"variant must be in 0..{len(values) - 1}, got {variant} ({what})")
    return values[variant]


def input_generator(device: str | torch.device, seed: int, variant: int) -> torch.Generator:
    """A generator on ``device`` whose stream depends only on (seed, variant).

    Inputs are drawn on the target device so that full-size inputs (a KV cache of a few GB) need
    no host round trip; the stream is deterministic per device type.
    """
    gen = torch.Generator(device=torch.device(device))
    gen.manual_seed(1_000_003 * seed + 7_919 * variant + 17)
    return gen


def randn(shape: Sequence[int], gen: torch.Generator, device, dtype: torch.dtype, scale: float = 1.0):
    """Seeded normal tensor drawn in float32 (identical streams for every dtype), then cast."""
    t = torch.randn(tuple(shape), generator=gen, device=device, dtype=torch.float32)
    if scale != 1.0:
        t.mul_(scale)
    return t.to(dtype)


def randint(high: int, shape: Sequence[int], gen: torch.Generator, device, low: int = 0):
    """Seeded int64 tensor in [low, high) (token ids, labels, timesteps)."""
    return torch.randint(low, high, tuple(shape), generator=gen, device=device, dtype=torch.int64)


def tolerances(
    dtype: torch.dtype, *, fp32: float = 1e-3, bf16: float = 3e-2, fp16: float | None = None
) -> tuple[float, float]:
    """(rtol, atol) for compiled-vs-eager comparison, by dtype.

    ``fp16`` defaults to a quarter of ``bf16`` (three more mantissa bits). The values per workload
    were set from compiled-vs-eager errors measured at full size on an H100 (torch 2.11), with
    margin: deep stacks in bfloat16 differ by several bf16 ulps of their largest activations.
    """
    if dtype == torch.bfloat16:
        tol = bf16
    elif dtype == torch.float16:
        tol = bf16 / 4 if fp16 is None else fp16
    else:
        tol = fp32
    return tol, tol


def optional_module(name: str) -> types.ModuleType | None:
    """``import name`` or None when it is not installed (or fails to import for any reason)."""
    try:
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001 (ImportError, or a broken install (ABI mismatch with this torch))
        return None


def try_build(builders: Sequence[tuple[str, Callable[[], T]]], seed: int) -> tuple[str, T]:
    """Return ``(label, result)`` of the first builder that succeeds, re-seeding before each try.

    Used to prefer a library model (torchvision, transformers) and fall back to our own module when
    the library is missing or its API has moved; the last builder's errors propagate. When a
    builder other than the first one is used, the label says why the earlier ones were skipped.
    """
    skipped: list[str] = []
    for i, (label, builder) in enumerate(builders):
        torch.manual_seed(seed)
        try:
            result = builder()
        except Exception as exc:  # noqa: BLE001 - any failure means "use the next implementation"
            if i == len(builders) - 1:
                raise
            skipped.append(f"{label}: {type(exc).__name__}: {str(exc)[:120]}")
            continue
        if skipped:
            label = f"{label} (fallback; {'; '.join(skipped)})"
        return label, result
    raise ValueError("no builders given")


class LibraryModelUnavailable(RuntimeError):
    """A workload's library model cannot be built here: the case fails (eager_error) naming why."""


def library_model(
    module: str,
    implementation: str,
    make: Callable[[types.ModuleType], T],
    *,
    device,
    seed: int,
) -> tuple[str, T]:
    """``(implementation, built)``: ``make(import_module(module))`` on ``device``, seeded. Never a
    stand-in: a workload's series is the measurement of one implementation, so a library that does not
    import, or whose API moved, fails the case with a message naming the library and the cause
    (transformers is a runner requirement: requirements/runner.txt; docs/families.md)."""
    try:
        library = importlib.import_module(module)
    except Exception as exc:  # noqa: BLE001 (ImportError, or a broken install: an ABI mismatch with this torch)
        raise LibraryModelUnavailable(
            f"{implementation} needs {module}, which does not import here ({type(exc).__name__}: {str(exc)[:200]}); "
            f"install requirements/runner.txt: no other model is measured under this workload's name") from exc
    torch.manual_seed(seed)
    try:
        with torch.device(device):
            return implementation, make(library)
    except Exception as exc:  # noqa: BLE001 (the library's API moved, or it refuses this configuration)
        version = getattr(library, "__version__", "unknown version")
        raise LibraryModelUnavailable(
            f"{implementation} could not be built with {module} {version} ({type(exc).__name__}: {str(exc)[:200]}); "
            f"no other model is measured under this workload's name") from exc


def freeze(module: torch.nn.Module) -> torch.nn.Module:
    """Inference setup: eval mode (no dropout, BN running stats) and no autograd bookkeeping."""
    module.eval()
    module.requires_grad_(False)
    return module


def frozen_model(make: Callable[[], torch.nn.Module], *, device, dtype: torch.dtype, seed: int) -> torch.nn.Module:
    """An inference model with seeded random weights, on ``device`` in ``dtype``, frozen."""
    torch.manual_seed(seed)
    with torch.device(device):
        return freeze(make().to(device=device, dtype=dtype))


def model_instance(
    model: torch.nn.Module,
    make_inputs: Callable[[int], Sequence[torch.Tensor]],
    input_names: Sequence[str],
    *,
    dtype: torch.dtype,
    fp32: float,
    bf16: float,
) -> Instance:
    """The Instance of an inference workload whose function is the model itself."""
    rtol, atol = tolerances(dtype, fp32=fp32, bf16=bf16)
    return Instance(
        fn=model,
        make_inputs=make_inputs,
        input_names=tuple(input_names),
        rtol=rtol,
        atol=atol,
        modules=(model,),
        implementation=f"{type(model).__module__}.{type(model).__qualname__}",
    )
