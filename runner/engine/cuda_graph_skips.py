"""Why CUDA graphs were not used in a case that asked for them (reduce-overhead, max-autotune,
freezing on a GPU; docs/pages.md, "/dynamic/").

Inductor decides per compiled graph whether CUDA graphs can wrap it and, where not, logs one line
``skipping cudagraphs due to <reason>`` on its ``cudagraphs`` artifact logger and counts it in
``counters["inductor"]["cudagraph_skips"]`` (``torch._inductor.cudagraph_utils``). Without this
record a skipped graph shows only as a reduce-overhead speedup equal to default's (the LLM decodes
with unbacked tokens on the H200: bench/results/llm-h200-2026-11-28/README.md).
"""
from __future__ import annotations

import contextlib
import logging
from typing import Iterator

LOGGER = "torch._inductor.cudagraph_utils.__cudagraphs"
PREFIX = "skipping cudagraphs due to "
REASON_LIMIT = 2000  # characters of one reason kept (a reason can carry a whole stack trace)
REASONS_KEPT = 8


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.reasons: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith(PREFIX) and len(self.reasons) < REASONS_KEPT:
            self.reasons.append(message[len(PREFIX):].strip()[:REASON_LIMIT])


def _skip_count() -> int:
    try:
        from torch._dynamo.utils import counters
    except ImportError:  # a torch without dynamo's counters: nothing to read
        return 0
    return int(counters["inductor"].get("cudagraph_skips", 0))


@contextlib.contextmanager
def watching(environment: dict, *, wanted: bool) -> Iterator[None]:
    """While the block runs (the compile, the first calls and timing), collect inductor's skips;
    then, if CUDA graphs were ``wanted``, store ``environment["cuda_graphs"]``:
    ``{"skipped_graphs": N, "reasons": [...]}`` (N 0: every compiled graph ran under CUDA graphs)."""
    if not wanted:
        yield
        return
    handler = _Collect()
    logger = logging.getLogger(LOGGER)
    logger.addHandler(handler)
    before = _skip_count()
    try:
        yield
    finally:
        logger.removeHandler(handler)
        environment["cuda_graphs"] = {"skipped_graphs": max(_skip_count() - before, len(handler.reasons)),
                                      "reasons": handler.reasons}
