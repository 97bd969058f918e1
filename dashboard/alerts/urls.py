from django.urls import path

from dashboard.alerts import views

app_name = "alerts"
urlpatterns = [
    path("alerts/", views.alerts_page, name="page"),
    path("alerts/test/", views.subscription_test, name="test"),
]
