from django.urls import path

from dashboard.regressions import views

app_name = "regressions"
urlpatterns = [
    path("regressions/", views.regression_page, name="list"),
]
