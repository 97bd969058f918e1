"""Serve ``vendor/plotly.min.js`` from the installed plotly package (no CDN is reachable)."""
from pathlib import Path

import plotly
from django.contrib.staticfiles.finders import BaseFinder
from django.core.files.storage import FileSystemStorage

PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
STATIC_PATH = "vendor/plotly.min.js"


class PlotlyFinder(BaseFinder):
    def check(self, **kwargs):
        from django.core.checks import Error  # noqa: PLC0415 (only when checks run)

        if not PLOTLY_JS.is_file():
            return [Error(f"plotly.min.js not found at {PLOTLY_JS}", id="web.E001")]
        return []

    def find(self, path, find_all=False, **kwargs):
        if path == STATIC_PATH:
            return [str(PLOTLY_JS)] if find_all else str(PLOTLY_JS)
        return [] if find_all else None

    def list(self, ignore_patterns):
        storage = FileSystemStorage(location=str(PLOTLY_JS.parent))
        storage.prefix = "vendor"
        yield PLOTLY_JS.name, storage
