"""Alerts: subscriptions, a detected run's deliveries planned and sent (email, Slack), retries, and
the subscription pages (``/alerts/``).

Above ``regressions`` (reads the findings of a run) and ``results``; imports neither the pipeline,
which sends its plan after detection, nor web or the API (``.importlinter``, ``dashboard-layers``).
"""
