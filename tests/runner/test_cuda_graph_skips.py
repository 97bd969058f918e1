"""A case that asks for CUDA graphs says how many compiled graphs ran without them, and why
(runner.engine.cuda_graph_skips): inductor's own skip line and counter, read on the CPU."""
from __future__ import annotations

from runner.engine import cuda_graph_skips


def test_inductors_skip_lines_are_kept_with_their_count():
    from torch._inductor.cudagraph_utils import log_cudagraph_skip_and_bump_counter

    environment: dict = {}
    with cuda_graph_skips.watching(environment, wanted=True):
        log_cudagraph_skip_and_bump_counter("skipping cudagraphs due to mutated inputs (1 instances)")
        log_cudagraph_skip_and_bump_counter("skipping cudagraphs due to incompatible op aten._local_scalar_dense.default")
    assert environment["cuda_graphs"] == {"skipped_graphs": 2,
                                          "reasons": ["mutated inputs (1 instances)",
                                                      "incompatible op aten._local_scalar_dense.default"]}
    quiet: dict = {}
    with cuda_graph_skips.watching(quiet, wanted=True):
        pass
    assert quiet["cuda_graphs"] == {"skipped_graphs": 0, "reasons": []}  # every graph under CUDA graphs
    unwanted: dict = {}
    with cuda_graph_skips.watching(unwanted, wanted=False):  # default mode: nothing to say
        log_cudagraph_skip_and_bump_counter("skipping cudagraphs due to cpu device")
    assert unwanted == {}
