#!/usr/bin/env bash
# bench/tls.sh: what HTTPS/WSS costs. Two parts, each StoryCircle over plain WebSocket and over TLS alternated
# in the same run (the order rotating from run to run), so that TLS's cost is read against the same machine:
#
#   lockstep   bench/lockstep.sh with TLS=1: the one-frame regime, StoryCircle and the C libwebsockets peer
#              (bench/baseline/lws_broadcast.c with the same certificate, TLS 1.2+ and cipher list), each
#              plain and over TLS: CPU per frame, p99, and the ratios (c+tls / storycircle+tls, and each
#              server's +tls / plain).
#   joinstorm  STORM children (2,000) join one room within STORM_SECONDS (2), open loop: welcome p99 from
#              the intended start, over TLS a full handshake per child (no session resumption: every child
#              is a new device).
#
# The certificate: a throwaway local CA and an ECDSA P-256 server certificate for 127.0.0.1, made with the
# openssl program in the work folder (bench/lib.sh make_certificates); the generator trusts that CA alone
# (storycircle-bench --tls-ca). Server and generator are pinned to different cores (bench/lib.sh).
#
#   bench/tls.sh                                  (RUNS=3, SIZES="250x40", both parts)
#   RUNS=5 SIZES="250x40 1x2000" SCENARIOS=lockstep bench/tls.sh
#
# Environment: RUNS (3), SIZES (250x40), SCENARIOS ("lockstep joinstorm"), STORM (2000), STORM_SECONDS (2),
# LOCKSTEP_SECONDS (10), AB_OUT (build/tls), and bench/lib.sh's (PIN, SERVER_CPU, GENERATOR_CPU, BENCH_NICE).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-3}
SIZES=${SIZES:-250x40}
SCENARIOS=${SCENARIOS:-lockstep joinstorm}
STORM=${STORM:-2000}
STORM_SECONDS=${STORM_SECONDS:-2}
OUT=${AB_OUT:-build/tls}
WORK=${BENCH_WORK:-$PWD/.build/tls-work}
source bench/lib.sh
GENERATOR=${GENERATOR:-$BIN/storycircle-bench}
export RUNS SIZES OUT GENERATOR

if [[ " $SCENARIOS " == *" lockstep "* ]]; then
  TLS=1 AB_OUT="$OUT" BENCH_WORK="$WORK/lockstep" bench/lockstep.sh
fi
[[ " $SCENARIOS " == *" joinstorm "* ]] || exit 0

trap 'stop_server' EXIT
rm -rf "$WORK/joinstorm"
mkdir -p "$WORK/joinstorm" "$OUT"
make_certificates "$WORK/joinstorm"
RESULTS="$OUT/joinstorm-$(date +%Y%m%d-%H%M%S).jsonl"
: > "$RESULTS"
echo "== join storm: $STORM children in $STORM_SECONDS s, plain and TLS; $RUNS runs; pinning: $pinning" >&2
for run in $(seq "$RUNS"); do
  order=(storycircle storycircle+tls)
  [ $(( run % 2 )) = 1 ] || order=(storycircle+tls storycircle)
  for label in "${order[@]}"; do
    tls=() SERVE_TLS=0
    if [ "$label" = storycircle+tls ]; then tls=(--tls-ca "$TLS_CA"); SERVE_TLS=1; fi
    if ! SERVE_TLS=$SERVE_TLS start_storycircle "$WORK/joinstorm" storm; then
      printf '  run %d %s FAILED: did not start\n' "$run" "$label" >&2
      continue
    fi
    if "${pin_generator[@]}" "$GENERATOR" joinstorm --admin-token "$ADMIN" --children "$STORM" --spread "$STORM_SECONDS" \
        --server-pid "$SERVER_PID" --port "$PORT" "${tls[@]}" > "$WORK/joinstorm/line.json" 2> "$WORK/joinstorm/line.err"; then
      printf '{"run":%d,"build":"%s","scenario":"joinstorm","result":%s}\n' "$run" "$label" "$(cat "$WORK/joinstorm/line.json")" >> "$RESULTS"
      printf '  run %d %-16s %s\n' "$run" "$label" "$(tail -1 "$WORK/joinstorm/line.err")" >&2
    else
      printf '  run %d %-16s FAILED: %s\n' "$run" "$label" "$(grep -v '^[[:space:]]*$' "$WORK/joinstorm/line.err" | tail -1)" >&2
    fi
    stop_server
  done
done
python3 bench/ab-report.py "$RESULTS"
echo "Every run: $RESULTS" >&2
