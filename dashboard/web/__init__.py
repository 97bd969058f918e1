"""Server-rendered pages (Django templates + Plotly from our own static files)."""
