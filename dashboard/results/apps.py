from django.apps import AppConfig


class ResultsConfig(AppConfig):
    name = "dashboard.results"
    label = "results"
    verbose_name = "Benchmark results"
