"""URLs of the regressions page (namespace ``regressions``; the views are web's, the data the regressions app's)."""
from django.urls import path

from dashboard.web.views import regressions as views

app_name = "regressions"
urlpatterns = [
    path("regressions/", views.regression_page, name="list"),
    path("regressions/<int:regression_id>/", views.regression_detail_page, name="detail"),
    path("regressions/<int:regression_id>/bisect/", views.regression_bisect, name="bisect"),
    path("regressions/<int:regression_id>/bisect/cancel/", views.regression_bisect_cancel, name="bisect-cancel"),
]
