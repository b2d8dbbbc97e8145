#!/usr/bin/env bash
# make bench: StoryCircle under load, and its broadcast against four peers (C libwebsockets, Python
# websockets + uvloop, Node.js ws, Go gorilla/websocket), each in two forms: its ordinary one (one write per
# frame) and its batching one (what waits for a connection leaves in one write: C on libev with several
# frames per writeable callback, Python one writelines per loop turn, Node cork/uncork per loop turn, Go
# draining its channel into one buffered write); and StoryCircle with coalescing off (`coalesceWrites:
# false`, labelled storycircle-uncoalesced). All driven by the same generator with the same message sizes,
# in the same run. Every scenario runs RUNS times (3), the servers' order rotated from run to run; the
# report gives the median with min–max and lists every run. Writes bench/results.json (every run's
# figures, the machine, the disk) and bench/results.md (the tables).
#
# The headline is the classroom's regime, lockstep: one frame per child at a time (every room broadcasts
# once, the next broadcast only when every child has the last), in LOCKSTEP_SIZES (250×40 and 1×2,000)
# for windows of LOCKSTEP_SECONDS (10): server CPU per frame in nanoseconds (schedstat), system calls per
# frame (perf), latency from the same window, which side was saturated; the servers' order rotates from
# run to run. The fan-out's burst (40 frames queued per child: draining a backlog) is the second row, with
# the same figures from its burst (perf for its first SYSCALL_SECONDS, 1); the teacher's frames are
# counted in both. paced is the classroom's rates with the broadcast alone: ROOMS × CHILDREN, the rooms
# broadcasting in turn at each of PACED_RATES broadcasts per second (100 and 400: 4,000 and 16,000 frames a
# second), open loop, so the server sleeps between frames as it does in a class; StoryCircle beside
# PACED_PEERS (the fastest peers' batching forms, c-batch and go-batch), PACED_SECONDS (15) windows: the
# cost of a frame when waking up for it is part of it, the regime the capacity figure is in.
#
# Method: the server is pinned to one core and the generator to the other (SERVER_CPU=0 GENERATOR_CPU=1;
# PIN=0 turns it off), so the generator's work is not charged to the server and the two do not fight over
# a core; a fresh server for every run; warm-up rounds are run first and not counted.
#
# The default sizes are the ones the report's targets are set for (about 20 minutes on two cores).
# For a quick check of the machinery:
#   BENCH_QUICK=1 bench/run.sh                    (small sizes, 1 run, results under build/bench/)
# or any of the sizes alone: RUNS ROOMS CHILDREN BIG BURST ROUNDS WARMUP QUESTIONS ANSWER_RATE
# SUSTAINED_ROOMS SUSTAINED_SECONDS STORM STORM_SECONDS IDLE LOCKSTEP_SIZES LOCKSTEP_SECONDS PACED_RATES PACED_PEERS
# PACED_SECONDS ALONGSIDE_SECONDS SIGNIN_TEACHERS SIGNIN_SECONDS; and
# PEERS="c c-batch python python-batch node node-cork go go-batch", VARIANTS="uncoalesced" (or ""),
# SCENARIOS="lockstep paced fanout bigroom quiz-big quiz-postgres quiz-rooms joinstorm sustained idle unlock signin narration failover capacity",
# CAPACITY_LOADS ("10000 20000 40000 80000 160000") CAPACITY_SECONDS (40): capacity is bench/capacity.sh's
# ramp, run once after the rounds.
# failover runs Tests/Integration/test_cluster.py on the release build (nginx + 3 nodes + PostgreSQL, 20
# rooms × 10 children, one more in headless Chromium, kill -9 of the busiest node) and keeps its figures:
# how long until every child of the dead node's rooms is welcomed back (p50/p99, the children reconnecting
# on the child page's own schedule), and acknowledged answers lost (must be 0). Each run kills at another
# moment (0.2, 1.3 or 2.4 s after the last child joined, round robin), so that over the runs the kill falls
# at different points of the nodes' renewal period (a third of the 10 s lease).
# quiz-postgres is quiz-big with the rooms in PostgreSQL (scripts/postgres-test.sh: Debian's server in a
# temporary folder, fsync on), run right after quiz-big in each round so the two stores meet the same machine.
# narration reads a 300-word story with espeak-ng and, when it is installed, the natural voice (cold, warm,
# after kill -9 of the worker, after a lobby, cached); then one room of 40 in lock-step for
# ALONGSIDE_SECONDS (8), quiet and again while bench/narration_load.py keeps the worker reading other
# rooms' stories: whether synthesis delays another room's broadcasts.
# signin: SIGNIN_TEACHERS (500) teacher accounts made through the API (not timed), then each signs in once with
# their password, at random moments over SIGNIN_SECONDS (60), from an address of their own (bench/signin.py,
# pinned as the generator is): sign-in p50/p95/p99 from the intended moment, the server's CPU per sign-in.
# Only a run at full size writes bench/results.json, the file the README's table comes from.
set -euo pipefail
cd "$(dirname "$0")/.."

full=yes
for name in BENCH_QUICK PIN RUNS ROOMS CHILDREN BIG BURST ROUNDS WARMUP QUESTIONS ANSWER_RATE SUSTAINED_ROOMS SUSTAINED_SECONDS STORM STORM_SECONDS IDLE LOCKSTEP_SIZES LOCKSTEP_SECONDS PACED_RATES PACED_PEERS PACED_SECONDS ALONGSIDE_SECONDS SYSCALL_SECONDS PEERS VARIANTS SCENARIOS CAPACITY_LOADS CAPACITY_SECONDS SIGNIN_TEACHERS SIGNIN_SECONDS; do
  [ -n "${!name:-}" ] && full=no
done
if [ "${BENCH_QUICK:-0}" = 1 ]; then
  : "${RUNS:=1}" "${ROOMS:=25}" "${CHILDREN:=20}" "${BIG:=300}" "${BURST:=20}" "${ROUNDS:=3}" "${WARMUP:=1}" "${QUESTIONS:=2}"
  : "${ANSWER_RATE:=500}" "${SUSTAINED_ROOMS:=10}" "${SUSTAINED_SECONDS:=35}" "${STORM:=300}" "${STORM_SECONDS:=1}" "${IDLE:=500}"
  : "${LOCKSTEP_SIZES:=25x40 1x300}" "${LOCKSTEP_SECONDS:=3}" "${PACED_RATES:=20}" "${PACED_SECONDS:=3}" "${ALONGSIDE_SECONDS:=3}" "${CAPACITY_LOADS:=1000 2000}" "${CAPACITY_SECONDS:=20}"
  : "${SIGNIN_TEACHERS:=50}" "${SIGNIN_SECONDS:=10}"
fi
RUNS=${RUNS:-3}
ROOMS=${ROOMS:-250}
CHILDREN=${CHILDREN:-40}
BIG=${BIG:-2000}
BURST=${BURST:-40}
ROUNDS=${ROUNDS:-10}
WARMUP=${WARMUP:-2}
QUESTIONS=${QUESTIONS:-4}
ANSWER_RATE=${ANSWER_RATE:-2000}
SUSTAINED_ROOMS=${SUSTAINED_ROOMS:-250}
SUSTAINED_SECONDS=${SUSTAINED_SECONDS:-60}
STORM=${STORM:-2000}
STORM_SECONDS=${STORM_SECONDS:-2}
IDLE=${IDLE:-5000}
LOCKSTEP_SIZES=${LOCKSTEP_SIZES:-250x40 1x2000}
LOCKSTEP_SECONDS=${LOCKSTEP_SECONDS:-10}
PACED_RATES=${PACED_RATES:-100 400}
PACED_PEERS=${PACED_PEERS:-c-batch go-batch}
PACED_SECONDS=${PACED_SECONDS:-15}
ALONGSIDE_SECONDS=${ALONGSIDE_SECONDS:-8}
SYSCALL_SECONDS=${SYSCALL_SECONDS:-1}
PEERS=${PEERS:-c c-batch python python-batch node node-cork go go-batch}
VARIANTS=${VARIANTS-uncoalesced}
SCENARIOS=${SCENARIOS:-lockstep paced fanout bigroom quiz-big quiz-postgres quiz-rooms joinstorm sustained idle unlock signin narration failover capacity}
CAPACITY_LOADS=${CAPACITY_LOADS:-10000 20000 40000 80000 160000}
CAPACITY_SECONDS=${CAPACITY_SECONDS:-40}
SIGNIN_TEACHERS=${SIGNIN_TEACHERS:-500}
SIGNIN_SECONDS=${SIGNIN_SECONDS:-60}
OUT=${BENCH_OUT:-$([ "$full" = yes ] && echo bench || echo build/bench)}
# The data folder is on the project's disk (not a tmpfs /tmp): the answer figures depend on its fsync.
WORK=${BENCH_WORK:-$PWD/.build/bench-work}

PY=.venv/bin/python
RESULTS="$WORK/results.jsonl"
started=$(date +%s)
failures=0
source bench/lib.sh

STORE=sqlite
POSTGRES=""
load=""
cleanup() {
  [ -n "$load" ] && kill "$load" 2>/dev/null || true
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
  wait 2>/dev/null || true
  [ -n "$POSTGRES" ] && scripts/postgres-test.sh stop >/dev/null 2>&1 || true
}
trap cleanup EXIT

rm -rf "$WORK"
mkdir -p "$WORK" "$OUT"
: > "$RESULTS"

wants() { [[ " $SCENARIOS " == *" $1 "* ]]; }

# The peers, built from bench/baseline/ (see PROTOCOL.md there), when a scenario runs them.
if wants lockstep || wants paced || wants fanout || wants bigroom; then
  build_peers "$WORK" "$PEERS $(wants paced && echo "$PACED_PEERS")"
fi

# The disk under the data folder: its filesystem, and what an fsync costs there (SQLite's commit).
"$PY" bench/disk.py "$WORK" >> "$RESULTS"

# A failed run, recorded as such in the results (the report lists it) and on stderr, never skipped in silence:
# the message, or the start and the end of a file's text, whose whole is kept beside the results (a crash's
# backtrace starts with the crashed thread, not at the end).
record_failure() { # <run> <label> <message> [<file of what the run printed>]
  local run=$1 label=$2 message=$3 file=${4:-} kept=""
  failures=$((failures + 1))
  if [ -n "$file" ] && [ -e "$file" ]; then
    kept="$WORK/failed-$failures.err"
    cp "$file" "$kept"
  fi
  "$PY" -c 'import json, sys
run, label, message, kept = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
line = {"run": run, "label": label, "error": message}
if kept:
    text = open(kept, errors="replace").read().strip()
    line["error"] = (message + "\n" if message else "") + (text[:1500] + " … " + text[-300:] if len(text) > 1800 else text)
    line["output"] = kept.rsplit("/", 1)[-1]
print(json.dumps(line))' "$run" "$label" "$message" "$kept" >> "$RESULTS"
  local shown=$message
  if [ -n "$kept" ]; then
    shown="${message:+$message: }$(grep -m1 -E "Fatal error|Crash" "$kept" || grep -m1 -i error "$kept" || tail -1 "$kept")"
  fi
  printf '  run %d %-22s FAILED%s: %s\n' "$run" "$label" "${kept:+ ($kept)}" "$shown" >&2
}

# One run: the generator's JSON line, with the run's number and the server it measured.
bench() { # <run> <label> <scenario and options...>
  bench_with "$1" "$2" "$BIN/storycircle-bench" "${@:3}"
}

# The same with another generator (a command that prints one JSON line and a summary on stderr).
bench_with() { # <run> <label> <generator command and options...>
  local run=$1 label=$2
  shift 2
  if "${pin_generator[@]}" "$@" --port "$PORT" > "$WORK/line.json" 2> "$WORK/line.err"; then
    printf '{"run":%d,"label":"%s","store":"%s","result":%s}\n' "$run" "$label" "$STORE" "$(cat "$WORK/line.json")" >> "$RESULTS"
    printf '  run %d %-22s %s\n' "$run" "$label" "$(tail -1 "$WORK/line.err")" >&2
  else
    record_failure "$run" "$label" "" "$WORK/line.err"
  fi
}


# Peers get StoryCircle's own message size for the same broadcast (pause/resume), measured in this run.
SIZE=""
message_size() { # <scenario: fanout or bigroom>
  "$PY" -c 'import json,sys
rows = [json.loads(l) for l in open(sys.argv[1])]
sizes = [r["result"]["messageBytes"] for r in rows if r.get("result", {}).get("target") == "storycircle" and r["result"].get("scenario") == sys.argv[2]]
print(round(sizes[0]) if sizes else 75)' "$RESULTS" "$1"
}

# StoryCircle's variants: a setting changed, measured as a server of its own (its results' target is
# storycircle-NAME).
variant_settings() { # <variant>
  case "$1" in
    uncoalesced) echo ', "coalesceWrites": false' ;;
    *) echo "no such variant: $1" >&2; return 1 ;;
  esac
}

# The servers of a round, the order rotated by the run's number so that no server always goes first on a
# machine that drifts (run 1 starts with StoryCircle, whose message size the peers then send).
servers_of_run() { # <run>
  local servers=(storycircle) variant shift_by
  for variant in $VARIANTS; do servers+=("storycircle-$variant"); done
  servers+=($PEERS)
  shift_by=$(( ($1 - 1) % ${#servers[@]} ))
  echo "${servers[@]:shift_by}" "${servers[@]:0:shift_by}"
}

start_server() { # <server> <name>: StoryCircle, a variant of it, or a peer
  case "$1" in
    storycircle) start_storycircle "$WORK" "$2" ;;
    storycircle-*) start_storycircle "$WORK" "$2" "$(variant_settings "${1#storycircle-}")" ;;
    *) start_peer "$WORK" "$1" ;;
  esac
}

# The target options for the generator: StoryCircle (by its name) or a peer (with the size to send).
target_options() { # <server> <payload bytes>
  case "$1" in
    storycircle*) echo "--admin-token $ADMIN --name $1" ;;
    *) echo "--target baseline-$1 --payload-bytes $2" ;;
  esac
}

# One run of one server: started fresh, the scenario, stopped. The target's options (StoryCircle's admin
# token, a peer's payload size) and the server's PID are known only once it has started. A server that does
# not start is a recorded failure.
on_fresh_server() { # <run> <server> <label> <start name> <payload bytes> <scenario> <options...>
  local run=$1 server=$2 label=$3 name=$4 size=$5 scenario=$6
  shift 6
  if ! start_server "$server" "$name" 2> "$WORK/start.err"; then
    record_failure "$run" "$label" "did not start" "$WORK/start.err"
    stop_server
    return 0
  fi
  cat "$WORK/start.err" >&2
  # shellcheck disable=SC2046
  bench "$run" "$label" "$scenario" $(target_options "$server" "$size") "$@" --server-pid "$SERVER_PID"
  stop_server
}

fanout_round() { # <run> <label> <rooms> <children> <burst>
  local run=$1 label=$2 rooms=$3 children=$4 burst=$5 server
  for server in $(servers_of_run "$run"); do
    [ -n "$SIZE" ] || SIZE=$(message_size "$label")
    on_fresh_server "$run" "$server" "$label $server" "$label" "${SIZE:-75}" fanout --rooms "$rooms" \
      --children "$children" --rounds "$ROUNDS" --warmup "$WARMUP" --burst "$burst" --syscall-seconds "$SYSCALL_SECONDS"
    if [ "$server" = storycircle ]; then SIZE=$(message_size "$label"); fi
  done
  SIZE=""
}

# The size of StoryCircle's first one-frame-per-child broadcast of the bench (lock-step or paced), which the
# peers send in those scenarios.
broadcast_size() {
  "$PY" -c 'import json,sys
rows = [json.loads(l) for l in open(sys.argv[1])]
sizes = [r["result"]["messageBytes"] for r in rows if r.get("result", {}).get("scenario") in ("lockstep", "paced") and r["result"].get("target") == "storycircle" and r["result"]["messageBytes"] > 0]
print(round(sizes[0]) if sizes else 70)' "$RESULTS"
}

# The classroom's regime, StoryCircle, its variants and every peer at one size. The peers send the size of
# StoryCircle's first lock-step frames of the bench.
lockstep_round() { # <run> <rooms> <children>
  local run=$1 rooms=$2 children=$3 server size
  for server in $(servers_of_run "$run"); do
    size=$(broadcast_size)
    on_fresh_server "$run" "$server" "lockstep ${rooms}×$children $server" lockstep "$size" lockstep \
      --rooms "$rooms" --children "$children" --seconds "$LOCKSTEP_SECONDS"
  done
}

# The classroom's rates with the broadcast alone: StoryCircle and the fastest peers at each rate.
paced_round() { # <run> <broadcasts per second>
  local run=$1 rate=$2 servers=(storycircle $PACED_PEERS) server size shift_by
  shift_by=$(( (run - 1) % ${#servers[@]} ))
  for server in "${servers[@]:shift_by}" "${servers[@]:0:shift_by}"; do
    size=$(broadcast_size)
    on_fresh_server "$run" "$server" "paced $rate/s $server" paced "$size" paced \
      --rooms "$ROOMS" --children "$CHILDREN" --broadcasts-per-second "$rate" --seconds "$PACED_SECONDS"
  done
}

echo "== StoryCircle $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(nproc) cores, pinning: $pinning, runs: $RUNS" >&2
# Throughput bursts of about 400,000 messages in both layouts: long enough for CPU accounting (10 ms ticks).
BIG_BURST=$(( BURST * ROOMS * CHILDREN / BIG ))
for run in $(seq "$RUNS"); do
  echo "== run $run of $RUNS ($(( $(date +%s) - started )) s so far)" >&2
  if wants lockstep; then
    for size in $LOCKSTEP_SIZES; do lockstep_round "$run" "${size%x*}" "${size#*x}"; done
  fi
  if wants paced; then
    for rate in $PACED_RATES; do paced_round "$run" "$rate"; done
  fi
  wants fanout && fanout_round "$run" fanout "$ROOMS" "$CHILDREN" "$BURST"
  wants bigroom && fanout_round "$run" bigroom 1 "$BIG" "$BIG_BURST"
  if wants quiz-big; then
    start_storycircle "$WORK" quiz-big
    bench "$run" "quiz 1×$BIG" quiz --admin-token "$ADMIN" --rooms 1 --children "$BIG" --questions "$QUESTIONS" --answers-per-second "$ANSWER_RATE" --server-pid "$SERVER_PID"
    stop_server
  fi
  if wants quiz-postgres; then
    [ -n "$POSTGRES" ] || POSTGRES=$(scripts/postgres-test.sh start)
    STORE=postgres
    STORYCIRCLE_DATABASE=$POSTGRES start_storycircle "$WORK" quiz-postgres
    bench "$run" "quiz 1×$BIG postgres" quiz --admin-token "$ADMIN" --rooms 1 --children "$BIG" --questions "$QUESTIONS" --answers-per-second "$ANSWER_RATE" --server-pid "$SERVER_PID"
    stop_server
    STORE=sqlite
  fi
  if wants quiz-rooms; then
    start_storycircle "$WORK" quiz-rooms
    bench "$run" "quiz ${ROOMS}×$CHILDREN" quiz --admin-token "$ADMIN" --rooms "$ROOMS" --children "$CHILDREN" --questions "$QUESTIONS" --answers-per-second "$ANSWER_RATE" --server-pid "$SERVER_PID"
    stop_server
  fi
  if wants joinstorm; then
    start_storycircle "$WORK" joinstorm
    bench "$run" "joinstorm $STORM" joinstorm --admin-token "$ADMIN" --children "$STORM" --spread "$STORM_SECONDS" --server-pid "$SERVER_PID"
    stop_server
  fi
  if wants sustained; then
    start_storycircle "$WORK" sustained
    bench "$run" "sustained ${SUSTAINED_ROOMS}×$CHILDREN" sustained --admin-token "$ADMIN" --rooms "$SUSTAINED_ROOMS" --children "$CHILDREN" --duration "$SUSTAINED_SECONDS" --server-pid "$SERVER_PID"
    stop_server
  fi
  if wants idle; then
    start_storycircle "$WORK" idle
    bench "$run" "idle $IDLE" idle --admin-token "$ADMIN" --connections "$IDLE" --children "$CHILDREN" --server-pid "$SERVER_PID"
    stop_server
  fi
  if wants unlock; then
    start_storycircle "$WORK" unlock
    bench "$run" "unlock 1×$BIG" unlock --admin-token "$ADMIN" --children "$BIG"
    stop_server
  fi
  if wants failover; then
    # Its own PostgreSQL, nginx and nodes (scripts/cluster.sh), unpinned: four servers on two cores.
    rm -f "$WORK/failover.json"
    kill_delay=$(awk -v run="$run" 'BEGIN { printf "%.1f", 0.2 + ((run - 1) % 3) * 1.1 }')
    if STORYCIRCLE_BIN="$BIN/storycircle" STORYCIRCLE_FAILOVER_FIGURES="$WORK/failover.json" STORYCIRCLE_FAILOVER_KILL_DELAY="$kill_delay" \
        "$PY" -m pytest -q -x Tests/Integration/test_cluster.py -k kill_9_of_the_busiest > "$WORK/line.err" 2>&1 && [ -s "$WORK/failover.json" ]; then
      printf '{"run":%d,"label":"failover","store":"postgres","result":{"scenario":"failover",%s}\n' "$run" "$(cut -c2- "$WORK/failover.json")" >> "$RESULTS"
      printf '  run %d %-22s %s\n' "$run" failover "$(cat "$WORK/failover.json")" >&2
    else
      record_failure "$run" failover "" "$WORK/line.err"
    fi
  fi
  if wants signin; then
    start_storycircle "$WORK" signin
    bench_with "$run" "signin $SIGNIN_TEACHERS in $SIGNIN_SECONDS s" "$PY" bench/signin.py --admin-token "$ADMIN" \
      --teachers "$SIGNIN_TEACHERS" --seconds "$SIGNIN_SECONDS" --server-pid "$SERVER_PID"
    stop_server
  fi
  if wants narration; then
    start_storycircle "$WORK" narration
    bench "$run" narration narration --admin-token "$ADMIN"
    # The natural voice too, when it is installed (NATURAL_VOICE=0 leaves it out).
    if [ -e .venv-voice/.ready ]; then
      bench "$run" narration-piper narration --voice piper:en_US-joe-medium --admin-token "$ADMIN"
      # One room's broadcasts while the worker reads other rooms' stories (bench/narration-alongside.sh's
      # method): a 1 × 40 lock-step quiet, then again while new stories keep the worker reading; the load
      # starts 3 s before the second window (its first story under way) and is stopped after it.
      bench "$run" "alongside quiet" lockstep --admin-token "$ADMIN" --name alongside-quiet --rooms 1 --children 40 \
        --seconds "$ALONGSIDE_SECONDS" --warmup 20 --server-pid "$SERVER_PID"
      "$PY" bench/narration_load.py "$PORT" "$ADMIN" $((ALONGSIDE_SECONDS + 60)) &
      load=$!
      sleep 3
      bench "$run" "alongside synthesising" lockstep --admin-token "$ADMIN" --name alongside-synthesising --rooms 1 --children 40 \
        --seconds "$ALONGSIDE_SECONDS" --warmup 20 --server-pid "$SERVER_PID"
      # The load is made to run well past the window and is stopped after it: if it has ended already, it
      # failed, and the window was not a synthesising one — its line is taken back, the run counted failed.
      if ! kill -0 "$load" 2>/dev/null; then
        if tail -1 "$RESULTS" | grep -q '"label":"alongside synthesising"'; then sed -i '$d' "$RESULTS"; fi
        record_failure "$run" "alongside synthesising" "the narration load ended before the window did"
      fi
      kill "$load" 2>/dev/null || true
      wait "$load" 2>/dev/null || true
      load=""
    fi
    stop_server
  fi
done

# A node's capacity: the sustained scenario ramped until its p99 reaches 25 ms (bench/capacity.sh), once.
if wants capacity; then
  RESULTS="$RESULTS" BENCH_WORK="$WORK/capacity" CAPACITY_LOADS="$CAPACITY_LOADS" CAPACITY_SECONDS="$CAPACITY_SECONDS" bench/capacity.sh || failures=$((failures + 1))
fi

seconds=$(( $(date +%s) - started ))
"$PY" bench/report.py --results "$RESULTS" --json "$OUT/results.json" --markdown "$OUT/results.md" \
  --seconds "$seconds" --runs "$RUNS" --pinning "$pinning" --full "$full"
cat "$OUT/results.md"
echo "Wrote $OUT/results.json and $OUT/results.md ($seconds s)." >&2
if [ "$failures" -gt 0 ]; then
  echo "$failures run(s) failed; they are listed in the report." >&2
  exit 1
fi
