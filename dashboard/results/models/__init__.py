"""The data model (docs/architecture.md): the catalog (machines, builds, workloads, configurations,
series, runs, results, artifacts) and the summary tables the pages read. Writes go through
``services``; nothing here has logic in save()."""
from dashboard.results.models.catalog import Artifact, Build, Config, Machine, Result, Run, Series, Workload
from dashboard.results.models.summary_tables import BuildSummary, ConfigSummary, DynamicSummary, LatestTables

__all__ = ["Artifact", "Build", "BuildSummary", "Config", "ConfigSummary", "DynamicSummary", "LatestTables", "Machine",
           "Result", "Run", "Series", "Workload"]
