#!/usr/bin/env bash
# One room's broadcast latency while another room's story is synthesised by the natural voice: the
# lockstep scenario (1 room × 40 children, one broadcast at a time) quiet, then with the Piper worker
# kept reading (bench/narration_load.py), alternated ROUNDS times. Prints each run's lockstep line and
# the worker's CPU time during it (so a run where the worker did not read shows). Needs .venv-voice.
#
#   bench/narration-alongside.sh            (release build; BIN=.build/debug for a debug one)
#   THREADS=2          piperThreads (unset: the server's own choice, which counts the cores it is pinned to)
#   WORKER_CPUS=0-1    let the worker run on these cores, not only the server's (taskset, once it runs)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
ROUNDS=${ROUNDS:-2}
[ -e .venv-voice/.ready ] || { echo "Error: the natural voice is not installed (.venv-voice)" >&2; exit 64; }
WORK=$(mktemp -d)
trap 'stop_server; rm -rf "$WORK"' EXIT
start_storycircle "$WORK" alongside "${THREADS:+, \"piperThreads\": $THREADS}"
lockstep() { "${pin_generator[@]}" "$BIN/storycircle-bench" lockstep --port "$PORT" --admin-token "$ADMIN" --rooms 1 --children 40 --seconds 8 --warmup 20 2>&1 >/dev/null | tail -1; }
worker_pid() { pgrep -P "$SERVER_PID" -f piper-worker | head -1 || true; }
worker_ticks() { local pid; pid=$(worker_pid); [ -n "$pid" ] && awk '{print $14+$15}' "/proc/$pid/stat" || echo 0; }
for round in $(seq "$ROUNDS"); do
  echo "quiet:         $(lockstep)"
  .venv/bin/python bench/narration_load.py "$PORT" "$ADMIN" 14 &
  load=$!
  sleep 3
  if [ -n "${WORKER_CPUS:-}" ]; then
    worker=$(worker_pid)
    if [ -n "$worker" ]; then taskset -a -p -c "$WORKER_CPUS" "$worker" >/dev/null; else echo "warning: no worker to give cores $WORKER_CPUS" >&2; fi
  fi
  before=$(worker_ticks)
  line=$(lockstep)
  echo "synthesising:  $line · worker CPU $(( ($(worker_ticks) - before) * 10 )) ms in the window"
  wait "$load"
done
