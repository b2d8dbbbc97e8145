#!/usr/bin/env bash
# make bench: StoryCircle under load, and the two baselines (C on libwebsockets, Python websockets) with
# the same generator and message sizes, in the same run. Writes bench/results.json and bench/results.md.
# Sizes can be lowered for a quick look: ROOMS=50 CHILDREN=20 BIG=500 bench/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."

ROOMS=${ROOMS:-250}
CHILDREN=${CHILDREN:-40}
BIG=${BIG:-2000}
IDLE=${IDLE:-5000}
ROUNDS=${ROUNDS:-20}
BURST=${BURST:-40}
BIN=$(swift build -c release --show-bin-path)
PY=.venv/bin/python
WORK=$(mktemp -d)
RESULTS="$WORK/results.jsonl"
SERVER_PID=""
started=$(date +%s)

cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

gcc -O2 -Wall -o "$WORK/lws-broadcast" bench/baseline/lws_broadcast.c $(pkg-config --cflags --libs libwebsockets)

# A fresh StoryCircle for each scenario: release build, SQLite on disk (durable acknowledgements), and
# rate limits opened up (every simulated child comes from 127.0.0.1).
start_storycircle() {
  local data="$WORK/data-$1"
  mkdir -p "$data"
  cat > "$WORK/config.json" <<JSON
{"joinBurst": 1000000, "joinsPerSecond": 1000000, "failedJoinBurst": 1000000, "failedJoinsPerMinute": 1000000,
 "messagesPerSecondPerConnection": 1000000, "messageBurstPerConnection": 1000000, "logLevel": "warning",
 "maxConnections": 20000}
JSON
  "$BIN/storycircle" serve --config "$WORK/config.json" --port 0 --data "$data" > "$WORK/serve.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 100); do
    PORT=$(grep -o "(port [0-9]*)" "$WORK/serve.log" | grep -o "[0-9]*" || true)
    [ -n "$PORT" ] && break
    sleep 0.1
  done
  [ -n "$PORT" ] || { cat "$WORK/serve.log"; exit 1; }
  ADMIN=$(cat "$data/admin-token")
}

start_baseline() {
  # Below the kernel's ephemeral range (32768+), which thousands of client sockets have just used.
  PORT=$(( 20000 + RANDOM % 12000 ))
  if [ "$1" = baseline-c ]; then
    "$WORK/lws-broadcast" "$PORT" > "$WORK/baseline.log" 2>&1 &
  else
    "$PY" bench/baseline/python_broadcast.py "$PORT" > "$WORK/baseline.log" 2>&1 &
  fi
  SERVER_PID=$!
  for _ in $(seq 100); do grep -q listening "$WORK/baseline.log" 2>/dev/null && break; sleep 0.1; done
  grep -q listening "$WORK/baseline.log" || { echo "$1 did not start:" >&2; cat "$WORK/baseline.log" >&2; exit 1; }
}

stop_server() {
  kill "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}

bench() { "$BIN/storycircle-bench" "$@" --port "$PORT" >> "$RESULTS"; }

echo "== StoryCircle ($(git rev-parse --short HEAD 2>/dev/null || echo unknown)), $(nproc) cores" >&2
start_storycircle idle;    bench idle --admin-token "$ADMIN" --connections "$IDLE" --children "$CHILDREN" --server-pid "$SERVER_PID"; stop_server
# Throughput bursts sized to about 400,000 messages, long enough for CPU accounting to mean something.
BIG_BURST=$(( BURST * ROOMS * CHILDREN / BIG ))
start_storycircle fanout;  bench fanout --admin-token "$ADMIN" --rooms "$ROOMS" --children "$CHILDREN" --rounds "$ROUNDS" --burst "$BURST" --server-pid "$SERVER_PID"; stop_server
start_storycircle big;     bench fanout --admin-token "$ADMIN" --rooms 1 --children "$BIG" --rounds "$ROUNDS" --burst "$BIG_BURST" --server-pid "$SERVER_PID"; stop_server
start_storycircle answers; bench answers --admin-token "$ADMIN" --rooms 50 --children 40; stop_server
start_storycircle unlock;  bench unlock --admin-token "$ADMIN" --children "$BIG"; stop_server
start_storycircle speech;  bench narration --admin-token "$ADMIN"; stop_server
SIZE=$("$PY" -c "import json,sys; print(round([json.loads(l) for l in open(sys.argv[1]) if '\"fanout\"' in l][0]['messageBytes']))" "$RESULTS")
for baseline in baseline-c baseline-python; do
  echo "== $baseline (messages of $SIZE bytes, like StoryCircle's)" >&2
  start_baseline "$baseline"; bench fanout --target "$baseline" --rooms "$ROOMS" --children "$CHILDREN" --rounds "$ROUNDS" --burst "$BURST" --payload-bytes "$SIZE" --server-pid "$SERVER_PID"; stop_server
  start_baseline "$baseline"; bench fanout --target "$baseline" --rooms 1 --children "$BIG" --rounds "$ROUNDS" --burst "$BIG_BURST" --payload-bytes "$SIZE" --server-pid "$SERVER_PID"; stop_server
done

mkdir -p bench
"$PY" bench/report.py "$RESULTS" bench/results.json bench/results.md "$(( $(date +%s) - started ))"
cat bench/results.md
