"""Reads for the pages (docs/architecture.md, conventions: ``<entity>_<action>``, keyword-only arguments).

One module per page: ``overview``, ``workloads``, ``compare``, ``dynamic``, ``runs``; ``builds``
and ``common`` are shared.
"""
from dashboard.results.aggregates import geomean
from dashboard.results.selectors.runs import RunSummary, run_list_recent, run_progress, run_results, run_speedup_chart

__all__ = ["RunSummary", "geomean", "run_list_recent", "run_progress", "run_results", "run_speedup_chart"]
