"""Django's debug page and error reports without credentials: on top of the settings Django hides by
name (``*PASS*``, ``*KEY*``, ``*TOKEN*``...), the password of every URL in a setting or in the
request's environment (``CELERY_BROKER_URL=redis://:secret@host``) is masked."""
from __future__ import annotations

import re

from django.views.debug import SafeExceptionReporterFilter

_URL_PASSWORD = re.compile(r"(\w[\w+.-]*://[^:/?#@\s]*:)[^@\s]*@")


def mask_url_passwords(text: str) -> str:
    return _URL_PASSWORD.sub(lambda m: f"{m.group(1)}{SafeExceptionReporterFilter.cleansed_substitute}@", text)


class UrlPasswordFilter(SafeExceptionReporterFilter):
    def cleanse_setting(self, key, value):
        value = super().cleanse_setting(key, value)
        return mask_url_passwords(value) if isinstance(value, str) else value
