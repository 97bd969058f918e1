from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("dashboard.api.urls")),
    path("", include("dashboard.web.regressions_urls")),
    path("", include("dashboard.alerts.urls")),
    path("", include("dashboard.web.urls")),
]
