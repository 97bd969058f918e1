"""Peak-memory arithmetic, with torch.cuda's allocator statistics replaced by a scripted one."""
from __future__ import annotations

import torch

from runner.engine import memory
from runner.engine.memory import MemoryProbe, footprint, growth


class ScriptedAllocator:
    def __init__(self):
        self.allocated = 1000
        self.peak = 1000

    def run(self, transient: int, kept: int):
        self.peak = max(self.peak, self.allocated + transient)
        self.allocated += kept


def test_transient_peak_uses_reset_and_max_allocated(monkeypatch):
    allocator = ScriptedAllocator()
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda: allocator.allocated)
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda: allocator.peak)
    monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", lambda: setattr(allocator, "peak", allocator.allocated))
    probe = MemoryProbe("cpu")
    probe.active = True  # as on a GPU
    assert probe.transient_peak(lambda: allocator.run(transient=5000, kept=0)) == 5000
    assert probe.allocated() == 1000


def test_cpu_probe_reports_nothing():
    probe = MemoryProbe("cpu")
    assert probe.allocated() is None
    assert probe.transient_peak(lambda: None) is None
    assert footprint(None, 10) is None


def test_growth_and_footprint():
    assert growth(100, 600, adjust=-50) == 450
    assert growth(None, 600) is None
    assert footprint(450, 50) == 500


def test_device_bytes_counts_shared_storage_once():
    base = torch.zeros(10)
    assert memory.device_bytes([base, base[2:]]) == 0  # CPU tensors are not device memory
