"""Signals the bisection services send to the automatic follow-ups above them (``bisect_auto``,
which the pipeline connects in its ``ready``): a search that ends hands on, and does not import who
takes over (``dispatch.signals`` is the same idiom one layer down)."""
from django.dispatch import Signal

# A commit range listed by this process (no broker: ``commits.commit_range_request``) and stored,
# sent with ``commit_range=``; with a broker, the pipeline's ``commit_range_listed`` task does the same.
commit_range_stored = Signal()
# A bisection over builds named two builds of different commits (its culprit pair), sent with
# ``bisection_id=`` after the commit: the commits between them are listed and bisected next.
culprit_pair_found = Signal()
