"""Storage of benchmark results: the data model, the one ingest service, and reads for the pages."""
