"""Model families: workloads named ``<prefix>:<model>`` that a provider lists and builds (docs/families.md).

Importing this package imports every module in it; a module that defines a family registers it
with ``workloads.registry.register_family``. Adding a family is adding one module here: nothing
outside it changes. A module whose import fails is not skipped silently: the error propagates.
"""
from __future__ import annotations

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")
