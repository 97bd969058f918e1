"""Template tags of the pages (``{% load ptbench %}``)."""
