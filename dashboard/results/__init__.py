"""Storage of benchmark results: the data model, the one ingest service (``services.run_ingest``,
which stores and knows nothing of detection), the one writer of a run's status (``run_status``),
the summary tables and the page cache they keep fresh (refreshed there and nowhere else), and the
pages' reads (``selectors``).

The bottom layer of the dashboard: imports ``contract`` and Django, no other app of ours. The apps
above it pass in what it shows of theirs (the overview's open regressions, the page cache's newest
findings); ``.importlinter``'s ``dashboard-layers`` contract holds the order.
"""
