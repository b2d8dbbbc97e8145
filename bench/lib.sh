# Shared by bench/run.sh and bench/profile.sh (sourced, from the project folder): pinning, the peers'
# builds, and starting and stopping one server at a time.

BIN=${BIN:-$(swift build -c release --show-bin-path)}
PEER_PY=.venv-bench/bin/python
SERVER_PID=""
SERVER_CPU=${SERVER_CPU:-0}
GENERATOR_CPU=${GENERATOR_CPU:-1}
PIN=${PIN:-1}
# The generator's client threads (see LoadClients.swift), recorded with the results.
export STORYCIRCLE_BENCH_CLIENT_THREADS=${STORYCIRCLE_BENCH_CLIENT_THREADS:-32}

if [ "$PIN" = 1 ] && [ "$(nproc)" -ge 2 ]; then
  pin_server=(taskset -c "$SERVER_CPU")
  pin_generator=(taskset -c "$GENERATOR_CPU")
  pinning="server on CPU $SERVER_CPU, generator on CPU $GENERATOR_CPU ($STORYCIRCLE_BENCH_CLIENT_THREADS client threads)"
else
  pin_server=()
  pin_generator=()
  pinning="none ($STORYCIRCLE_BENCH_CLIENT_THREADS client threads)"
fi
# BENCH_NICE (e.g. -10, as root): server and generator ahead of other work on a shared machine. A server
# starved of its core batches more per wake-up and looks cheaper per message than it is, by however much
# the others' load happened to take in that run: prioritised, both builds of an A/B get their cores.
if [ -n "${BENCH_NICE:-}" ]; then
  pin_server=(nice -n "$BENCH_NICE" "${pin_server[@]}")
  pin_generator=(nice -n "$BENCH_NICE" "${pin_generator[@]}")
  pinning="$pinning, nice $BENCH_NICE"
fi

stop_server() {
  [ -n "$SERVER_PID" ] || return 0
  kill "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}

build_peers() { # <folder> [peers: c c-batch go go-batch (default all four)]
  local peers=${2:-c c-batch go go-batch}
  if [[ " $peers " == *" c "* ]]; then
    gcc -O2 -Wall -o "$1/lws-broadcast" bench/baseline/lws_broadcast.c $(pkg-config --cflags --libs libwebsockets openssl)
  fi
  if [[ " $peers " == *" c-batch "* ]]; then
    gcc -O2 -Wall -o "$1/lws-batch-broadcast" bench/baseline/lws_batch_broadcast.c $(pkg-config --cflags --libs libwebsockets) -lev
  fi
  if [[ " $peers " == *" go "* ]]; then
    GOPATH=/usr/share/gocode GO111MODULE=off GOCACHE="$1/gocache" go build -o "$1/go-broadcast" bench/baseline/go_broadcast.go
  fi
  if [[ " $peers " == *" go-batch "* ]]; then
    GOPATH=/usr/share/gocode GO111MODULE=off GOCACHE="$1/gocache" go build -o "$1/go-batch-broadcast" bench/baseline/go_batch_broadcast.go
  fi
}

# A fresh StoryCircle: release build, SQLite on disk (durable acknowledgements), limits opened up: every
# simulated child comes from 127.0.0.1, and 10,000 connections take a while to say hello. A server built
# before `maxConnectionsPerAddress` and `helloTimeoutSeconds` existed refuses them as unknown settings, so
# they are dropped when it does: an older commit can still be measured. Sets SERVER_PID, PORT and ADMIN.
# With SERVE_TLS=1 it serves https/wss with make_certificates' certificate (run first).
start_storycircle() { # <work folder> <name> [more settings, e.g. ', "coalesceWrites": false']
  local serve_tls=()
  [ "${SERVE_TLS:-0}" != 1 ] || serve_tls=(--tls-certificate "$TLS_CERTIFICATE" --tls-key "$TLS_KEY")
  local data="$1/data-$2" newer=', "maxConnectionsPerAddress": '"${MAX_PER_ADDRESS:-0}"', "helloTimeoutSeconds": 600'"${3:-}"
  for attempt in with-newer without; do
    rm -rf "$data"
    mkdir -p "$data"
    cat > "$1/config.json" <<JSON
{"joinBurst": 1000000, "joinsPerSecond": 1000000, "failedJoinBurst": 1000000, "failedJoinsPerMinute": 1000000,
 "messagesPerSecondPerConnection": 1000000, "messageBurstPerConnection": 1000000, "logLevel": "warning",
 "maxConnections": ${MAX_CONNECTIONS:-20000}${newer}}
JSON
    # Removed first: the shell truncates the log only once the background job runs, so the loop below
    # could read the previous server's port from it.
    rm -f "$1/serve.log"
    "${pin_server[@]}" "$BIN/storycircle" serve --config "$1/config.json" --port 0 --data "$data" "${serve_tls[@]}" > "$1/serve.log" 2>&1 &
    SERVER_PID=$!
    PORT=""
    for _ in $(seq 100); do
      PORT=$(grep -o "(port [0-9]*)" "$1/serve.log" | grep -o "[0-9]*" || true)
      [ -n "$PORT" ] && break
      kill -0 "$SERVER_PID" 2>/dev/null || break
      sleep 0.1
    done
    [ -n "$PORT" ] && break
    stop_server
    # (Not when the caller asked for settings of its own: a variant must not run as the default silently.)
    if [ "$attempt" = with-newer ] && [ -z "${3:-}" ] && grep -q "unknown setting" "$1/serve.log"; then newer=""; continue; fi
    cat "$1/serve.log" >&2
    return 1
  done
  # The port can be printed a moment before the token is written (a starved machine shows it).
  for _ in $(seq 100); do [ -s "$data/admin-token" ] && break; sleep 0.1; done
  ADMIN=$(cat "$data/admin-token")
}

# A peer (bench/baseline/PROTOCOL.md), in its ordinary form (c, python, node, go) or its batching form
# (c-batch, python-batch, node-cork, go-batch). Sets SERVER_PID and PORT.
start_peer() { # <work folder> <peer>
  # A peer that neither listens nor stays up (seen once: a C peer that printed nothing in 10 s) is tried
  # again on another port, twice at most; each attempt's exit status and output are kept in the log.
  local attempt status
  for attempt in 1 2 3; do
    start_peer_once "$@" && return 0
    status=$?
    [ "$status" = 2 ] && return 1
    echo "peer $2 did not start (attempt $attempt, port $PORT):" >&2
    cat "$1/peer.log" >&2
    kill -KILL "$SERVER_PID" 2>/dev/null || true
    status=0
    wait "$SERVER_PID" 2>/dev/null || status=$?
    echo "  its exit status: $status" >&2
    SERVER_PID=""
  done
  return 1
}

start_peer_once() { # <work folder> <peer>: 0 listening, 1 not, 2 no such peer
  # TLS (SERVE_TLS=1): the C peer alone has it, with make_certificates' certificate.
  local tls=()
  if [ "${SERVE_TLS:-0}" = 1 ]; then
    [ "$2" = c ] || { echo "peer $2 has no TLS (only c has)" >&2; return 2; }
    tls=("$TLS_CERTIFICATE" "$TLS_KEY")
  fi
  # Below the kernel's ephemeral range (32768+), which thousands of client sockets have just used.
  PORT=$(( 20000 + RANDOM % 12000 ))
  # (Removed first, as the server's log is: the previous peer's "listening" must not be read as this one's.)
  rm -f "$1/peer.log"
  case "$2" in
    c) "${pin_server[@]}" "$1/lws-broadcast" "$PORT" "${tls[@]}" > "$1/peer.log" 2>&1 & ;;
    python) "${pin_server[@]}" "$PEER_PY" bench/baseline/python_broadcast.py "$PORT" > "$1/peer.log" 2>&1 & ;;
    node) NODE_PATH=/usr/share/nodejs "${pin_server[@]}" node bench/baseline/node_broadcast.js "$PORT" > "$1/peer.log" 2>&1 & ;;
    go) "${pin_server[@]}" "$1/go-broadcast" "$PORT" > "$1/peer.log" 2>&1 & ;;
    c-batch) "${pin_server[@]}" "$1/lws-batch-broadcast" "$PORT" > "$1/peer.log" 2>&1 & ;;
    python-batch) "${pin_server[@]}" "$PEER_PY" bench/baseline/python_batch_broadcast.py "$PORT" > "$1/peer.log" 2>&1 & ;;
    node-cork) NODE_PATH=/usr/share/nodejs "${pin_server[@]}" node bench/baseline/node_cork_broadcast.js "$PORT" > "$1/peer.log" 2>&1 & ;;
    go-batch) "${pin_server[@]}" "$1/go-batch-broadcast" "$PORT" > "$1/peer.log" 2>&1 & ;;
    *) echo "no such peer: $2" >&2; return 2 ;;
  esac
  SERVER_PID=$!
  for _ in $(seq 100); do
    grep -q "listening $PORT" "$1/peer.log" 2>/dev/null && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  grep -q "listening $PORT" "$1/peer.log"
}

# A certificate for the TLS runs (SERVE_TLS=1 for start_storycircle and start_peer; the generator's
# --tls-ca): a throwaway local CA and a server certificate for 127.0.0.1 and localhost, both ECDSA P-256 as
# `storycircle tls init` makes them, written into the bench's work folder. Sets TLS_CA, TLS_CERTIFICATE and
# TLS_KEY.
make_certificates() { # <folder>
  local dir="$1/tls"
  mkdir -p "$dir"
  openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -sha256 -days 2 \
    -subj "/CN=StoryCircle bench CA" -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -sha256 -subj "/CN=localhost" \
    -keyout "$dir/server.key" -out "$dir/server.csr" 2>/dev/null
  printf '%s\n' "subjectAltName=DNS:localhost,IP:127.0.0.1" "basicConstraints=critical,CA:FALSE" \
    "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" > "$dir/server.ext"
  openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial -sha256 -days 2 \
    -extfile "$dir/server.ext" -out "$dir/server.crt" 2>/dev/null
  chmod 600 "$dir/ca.key" "$dir/server.key"
  TLS_CA="$dir/ca.crt" TLS_CERTIFICATE="$dir/server.crt" TLS_KEY="$dir/server.key"
}
