"""A case process ends with ``os._exit`` once its result is written (runner.internal.exit_now): what
logging handlers (a TORCH_TRACE log) and the standard streams still hold is written first."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_CHILD = """
import logging, logging.handlers, sys
held = logging.handlers.MemoryHandler(1000, target=logging.FileHandler(sys.argv[1]), flushLevel=logging.CRITICAL)
logging.getLogger().addHandler(held)
logging.getLogger().warning("trace line held in memory")
print("stdout without a newline", end="")
sys.stderr.write("stderr without a newline")
import atexit
atexit.register(lambda: print("teardown ran"))
from runner.internal import exit_now
exit_now()
"""


def test_exit_now_flushes_logging_and_streams_then_skips_the_teardown(tmp_path):
    log = tmp_path / "trace.log"
    done = subprocess.run([sys.executable, "-c", _CHILD, str(log)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert log.read_text() == "trace line held in memory\n"
    assert done.stdout == "stdout without a newline"  # and no "teardown ran": atexit is skipped
    assert done.stderr == "stderr without a newline"
