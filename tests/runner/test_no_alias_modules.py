"""#34: five ``sys.modules`` alias shims kept the names of modules that moved to ``contract``
(issue #18); their importers now use ``contract``, and the old names are gone: one module, one name."""
from __future__ import annotations

import importlib.util

import pytest


@pytest.mark.parametrize("old, new", [
    ("runner.document", "contract.document"), ("runner.queues", "contract.queues"),
    ("runner.worker.messages", "contract.messages"), ("runner.engine.plan", "contract.planning"),
    ("runner.engine.spec", "contract.spec"), ("dashboard.detection", "detection"),
])
def test_a_moved_module_has_one_name(old, new):
    assert importlib.util.find_spec(old) is None
    assert importlib.util.find_spec(new) is not None
