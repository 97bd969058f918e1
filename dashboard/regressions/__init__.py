"""Detected regressions: findings stored from ``detection``'s verdicts (``services.detection_run``),
triage, re-measurement of suspects (a requested run through ``dispatch``), the CI verdict, the A/B
noise rules, and the reads the pages and the API show (``selectors``; the page itself is web's).

Above ``dispatch`` and ``results``, below ``alerts``: imports those two apps, ``detection`` and
``contract``; never alerts, the pipeline, web or the API (``.importlinter``, ``dashboard-layers``).
"""
