"""What build and machine a run measured; runs in the build's interpreter (``python -m runner environment``).

The parent never asks its own torch: the build under test is whatever ``--python`` imports.
"""
from __future__ import annotations

import importlib.metadata
import os
import platform
import re
import shutil
import socket
import subprocess
import sys

_GPU_VENDOR_WORDS = {"nvidia", "amd", "tesla", "geforce", "instinct", "radeon", "graphics"}
_GPU_SERIES_PREFIXES = {"rtx", "gtx", "titan", "quadro", "pro"}


def machine_class_for(gpu_name: str | None) -> str:
    """``"cpu"`` without a GPU, else ``gpu-`` + the short model: "NVIDIA H100 80GB HBM3" -> "gpu-h100"."""
    if not gpu_name:
        return "cpu"
    words = [w for w in re.split(r"[\s\-_/,()]+", gpu_name.lower()) if w and w not in _GPU_VENDOR_WORDS]
    if not words:
        return "gpu"
    model = words[0]
    if model in _GPU_SERIES_PREFIXES and len(words) > 1:
        model += words[1]
    model = re.sub(r"[^a-z0-9]", "", model)[:59]
    return f"gpu-{model}" if model else "gpu"


_CPU_NOISE_WORDS = {"(r)", "(tm)", "cpu", "processor", "core", "with", "radeon", "graphics"}


def cpu_machine_class(cpu_model: str | None = None, cpu_count: int | None = None) -> str:
    """A CPU host's own machine class, named from its CPU model and core count (this host's when not
    given): "AMD EPYC" with 2 cores -> "cpu-amd-epyc-2c", "Intel(R) Xeon(R) Platinum 8480+ CPU @
    2.00GHz" with 16 -> "cpu-intel-xeon-platinum-8480-16c". The quick start measures into it, so its
    local build is never a point of the imported sample's ``cpu`` series, measured on another host
    (docs/machine-classes-and-verdicts.md)."""
    model = _cpu_model() if cpu_model is None else cpu_model
    count = os.cpu_count() if cpu_count is None else cpu_count
    text = re.sub(r"\(r\)|\(tm\)|@.*$", " ", (model or "").lower())
    words = [re.sub(r"[^a-z0-9]", "", w) for w in re.split(r"[\s\-_/,]+", text) if w not in _CPU_NOISE_WORDS]
    name = "-".join(w for w in words if w)[:48].strip("-")
    return "-".join(part for part in ("cpu", name, f"{count}c" if count else "") if part)


def _package_version(*names: str) -> str | None:
    for name in names:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def _cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _driver_version() -> str | None:
    """The NVIDIA driver, from nvidia-smi (torch does not expose it)."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        completed = subprocess.run(
            [smi, "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True, text=True, timeout=20
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = completed.stdout.strip().splitlines()
    return lines[0].strip() if completed.returncode == 0 and lines else None


def _git_sha(torch) -> str:
    sha = str(getattr(torch.version, "git_version", "") or "").strip().lower()
    return sha if re.fullmatch(r"[0-9a-f]{7,40}", sha) else "unknown"


def collect_environment() -> dict:
    """``{"build": ..., "machine": ..., "cuda_available": bool}`` in run-document field names."""
    import torch

    cuda_available = bool(torch.cuda.is_available())
    gpu_name = torch.cuda.get_device_name(0) if cuda_available else None
    version = torch.__version__
    build = {
        "torch_version": version,
        "git_sha": _git_sha(torch),
        # "2.13.0+cu128" -> "cu128": the same sha built for another toolchain is another build.
        "local_label": version.split("+", 1)[1] if "+" in version else "",
        "triton_version": _package_version("triton", "pytorch-triton", "pytorch-triton-rocm"),
        "cuda_version": torch.version.cuda,
        "python_version": platform.python_version(),
        "environment": {
            "python_executable": sys.executable,
            "platform": platform.platform(),
            "debug_build": bool(getattr(torch.version, "debug", False)),
            "hip_version": getattr(torch.version, "hip", None),
            "cudnn_version": torch.backends.cudnn.version() if cuda_available else None,
            "torch_num_threads": torch.get_num_threads(),
        },
    }
    machine = {
        "hostname": socket.gethostname() or "unknown",
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "memory_bytes": _memory_bytes(),
        "gpu_name": gpu_name,
        "gpu_count": torch.cuda.device_count() if cuda_available else 0,
        "driver_version": _driver_version() if cuda_available else None,
        "cuda_version": torch.version.cuda,
    }
    return {"build": build, "machine": machine, "cuda_available": cuda_available}
