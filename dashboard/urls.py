from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("dashboard.api.urls")),
    path("", include("dashboard.web.regressions_urls")),
    path("", include("dashboard.alerts.urls")),
    path("", include("dashboard.web.urls")),
]

# Errors as pages of the site (dashboard.web.views.errors); /api/ answers JSON itself.
handler400 = "dashboard.web.views.errors.bad_request"
handler403 = "dashboard.web.views.errors.permission_denied"
handler404 = "dashboard.web.views.errors.not_found"
handler500 = "dashboard.web.views.errors.server_error"
