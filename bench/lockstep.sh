#!/usr/bin/env bash
# bench/lockstep.sh: the classroom's regime, one frame per child. Every room broadcasts once; the next
# broadcast only when every child has the last (storycircle-bench lockstep), for a measured window of
# LOCKSTEP_SECONDS; StoryCircle and the peers of bench/baseline with the same generator and message size.
# Per server and size: CPU per frame sent (nanoseconds on CPU from schedstat, and user + system), system
# calls per frame (perf's tracepoints), p99 from the same window, and which side was saturated. The order
# of the servers rotates between runs, so none always goes first on a machine that drifts.
#
#   bench/lockstep.sh                       (the release build of this checkout)
#   BIN=/tmp/before/.build/release bench/lockstep.sh
#
#   SERVERS="before=/tmp/before/.build/release after=.build/release" bench/lockstep.sh
#                                           (two StoryCircle builds, alternated: name=folder)
#
#   TLS=1 bench/lockstep.sh                 (StoryCircle and the C peer, each over plain WS and over TLS,
#                                           alternated in the same run: SERVERS "storycircle c
#                                           storycircle+tls c+tls")
#
# Environment: RUNS (3), SIZES ("250x40 1x2000"), SERVERS ("storycircle c node"; also go, python, the
# peers' batching forms c-batch, python-batch, node-cork, go-batch, and name=folder for a StoryCircle
# build of that folder, labelled name; a name ending in +tls is that server over TLS (wss, a throwaway CA
# and an ECDSA P-256 certificate made with openssl in the work folder; StoryCircle and c only)),
# LOCKSTEP_SECONDS (10), LOCKSTEP_WARMUP (20 rounds), PACED_RATES (none: lock-step; else broadcasts per
# second across all rooms, each a run of storycircle-bench paced instead of the lock-step, the rooms
# broadcasting in turn open loop so that the server sleeps between frames, as in a class, for
# LOCKSTEP_SECONDS after 3 s, in SIZES 250x40 unless told), GENERATOR (BIN's storycircle-bench), AB_OUT
# (build/lockstep). Writes one JSON line per run and prints bench/ab-report.py's table.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-3}
# Paced runs are for many rooms (a room's broadcast is recognised until its next turn): 250 × 40 alone.
if [ -n "${PACED_RATES:-}" ]; then SIZES=${SIZES:-250x40}; else SIZES=${SIZES:-250x40 1x2000}; fi
if [ "${TLS:-0}" = 1 ]; then SERVERS=${SERVERS:-storycircle c storycircle+tls c+tls}; else SERVERS=${SERVERS:-storycircle c node}; fi
LOCKSTEP_SECONDS=${LOCKSTEP_SECONDS:-10}
LOCKSTEP_WARMUP=${LOCKSTEP_WARMUP:-20}
OUT=${AB_OUT:-build/lockstep}
WORK=${BENCH_WORK:-$PWD/.build/lockstep-work}
source bench/lib.sh
GENERATOR=${GENERATOR:-$BIN/storycircle-bench}

trap 'stop_server' EXIT
rm -rf "$WORK"
mkdir -p "$WORK" "$OUT"
peers=$(tr ' ' '\n' <<< "${SERVERS//+tls/}" | grep -v -e = -e '^storycircle$' | sort -u | tr '\n' ' ' || true)
[ -z "${peers// /}" ] || build_peers "$WORK" "$peers"
[[ " $SERVERS" != *+tls* ]] || make_certificates "$WORK"
RESULTS="$OUT/lockstep-$(date +%Y%m%d-%H%M%S).jsonl"
: > "$RESULTS"

one() { # <run> <server> <rooms> <children> [<broadcasts per second>: paced]
  local run=$1 server=$2 rooms=$3 children=$4 target=storycircle size=68
  local label=$server tls=() SERVE_TLS=0
  if [[ "$server" == *+tls ]]; then server=${server%+tls}; SERVE_TLS=1; tls=(--tls-ca "$TLS_CA"); fi
  if [ "$server" = storycircle ] || [[ "$server" == *=* ]]; then
    local bin=$BIN
    if [[ "$server" == *=* ]]; then bin=$(cd "${server#*=}" && pwd); server=${server%%=*}; label=${label%%=*}${tls:++tls}; fi
    BIN=$bin start_storycircle "$WORK" lockstep || { printf '  run %d %s FAILED: did not start\n' "$run" "$label" >&2; return 0; }
  else
    target="baseline-$server"
    # The peers send StoryCircle's message size, as measured in this run.
    size=$(python3 -c 'import json,sys
rows = [json.loads(l) for l in open(sys.argv[1])]
sizes = [r["result"]["messageBytes"] for r in rows if r["result"]["target"] == "storycircle" and r["result"]["messageBytes"] > 0]
print(round(sizes[-1]) if sizes else 68)' "$RESULTS")
    start_peer "$WORK" "$server" || { printf '  run %d %s FAILED: did not start\n' "$run" "$label" >&2; stop_server; return 0; }
  fi
  local scenario="lockstep-${rooms}x${children}" pace=(lockstep --warmup "$LOCKSTEP_WARMUP")
  if [ -n "${5:-}" ]; then scenario="paced-${rooms}x${children}-$5"; pace=(paced --broadcasts-per-second "$5"); fi
  if "${pin_generator[@]}" "$GENERATOR" "${pace[@]}" --target "$target" --admin-token "${ADMIN:-}" --rooms "$rooms" --children "$children" \
      --seconds "$LOCKSTEP_SECONDS" --payload-bytes "$size" --server-pid "$SERVER_PID" --port "$PORT" "${tls[@]}" \
      > "$WORK/line.json" 2> "$WORK/line.err"; then
    printf '{"run":%d,"build":"%s","scenario":"%s","result":%s}\n' "$run" "$label" "$scenario" "$(cat "$WORK/line.json")" >> "$RESULTS"
    printf '  run %d %-11s %s\n' "$run" "$label" "$(tail -1 "$WORK/line.err")" >&2
  else
    # The whole of what it printed is kept (a crash's backtrace ends in blank lines, not its reason).
    local kept="${RESULTS%.jsonl}-failed-$run-$label-$scenario.err"
    cp "$WORK/line.err" "$kept"
    printf '  run %d %-11s %s FAILED: %s (all of it: %s)\n' "$run" "$label" "$scenario" "$(grep -v '^[[:space:]]*$' "$WORK/line.err" | tail -1)" "$kept" >&2
  fi
  stop_server
}

read -r -a servers <<< "$SERVERS"
mode="lock-step"
[ -z "${PACED_RATES:-}" ] || mode="paced at $PACED_RATES broadcasts/s"
echo "== $mode: $SERVERS; sizes $SIZES; $RUNS runs; ${LOCKSTEP_SECONDS} s windows; pinning: $pinning" >&2
for run in $(seq "$RUNS"); do
  shift_by=$(( (run - 1) % ${#servers[@]} ))
  order=("${servers[@]:shift_by}" "${servers[@]:0:shift_by}")
  for size in $SIZES; do
    for rate in ${PACED_RATES:-lockstep}; do
      [ "$rate" = lockstep ] && rate=""
      for server in "${order[@]}"; do one "$run" "$server" "${size%x*}" "${size#*x}" ${rate:+"$rate"}; done
    done
  done
done

python3 bench/ab-report.py "$RESULTS"
echo "Every run: $RESULTS" >&2
