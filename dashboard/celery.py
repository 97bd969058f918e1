"""The Celery application. Configuration comes from Django settings (``CELERY_*``)."""
import os

from celery import Celery
from celery.worker import state as worker_state
from kombu import Queue

from contract.broker_transport import use_for_redis
from contract.queues import DASHBOARD_QUEUES

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings")

use_for_redis(worker_state.active_requests)  # the worker survives Redis going away, loses no message to it, runs none twice (contract/broker_transport.py)
app = Celery("dashboard")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.task_queues = [Queue(name) for name in DASHBOARD_QUEUES]
app.autodiscover_tasks()
