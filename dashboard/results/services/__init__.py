"""Writes of the results app: a run document validated and stored (``ingest``, its checks in
``validation``), builds and their variants (``builds``). Every write is importable from here."""
from dashboard.results.services.validation import (  # noqa: F401 (the package's face)
    range_errors, storable_errors, workload_name_errors,
)
from dashboard.results.services.builds import (  # noqa: F401 (the package's face)
    build_date_from_first_run, build_get_or_create, variant_get_or_create,
)
from dashboard.results.services.ingest import (  # noqa: F401 (the package's face)
    IngestOutcome, METRIC_FIELDS, config_get_or_create, cpu_weights_only, run_build_facts, run_ingest,
    series_signature,
)
