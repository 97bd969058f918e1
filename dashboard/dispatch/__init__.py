"""Requested runs on the GPU workers: builds and where they live, case planning, the queues per
machine class, what workers report back (started, finished, failed) and the in-process worker.

Above ``results`` (stores each case's document through ``results.services.run_ingest``, sets a
run's status through ``results.run_status``); below ``regressions``. Imports ``contract``, and the
runner only where it runs a build's interpreter (listed in ``.importlinter``). A finished run is
announced with ``signals.run_finished``; the pipeline detects it, dispatch imports no app above it.
"""
