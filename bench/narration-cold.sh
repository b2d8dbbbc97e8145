#!/usr/bin/env bash
# The natural voice's first sentence, cold: a fresh server (its own data and audio cache; the Piper worker
# starts with it), then `storycircle-bench narration` with the Piper voice: first sentence cold (the first
# room, created and started as soon as the server listens), warm (a new story, the worker running), after
# kill -9 of the idle worker (a new story at once), the whole story, cached; then the worker's memory.
# One run per call: `for i in 1 2 3 4 5; do uptime; bench/narration-cold.sh; done`.
#   BIN=.build/release   the build to measure (default .build/debug)
#   WORKER=path.py       another worker script (piperWorker), e.g. an older scripts/piper-worker.py
#   THREADS=1            piperThreads (unset: the server's own choice, 2 where it may use two cores)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.build/debug}
W=$(mktemp -d)
cat > "$W/config.json" <<JSON
{"logLevel": "warning", "joinBurst": 1000000, "joinsPerSecond": 1000000${WORKER:+, \"piperWorker\": \"$WORKER\"}${THREADS:+, \"piperThreads\": $THREADS}}
JSON
"$BIN/storycircle" serve --config "$W/config.json" --port 0 --data "$W/data" > "$W/serve.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$W"' EXIT
PORT=""
for _ in $(seq 200); do PORT=$(grep -o "(port [0-9]*)" "$W/serve.log" | grep -o "[0-9]*" || true); [ -n "$PORT" ] && break; sleep 0.05; done
[ -n "$PORT" ] || { cat "$W/serve.log" >&2; exit 1; }
for _ in $(seq 100); do [ -s "$W/data/admin-token" ] && break; sleep 0.05; done
# The summary line (stderr) only; the JSON result (stdout) is bench/run.sh's.
"$BIN/storycircle-bench" narration --port "$PORT" --admin-token "$(cat "$W/data/admin-token")" --voice piper:en_US-joe-medium --requests 20 "$@" 2>&1 >/dev/null
# The worker, a child of the server: resident memory now and at its peak.
for child in $(pgrep -P $PID); do
  grep -qa -- "--voice" "/proc/$child/cmdline" 2>/dev/null && echo "worker memory: $(grep -E 'VmRSS|VmHWM' "/proc/$child/status" | tr -s ' \t' ' ' | tr '\n' ' ')"
done
