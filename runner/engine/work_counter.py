"""Counts the work a block of code does, not how long the host took: Linux perf counters.

A cold compile is host work whose wall time follows the host: on the lent GPU VMs the host's speed
changes by up to 1.7x between runs (runner.engine.host_speed), so wall time varies +-10-15 % for an
unchanged build. The number of instructions retired does not depend on how fast the host runs or on
what else runs beside it (CodSpeed's approach, which counts instructions under Valgrind; here the
CPU's own counter, through ``perf_event_open``, costs nothing).

``WorkCounter`` opens, for this process and every thread and child process it starts later
(``inherit``), two counters: user-space instructions retired (a hardware counter: absent where the
VM exposes no PMU or the kernel forbids it) and task clock (CPU nanoseconds, always there). A child
process's counts join ours when it exits, so a compile-worker pool must be shut down before
``read`` for its work to count. Never raises: a counter that cannot be opened reads ``None``.
"""
from __future__ import annotations

import ctypes
import os
import platform
import struct

_SYSCALL_PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241}.get(platform.machine())
_PERF_TYPE_HARDWARE, _PERF_TYPE_SOFTWARE = 0, 1
_PERF_COUNT_HW_INSTRUCTIONS = 1
_PERF_COUNT_SW_TASK_CLOCK = 1
# perf_event_attr flag bits: disabled(0) inherit(1) ... exclude_kernel(5) exclude_hv(6)
_FLAGS = (1 << 1) | (1 << 5) | (1 << 6)
_ATTR_SIZE = 64  # PERF_ATTR_SIZE_VER0: type, size, config, sample_period, sample_type, read_format, flags, wakeup, bp_type, config1


def _open_counter(kind: int, config: int) -> int | None:
    if _SYSCALL_PERF_EVENT_OPEN is None:
        return None
    attr = struct.pack("IIQQQQQIIQ", kind, _ATTR_SIZE, config, 0, 0, 0, _FLAGS, 0, 0, 0)
    buffer = ctypes.create_string_buffer(attr, _ATTR_SIZE)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fd = libc.syscall(_SYSCALL_PERF_EVENT_OPEN, buffer, 0, -1, -1, 0)  # this process, any CPU
    except (OSError, AttributeError):
        return None
    return fd if fd >= 0 else None


def _read(fd: int | None) -> int | None:
    if fd is None:
        return None
    try:
        return struct.unpack("Q", os.read(fd, 8))[0]
    except OSError:
        return None


class WorkCounter:
    """``counter = WorkCounter()`` ... ``counter.read()`` -> {"instructions": n|None, "task_clock_s": s|None}."""

    def __init__(self) -> None:
        self._instructions = _open_counter(_PERF_TYPE_HARDWARE, _PERF_COUNT_HW_INSTRUCTIONS)
        self._task_clock = _open_counter(_PERF_TYPE_SOFTWARE, _PERF_COUNT_SW_TASK_CLOCK)

    @property
    def available(self) -> dict:
        return {"instructions": self._instructions is not None, "task_clock": self._task_clock is not None}

    def read(self) -> dict:
        clock_ns = _read(self._task_clock)
        return {"instructions": _read(self._instructions),
                "task_clock_s": None if clock_ns is None else clock_ns / 1e9}

    def close(self) -> None:
        for fd in (self._instructions, self._task_clock):
            if fd is not None:
                os.close(fd)
        self._instructions = self._task_clock = None
