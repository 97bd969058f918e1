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
    monkeypatch.setattr(torch.cuda, "memory_snapshot", lambda: [])
    probe = MemoryProbe("cpu")
    probe.active, probe.host = True, False  # as on a GPU
    assert probe.transient_peak(lambda: allocator.run(transient=5000, kept=0)) == 5000
    assert probe.allocated() == 1000


def test_a_cuda_graph_pool_counts_as_resident(monkeypatch):
    """After recording, a graph's pool is free to the counters but reserved for its replays."""
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda: 1000)
    monkeypatch.setattr(torch.cuda, "memory_snapshot", lambda: [
        {"segment_pool_id": (0, 0), "total_size": 4096, "allocated_size": 1000},   # the default pool
        {"segment_pool_id": (1, 0), "total_size": 8192, "allocated_size": 192},    # a CUDA graph's
    ])
    probe = MemoryProbe("cpu")
    probe.active, probe.host = True, False
    assert probe.allocated() == 1000 + 8000


def test_cpu_probe_measures_parameters_and_the_peak_of_one_call():
    probe = MemoryProbe("cpu")
    assert probe.host, "Linux offers /proc/self/clear_refs"
    model = torch.nn.Linear(256, 256)
    instance = type("I", (), {"modules": (model,)})()
    assert probe.resident(instance, None) == (256 * 256 + 256) * 4
    size = 64 * 1024 * 1024

    def call():
        scratch = torch.ones(size // 4)  # 64 MiB, touched
        return scratch.sum()

    peak = probe.transient_peak(call)
    assert size * 0.9 <= peak <= size * 1.5
    assert probe.transient_peak(lambda: None) < size // 8
    assert footprint(None, 10) is None


def test_growth_and_footprint():
    assert growth(100, 600, adjust=-50) == 450
    assert growth(None, 600) is None
    assert footprint(450, 50) == 500


def test_device_bytes_counts_shared_storage_once():
    base = torch.zeros(10)
    assert memory.device_bytes([base, base[2:]]) == 0  # CPU tensors are not device memory
