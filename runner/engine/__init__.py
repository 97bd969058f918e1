"""The measurement engine.

Parent side (the CLI's process):
- ``plan``: a suite's cases (workload x mode x regime x dtype) and each one's repro command.
- ``executor``: runs a case (and its warm-compile phase) in fresh subprocesses of the build's
  interpreter, with a time limit and its own cache directory; classifies timeouts and crashes.
- ``progress``: the live progress line.

Child side (``python -m runner case``):
- ``case``: the phases of one case, in order; ``result_file``: the record it writes after each.
- ``prepare``: dtype/autocast, input copies, dynamic-dim marks, ``torch.compile`` arguments.
- ``paths``: the compiled side as its compile mode deploys it: ``torch.compile``, ``export_path``
  (torch.export, then compiled), ``aoti`` (AOTInductor package); ``export_shapes`` per regime.
- ``timing``: interleaved block timing; ``stats``: medians and the bootstrap interval.
- ``accuracy``: compiled against eager (and float64); ``memory``: peak device memory.
- ``dynamo_stats``: graph breaks, unique graphs, recompiles; ``failures``: statuses and excerpts;
  ``data_dependent``: a data-dependent error's expression and source line.
- ``compat``: torch APIs that moved between versions; ``environment``: the build and the machine.

``spec`` (what a case is) is shared by both sides.
"""
