"""ptbench runner: measures torch.compile cases in fresh subprocesses and reports a run document.

Imports ``contract`` and ``workloads`` only, never Django or the dashboard (GPU workers have neither): a
run without ``--out`` goes to the dashboard through ``manage.py ingest`` in a subprocess or its API
(``runner.delivery``).
"""
