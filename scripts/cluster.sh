#!/usr/bin/env bash
# The topology of docker-compose.yml as local processes, for trying it out and for the tests: PostgreSQL
# (Debian's, in a temporary folder, through scripts/postgres-test.sh), three `storycircle serve` nodes on
# their own ports, each with its own data folder (audio cache, lock), configured only by STORYCIRCLE_*
# environment variables exactly as the containers are, and nginx with config/nginx-cluster.conf, speaking
# HTTPS and WSS (its plain HTTP port only redirects). The certificates are made at `up` with the openssl
# command: a throwaway CA (tls/ca.crt, trusted by nothing else; tests and browsers are given it) and a
# certificate for localhost and 127.0.0.1 for each service: nginx (tls/nginx/server.crt), the PostgreSQL
# members with their Patroni (tls/member.crt), etcd (tls/etcd.crt) and a client (tls/client.crt: this
# script's and the tests' calls to Patroni's API and etcd).
#
#   scripts/cluster.sh up       starts everything (or finds it running); prints the proxy URL and the admin token
#   scripts/cluster.sh up --ha  the same with the database of docker-compose.yml: no single PostgreSQL but
#                               three etcd members and two PostgreSQL 15 members under Patroni
#                               (config/patroni.yml: synchronous replication, automatic failover, pg_rewind),
#                               the nodes given both members in libpq's multi-host URL with
#                               target_session_attrs=read-write. STORYCIRCLE_CLUSTER_HA=1 means the same.
#                               Waits until there is a primary and a streaming synchronous standby.
#   scripts/cluster.sh status   what runs, with the nodes' pids and health (and, --ha, each member's role)
#   scripts/cluster.sh start-node N
#                               starts node N (1–3) again after it died or was killed, as a container
#                               restarts: same name, same port, same data folder; waits until it listens
#   scripts/cluster.sh down     stops everything and deletes the folder
#   scripts/cluster.sh certificates DIR [NAME…]
#                               writes the TLS folder docker-compose.yml mounts (ca.crt, nginx/, member.*,
#                               etcd.*, client.*) with a new throwaway CA, nginx's certificate for the NAMEs
#                               (what children type: a host name or an address); refuses an existing CA
#
# Only with --ha, for the tests and for trying failures out (members are 1 and 2, named pg1 and pg2):
#   scripts/cluster.sh pg-primary          prints the name of the primary (pg1 or pg2); fails when none
#   scripts/cluster.sh pg-members          prints Patroni's view of the members (its REST API's /cluster, JSON)
#   scripts/cluster.sh pg-kill-postmaster N
#                                          kill -9 of member N's postmaster (PostgreSQL crashes; its Patroni
#                                          lives on, fails over and brings it back as a standby by itself)
#   scripts/cluster.sh pg-kill-member N    kill -9 of member N's Patroni and postmaster (its machine is gone)
#   scripts/cluster.sh pg-start-member N   starts member N's Patroni again (it rejoins, as a standby if the
#                                          other member is primary by then)
#   scripts/cluster.sh pg-url [N]          a superuser URL (TLS, verify-full) to the nodes' database
#                                          `storycircle`: both members (read-write), or member N alone
#   scripts/cluster.sh node-url            the URL the nodes use (role `storycircle`, no superuser)
#   scripts/cluster.sh api-password        the password of Patroni's REST API (user `patroni`)
#   scripts/cluster.sh etcd-kill N         kill -9 of etcd member N (1–3)
#   scripts/cluster.sh etcd-start N        starts etcd member N again (it rejoins with its data)
#
# Settings (environment):
#   STORYCIRCLE_CLUSTER_DIR    the folder for everything (default: /tmp/storycircle-cluster-<checkout hash>)
#   STORYCIRCLE_CLUSTER_PORT   where nginx speaks HTTPS and WSS (default 8443)
#   STORYCIRCLE_CLUSTER_HTTP_PORT  where nginx answers plain HTTP with a redirect to https (default 8080)
#   STORYCIRCLE_CLUSTER_NODE_PORTS  the nodes' ports, space-separated (default "8081 8082 8083")
#   STORYCIRCLE_CLUSTER_HA_PORTS    --ha: ten ports, space-separated: etcd 1–3 client and peer (six, in
#                              that order: client1 peer1 client2 peer2 client3 peer3), PostgreSQL 1–2,
#                              Patroni's REST API 1–2 (default: free ones, picked at `up` and kept in the folder)
#   STORYCIRCLE_BIN            the server binary (default .build/debug/storycircle)
#   STORYCIRCLE_LEASE_SECONDS  inherited by the nodes (how long a dead node's rooms wait; default 10)
# The folder holds node<N>.pid and node<N>.log for each node, nginx.log, admin-token, token-key, url and
# tls/; with --ha also etcd<N>/ and etcd<N>.log, pg<N>/ (the member's data, socket, patroni.yml and
# patroni.pid) and pg<N>.log (Patroni's and PostgreSQL's log), ha-ports, pg-password (superuser and
# replication), pg-app-password (the nodes' role) and api-password (Patroni's REST API).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${STORYCIRCLE_CLUSTER_DIR:-${TMPDIR:-/tmp}/storycircle-cluster-$(printf '%s' "$root" | sha1sum | cut -c1-12)}
proxy_port=${STORYCIRCLE_CLUSTER_PORT:-8443}
http_port=${STORYCIRCLE_CLUSTER_HTTP_PORT:-8080}
read -r -a node_ports <<<"${STORYCIRCLE_CLUSTER_NODE_PORTS:-8081 8082 8083}"
bin=${STORYCIRCLE_BIN:-$root/.build/debug/storycircle}
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
export STORYCIRCLE_PG_DIR=$dir/pg

tls=$dir/tls

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# --- Certificates: a throwaway CA and one certificate per service, for localhost and 127.0.0.1 --------

# Issues $tls/$1.crt and $1.key (P-256) for the names $3, signed by the CA, usable as server and as client.
issue_certificate() {
  local out=$tls/$1
  (umask 077; openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=storycircle-$2" \
    -keyout "$out.key" -out "$out.csr" 2>/dev/null)
  openssl x509 -req -in "$out.csr" -CA "$tls/ca.crt" -CAkey "$tls/ca.key" -CAcreateserial -days 365 -sha256 -out "$out.crt" \
    -extfile <(printf '%s\n' 'basicConstraints=critical,CA:FALSE' 'keyUsage=critical,digitalSignature' \
      'extendedKeyUsage=serverAuth,clientAuth' "subjectAltName=$3" \
      'subjectKeyIdentifier=hash' 'authorityKeyIdentifier=keyid,issuer') 2>/dev/null
  rm -f "$out.csr"
  chmod 644 "$out.crt"
}

# The CA and every service's certificate in $tls: nginx's for the names given (default localhost and
# 127.0.0.1), the members' for pg1, pg2 and etcd's for etcd1–3 (docker-compose.yml's names), each also for
# localhost and 127.0.0.1 (this script's cluster, the containers' health checks).
make_certificates() {
  [ -s "$tls/client.crt" ] && return
  local public="DNS:localhost,IP:127.0.0.1" name
  if [ $# -gt 0 ]; then
    public=""
    for name in "$@"; do
      if [[ $name =~ ^[0-9.]+$ || $name == *:* ]]; then public+="IP:$name,"; else public+="DNS:$name,"; fi
    done
    public=${public%,}
  fi
  command -v openssl >/dev/null || { echo "cluster: the openssl command is missing (apt-get install openssl)" >&2; exit 1; }
  mkdir -p "$tls/nginx"
  chmod 755 "$tls" "$tls/nginx"
  (umask 077; openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 365 -sha256 \
    -subj "/CN=StoryCircle throwaway cluster CA" -addext 'basicConstraints=critical,CA:TRUE' \
    -addext 'keyUsage=critical,keyCertSign,cRLSign' -keyout "$tls/ca.key" -out "$tls/ca.crt" 2>/dev/null)
  chmod 644 "$tls/ca.crt"
  issue_certificate nginx/server nginx "$public"
  issue_certificate member postgresql "DNS:pg1,DNS:pg2,DNS:localhost,IP:127.0.0.1"
  issue_certificate etcd etcd "DNS:etcd1,DNS:etcd2,DNS:etcd3,DNS:localhost,IP:127.0.0.1"
  issue_certificate client client "DNS:localhost,IP:127.0.0.1"
  # PostgreSQL wants its key owned by the user it runs as, readable by nobody else.
  if [ "$(id -u)" -eq 0 ] && id postgres >/dev/null 2>&1; then chown postgres: "$tls/member.key"; fi
}

# curl to Patroni's REST API: TLS with the CA and the client certificate (the API wants one on every call).
api_curl() {
  curl --cacert "$tls/ca.crt" --cert "$tls/client.crt" --key "$tls/client.key" "$@"
}

# --- The HA database (--ha): three etcd members, two PostgreSQL members under Patroni -------------------

is_ha() { [ -s "$dir/ha-ports" ]; }

# PostgreSQL refuses to run as root: as root its members run as the `postgres` user.
as_postgres() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_bin() {
  local candidate
  for candidate in /usr/lib/postgresql/15/bin $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$candidate/pg_ctl" ]; then echo "$candidate"; return; fi
  done
  echo "cluster: no PostgreSQL server binaries; install the postgresql package (scripts/install-deps.sh --test)" >&2
  exit 1
}

free_ports() {
  python3 -c '
import socket, sys
probes = [socket.socket() for _ in range(int(sys.argv[1]))]
for probe in probes: probe.bind(("127.0.0.1", 0))
print(" ".join(str(probe.getsockname()[1]) for probe in probes))' "$1"
}

ha_ports() {
  read -r -a ha_port <"$dir/ha-ports"
  etcd_client=("${ha_port[0]}" "${ha_port[2]}" "${ha_port[4]}")
  etcd_peer=("${ha_port[1]}" "${ha_port[3]}" "${ha_port[5]}")
  pg_port=("${ha_port[6]}" "${ha_port[7]}")
  api_port=("${ha_port[8]}" "${ha_port[9]}")
}

member() {
  case "${1:-}" in 1|2) ;; *) echo "usage: $0 ${2:-pg-…} 1|2" >&2; exit 2 ;; esac
  is_ha || { echo "cluster: not up with --ha (scripts/cluster.sh up --ha first)" >&2; exit 1; }
  ha_ports
}

# The nodes' URL: the role `storycircle` (not a superuser) on its own database, over TLS checking the
# member's certificate against the cluster's CA (verify-full: the name it is reached by is in it).
ha_database_url() {
  ha_ports
  echo "postgresql://storycircle:$(cat "$dir/pg-app-password")@127.0.0.1:${pg_port[0]},127.0.0.1:${pg_port[1]}/storycircle?target_session_attrs=read-write&sslmode=verify-full&sslrootcert=$tls/ca.crt"
}

launch_etcd() {
  local n=$1 i=$(($1 - 1))
  if alive "$dir/etcd$n.pid"; then return; fi
  local initial="etcd1=https://127.0.0.1:${etcd_peer[0]},etcd2=https://127.0.0.1:${etcd_peer[1]},etcd3=https://127.0.0.1:${etcd_peer[2]}"
  local state=new
  if [ -d "$dir/etcd$n/member" ]; then state=existing; fi
  # etcd's default timings (100 ms heartbeats, 1 s election): well inside Patroni's retry_timeout (4 s).
  # TLS between members and to clients; clients (Patroni) and members need a certificate of the CA.
  etcd --name "etcd$n" --data-dir "$dir/etcd$n" \
    --listen-client-urls "https://127.0.0.1:${etcd_client[$i]}" --advertise-client-urls "https://127.0.0.1:${etcd_client[$i]}" \
    --listen-peer-urls "https://127.0.0.1:${etcd_peer[$i]}" --initial-advertise-peer-urls "https://127.0.0.1:${etcd_peer[$i]}" \
    --cert-file "$tls/etcd.crt" --key-file "$tls/etcd.key" --trusted-ca-file "$tls/ca.crt" --client-cert-auth \
    --peer-cert-file "$tls/etcd.crt" --peer-key-file "$tls/etcd.key" --peer-trusted-ca-file "$tls/ca.crt" --peer-client-cert-auth \
    --initial-cluster "$initial" --initial-cluster-state "$state" --initial-cluster-token "storycircle-$(basename "$dir")" \
    --logger zap --log-outputs stderr >>"$dir/etcd$n.log" 2>&1 &
  echo $! >"$dir/etcd$n.pid"
}

# Member $1's Patroni from config/patroni.yml, filled in as the container's entrypoint fills it.
launch_member() {
  local n=$1 i=$(($1 - 1)) home=$dir/pg$1
  if alive "$home/patroni.pid"; then return; fi
  mkdir -p "$home"
  if [ "$(id -u)" -eq 0 ]; then chown postgres: "$home"; fi
  chmod 700 "$home"
  local password
  password=$(cat "$dir/pg-password")
  cp "$root/config/patroni-post-bootstrap.sh" "$home/post-bootstrap.sh"
  chmod 755 "$home/post-bootstrap.sh"
  MEMBER_NAME="pg$n" MEMBER_API="127.0.0.1:${api_port[$i]}" MEMBER_API_LISTEN="127.0.0.1:${api_port[$i]}" \
    MEMBER_PG="127.0.0.1:${pg_port[$i]}" MEMBER_PG_LISTEN="127.0.0.1:${pg_port[$i]}" \
    MEMBER_DATA="$home/data" MEMBER_SOCKETS="$home" PG_BIN="$(pg_bin)" \
    ETCD_HOSTS="127.0.0.1:${etcd_client[0]},127.0.0.1:${etcd_client[1]},127.0.0.1:${etcd_client[2]}" \
    PG_SUPERUSER_PASSWORD="$password" PG_REPLICATION_PASSWORD="$password" PG_NETWORK=127.0.0.1/32 \
    TLS_DIR="$tls" PATRONI_API_PASSWORD="$(cat "$dir/api-password")" MEMBER_POST_BOOTSTRAP="$home/post-bootstrap.sh" \
    envsubst '${MEMBER_NAME} ${MEMBER_API} ${MEMBER_API_LISTEN} ${MEMBER_PG} ${MEMBER_PG_LISTEN} ${MEMBER_DATA} ${MEMBER_SOCKETS} ${PG_BIN} ${ETCD_HOSTS} ${PG_SUPERUSER_PASSWORD} ${PG_REPLICATION_PASSWORD} ${PG_NETWORK} ${TLS_DIR} ${PATRONI_API_PASSWORD} ${MEMBER_POST_BOOTSTRAP}' \
    <"$root/config/patroni.yml" >"$home/patroni.yml"
  if [ "$(id -u)" -eq 0 ]; then chown postgres: "$home/patroni.yml"; fi
  chmod 600 "$home/patroni.yml"
  # The pid file names Patroni itself (exec), not runuser around it, so that a kill -9 reaches Patroni. In
  # the member's own folder: PostgreSQL's programs fail in a working directory the postgres user cannot
  # enter (a checkout in a folder only root may read), and Patroni's bootstrap then waits forever.
  PG_APP_PASSWORD="$(cat "$dir/pg-app-password")" \
    as_postgres bash -c 'cd "$3" || exit 1; echo $$ >"$1"; exec patroni "$2"' patroni "$home/patroni.pid" "$home/patroni.yml" "$home" >>"$dir/pg$n.log" 2>&1 9>&- &
  # Until the child has written it, the pid file names the launcher.
  echo $! >"$home/patroni.pid.launcher"
}

postmaster_pid() {
  local file=$dir/pg$1/data/postmaster.pid
  [ -f "$file" ] && head -n 1 "$file"
}

# Prints the REST API's /cluster from the first member that answers.
pg_members() {
  local port
  for port in "${api_port[@]}"; do
    if api_curl -sf --max-time 2 "https://127.0.0.1:$port/cluster"; then return 0; fi
  done
  return 1
}

pg_primary() {
  local i
  for i in 0 1; do
    if [ "$(api_curl -s -o /dev/null -w '%{http_code}' --max-time 2 "https://127.0.0.1:${api_port[$i]}/primary")" = 200 ]; then
      echo "pg$((i + 1))"; return 0
    fi
  done
  echo "cluster: no member is primary" >&2
  return 1
}

# Waits until one member leads and the other streams to it as its synchronous standby.
wait_for_sync_pair() {
  local deadline=$((SECONDS + ${1:-180}))
  until pg_members 2>/dev/null | python3 -c '
import json, sys
members = json.load(sys.stdin)["members"]
leader = [m for m in members if m["role"] == "leader" and m["state"] == "running"]
sync = [m for m in members if m["role"] == "sync_standby" and m["state"] in ("streaming", "running")]
sys.exit(0 if leader and sync else 1)' 2>/dev/null; do
    for n in 1 2; do
      if [ -f "$dir/pg$n/patroni.pid" ] && ! alive "$dir/pg$n/patroni.pid"; then
        echo "cluster: Patroni of pg$n ended; its log ($dir/pg$n.log):" >&2
        tail -n 30 "$dir/pg$n.log" >&2 || true
        exit 1
      fi
    done
    if [ $SECONDS -ge $deadline ]; then
      echo "cluster: no primary with a synchronous standby after ${1:-180} s:" >&2
      pg_members >&2 || true
      tail -n 15 "$dir/pg1.log" "$dir/pg2.log" >&2 || true
      exit 1
    fi
    sleep 0.3
  done
}

# Waits until member $1's Patroni has written its own pid (runuser in between has another).
wait_for_member_pid() {
  local home=$dir/pg$1 deadline=$((SECONDS + 30))
  while [ ! -s "$home/patroni.pid" ] || [ "$(cat "$home/patroni.pid")" = "$(cat "$home/patroni.pid.launcher" 2>/dev/null)" ]; do
    if [ $SECONDS -ge $deadline ]; then echo "cluster: Patroni of pg$1 did not start" >&2; tail -n 20 "$dir/pg$1.log" >&2; exit 1; fi
    sleep 0.05
  done
}

ha_up_database() {
  command -v patroni >/dev/null && command -v etcd >/dev/null \
    || { echo "cluster: patroni and etcd are not installed (scripts/install-deps.sh --test)" >&2; exit 1; }
  if ! is_ha; then
    local ports=${STORYCIRCLE_CLUSTER_HA_PORTS:-$(free_ports 10)}
    read -r -a given <<<"$ports"
    [ ${#given[@]} -eq 10 ] || { echo "cluster: STORYCIRCLE_CLUSTER_HA_PORTS needs ten ports" >&2; exit 2; }
    echo "${given[*]}" >"$dir/ha-ports"
  fi
  ha_ports
  local secret
  for secret in pg-password pg-app-password api-password; do
    if [ ! -s "$dir/$secret" ]; then
      (umask 077; head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$dir/$secret")
    fi
  done
  for n in 1 2 3; do launch_etcd "$n"; done
  for n in 1 2 3; do wait_for_port "${etcd_client[$((n - 1))]}" "$dir/etcd$n.pid" "$dir/etcd$n.log"; done
  for n in 1 2; do
    if ! alive "$dir/pg$n/patroni.pid"; then rm -f "$dir/pg$n/patroni.pid"; launch_member "$n"; fi
  done
  for n in 1 2; do wait_for_member_pid "$n"; done
  wait_for_sync_pair 180
}

pg_kill_postmaster() {
  member "$1" pg-kill-postmaster
  local pid
  pid=$(postmaster_pid "$1") || { echo "cluster: pg$1 has no postmaster running" >&2; exit 1; }
  kill -KILL "$pid"
  echo "pg$1: postmaster $pid killed"
}

pg_kill_member() {
  member "$1" pg-kill-member
  local pid
  # Patroni first, so that it cannot start the postmaster again.
  if alive "$dir/pg$1/patroni.pid"; then kill -KILL "$(cat "$dir/pg$1/patroni.pid")"; fi
  if pid=$(postmaster_pid "$1") && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; fi
  echo "pg$1: Patroni and postmaster killed"
}

pg_start_member() {
  member "$1" pg-start-member
  if alive "$dir/pg$1/patroni.pid"; then echo "pg$1: Patroni running (pid $(cat "$dir/pg$1/patroni.pid"))"; return; fi
  rm -f "$dir/pg$1/patroni.pid"
  launch_member "$1"
  wait_for_member_pid "$1"
  wait_for_port "${api_port[$(($1 - 1))]}" "$dir/pg$1/patroni.pid" "$dir/pg$1.log"
  echo "pg$1: Patroni running (pid $(cat "$dir/pg$1/patroni.pid"))"
}

etcd_member() {
  case "${1:-}" in 1|2|3) ;; *) echo "usage: $0 etcd-kill|etcd-start 1|2|3" >&2; exit 2 ;; esac
  is_ha || { echo "cluster: not up with --ha" >&2; exit 1; }
  ha_ports
}

pg_url() {
  is_ha || { echo "cluster: not up with --ha" >&2; exit 1; }
  ha_ports
  case "${1:-}" in
    "") echo "postgresql://postgres:$(cat "$dir/pg-password")@127.0.0.1:${pg_port[0]},127.0.0.1:${pg_port[1]}/storycircle?target_session_attrs=read-write&sslmode=verify-full&sslrootcert=$tls/ca.crt" ;;
    1|2) echo "postgresql://postgres:$(cat "$dir/pg-password")@127.0.0.1:${pg_port[$(($1 - 1))]}/storycircle?sslmode=verify-full&sslrootcert=$tls/ca.crt" ;;
    *) echo "usage: $0 pg-url [1|2]" >&2; exit 2 ;;
  esac
}

ha_status() {
  local code=0
  ha_ports
  for n in 1 2 3; do
    if alive "$dir/etcd$n.pid"; then echo "etcd$n:       running (pid $(cat "$dir/etcd$n.pid"), client port ${etcd_client[$((n - 1))]})"; else echo "etcd$n:       stopped"; code=1; fi
  done
  local members
  members=$(pg_members 2>/dev/null || true)
  for n in 1 2; do
    if alive "$dir/pg$n/patroni.pid"; then
      local role
      role=$(printf '%s' "$members" | python3 -c '
import json, sys
name = sys.argv[1]
try:
    members = json.load(sys.stdin)["members"]
except ValueError:
    members = []
found = [m for m in members if m["name"] == name]
print(", ".join("%s %s, lag %s" % (m["role"], m["state"], m.get("lag", 0)) for m in found) or "not in the cluster")' "pg$n")
      echo "pg$n:         Patroni running (pid $(cat "$dir/pg$n/patroni.pid"), PostgreSQL port ${pg_port[$((n - 1))]}, API ${api_port[$((n - 1))]}): $role"
    else
      echo "pg$n:         stopped"; code=1
    fi
  done
  return $code
}

ha_down() {
  ha_ports 2>/dev/null || true
  for n in 1 2; do
    # Patroni stops its PostgreSQL on the way out; a postmaster left behind is stopped as well.
    stop_process "$dir/pg$n/patroni.pid" 60
    if [ -d "$dir/pg$n/data" ] && [ -f "$dir/pg$n/data/postmaster.pid" ]; then
      as_postgres "$(pg_bin)/pg_ctl" -D "$dir/pg$n/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
  done
  for n in 1 2 3; do stop_process "$dir/etcd$n.pid"; done
}

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
      STORYCIRCLE_TOKEN_KEY_FILE="$dir/token-key" \
      STORYCIRCLE_PUBLIC_URL="$url" \
      STORYCIRCLE_TRUST_FORWARDED_FOR=true \
      STORYCIRCLE_PING_AFTER_IDLE_SECONDS=3 \
      STORYCIRCLE_WEB_ROOT="$root/web-static" \
      "$bin" serve >>"$dir/node$n.log" 2>&1 &
  echo $! >"$dir/node$n.pid"
}

start_node() {
  local n=${1:-}
  case "$n" in 1|2|3) ;; *) echo "usage: $0 start-node 1|2|3" >&2; exit 2 ;; esac
  [ -s "$dir/admin-token" ] && [ -s "$dir/url" ] || { echo "cluster: not up (scripts/cluster.sh up first)" >&2; exit 1; }
  local database
  if is_ha; then database=$(ha_database_url); else database=$("$root/scripts/postgres-test.sh" url); fi
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
  make_certificates
  local database
  if [ "$ha" = yes ] || is_ha; then
    ha_up_database
    database=$(ha_database_url)
  else
    database=$("$root/scripts/postgres-test.sh" start)
  fi
  if [ ! -s "$dir/admin-token" ]; then
    (umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$dir/admin-token")
  fi
  # The key room tokens are authenticated with: one for every node, so a room's token works on any of them.
  if [ ! -s "$dir/token-key" ]; then
    (umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$dir/token-key")
  fi
  local token url
  token=$(cat "$dir/admin-token")
  url="https://127.0.0.1:$proxy_port"
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
    LISTEN_PORT="127.0.0.1:$proxy_port" REDIRECT_PORT="127.0.0.1:$http_port" PUBLIC_HTTPS_PORT="$proxy_port" \
      TLS_DIR="$tls/nginx" NGINX_TEMP="$dir/nginx" \
      STORYCIRCLE_NODE_1="127.0.0.1:${node_ports[0]}" STORYCIRCLE_NODE_2="127.0.0.1:${node_ports[1]}" STORYCIRCLE_NODE_3="127.0.0.1:${node_ports[2]}" \
      envsubst '${LISTEN_PORT} ${REDIRECT_PORT} ${PUBLIC_HTTPS_PORT} ${TLS_DIR} ${NGINX_TEMP} ${STORYCIRCLE_NODE_1} ${STORYCIRCLE_NODE_2} ${STORYCIRCLE_NODE_3}' \
      <"$root/config/nginx-cluster.conf" >"$dir/nginx.conf"
    "$nginx_bin" -c "$dir/nginx.conf" -p "$dir/nginx" -g 'daemon off;' >"$dir/nginx.log" 2>&1 &
    echo $! >"$dir/nginx.pid"
    wait_for_port "$proxy_port" "$dir/nginx.pid" "$dir/nginx.log"
  fi
  echo "$url" >"$dir/url"
  echo "proxy:       $url (plain HTTP on port $http_port redirects there)"
  echo "CA:          $tls/ca.crt (trust it in the browser you try the cluster with)"
  echo "admin token: $token"
  echo "folder:      $dir"
  if is_ha; then echo "database:    primary $(pg_primary), two members under Patroni (scripts/cluster.sh status, pg-members)"; fi
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
  if is_ha; then
    ha_status || code=1
  elif STORYCIRCLE_PG_DIR=$dir/pg "$root/scripts/postgres-test.sh" url >/dev/null 2>&1; then
    echo "postgresql:  running ($("$root/scripts/postgres-test.sh" url))"
  else
    echo "postgresql:  stopped"; code=1
  fi
  return $code
}

stop_process() {
  local pidfile=$1
  if alive "$pidfile"; then
    local pid deadline=$((SECONDS + ${2:-10}))
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
  if is_ha; then ha_down; else "$root/scripts/postgres-test.sh" stop; fi
  rm -rf "$dir"
}

ha=no
if [ "${STORYCIRCLE_CLUSTER_HA:-}" = 1 ] || [ "${2:-}" = --ha ]; then ha=yes; fi

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  start-node) start_node "${2:-}" ;;
  pg-primary) is_ha || { echo "cluster: not up with --ha" >&2; exit 1; }; ha_ports; pg_primary ;;
  pg-members) is_ha || { echo "cluster: not up with --ha" >&2; exit 1; }; ha_ports; pg_members; echo ;;
  pg-kill-postmaster) pg_kill_postmaster "${2:-}" ;;
  pg-kill-member) pg_kill_member "${2:-}" ;;
  pg-start-member) pg_start_member "${2:-}" ;;
  pg-url) pg_url "${2:-}" ;;
  certificates)
    [ -n "${2:-}" ] || { echo "usage: $0 certificates DIR [NAME…]" >&2; exit 2; }
    tls=$2
    [ ! -e "$tls/ca.crt" ] || { echo "cluster: $tls/ca.crt exists; not replacing a CA (move the folder away first)" >&2; exit 1; }
    shift 2
    make_certificates "$@"
    rm -f "$tls/ca.srl"
    echo "certificates in $tls (CA: $tls/ca.crt; keep $tls/ca.key off the servers)."
    echo "For docker-compose.yml: chown 999:999 $tls/member.key (the postgres user of the member image)." ;;
  node-url) is_ha || { echo "cluster: not up with --ha" >&2; exit 1; }; ha_database_url ;;
  api-password) is_ha || { echo "cluster: not up with --ha" >&2; exit 1; }; cat "$dir/api-password"; echo ;;
  etcd-kill) etcd_member "${2:-}"; alive "$dir/etcd$2.pid" && kill -KILL "$(cat "$dir/etcd$2.pid")"; echo "etcd$2: killed" ;;
  etcd-start) etcd_member "${2:-}"; launch_etcd "$2"; wait_for_port "${etcd_client[$(($2 - 1))]}" "$dir/etcd$2.pid" "$dir/etcd$2.log"; echo "etcd$2: running (pid $(cat "$dir/etcd$2.pid"))" ;;
  *) echo "usage: $0 up [--ha]|down|status|certificates DIR [NAME…]|start-node N|pg-primary|pg-members|pg-kill-postmaster N|pg-kill-member N|pg-start-member N|pg-url [N]|node-url|api-password|etcd-kill N|etcd-start N" >&2; exit 2 ;;
esac
