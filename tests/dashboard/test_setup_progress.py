"""scripts/setup.sh shows pip's progress (#27 item 10: a fresh install printed nothing for two
minutes): scripts/pip-progress.sh turns pip 23's output into a line per package (docs/quickstart.md)."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.dashboard.test_commands import ROOT

# pip 23.2's own words for a fresh install of two packages, one downloaded and one from its cache.
PIP_OUTPUT = """\
Looking in indexes: https://pypi.org/simple, https://download.pytorch.org/whl/cpu
Collecting torch==2.13.0+cpu (from -r requirements/runner.txt (line 3))
  Downloading https://download.pytorch.org/whl/cpu/torch-2.13.0%2Bcpu-cp311-cp311-manylinux_2_28_x86_64.whl (184.6 MB)
     ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 184.6/184.6 MB 9.1 MB/s eta 0:00:00
Collecting asgiref>=3.8.1 (from Django==5.2.19->-r requirements/web.txt (line 3))
  Using cached asgiref-3.9.1-py3-none-any.whl (23 kB)
Requirement already satisfied: filelock in ./.venv/lib/python3.11/site-packages (from torch==2.13.0+cpu)
Installing collected packages: asgiref, torch
Successfully installed asgiref-3.9.1 torch-2.13.0+cpu
"""


def progress(text: str) -> list[str]:
    done = subprocess.run(["scripts/pip-progress.sh"], cwd=ROOT, input=text, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stderr == ""
    return [re.sub(r"^ +\d+s ", "", line) for line in done.stdout.splitlines()]


def test_each_package_download_and_step_is_a_line():
    assert progress(PIP_OUTPUT) == [
        " [1] torch==2.13.0+cpu",
        "       downloading 184.6 MB",
        " [2] asgiref>=3.8.1",
        " installing 2 packages (unpacking the large wheels takes a while)",
        " installed 2 packages",
    ]


def test_setup_pipes_pip_through_it_without_quieting_pip():
    setup = Path(ROOT, "scripts", "setup.sh").read_text()
    install = setup[setup.index("pip install"):].split("\n")[:2]
    assert " -q " not in install[0] and "| scripts/pip-progress.sh" in install[1]
