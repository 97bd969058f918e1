"""The pipeline: a run is stored -> detected -> alerted, in one place.

It owns the order of the steps and the sends between them (after commit, through
``dashboard.durable``); each step is its app's own service: ``results`` stores (and knows nothing of
detection), ``regressions`` detects, ``alerts`` plans and sends. The API, ``manage.py ingest``, the
Celery ingest task and dispatch (through the ``run_finished`` signal) all enter here. It may import
every app below it (results, dispatch, regressions, alerts); none of them imports it.
"""
