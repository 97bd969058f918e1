"""The REST API for CI (issue #7), under ``/api/v1/``: builds, runs, results, series, compare,
regressions and the verdict, with an OpenAPI 3 schema (``/api/v1/schema/``) and docs page
(``/api/v1/docs/``). Reads are open unless ``API_READS_REQUIRE_TOKEN``; writes need an API token.

The top layer with web: may import every app below (a posted run enters through the pipeline);
none of them imports it, nor does web (``.importlinter``, ``dashboard-layers``).
"""
