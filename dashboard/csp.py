"""Content-Security-Policy on every HTML answer (issue #46 item 11: pages sent none).

Scripts come only from the site itself: the pages have no inline script (their code is in static
files, web/site.js, charts.js, speedup_chart.js; data reaches them in ``<script type="application/json">``
blocks, which are never run), and the API's Swagger page is the split view, whose script is a file
too. So ``script-src 'self'`` with no ``'unsafe-inline'`` and no nonce: an injected ``<script>`` or
``onerror=`` does not run. Styles allow inline: Plotly writes ``<style>`` elements and style
attributes as it draws, and a few templates set a width; CSS cannot run
code. The policy is the setting ``PTBENCH_CSP`` (empty: none sent)."""
from __future__ import annotations

from django.conf import settings


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        policy = settings.PTBENCH_CSP
        debug_page = settings.DEBUG and response.status_code >= 500  # Django's technical page runs inline script
        if (policy and not debug_page and response.get("Content-Type", "").startswith("text/html")
                and "Content-Security-Policy" not in response):
            response["Content-Security-Policy"] = policy
        return response
