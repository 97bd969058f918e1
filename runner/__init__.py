"""ptbench runner: measures torch.compile cases in fresh subprocesses and reports a run document.

Nothing here imports Django except ``runner.store.store_document`` (GPU workers have no Django).
"""
