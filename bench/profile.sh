#!/usr/bin/env bash
# make bench-profile: where a server's time goes in the 250 rooms × 40 fan-out (and, for StoryCircle, in
# a quiz round of one 2,000-child room), as docs/performance.md reports it. The method of make bench
# (server on CPU 0, generator on CPU 1, a fresh server each time); each tool attaches to the server only
# during the generator's throughput burst (or the quiz), once per tool so they do not disturb each other:
#
#   perf stat -p PID      task clock, context switches, migrations, faults (and instructions/cycles where
#                         the machine has hardware counters: a VM often has none)
#   perf record -g -p PID call graphs, 999 samples a second: the report lists the hottest symbols
#   strace -c -f -p PID   system calls by count and time (strace slows the server: counts matter, not time)
#
# Then StoryCircle alone in a quiz round of one room of 2,000 (answers at 2,000/s, the per-child reveal
# and podium) and under the open-loop classroom load (10,000 children), where wake-ups are many and each
# carries little work.
#
# Writes build/profile/<server>-<scenario>-<tool>.txt. Sizes: ROOMS CHILDREN BURST PROFILE_SECONDS, and
# QUIZ_ROOMS × QUIZ_CHILDREN for the quiz (1 × BIG; 250 × 40 profiles the many-rooms quiz);
# SERVERS="storycircle c go", PARTS="fanout quiz sustained", TOOLS="stat record strace"; BIN (the server's
# build folder) and GENERATOR (its storycircle-bench by default), to profile two builds with one generator.
set -euo pipefail
cd "$(dirname "$0")/.."

ROOMS=${ROOMS:-250}
CHILDREN=${CHILDREN:-40}
BURST=${BURST:-150}
BIG=${BIG:-2000}
PROFILE_SECONDS=${PROFILE_SECONDS:-5}
QUIZ_ROOMS=${QUIZ_ROOMS:-1}
QUIZ_CHILDREN=${QUIZ_CHILDREN:-$BIG}
SERVERS=${SERVERS:-storycircle c go}
TOOLS=${TOOLS:-stat record strace}
PARTS=${PARTS:-fanout quiz sustained}
OUT=${PROFILE_OUT:-build/profile}
WORK=${BENCH_WORK:-$PWD/.build/profile-work}
source bench/lib.sh

trap 'stop_server' EXIT
rm -rf "$WORK"
mkdir -p "$WORK" "$OUT"
# Only the peers profiled are built (Go may not be installed for a StoryCircle-only profile).
build_peers "$WORK" "$SERVERS"
GENERATOR=${GENERATOR:-$BIN/storycircle-bench}

events=task-clock,context-switches,cpu-migrations,page-faults
if perf stat -e instructions,cycles true 2>&1 | grep -q "not supported"; then
  echo "(no hardware counters here: perf stat -e instructions,cycles is not supported; software events only)" >&2
else
  events=$events,instructions,cycles
fi

# Attaches `tool` to the server for PROFILE_SECONDS once the phase file appears.
attach() { # <tool> <name>
  local phase=$WORK/phase
  for _ in $(seq 1200); do [ -s "$phase" ] && break; sleep 0.1; done
  [ -s "$phase" ] || { echo "the generator never reached its measured phase" >&2; return 1; }
  case "$1" in
    stat) perf stat -e "$events" -p "$SERVER_PID" -o "$OUT/$2-stat.txt" -- sleep "$PROFILE_SECONDS" ;;
    record)
      # Thread names now (perf, attached late, may show a thread by the name it was born with).
      for task in /proc/"$SERVER_PID"/task/*; do echo "$(basename "$task") $(cat "$task/comm")"; done > "$OUT/$2-thread-names.txt"
      perf record -g -F 999 -p "$SERVER_PID" -o "$WORK/$2.perf.data" -- sleep "$PROFILE_SECONDS" 2> /dev/null
      data="$WORK/$2.perf.data"
      report() { perf report -i "$data" --stdio "$@" 2> /dev/null | grep -v '^#' | grep -v '^$' | sed 's/ *-  *- *$//' || true; }
      report --no-children --sort symbol --percent-limit 0.5 -g none > "$OUT/$2-record.txt"
      report --no-children --sort dso -g none > "$OUT/$2-dso.txt"
      report --no-children --sort pid -g none > "$OUT/$2-threads.txt"
      report --children --sort symbol --percent-limit 2 -g none > "$OUT/$2-inclusive.txt"
      report --no-children --sort symbol --percent-limit 1.5 -g caller,0.5,callee,function,percent > "$OUT/$2-callers.txt" ;;
    strace)
      strace -c -f -p "$SERVER_PID" -o "$OUT/$2-strace.txt" &
      local tracer=$!
      sleep "$PROFILE_SECONDS"
      kill -INT "$tracer"
      wait "$tracer" || true ;;
  esac
}

for server in $([[ " $PARTS " == *" fanout "* ]] && echo "$SERVERS"); do
  for tool in $TOOLS; do
    rm -f "$WORK/phase"
    if [ "$server" = storycircle ]; then start_storycircle "$WORK" profile; else start_peer "$WORK" "$server"; fi
    target=$([ "$server" = storycircle ] && echo storycircle || echo "baseline-$server")
    "${pin_generator[@]}" "$GENERATOR" fanout --target "$target" --admin-token "${ADMIN:-}" --rooms "$ROOMS" --children "$CHILDREN" \
      --rounds 2 --warmup 1 --burst "$BURST" --payload-bytes 68 --phase-file "$WORK/phase" --server-pid "$SERVER_PID" --port "$PORT" \
      > "$OUT/$server-$tool-run.json" 2> "$WORK/generator.err" &
    generator=$!
    attach "$tool" "$server-fanout"
    wait "$generator" || { cat "$WORK/generator.err" >&2; exit 1; }
    echo "$server $tool: $(tail -1 "$WORK/generator.err")" >&2
    stop_server
  done
done

# StoryCircle's quiz round in one room of BIG: the per-child reveal and podium, the answers' path.
if [[ " $SERVERS " == *" storycircle "* ]]; then
  for tool in $([[ " $PARTS " == *" quiz "* ]] && echo "$TOOLS"); do
    start_storycircle "$WORK" quiz
    "${pin_generator[@]}" "$GENERATOR" quiz --admin-token "$ADMIN" --rooms "$QUIZ_ROOMS" --children "$QUIZ_CHILDREN" --questions 4 \
      --phase-file "$WORK/phase" --server-pid "$SERVER_PID" --port "$PORT" > "$OUT/storycircle-quiz-$tool-run.json" 2> "$WORK/generator.err" &
    generator=$!
    attach "$tool" storycircle-quiz
    wait "$generator" || { cat "$WORK/generator.err" >&2; exit 1; }
    echo "storycircle quiz $tool: $(tail -1 "$WORK/generator.err")" >&2
    stop_server
    rm -f "$WORK/phase"
  done
  # And the open-loop classroom load, 15 s into it (the rooms narrating and answering, not starting).
  for tool in $([[ " $PARTS " == *" sustained "* ]] && echo "$TOOLS"); do
    start_storycircle "$WORK" sustained
    "${pin_generator[@]}" "$GENERATOR" sustained --admin-token "$ADMIN" --rooms "$ROOMS" --children "$CHILDREN" --duration 40 \
      --phase-file "$WORK/phase" --server-pid "$SERVER_PID" --port "$PORT" > "$OUT/storycircle-sustained-$tool-run.json" 2> "$WORK/generator.err" &
    generator=$!
    for _ in $(seq 1200); do [ -s "$WORK/phase" ] && break; sleep 0.1; done
    sleep 15
    PROFILE_SECONDS=10 attach "$tool" storycircle-sustained
    wait "$generator" || { cat "$WORK/generator.err" >&2; exit 1; }
    echo "storycircle sustained $tool: $(tail -1 "$WORK/generator.err")" >&2
    stop_server
    rm -f "$WORK/phase"
  done
fi
echo "Wrote $OUT/." >&2
