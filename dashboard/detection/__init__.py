"""Moved to the top-level package ``detection`` (issue #18: pure, importable without Django or Celery).

``dashboard.detection`` and its submodules stay as names for callers that still use them; they are
the same module objects.
"""
import sys

import detection
from detection import api, cli, confirm, deterministic, noise, online, replicates, types

for _module in (api, cli, confirm, deterministic, noise, online, replicates, types):
    sys.modules[f"{__name__}.{_module.__name__.rpartition('.')[2]}"] = _module
sys.modules[__name__] = detection
