from django.urls import path

from dashboard.web import views

app_name = "web"
urlpatterns = [
    path("", views.home, name="home"),
    path("runs/<uuid:run_id>/", views.run_detail, name="run"),
]
