"""Nightly intake (issue #41, docs/builds.md): a worker takes in a PyTorch build from its own package
index (``config``), resolves the version (``index``), fills an environment for it, atomically
(``environments``), and keeps the newest few. Nothing here comes from a message but a version string
checked against the worker's own index and the shas of builds to keep."""
