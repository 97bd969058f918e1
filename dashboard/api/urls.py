from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from dashboard.api import views
from dashboard.api.views.intake import IntakeView

app_name = "api"
urlpatterns = [
    path("", views.ApiRootView.as_view(), name="root"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api:schema"), name="docs"),  # its script a file: CSP
    path("artifacts/<str:sha256>/", views.ArtifactUploadView.as_view(), name="artifact-upload"),
    path("builds/", views.BuildListView.as_view(), name="builds"),
    path("builds/<str:ref>/", views.BuildDetailView.as_view(), name="build"),
    path("intake/", IntakeView.as_view(), name="intake"),
    path("runs/", views.RunListView.as_view(), name="runs"),
    path("runs/submit/", views.RunSubmitView.as_view(), name="run-submit"),
    path("runs/<uuid:run_id>/", views.RunDetailView.as_view(), name="run"),
    path("runs/<uuid:run_id>/cancel/", views.RunCancelView.as_view(), name="run-cancel"),
    path("results/", views.ResultListView.as_view(), name="results"),
    path("results/<int:result_id>/", views.ResultDetailView.as_view(), name="result"),
    path("series/", views.SeriesListView.as_view(), name="series"),
    path("series/<str:signature>/", views.SeriesPointsView.as_view(), name="series-points"),
    path("regressions/", views.RegressionListView.as_view(), name="regressions"),
    path("regressions/triage/", views.RegressionTriageView.as_view(), name="regressions-triage"),
    path("regressions/<int:regression_id>/", views.RegressionDetailView.as_view(), name="regression"),
    path("regressions/<int:regression_id>/bisect/", views.RegressionBisectView.as_view(), name="regression-bisect"),
    path("compare/", views.CompareView.as_view(), name="compare"),
    path("explain/<int:before_id>/<int:after_id>/", views.ExplainView.as_view(), name="explain"),
    path("verdict/", views.VerdictView.as_view(), name="verdict"),
    re_path(r"^(?P<rest>.*)$", views.not_found),
]
