"""Peak device memory of eager and compiled execution (CUDA only).

The footprint of a side is what it keeps resident (weights, inputs, gradients, optimizer state,
CUDA-graph pools) plus the transient peak of one steady-state call (``max_memory_allocated`` after
``reset_peak_memory_stats``, minus what was allocated when the call began). Resident is the growth
of ``memory_allocated``: for eager across building instance A and its first call, for compiled from
before building instance B to after the timing warm-up (CUDA graphs are recorded there), counting
A as steady once its first call is done. Both instances live in one process, so an absolute peak
would count the other side's weights; this split does not.

On the CPU there is no allocator that reports a peak for one call, so the values stay ``None``
(null in the document) rather than a number from a different kind of measurement.
"""
from __future__ import annotations

from typing import Callable, Iterable

import torch


class MemoryProbe:
    def __init__(self, device: str):
        self.active = device == "cuda" and torch.cuda.is_available()

    def allocated(self) -> int | None:
        if not self.active:
            return None
        torch.cuda.synchronize()
        return int(torch.cuda.memory_allocated())

    def transient_peak(self, call: Callable[[], object]) -> int | None:
        """Bytes allocated above the starting level at the peak of one call (its output included)."""
        if not self.active:
            return None
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        output = call()
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated()
        del output
        return int(max(peak - before, 0))


def growth(before: int | None, after: int | None, adjust: int = 0) -> int | None:
    if before is None or after is None:
        return None
    return max(after - before + adjust, 0)


def footprint(resident: int | None, transient: int | None) -> int | None:
    if resident is None or transient is None:
        return None
    return resident + transient


def device_bytes(tensors: Iterable[object]) -> int:
    """Bytes of the distinct storages behind ``tensors`` (views of one storage count once)."""
    seen: set[int] = set()
    total = 0
    for tensor in tensors:
        if isinstance(tensor, torch.Tensor) and tensor.device.type != "cpu":
            storage = tensor.untyped_storage()
            if storage.data_ptr() not in seen:
                seen.add(storage.data_ptr())
                total += storage.nbytes()
    return total
