"""Moved to ``contract.planning`` (issue #18): this name stays for callers that still use it.

The module object is the same one, so patching either name patches both.
"""
import sys

import contract.planning

sys.modules[__name__] = contract.planning
