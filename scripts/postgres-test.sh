#!/usr/bin/env bash
# A throwaway PostgreSQL for the tests and the store benchmark: Debian's server binaries, a cluster in a
# temporary directory, reachable only through a unix socket in that directory (no port to collide with
# other checkouts or a system PostgreSQL), trust authentication, fsync on (commits are as durable as in
# production, so timings mean something).
#
#   scripts/postgres-test.sh start   start it (or find it already running); prints its URL
#   scripts/postgres-test.sh url     prints the URL of the running one; fails when none runs
#   scripts/postgres-test.sh stop    stops it and deletes its directory
#   scripts/postgres-test.sh run <command...>
#                                    starts it, runs the command with STORYCIRCLE_TEST_POSTGRES_URL set
#                                    (and `{url}` in its arguments replaced by the URL), stops it, and
#                                    exits with the command's status. With STORYCIRCLE_TEST_POSTGRES=skip
#                                    it only runs the command (the tests then leave PostgreSQL out).
#
# One cluster per checkout: the directory is named after this checkout's path, so worktrees side by side
# each get their own. STORYCIRCLE_PG_DIR overrides the directory. PostgreSQL refuses to run as root, so as
# root the server runs as the `postgres` user (runuser); otherwise as the calling user.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${STORYCIRCLE_PG_DIR:-${TMPDIR:-/tmp}/storycircle-pg-$(printf '%s' "$root" | sha1sum | cut -c1-12)}
data=$dir/data
lock=${dir}.lock

bindir() {
  local candidate
  if command -v pg_config >/dev/null 2>&1; then
    candidate=$(pg_config --bindir)
    if [ -x "$candidate/initdb" ]; then echo "$candidate"; return; fi
  fi
  candidate=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -n "$candidate" ] && [ -x "$candidate/initdb" ]; then echo "$candidate"; return; fi
  echo "postgres-test: no PostgreSQL server binaries (initdb) found; install the postgresql package (scripts/install-deps.sh --test)" >&2
  exit 1
}

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

url() {
  echo "postgresql:///postgres?host=$dir&user=postgres"
}

running() {
  [ -f "$data/postmaster.pid" ] && as_owner "$(bindir)/pg_ctl" -D "$data" status >/dev/null 2>&1
}

start() {
  local bin
  bin=$(bindir)
  if running; then url; return; fi
  rm -rf "$dir"
  mkdir -p "$dir"
  chmod 700 "$dir"
  if [ "$(id -u)" -eq 0 ]; then chown postgres: "$dir"; fi
  if ! as_owner "$bin/initdb" -D "$data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync >"$dir/initdb.log" 2>&1; then
    echo "postgres-test: initdb failed:" >&2
    cat "$dir/initdb.log" >&2
    exit 1
  fi
  if ! as_owner "$bin/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses='' -c unix_socket_directories='$dir' -c max_connections=300 -c fsync=on -c log_lock_waits=on" \
      start >"$dir/pg_ctl.log" 2>&1 9>&-; then
    echo "postgres-test: the server did not start:" >&2
    cat "$dir/pg_ctl.log" "$dir/server.log" >&2 2>/dev/null || true
    exit 1
  fi
  url
}

stop() {
  if [ -d "$data" ]; then
    as_owner "$(bindir)/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
}

case "${1:-}" in
  start|stop)
    # Two test runs starting at once share one cluster instead of racing to create it.
    exec 9>"$lock"
    flock 9
    "$1"
    ;;
  run)
    shift
    if [ "${STORYCIRCLE_TEST_POSTGRES:-}" = skip ]; then exec "$@"; fi
    started=$("$0" start)
    trap '"$0" stop' EXIT
    arguments=()
    # The replacement is quoted: bash 5.2 would otherwise read the URL's `&` as "the matched text".
    for argument in "$@"; do arguments+=("${argument//\{url\}/"$started"}"); done
    status=0
    STORYCIRCLE_TEST_POSTGRES_URL=$started "${arguments[@]}" || status=$?
    exit $status
    ;;
  url)
    if running; then url; else echo "postgres-test: no test PostgreSQL is running (scripts/postgres-test.sh start)" >&2; exit 1; fi
    ;;
  *)
    echo "usage: $0 start|url|stop|run <command...>" >&2
    exit 2
    ;;
esac
