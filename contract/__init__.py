"""What the runner and the dashboard agree on, with no Django and no torch (issue #18's contract).

Both sides import it; it imports neither, nor torch, Django, ``detection`` or ``workloads`` (.importlinter):
the run document and its schema (``document``), worker messages and queues (``messages``, ``queues``), the
vocabulary, the workload catalog (``catalog``, ``catalog.json``), case specs and planning (``spec``,
``planning``), build variants and shared CLI argument types.
"""
