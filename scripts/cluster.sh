#!/usr/bin/env bash
# The topology of docker-compose.yml as local processes, for trying it out and for the tests: PostgreSQL
# (Debian's, in a temporary folder, through scripts/postgres-test.sh), three `storycircle serve` nodes on
# their own ports, each with its own data folder (audio cache, lock), configured only by STORYCIRCLE_*
# environment variables exactly as the containers are, and nginx with config/nginx-cluster.conf.
#
#   scripts/cluster.sh up       starts everything (or finds it running); prints the proxy URL and the admin token
#   scripts/cluster.sh status   what runs, with the nodes' pids and health
#   scripts/cluster.sh start-node N
#                               starts node N (1–3) again after it died or was killed, as a container
#                               restarts: same name, same port, same data folder; waits until it listens
#   scripts/cluster.sh down     stops everything and deletes the folder
#
# Settings (environment):
#   STORYCIRCLE_CLUSTER_DIR    the folder for everything (default: /tmp/storycircle-cluster-<checkout hash>)
#   STORYCIRCLE_CLUSTER_PORT   where nginx listens (default 8080)
#   STORYCIRCLE_CLUSTER_NODE_PORTS  the nodes' ports, space-separated (default "8081 8082 8083")
#   STORYCIRCLE_BIN            the server binary (default .build/debug/storycircle)
#   STORYCIRCLE_LEASE_SECONDS  inherited by the nodes (how long a dead node's rooms wait; default 10)
# The folder holds node<N>.pid and node<N>.log for each node, nginx.log, admin-token and url.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${STORYCIRCLE_CLUSTER_DIR:-${TMPDIR:-/tmp}/storycircle-cluster-$(printf '%s' "$root" | sha1sum | cut -c1-12)}
proxy_port=${STORYCIRCLE_CLUSTER_PORT:-8080}
read -r -a node_ports <<<"${STORYCIRCLE_CLUSTER_NODE_PORTS:-8081 8082 8083}"
bin=${STORYCIRCLE_BIN:-$root/.build/debug/storycircle}
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
export STORYCIRCLE_PG_DIR=$dir/pg

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

wait_for_port() {
  local port=$1 pidfile=$2 log=$3 deadline=$((SECONDS + 60))
  until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
    if ! alive "$pidfile"; then
      echo "cluster: a process did not start; its log ($log):" >&2
      tail -n 20 "$log" >&2 || true
      exit 1
    fi
    if [ $SECONDS -ge $deadline ]; then echo "cluster: nothing listens on port $port after 60 s" >&2; exit 1; fi
    sleep 0.1
  done
}

# Starts node $1 unless it runs; does not wait for it.
launch_node() {
  local n=$1 database=$2 token=$3 url=$4 port=${node_ports[$(($1 - 1))]}
  if alive "$dir/node$n.pid"; then return; fi
  mkdir -p "$dir/node$n"
  # Exactly the variables docker-compose.yml gives each node's container. A restarted node appends to its
  # log, so what it said before it died stays readable.
  env STORYCIRCLE_NODE_ID="node$n" \
      STORYCIRCLE_PORT="$port" \
      STORYCIRCLE_BIND=127.0.0.1 \
      STORYCIRCLE_DATA_DIR="$dir/node$n" \
      STORYCIRCLE_DATABASE="$database" \
      STORYCIRCLE_ADMIN_TOKEN="$token" \
      STORYCIRCLE_PUBLIC_URL="$url" \
      STORYCIRCLE_TRUST_FORWARDED_FOR=true \
      STORYCIRCLE_WEB_ROOT="$root/web-static" \
      "$bin" serve >>"$dir/node$n.log" 2>&1 &
  echo $! >"$dir/node$n.pid"
}

start_node() {
  local n=${1:-}
  case "$n" in 1|2|3) ;; *) echo "usage: $0 start-node 1|2|3" >&2; exit 2 ;; esac
  [ -s "$dir/admin-token" ] && [ -s "$dir/url" ] || { echo "cluster: not up (scripts/cluster.sh up first)" >&2; exit 1; }
  local database
  database=$("$root/scripts/postgres-test.sh" url)
  launch_node "$n" "$database" "$(cat "$dir/admin-token")" "$(cat "$dir/url")"
  wait_for_port "${node_ports[$((n - 1))]}" "$dir/node$n.pid" "$dir/node$n.log"
  echo "node$n:       running (pid $(cat "$dir/node$n.pid"))"
}

up() {
  [ ${#node_ports[@]} -eq 3 ] || { echo "cluster: STORYCIRCLE_CLUSTER_NODE_PORTS needs three ports" >&2; exit 2; }
  [ -x "$bin" ] || { echo "cluster: no server binary at $bin (make build)" >&2; exit 1; }
  [ -x "$nginx_bin" ] || { echo "cluster: nginx is not installed (scripts/install-deps.sh --test)" >&2; exit 1; }
  mkdir -p "$dir"
  # PostgreSQL runs as the `postgres` user and must reach its own folder inside this one.
  chmod 755 "$dir"
  local database
  database=$("$root/scripts/postgres-test.sh" start)
  if [ ! -s "$dir/admin-token" ]; then
    (umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$dir/admin-token")
  fi
  local token url
  token=$(cat "$dir/admin-token")
  url="http://127.0.0.1:$proxy_port"
  local n=0
  for port in "${node_ports[@]}"; do
    n=$((n + 1))
    launch_node "$n" "$database" "$token" "$url"
  done
  n=0
  for port in "${node_ports[@]}"; do
    n=$((n + 1))
    wait_for_port "$port" "$dir/node$n.pid" "$dir/node$n.log"
  done
  if ! alive "$dir/nginx.pid"; then
    mkdir -p "$dir/nginx"
    # What the nginx image's entrypoint does with the template (envsubst, limited to its placeholders).
    LISTEN_PORT="127.0.0.1:$proxy_port" NGINX_TEMP="$dir/nginx" \
      STORYCIRCLE_NODE_1="127.0.0.1:${node_ports[0]}" STORYCIRCLE_NODE_2="127.0.0.1:${node_ports[1]}" STORYCIRCLE_NODE_3="127.0.0.1:${node_ports[2]}" \
      envsubst '${LISTEN_PORT} ${NGINX_TEMP} ${STORYCIRCLE_NODE_1} ${STORYCIRCLE_NODE_2} ${STORYCIRCLE_NODE_3}' \
      <"$root/config/nginx-cluster.conf" >"$dir/nginx.conf"
    "$nginx_bin" -c "$dir/nginx.conf" -p "$dir/nginx" -g 'daemon off;' >"$dir/nginx.log" 2>&1 &
    echo $! >"$dir/nginx.pid"
    wait_for_port "$proxy_port" "$dir/nginx.pid" "$dir/nginx.log"
  fi
  echo "$url" >"$dir/url"
  echo "proxy:       $url"
  echo "admin token: $token"
  echo "folder:      $dir"
}

status() {
  local code=0
  if [ -s "$dir/url" ]; then echo "proxy:       $(cat "$dir/url")"; fi
  if alive "$dir/nginx.pid"; then echo "nginx:       running (pid $(cat "$dir/nginx.pid"))"; else echo "nginx:       stopped"; code=1; fi
  local n=0
  for port in "${node_ports[@]}"; do
    n=$((n + 1))
    if alive "$dir/node$n.pid"; then
      local health
      health=$(curl -s --max-time 2 "http://127.0.0.1:$port/healthz" || echo unreachable)
      echo "node$n:       running (pid $(cat "$dir/node$n.pid"), port $port) $health"
    else
      echo "node$n:       stopped"; code=1
    fi
  done
  if STORYCIRCLE_PG_DIR=$dir/pg "$root/scripts/postgres-test.sh" url >/dev/null 2>&1; then
    echo "postgresql:  running ($("$root/scripts/postgres-test.sh" url))"
  else
    echo "postgresql:  stopped"; code=1
  fi
  return $code
}

stop_process() {
  local pidfile=$1
  if alive "$pidfile"; then
    local pid deadline=$((SECONDS + 10))
    pid=$(cat "$pidfile")
    kill -TERM "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do
      if [ $SECONDS -ge $deadline ]; then kill -KILL "$pid" 2>/dev/null || true; break; fi
      sleep 0.1
    done
  fi
  rm -f "$pidfile"
}

down() {
  stop_process "$dir/nginx.pid"
  for n in 1 2 3; do stop_process "$dir/node$n.pid"; done
  "$root/scripts/postgres-test.sh" stop
  rm -rf "$dir"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  start-node) start_node "${2:-}" ;;
  *) echo "usage: $0 up|down|status|start-node N" >&2; exit 2 ;;
esac
