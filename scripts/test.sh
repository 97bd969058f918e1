#!/usr/bin/env bash
# The whole test suite against real services that this script starts on loopback and stops after:
# a throwaway PostgreSQL cluster and a Redis server per pytest worker; tests start Celery workers and
# Chromium themselves. pytest runs PTBENCH_TEST_WORKERS processes (pytest-xdist, default 2: a test
# keeps about one core busy, most of it waiting on a subprocess, a server or the browser), each on a
# database (pytest-django) and a Redis of its own (tests/xdist_services.py), whole files to one worker
# (but for the benchmark runs, one by one: tests/xdist_services.py SPREAD).
# Extra arguments go to pytest (e.g. scripts/test.sh -k ingest; -n 0 runs in this one process).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/system_packages.sh
. .venv/bin/activate
# The architecture's arrows (.importlinter) and the lint rules (ruff.toml): a wrong import fails here.
lint-imports --no-cache
ruff check .

work=$(mktemp -d /tmp/ptbench-test.XXXXXX)
chmod 755 "$work"
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || dirname "$(command -v initdb)")
as_pg_user=()
if [ "$(id -u)" = 0 ]; then  # PostgreSQL refuses to run as root: the cluster belongs to 'postgres'
  pg_user=$(id -u postgres >/dev/null 2>&1 && echo postgres || echo nobody)
  as_pg_user=(runuser -u "$pg_user" --)
  chown "$pg_user" "$work"
fi
free_port() { python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
pg_port=$(free_port)
workers=${PTBENCH_TEST_WORKERS:-2}
redis_ports=()
for ((i = 0; i < (workers > 0 ? workers : 1); i++)); do redis_ports+=("$(free_port)"); done

cleanup() {
  "${as_pg_user[@]}" "$pg_bin/pg_ctl" -D "$work/pg" -m immediate stop >/dev/null 2>&1 || true
  for pidfile in "$work"/redis-*/redis.pid; do [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true; done
  # Redis writes its AOF on the way out: removing its directory before it ended failed the run after
  # its tests passed ("rm: cannot remove .../redis-PORT: Directory not empty"). Up to 10 s each.
  for pidfile in "$work"/redis-*/redis.pid; do
    pid=$(cat "$pidfile" 2>/dev/null) || continue
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
  rm -rf "$work"
}
trap cleanup EXIT

echo "== PostgreSQL on 127.0.0.1:$pg_port, Redis on 127.0.0.1:${redis_ports[*]}, $workers pytest workers"
"${as_pg_user[@]}" "$pg_bin/initdb" -D "$work/pg" -U ptbench --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
"${as_pg_user[@]}" "$pg_bin/pg_ctl" -D "$work/pg" -l "$work/pg.log" -w -o \
  "-c listen_addresses=127.0.0.1 -p $pg_port -k $work -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
  start >/dev/null
for port in "${redis_ports[@]}"; do  # each with its own directory: the fault tests kill and restart it from its AOF
  mkdir -p "$work/redis-$port"
  redis-server --bind 127.0.0.1 --port "$port" --save "" --appendonly yes --daemonize yes \
    --pidfile "$work/redis-$port/redis.pid" --dir "$work/redis-$port" --logfile "$work/redis-$port/redis.log"
done

export DATABASE_URL="postgres://ptbench@127.0.0.1:$pg_port/ptbench"
export CELERY_BROKER_URL="redis://127.0.0.1:${redis_ports[0]}/0"
export CELERY_RESULT_BACKEND="redis://127.0.0.1:${redis_ports[0]}/1"
export PTBENCH_TEST_REDIS_PORTS="${redis_ports[*]}"
export PTBENCH_TEST_SERVICES=1
# A model changed without its migration fails here, before any test (the tests' database is built
# from the migrations, so it would otherwise pass them unnoticed). Its history check warns that the
# database "ptbench" does not exist (pytest creates test_ptbench): not a finding.
python -W "ignore:Got an error checking a consistent migration history" manage.py makemigrations --check --dry-run >/dev/null || {
  echo "makemigrations --check: a model change has no migration (python manage.py makemigrations)" >&2; exit 1; }
python -m pytest -p tests.xdist_services -n "$workers" --dist loadfile "$@"
