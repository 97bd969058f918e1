"""Thin views: validate the URL parameters, call the selectors, render a template."""
from dashboard.web.views.ab import ab
from dashboard.web.views.artifacts import artifact_download
from dashboard.web.views.compare import compare
from dashboard.web.views.docs import doc, doc_image
from dashboard.web.views.dynamic import dynamic
from dashboard.web.views.explain import explain
from dashboard.web.views.overview import overview
from dashboard.web.views.runs import run_detail
from dashboard.web.views.workloads import workload

__all__ = ["ab", "artifact_download", "compare", "doc", "doc_image", "dynamic", "explain", "overview", "run_detail", "workload"]
