from dashboard.api.views.artifacts import ArtifactUploadView
from dashboard.api.views.builds import BuildDetailView, BuildListView
from dashboard.api.views.compare import CompareView
from dashboard.api.views.explain import ExplainView
from dashboard.api.views.meta import ApiRootView, not_found
from dashboard.api.views.regressions import (
    RegressionBisectView,
    RegressionDetailView,
    RegressionListView,
    RegressionTriageView,
    VerdictView,
)
from dashboard.api.views.results import ResultDetailView, ResultListView
from dashboard.api.views.runs import RunCancelView, RunDetailView, RunListView, RunSubmitView
from dashboard.api.views.series import SeriesListView, SeriesPointsView

__all__ = [
    "ApiRootView", "ArtifactUploadView", "BuildDetailView", "BuildListView", "CompareView", "ExplainView", "RegressionBisectView",
    "RegressionDetailView", "RegressionListView",
    "RegressionTriageView", "ResultDetailView", "ResultListView", "RunCancelView", "RunDetailView", "RunListView",
    "RunSubmitView", "SeriesListView", "SeriesPointsView", "VerdictView", "not_found",
]
