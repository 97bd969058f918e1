"""The web process's garbage collector, once the application is loaded (``dashboard/wsgi.py``).

A cold page allocates hundreds of thousands of objects (a /compare/ at 1,000,000 results: 2,000 cases
x 15 judged metrics), enough to set off a full collection, which walks every object of the process:
the ~250,000 that importing Django and the apps left behind, each time. Measured at 1,000,000 results
on 2 loaded cores (bench/dashboard_load.py, bench/results/dashboard-million-46-2026-11-28b.txt): the
collector took 300-590 ms of a cold /compare/, 80 ms once those are frozen. ``gc.freeze`` moves them
to the permanent generation, which no collection walks; the request's own objects are still
collected as before.
"""
from __future__ import annotations

import gc

from django.urls import get_resolver


def freeze_loaded() -> None:
    """Import every view (the URLconf) and freeze what the process holds now: the modules, the
    URL patterns, the settings. Call once per process after ``get_wsgi_application``."""
    get_resolver().url_patterns  # imports the views, and through them the selectors and services
    gc.collect()  # what is garbage now is freed, not kept forever
    gc.freeze()
