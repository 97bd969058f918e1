"""What the runner and the dashboard agree on, with no Django and no torch (issue #18's contract).

Both sides import it; it imports neither.
"""
