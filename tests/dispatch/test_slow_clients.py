"""Issue #46 item 8: slow clients cannot silence the compose deployment. gunicorn runs with compose's
own settings (deploy/gunicorn.conf.py: 3 sync workers) behind nginx with compose's own server block
(deploy/nginx.conf), both on loopback (bench/slow_clients.py starts them; it also times gunicorn
alone, which answers nothing while they hold on). Eight clients send their headers one byte at a time
and never finish; ordinary requests are answered meanwhile, and a body over the document limit is
refused by nginx with the API's JSON shape before any worker reads it."""
from __future__ import annotations

import http.client
import json

from bench.slow_clients import SlowClients, serve, timed_requests


def test_slow_clients_do_not_hold_the_workers_behind_nginx():
    with serve(behind_nginx=True) as base:
        with SlowClients(base, count=8, path="/api/v1/") as slow:
            # Alone, gunicorn's 3 workers each sit on one slow client's headers: these would wait for
            # as long as the slow clients keep sending (bench/slow_clients.py: 0 of 10 answered).
            times = timed_requests(base + "/api/v1/", count=3, wait=30)
            assert None not in times, times
            assert slow.finished == 0  # answered while every slow client was still sending
        host, port = base.removeprefix("http://").split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=30)
        connection.putrequest("POST", "/api/v1/runs/submit/")
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Content-Length", str(40 * 2**20))  # over client_max_body_size; no body sent
        connection.endheaders()
        response = connection.getresponse()
        assert response.status == 413
        assert json.loads(response.read())["errors"][0]["field"] == "body"
