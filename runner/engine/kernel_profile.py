"""The compiled call's kernels: what Inductor generated and where one call's time goes (issue #30;
docs/explain.md).

- ``code_mark`` / ``generated_kernels``: the output-code modules Inductor loaded between two marks
  (``torch._inductor.codecache.PyCodeCache.modules``), parsed for each kernel it defines
  (``name = async_compile.triton('name', '''...''')``, ``cpp_pybinding([...], r'''...''')``): its
  name, kind and a fingerprint, the sha256 of its source with generated names normalised (the
  kernel's own and other kernels' names, cache paths, long hashes), so the same code under another
  name or cache directory has the same fingerprint. The normalised source of the first kernels is
  kept, bounded, for the "what changed" view's side-by-side diff.
- ``profile_call``: one call of each side under ``torch.profiler``, after timing, never during it:
  the top operators and kernels by self time (device time on CUDA, CPU time on CPU) with their
  launch counts. On CPU the profiler attributes Inductor's C++ kernels to the graph's call
  ("## Call CompiledFxGraph ... ##") and extern kernels (aten::mm) by name; on CUDA each Triton
  kernel by its Inductor name.
"""
from __future__ import annotations

import hashlib
import re
import time
from typing import Any, Callable

TOP_OPS = 15  # rows of each side's profile
MAX_KERNELS = 200  # kernels fingerprinted per case
SOURCE_KERNELS = 12  # kernels whose normalised source is kept
SOURCE_CHARS = 6000  # of each kept source
NAME_CHARS = 300

_KERNEL_DEF = re.compile(
    r"^(?P<var>\w+) = async_compile\.(?P<kind>\w+)\((?P<head>[^\n]*?)r?'''(?P<source>.*?)'''", re.DOTALL | re.MULTILINE)
_KERNEL_NAME = re.compile(r"\b(?:triton|cpp|cuda|halide)_(?:\w+?_)?fused\w*?_\d+\b|\btriton_\w+_\d+\b")
_CACHE_PATH = re.compile(r"(?:/[\w.+-]+)*/torchinductor_[\w.+-]+(?:/[\w.+-]+)*")
_LONG_HASH = re.compile(r"\b[a-z0-9]{32,}\b")


def _modules() -> list[Any]:
    try:
        from torch._inductor.codecache import PyCodeCache
    except ImportError:
        return []
    modules = getattr(PyCodeCache, "modules", None)
    if isinstance(modules, list):
        return modules
    cache = getattr(PyCodeCache, "cache", None)  # older torch: key -> module
    return list(cache.values()) if isinstance(cache, dict) else []


def code_mark() -> int:
    return len(_modules())


def normalise(source: str, own_name: str) -> str:
    text = source.replace(own_name, "KERNEL")
    text = _KERNEL_NAME.sub("KERNEL_REF", text)
    text = _CACHE_PATH.sub("CACHE_PATH", text)
    return _LONG_HASH.sub("HASH", text).strip()


def fingerprint(normalised: str) -> str:
    return hashlib.sha256(normalised.encode()).hexdigest()[:16]


def kernels_in(wrapper_source: str) -> list[dict]:
    """Each kernel an output-code module defines: name, kind, fingerprint, normalised source."""
    found = []
    for match in _KERNEL_DEF.finditer(wrapper_source):
        name = match["var"]
        text = normalise(match["source"], name)
        found.append({"name": name[:NAME_CHARS], "kind": match["kind"][:40], "fingerprint": fingerprint(text), "source": text})
    return found


def generated_kernels(start: int, end: int | None = None) -> list[dict]:
    """The kernels of the output code loaded between two marks, in the order Inductor wrote them."""
    kernels: list[dict] = []
    for module in _modules()[start:end]:
        path = getattr(module, "__file__", None)
        if not path:
            continue
        try:
            with open(path, encoding="utf-8") as handle:
                kernels += kernels_in(handle.read())
        except OSError:
            continue
    return kernels[:MAX_KERNELS]


def _rows(profile: Any, device: str) -> list[dict]:
    rows = []
    for event in profile.key_averages():
        if device == "cuda":
            self_us = getattr(event, "self_device_time_total", None)
            if self_us is None:
                self_us = getattr(event, "self_cuda_time_total", 0)
        else:
            self_us = event.self_cpu_time_total
        if self_us and self_us > 0:
            # "## Call CompiledFxGraph <hash> ##": the graph's cache key, not a name to match builds by
            rows.append({"name": _LONG_HASH.sub("HASH", str(event.key))[:NAME_CHARS], "count": int(event.count), "self_ms": round(self_us / 1000, 6)})
    rows.sort(key=lambda row: row["self_ms"], reverse=True)
    return rows[:TOP_OPS]


def profile_call(call: Callable[[], Any], device: str, synchronize: Callable[[], None]) -> list[dict]:
    """The top operators/kernels of one profiled ``call()`` (it has been called before: warm)."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with profile(activities=activities) as profiled:
        call()
        synchronize()
    return _rows(profiled, device)


def kernel_profile(*, eager_call: Callable[[], Any], compiled_call: Callable[[], Any], device: str,
                   synchronize: Callable[[], None], kernels: list[dict], fingerprint_s: float) -> dict:
    """A result's ``kernel_profile``: each side's top rows, the generated kernels (the first
    ``SOURCE_KERNELS`` by profiled time, then in written order, with their normalised source);
    ``fingerprint_s``: the time ``generated_kernels`` took."""
    started = time.perf_counter()
    compiled_rows = profile_call(compiled_call, device, synchronize)
    eager_rows = profile_call(eager_call, device, synchronize)
    profiled_s = time.perf_counter() - started
    by_name = {row["name"]: row for row in compiled_rows}
    for row in compiled_rows:
        row["kind"] = "generated" if any(k["name"] == row["name"] for k in kernels) else "op"
    ordered = sorted(kernels, key=lambda k: -(by_name.get(k["name"], {}).get("self_ms") or 0.0))
    kept = []
    for index, kernel in enumerate(ordered):
        entry = {key: kernel[key] for key in ("name", "kind", "fingerprint")}
        if index < SOURCE_KERNELS:
            entry["source"] = kernel["source"][:SOURCE_CHARS]
        if kernel["name"] in by_name:
            entry["self_ms"], entry["count"] = by_name[kernel["name"]]["self_ms"], by_name[kernel["name"]]["count"]
        kept.append(entry)
    return {"device": device, "compiled": compiled_rows, "eager": eager_rows, "kernels": kept,
            "profiled_s": round(profiled_s, 4), "fingerprint_s": round(fingerprint_s, 4)}
