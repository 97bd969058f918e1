#!/usr/bin/env bash
# The servers the tests start for real: Redis, a headless Chromium and nginx (Debian packages; nginx in
# front of gunicorn as compose runs it, tests/dispatch/test_slow_clients.py), plus
# PostgreSQL 15 (initdb/pg_ctl), which this machine already has. Installs what is missing.
set -euo pipefail
missing=()
command -v redis-server >/dev/null || missing+=(redis-server)
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
[ -n "$pg_bin" ] || command -v initdb >/dev/null || missing+=(postgresql)
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing ${missing[*]} (apt-get)"
  sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
