"""The pages' template library (``{% load ptbench %}``): the filters and tags of ``dashboard.web.filters``,
registered in one library there."""
from dashboard.web.filters import compare_rows, rows  # noqa: F401 (their filters and tags register in the library)
from dashboard.web.filters.format import register  # noqa: F401 (what Django loads)
