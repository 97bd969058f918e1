"""gunicorn's settings for the compose deployment's `web` service (docker-compose.yml runs
``gunicorn -c deploy/gunicorn.conf.py dashboard.wsgi``); tests/dispatch/test_slow_clients.py starts the
same file (its --bind on loopback). Sync workers behind nginx (deploy/nginx.conf): nginx takes each
request whole and reads each answer away before a worker sees or frees it, so a slow client never
holds a worker (four slow connections silenced three workers for 25 s, issue #46 item 8)."""

bind = "0.0.0.0:8000"  # reached from nginx only: compose publishes nginx's port, not this one
workers = 3
# A request may take this long: the largest run document the API takes (10,000 results,
# INGEST_MAX_DOCUMENT_BYTES) is stored well inside it (bench/detect_large_document.py), so a submit is
# never killed half-way into an HTML 500 that a client resends forever (gunicorn's default: 30 s).
# nginx's proxy_read_timeout waits longer than this.
timeout = 120
accesslog = "-"
