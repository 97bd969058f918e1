"""``aot_inductor``: exported (``export_path.exported``), compiled into a package by
``aoti_compile_and_package`` (``package_s``), loaded by ``aoti_load_package`` (``load_s``); the
loaded model is what is timed. Where these APIs live in the build is ``compat``'s business.

The package is written beside the case's inductor cache (the case's working directory, removed
with it), or in a temporary directory removed when the process exits.

Before the package is loaded, the process's libstdc++ is put in the global symbol scope
(``global_libstdcxx``). A host compiler that links libstdc++ into the package statically (the lent
GPU image's ``CXX=/opt/gcc/bin/g++``: the package's ``.so`` defines 639 locale symbols and does not
need libstdc++.so) gives the package a second C++ runtime beside the one torch loaded, and the
package's first ``std::regex`` faults inside it (SIGSEGV in ``parse_device_str``; docs/compile-paths.md).
With the process's libstdc++ global, the package's references bind to it, as ``LD_PRELOAD`` of that
library did; where the package links libstdc++ as a shared library, it is the same library already.
"""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

from contract.spec import CaseSpec
from runner.engine import compat
from runner.engine.paths import Deployed, Stopwatch
from runner.engine.paths.export_path import exported
from runner.engine.prepare import without_grad


def package_path(phase: str) -> Path:
    cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if cache:
        folder = Path(cache).parent / "aoti"
        folder.mkdir(parents=True, exist_ok=True)
    else:
        folder = Path(tempfile.mkdtemp(prefix="ptbench-aoti-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder / f"{phase}.pt2"


def global_libstdcxx() -> str | None:
    """Make the libstdc++ already loaded (torch's) global, so that a package's own statically linked
    copy binds to it: the path of that library, or None where there is none to promote."""
    import ctypes

    try:
        ctypes.CDLL("libstdc++.so.6", mode=ctypes.RTLD_GLOBAL)
    except OSError:
        return None
    try:
        maps = Path("/proc/self/maps").read_text().splitlines()
    except OSError:
        return "libstdc++.so.6"
    return next((line.split()[-1] for line in maps if "/libstdc++.so" in line), "libstdc++.so.6")


def deploy(spec: CaseSpec, instance, inputs: tuple, dynamic_dims) -> Deployed:
    watch = Stopwatch(spec.device)
    program, facts = exported(spec, instance, inputs, dynamic_dims, watch)
    compile_and_package, load_package = compat.aoti_compile_and_package(), compat.aoti_load_package()
    facts["apis"] = [f"{f.__module__}.{f.__name__}" for f in (compile_and_package, load_package)]
    with watch.phase("package_s"):
        package = compile_and_package(program, package_path=str(package_path(spec.phase)))
    facts["libstdcxx_global"] = global_libstdcxx()
    with watch.phase("load_s"):
        loaded = load_package(package)
    facts["package_bytes"] = Path(package).stat().st_size if isinstance(package, (str, os.PathLike)) else None
    return Deployed(without_grad(loaded), phases=watch.phases, facts=facts, fixed_shapes=spec.shape_regime == "static", dynamo=False)
