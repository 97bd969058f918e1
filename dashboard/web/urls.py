from django.urls import path

from dashboard.web import views

app_name = "web"
urlpatterns = [
    path("", views.overview, name="home"),
    path("workloads/<path:name>/", views.workload, name="workload"),
    path("compare/", views.compare, name="compare"),
    path("ab/", views.ab, name="ab"),
    path("dynamic/", views.dynamic, name="dynamic"),
    path("runs/<uuid:run_id>/", views.run_detail, name="run"),
    path("artifacts/<str:sha256>/", views.artifact_download, name="artifact"),
    path("explain/<int:before_id>/<int:after_id>/", views.explain, name="explain"),
    path("docs/", views.doc, name="docs"),
    path("docs/img/<str:name>", views.doc_image, name="doc-image"),
    path("docs/<slug:page>/", views.doc, name="doc"),
]
