"""WSGI entry point (gunicorn dashboard.wsgi)."""
import os

from django.core.wsgi import get_wsgi_application

from dashboard.server_gc import freeze_loaded

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings")
application = get_wsgi_application()
freeze_loaded()
