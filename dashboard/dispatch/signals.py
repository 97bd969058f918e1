"""Signals dispatch sends to the layers above it (which connect to them; dispatch imports none)."""
from django.dispatch import Signal

# A dispatched run closed (completed or failed), sent with ``run=`` inside the closing transaction;
# the pipeline starts detection over it after the commit.
run_finished = Signal()
