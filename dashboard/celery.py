"""The Celery application. Configuration comes from Django settings (``CELERY_*``)."""
import os

from celery import Celery
from kombu import Queue

from contract.broker_transport import use_for_redis
from contract.queues import DASHBOARD_QUEUES

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings")

use_for_redis()  # the worker survives Redis going away and loses no message to it (contract/broker_transport.py)
app = Celery("dashboard")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.task_queues = [Queue(name) for name in DASHBOARD_QUEUES]
app.autodiscover_tasks()
