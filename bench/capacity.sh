#!/usr/bin/env bash
# bench/capacity.sh: a node's capacity at classroom rates. The sustained scenario (narration progress,
# questions, answers stored before their ack, reveals, scoreboards, pings; storycircle-bench sustained)
# at CAPACITY_LOADS children (10,000 → 20,000 → 40,000 → …, 40 a room), each on a fresh server, until the
# p99 reaches CAPACITY_P99_MS (25) or a run fails or leaves anything unanswered.
#
# The children come from several loopback addresses (127.0.0.2, 127.0.0.3, …: one per
# CAPACITY_PER_ADDRESS children, 4,000), so that one source address's ephemeral ports do not cap the load,
# and the server runs with maxConnectionsPerAddress raised to MAX_PER_ADDRESS (5,000), as a school behind
# a few NAT addresses would set it. The open-file limit is raised for both sides as far as the machine allows;
# a load that would not fit under it is replaced, once, by the most that does (whole rooms), and the ramp ends there.
#
# Per load: p99, errors, both sides' share of their core (a load driven with the generator at ≥ 90 % of
# its core is the generator's limit, not the server's), the server's CPU per child-second and per
# message, and memory per child (the server's peak RSS during the run less its RSS before any child, ÷
# children). Writes one JSON line per load to CAPACITY_OUT (build/capacity/capacity.jsonl), or appends to
# RESULTS when bench/run.sh runs it.
#
#   bench/capacity.sh
#   CAPACITY_LOADS="10000 20000" CAPACITY_SECONDS=30 bench/capacity.sh
#   CAPACITY_ALL=1 CAPACITY_LOADS="2500 5000 10000 15000" bench/capacity.sh   (every load: how the cost grows)
set -euo pipefail
cd "$(dirname "$0")/.."

CAPACITY_LOADS=${CAPACITY_LOADS:-10000 20000 40000 80000 160000}
CAPACITY_SECONDS=${CAPACITY_SECONDS:-40}
CAPACITY_P99_MS=${CAPACITY_P99_MS:-25}
CAPACITY_PER_ADDRESS=${CAPACITY_PER_ADDRESS:-4000}
CAPACITY_CHILDREN=${CAPACITY_CHILDREN:-40}
export MAX_PER_ADDRESS=${MAX_PER_ADDRESS:-5000}
WORK=${BENCH_WORK:-$PWD/.build/capacity-work}
OUT=${CAPACITY_OUT:-build/capacity/capacity.jsonl}
source bench/lib.sh

# Each side (the server, the generator: separate processes) holds a socket per child and two more per room
# (its teacher and its dashboard), and a few files besides: the server keeps 64 of its limit for its own
# (ClassroomServer), the generator an epoll and a wake-up per client thread; RESERVE_FILES (300) is kept
# above both. Raised as far as this machine allows; a load that does not fit under the limit is not run,
# and the script says so (raising the hard limit needs CAP_SYS_RESOURCE).
RESERVE_FILES=${RESERVE_FILES:-300}
files_for() { echo $(( $1 / CAPACITY_CHILDREN * (CAPACITY_CHILDREN + 2) + RESERVE_FILES )); }
largest=$(tr ' ' '\n' <<< "$CAPACITY_LOADS" | sort -n | tail -1)
want=$(files_for "$largest")
if [ "$(ulimit -n)" -lt "$want" ]; then
  ulimit -Hn "$want" 2>/dev/null || true
  ulimit -n "$want" 2>/dev/null || ulimit -n "$(ulimit -Hn)"
fi
limit=$(ulimit -n)

trap 'stop_server; [ -n "${SAMPLER:-}" ] && kill "$SAMPLER" 2>/dev/null || true' EXIT
rm -rf "$WORK"
mkdir -p "$WORK" "$(dirname "$OUT")"
[ -n "${RESULTS:-}" ] || : > "$OUT"
target=${RESULTS:-$OUT}

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }

echo "== capacity: loads $CAPACITY_LOADS, ${CAPACITY_SECONDS} s each, p99 limit $CAPACITY_P99_MS ms; pinning: $pinning" >&2
last=0
for children in $CAPACITY_LOADS; do
  # A load that needs more open files than the limit is replaced, once, by the most that fits (whole rooms),
  # so the ramp still ends at the highest load this machine can drive and the cost is seen at two loads or
  # more; the line says which load it stands in for.
  instead=0
  if [ "$(files_for "$children")" -gt "$limit" ]; then
    fit=$(( (limit - RESERVE_FILES) / (CAPACITY_CHILDREN + 2) * CAPACITY_CHILDREN ))
    if [ "$fit" -le "$last" ]; then
      echo "== capacity: stopped before $children children: the open-file limit here is $limit (ulimit -Hn), too few for a socket per child on each side" >&2
      break
    fi
    echo "== capacity: $children children need more open files than the limit here ($limit, ulimit -Hn); running the most that fits, $fit" >&2
    instead=$children
    children=$fit
  fi
  rooms=$(( children / CAPACITY_CHILDREN ))
  addresses=$(( (children + CAPACITY_PER_ADDRESS - 1) / CAPACITY_PER_ADDRESS ))
  sources=$(seq 2 $(( addresses + 1 )) | sed 's/^/127.0.0./' | tr '\n' ' ')
  MAX_CONNECTIONS=$(( children + 2000 )) start_storycircle "$WORK" capacity
  baseline=$(rss_kib "$SERVER_PID")
  # The server's peak RSS over the run, sampled twice a second (the children leave at the end).
  ( peak=0; while kill -0 "$SERVER_PID" 2>/dev/null; do now=$(rss_kib "$SERVER_PID"); [ "${now:-0}" -gt "$peak" ] && { peak=$now; echo "$peak" > "$WORK/peak"; }; sleep 0.5; done ) &
  SAMPLER=$!
  ok=yes
  if STORYCIRCLE_BENCH_SOURCE_ADDRESSES="$sources" "${pin_generator[@]}" "$BIN/storycircle-bench" sustained --admin-token "$ADMIN" --rooms "$rooms" \
      --children "$CAPACITY_CHILDREN" --duration "$CAPACITY_SECONDS" --server-pid "$SERVER_PID" --port "$PORT" > "$WORK/line.json" 2> "$WORK/line.err"; then
    kill "$SAMPLER" 2>/dev/null || true; wait "$SAMPLER" 2>/dev/null || true; SAMPLER=""
    peak=$(cat "$WORK/peak" 2>/dev/null || echo 0)
    printf '{"run":0,"label":"capacity %d","result":{"scenario":"capacity","children":%d,"sourceAddresses":%d,"maxConnectionsPerAddress":%d,"rssBaselineKiB":%d,"rssPeakKiB":%d,"openFileLimit":%d,"insteadOf":%d,"sustained":%s}}\n' \
      "$children" "$children" "$addresses" "$MAX_PER_ADDRESS" "$baseline" "$peak" "$limit" "$instead" "$(cat "$WORK/line.json")" >> "$target"
    printf '  capacity %-7d %s · RSS %d → %d KiB\n' "$children" "$(tail -1 "$WORK/line.err")" "$baseline" "$peak" >&2
    verdict=$(python3 -c 'import json,sys
r = json.loads(open(sys.argv[1]).read())
print("over" if r["latency"]["p99"] >= float(sys.argv[2]) or r["unanswered"] > 0 else "under")' "$WORK/line.json" "$CAPACITY_P99_MS")
    [ "$verdict" = under ] || ok=no
  else
    kill "$SAMPLER" 2>/dev/null || true; wait "$SAMPLER" 2>/dev/null || true; SAMPLER=""
    python3 -c 'import json,sys; print(json.dumps({"run": 0, "label": "capacity " + sys.argv[1], "error": open(sys.argv[2]).read().strip()[-500:]}))' \
      "$children" "$WORK/line.err" >> "$target"
    printf '  capacity %-7d FAILED: %s\n' "$children" "$(tail -1 "$WORK/line.err")" >&2
    ok=no
  fi
  stop_server
  last=$children
  if [ "$instead" -gt 0 ]; then
    echo "== capacity: stopped at $children children: $instead would need an open-file limit above $limit (raising it needs CAP_SYS_RESOURCE)" >&2
    break
  fi
  # CAPACITY_ALL=1: every load, past the limit too (the cost's curve over loads, not the capacity alone).
  [ "$ok" = yes ] || [ "${CAPACITY_ALL:-0}" = 1 ] || { echo "== capacity: stopped at $children children (p99 ≥ $CAPACITY_P99_MS ms, something unanswered, or an error)" >&2; break; }
done
