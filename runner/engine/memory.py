"""Peak device memory of eager and compiled execution (CUDA only).

The footprint of a side is what it keeps resident (weights, inputs, gradients, optimizer state,
CUDA-graph pools) plus the transient peak of one steady-state call (``max_memory_allocated`` after
``reset_peak_memory_stats``, minus what was allocated when the call began). Resident is the growth
of ``memory_allocated``: for eager across building instance A and its first call, for compiled from
before building instance B to after the timing warm-up (CUDA graphs are recorded there), counting
A as steady once its first call is done. Both instances live in one process, so an absolute peak
would count the other side's weights; this split does not.

CUDA graphs (reduce-overhead, max-autotune) replay into a private memory pool that was filled
while they were recorded: after recording, its blocks are free to the allocator's counters
(``memory_allocated`` drops) but stay reserved for the graph, and a replay allocates nothing. So
the CUDA "allocated" level here adds the free bytes of every private pool's segments
(``torch.cuda.memory_snapshot``): a graph's pool counts as resident, as ``nvidia-smi`` shows it.

On the CPU, as users read it from the process: the resident part is the bytes of the instance's
parameters and buffers (both instances live in one process, so the process's own resident size
would count the other side and the compiler's memory), and the transient peak of one call is the
rise of the process's peak resident size (``VmHWM``, reset through ``/proc/self/clear_refs``) over
its size when the call began. Where the kernel offers no reset (not Linux), the values stay ``None``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

import torch

_CLEAR_REFS = Path("/proc/self/clear_refs")
_STATUS = Path("/proc/self/status")


def _status_bytes(field: str) -> int:
    for line in _STATUS.read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024  # kB
    raise KeyError(field)


def _reset_peak_rss() -> bool:
    try:
        _CLEAR_REFS.write_text("5")  # resets VmHWM to the current resident size (Linux >= 4.0)
        return True
    except OSError:
        return False


def private_pool_free_bytes() -> int:
    """Reserved but unallocated bytes of CUDA private pools (CUDA-graph pools); 0 without any."""
    try:
        segments = torch.cuda.memory_snapshot()
    except Exception:  # noqa: BLE001 (an allocator without snapshots: nothing to add)
        return 0
    return sum(
        int(segment.get("total_size", 0)) - int(segment.get("allocated_size", 0))
        for segment in segments
        if tuple(segment.get("segment_pool_id") or (0, 0)) != (0, 0)
    )


class MemoryProbe:
    def __init__(self, device: str):
        self.active = device == "cuda" and torch.cuda.is_available()
        self.host = device == "cpu" and _STATUS.exists() and _reset_peak_rss()

    def allocated(self) -> int | None:
        if not self.active:
            return None
        torch.cuda.synchronize()
        return int(torch.cuda.memory_allocated()) + private_pool_free_bytes()

    def resident(self, instance, before: int | None, adjust: int = 0) -> int | None:
        """What a side keeps resident: on CUDA the growth since ``before``, on the CPU its
        parameters and buffers."""
        if self.host:
            return module_bytes(instance.modules)
        return growth(before, self.allocated(), adjust)

    def transient_peak(self, call: Callable[[], object]) -> int | None:
        """Bytes allocated above the starting level at the peak of one call (its output included)."""
        if self.host:
            _reset_peak_rss()
            before = _status_bytes("VmRSS")
            output = call()
            peak = _status_bytes("VmHWM")
            del output
            return max(peak - before, 0)
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


def module_bytes(modules: Iterable[torch.nn.Module]) -> int:
    """Bytes of the distinct storages of the modules' parameters and buffers, on any device."""
    seen: set[int] = set()
    total = 0
    for module in modules:
        for tensor in (*module.parameters(), *module.buffers()):
            storage = tensor.untyped_storage()
            if storage.data_ptr() not in seen:
                seen.add(storage.data_ptr())
                total += storage.nbytes()
    return total


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
