"""Server-rendered pages (Django templates + Plotly from our own static files), the regressions
board included (its views here, its data the regressions app's).

The top layer with the API: may import every app below (pipeline, alerts, regressions, dispatch,
results); none of them imports it, nor does the API (``.importlinter``, ``dashboard-layers``).
"""
