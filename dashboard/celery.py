"""The Celery application. Configuration comes from Django settings (``CELERY_*``)."""
import os

from celery import Celery
from kombu import Queue

from contract.queues import DASHBOARD_QUEUES
from dashboard.broker_recovery import released_connection_is_a_connection_error

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings")

released_connection_is_a_connection_error()  # the worker survives Redis going away (docs/deploying.md)
app = Celery("dashboard")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.task_queues = [Queue(name) for name in DASHBOARD_QUEUES]
app.autodiscover_tasks()
