"""The worker's PyTorch git mirror and the overlay builds made from it (issue #41, docs/builds.md)."""
