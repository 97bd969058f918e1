"""What went wrong in a case, as a status and an error excerpt for the run document."""
from __future__ import annotations

import contextlib
import traceback
from typing import Iterator

from runner.engine import data_dependent

MESSAGE_LIMIT = 4000
TRACEBACK_LIMIT = 8000
# Allocator failures that reach Python as plain RuntimeErrors (the CPU allocator, cuBLAS, cuDNN).
_OOM_MESSAGES = ("out of memory", "can't allocate memory", "cublas_status_alloc_failed", "cudnn_status_alloc_failed")


class CaseFailure(Exception):
    """Raised inside the case subprocess: ``status`` says which part failed, ``__cause__`` why."""

    def __init__(self, status: str, cause: BaseException, context: str = ""):
        self.status = status
        self.cause = cause
        self.context = context
        super().__init__(f"{status}: {context}{type(cause).__name__}: {cause}")


@contextlib.contextmanager
def failing_as(status: str, context: str = "") -> Iterator[None]:
    """Any exception in the block fails the case with ``status`` (or ``oom``)."""
    try:
        yield
    except CaseFailure:
        raise
    except Exception as exc:
        raise CaseFailure(status, exc, context) from exc


def exception_chain(exc: BaseException) -> Iterator[BaseException]:
    """The exception, what it wraps (``inner_exception`` of BackendCompilerFailed), its causes."""
    seen: set[int] = set()
    pending = [exc]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        pending.extend([getattr(current, "inner_exception", None), current.__cause__, current.__context__])


def is_out_of_memory(exc: BaseException) -> bool:
    # Imported here: the parent side (executor, the runner worker) uses this module without torch.
    from runner.engine import compat

    oom_types = compat.out_of_memory_errors()
    for link in exception_chain(exc):
        if isinstance(link, oom_types):
            return True
        if any(marker in str(link).lower() for marker in _OOM_MESSAGES):
            return True
    return False


def status_for(phase_status: str, exc: BaseException) -> str:
    """``oom`` whatever the phase when memory ran out; ``data_dependent_error`` for a compile that
    guarded on a data-dependent expression (``data_dependent``); else the phase's own status."""
    if is_out_of_memory(exc):
        return "oom"
    if phase_status == "compile_error" and data_dependent.is_data_dependent(exception_chain(exc)):
        return data_dependent.STATUS
    return phase_status


def classify(failure: CaseFailure) -> tuple[str, dict, dict | None]:
    """(status, error excerpt, data-dependent detail or None) of a failed case. A data-dependent
    error's message starts with the expression and the source line that asked for it."""
    status = status_for(failure.status, failure.cause)
    if status != data_dependent.STATUS:
        return status, error_excerpt(failure.cause, failure.context), None
    texts = "\n".join(str(link) for link in exception_chain(failure.cause))
    detail = data_dependent.describe(texts)
    context = f"{failure.context}{data_dependent.headline(detail)}: "
    return status, error_excerpt(failure.cause, context), detail


def _clip_tail(text: str, limit: int) -> str:
    return text if len(text) <= limit else "..." + text[-(limit - 3):]


def error_excerpt(exc: BaseException, context: str = "") -> dict:
    """``{type, message, traceback}``: the exception's qualified type, message, and traceback tail."""
    kind = type(exc)
    qualified = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    message = f"{context}{exc}" if context else str(exc)
    formatted = "".join(traceback.format_exception(kind, exc, exc.__traceback__))
    return {
        "type": qualified[:200],
        "message": message[:MESSAGE_LIMIT] or kind.__name__,
        "traceback": _clip_tail(formatted, TRACEBACK_LIMIT),
    }


def process_excerpt(kind: str, message: str, log_tail: str) -> dict:
    """For a child that died or hung: what the parent saw, and the tail of the child's output."""
    return {"type": kind[:200], "message": message[:MESSAGE_LIMIT], "traceback": _clip_tail(log_tail, TRACEBACK_LIMIT)}
