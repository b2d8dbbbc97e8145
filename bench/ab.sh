#!/usr/bin/env bash
# bench/ab.sh: one change measured alone. Two builds of StoryCircle, A (before) and B (after), through the
# same scenarios with the same generator, by the method of make bench (server on CPU 0, generator on CPU 1,
# a fresh server every run), alternated A B, B A, A B, … so that drift on a shared machine falls on both.
# Prints every run and, per scenario and build, the median with min–max.
#
#   swift build -c release --scratch-path /tmp/before     (in a checkout of the before-state)
#   swift build -c release
#   bench/ab.sh /tmp/before/release .build/release
#
# Environment: RUNS (3); SCENARIOS ("fanout quiz-big sustained"; also bigroom, quiz-rooms, joinstorm);
# the sizes of bench/run.sh (ROOMS CHILDREN BURST ROUNDS WARMUP BIG QUESTIONS ANSWER_RATE
# SUSTAINED_ROOMS SUSTAINED_SECONDS STORM STORM_SECONDS); GENERATOR (storycircle-bench, default A's);
# GENERATOR_B (B's runs, default GENERATOR: to compare two generators on one server, give A and B the same
# folder); PEERS (none; e.g. "go c": after each fanout and bigroom pair, the same burst against those
# peers of bench/baseline, with B's message size, so a run compares both builds with the peers measured
# beside them); SETTINGS_A and SETTINGS_B (more server settings for that build's runs, as JSON members
# after a comma: ', "coalesceWrites": false', to compare two settings of one build); AB_OUT (build/ab). Server CPU per message (user + system) and context switches per message are the
# figures that hold up on a busy machine; latencies do not (each run says how busy the machine was).
set -euo pipefail
cd "$(dirname "$0")/.."

[ $# -eq 2 ] || { sed -n '2,16p' "$0" >&2; exit 64; }
A=$(cd "$1" && pwd)
B=$(cd "$2" && pwd)
RUNS=${RUNS:-3}
SCENARIOS=${SCENARIOS:-fanout quiz-big sustained}
ROOMS=${ROOMS:-250}
CHILDREN=${CHILDREN:-40}
BURST=${BURST:-40}
ROUNDS=${ROUNDS:-10}
WARMUP=${WARMUP:-2}
BIG=${BIG:-2000}
QUESTIONS=${QUESTIONS:-4}
ANSWER_RATE=${ANSWER_RATE:-2000}
SUSTAINED_ROOMS=${SUSTAINED_ROOMS:-250}
SUSTAINED_SECONDS=${SUSTAINED_SECONDS:-60}
STORM=${STORM:-2000}
STORM_SECONDS=${STORM_SECONDS:-2}
GENERATOR=${GENERATOR:-$A/storycircle-bench}
GENERATOR_B=${GENERATOR_B:-$GENERATOR}
PEERS=${PEERS:-}
OUT=${AB_OUT:-build/ab}
WORK=${BENCH_WORK:-$PWD/.build/ab-work}
source bench/lib.sh

trap 'stop_server' EXIT
rm -rf "$WORK"
mkdir -p "$WORK" "$OUT"
RESULTS="$OUT/ab-$(date +%Y%m%d-%H%M%S).jsonl"
: > "$RESULTS"

one() { # <run> <build label> <bin folder> <scenario>
  local run=$1 label=$2 scenario=$4 args=()
  BIN=$3
  # A server that does not start (a starved machine) costs its run, not the runs after it.
  local settings=${SETTINGS_A:-}
  [ "$label" = B ] && settings=${SETTINGS_B:-}
  if ! start_storycircle "$WORK" "$label" "$settings"; then
    printf '  run %d %s %-10s FAILED: the server did not start\n' "$run" "$label" "$scenario" >&2
    stop_server
    return 0
  fi
  case "$scenario" in
    fanout) args=(fanout --rooms "$ROOMS" --children "$CHILDREN" --rounds "$ROUNDS" --warmup "$WARMUP" --burst "$BURST") ;;
    bigroom) args=(fanout --rooms 1 --children "$BIG" --rounds "$ROUNDS" --warmup "$WARMUP" --burst $(( BURST * ROOMS * CHILDREN / BIG ))) ;;
    quiz-big) args=(quiz --rooms 1 --children "$BIG" --questions "$QUESTIONS" --answers-per-second "$ANSWER_RATE") ;;
    quiz-rooms) args=(quiz --rooms "$ROOMS" --children "$CHILDREN" --questions "$QUESTIONS" --answers-per-second "$ANSWER_RATE") ;;
    sustained) args=(sustained --rooms "$SUSTAINED_ROOMS" --children "$CHILDREN" --duration "$SUSTAINED_SECONDS") ;;
    joinstorm) args=(joinstorm --children "$STORM" --spread "$STORM_SECONDS") ;;
    *) echo "no such scenario: $scenario" >&2; return 1 ;;
  esac
  local generator=$GENERATOR
  [ "$label" = B ] && generator=$GENERATOR_B
  if "${pin_generator[@]}" "$generator" "${args[@]}" --admin-token "$ADMIN" --server-pid "$SERVER_PID" --port "$PORT" > "$WORK/line.json" 2> "$WORK/line.err"; then
    printf '{"run":%d,"build":"%s","scenario":"%s","result":%s}\n' "$run" "$label" "$scenario" "$(cat "$WORK/line.json")" >> "$RESULTS"
    printf '  run %d %s %-10s %s\n' "$run" "$label" "$scenario" "$(tail -1 "$WORK/line.err")" >&2
  else
    printf '  run %d %s %-10s FAILED: %s\n' "$run" "$label" "$scenario" "$(tail -1 "$WORK/line.err")" >&2
  fi
  stop_server
}

# The same burst against a peer (labelled with the peer's name), B's message size from this run.
peer_run() { # <run> <peer> <scenario>
  local run=$1 peer=$2 scenario=$3 rooms=$ROOMS children=$CHILDREN burst=$BURST size
  if [ "$scenario" = bigroom ]; then rooms=1; children=$BIG; burst=$(( BURST * ROOMS * CHILDREN / BIG )); fi
  size=$(python3 -c 'import json,sys
rows = [json.loads(l) for l in open(sys.argv[1])]
sizes = [r["result"]["messageBytes"] for r in rows if r["scenario"] == sys.argv[2] and r["build"] == "B"]
print(round(sizes[-1]) if sizes else 75)' "$RESULTS" "$scenario")
  # A peer that does not start (a busy machine, a port taken) costs its run, not the A/B runs after it.
  if ! start_peer "$WORK" "$peer"; then
    printf '  run %d %s %-10s FAILED: did not start\n' "$run" "$peer" "$scenario" >&2
    stop_server
    return 0
  fi
  if "${pin_generator[@]}" "$GENERATOR_B" fanout --target "baseline-$peer" --rooms "$rooms" --children "$children" --rounds "$ROUNDS" --warmup "$WARMUP" --burst "$burst" --payload-bytes "$size" --server-pid "$SERVER_PID" --port "$PORT" > "$WORK/line.json" 2> "$WORK/line.err"; then
    printf '{"run":%d,"build":"%s","scenario":"%s","result":%s}\n' "$run" "$peer" "$scenario" "$(cat "$WORK/line.json")" >> "$RESULTS"
    printf '  run %d %s %-10s %s\n' "$run" "$peer" "$scenario" "$(tail -1 "$WORK/line.err")" >&2
  else
    printf '  run %d %s %-10s FAILED: %s\n' "$run" "$peer" "$scenario" "$(tail -1 "$WORK/line.err")" >&2
  fi
  stop_server
}

[ -z "$PEERS" ] || build_peers "$WORK" "$PEERS"

echo "== A: $A  B: $B  generator: $GENERATOR (B: $GENERATOR_B)  runs: $RUNS  pinning: $pinning" >&2
for run in $(seq "$RUNS"); do
  for scenario in $SCENARIOS; do
    if [ $((run % 2)) = 1 ]; then order="A B"; else order="B A"; fi
    for label in $order; do
      if [ "$label" = A ]; then one "$run" A "$A" "$scenario"; else one "$run" B "$B" "$scenario"; fi
    done
    if [ "$scenario" = fanout ] || [ "$scenario" = bigroom ]; then
      for peer in $PEERS; do peer_run "$run" "$peer" "$scenario"; done
    fi
  done
done

python3 bench/ab-report.py "$RESULTS"
echo "Every run: $RESULTS" >&2
