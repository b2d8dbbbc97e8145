#!/usr/bin/env bash
# make fuzz (FUZZ_SECONDS=N, default 60): builds the libFuzzer targets in fuzz/targets against the package's
# own code, instrumented (coverage + AddressSanitizer), and runs each for N seconds from the seed corpus in
# fuzz/corpus. New inputs go to .build/fuzz/corpus, crashes to .build/fuzz/crashes; any crash fails the run.
# Prints the executions of each target.
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_EACH=${FUZZ_SECONDS:-60}
JOBS=${FUZZ_JOBS:-2}
SWIFT=${SWIFT:-swift}
SCRATCH=.build/fuzz
# A crash is reported by libFuzzer and ASan; the Swift runtime's own backtracer would only add minutes.
export SWIFT_BACKTRACE=enable=no
# No leak checks, per input (-detect_leaks=0 below) or at exit: the Swift runtime keeps metadata caches for
# the life of the process on purpose, and at exit the last input's room tasks are still winding down.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
# FUZZ_TARGETS="story nickname" runs only those.
ONLY=${FUZZ_TARGETS:-}
mkdir -p "$SCRATCH/bin" "$SCRATCH/logs" "$SCRATCH/crashes"

# One -sanitize flag with both: SwiftPM's --sanitize=fuzzer --sanitize=address hands swiftc two flags, and
# the second wins, which leaves the code without coverage instrumentation (libFuzzer then runs blind).
echo "fuzz: building the package's libraries instrumented (coverage + ASan) in $SCRATCH"
# StoryCircleApp (the HTTP API) builds StoryCircleServer and all below it; StoryCircleTesting has the
# http-api target's ManualClock, WebSocketTransportTesting its HTTPRequest.testRequest.
"$SWIFT" build -Xswiftc -sanitize=fuzzer,address --scratch-path "$SCRATCH" --target StoryCircleApp
"$SWIFT" build -Xswiftc -sanitize=fuzzer,address --scratch-path "$SCRATCH" --target StoryCircleTesting
"$SWIFT" build -Xswiftc -sanitize=fuzzer,address --scratch-path "$SCRATCH" --target WebSocketTransportTesting
"$SWIFT" build -Xswiftc -sanitize=fuzzer,address --scratch-path "$SCRATCH" --target WebAuthn
"$SWIFT" build -Xswiftc -sanitize=fuzzer,address --scratch-path "$SCRATCH" --target JOSE
BUILD=$("$SWIFT" build -Xswiftc -sanitize=fuzzer,address --scratch-path "$SCRATCH" --show-bin-path)

objects() {
  for module in "$@"; do ls "$BUILD/$module.build/"*.o; done
}

# target: "<name> <entry file> <modules to link>"
TARGETS=(
  "client-message ClientMessageFuzz.swift StoryCircleCore"
  "story StoryFuzz.swift StoryCircleCore"
  "nickname NicknameFuzz.swift Confusables StoryCircleCore"
  "picture PictureFuzz.swift Pictures CImageCodecs"
  "webauthn WebAuthnFuzz.swift WebAuthn SignatureKeys Sodium"
  "jose JOSEFuzz.swift JOSE SignatureKeys Sodium"
  "http-api HTTPAPIFuzz.swift StoryCircleTesting WebSocketTransportTesting StoryCircleApp StoryCircleServer StoryCircleCore TransportCore WebSocketTransport Speech SQLiteStorage PostgresStorage RoomStoreSupport QRCode Locking Confusables Pictures CImageCodecs Sodium WebAuthn SignatureKeys"
)
C_MODULES=(-I Sources/CLibEV -I Sources/CLibWebSockets -I Sources/CEspeakNG -I Sources/CLame -I Sources/CSQLite -I Sources/CPostgreSQL -I Sources/CICU -I Sources/CSodium -lsodium -I Sources/COpenSSL -lssl -lcrypto -I Sources/CCBOR -lcbor)
# CImageCodecs is a C target: its module map is the one SwiftPM writes; its libraries are linked by name.
C_MODULES+=(-Xcc "-fmodule-map-file=$BUILD/CImageCodecs.build/module.modulemap" -I Sources/CImageCodecs/include -lpng16 -ljpeg -lwebp)
for flag in $(pkg-config --cflags libwebsockets espeak-ng sqlite3 libpq icu-i18n 2>/dev/null); do C_MODULES+=(-Xcc "$flag"); done

for entry in "${TARGETS[@]}"; do
  read -r name file modules <<<"$entry"
  echo "fuzz: linking $name"
  # The linker warns about every ASan helper it cannot re-export; they are harmless and drown real errors.
  swiftc -sanitize=fuzzer,address -parse-as-library -swift-version 6 -g -I "$BUILD/Modules" "${C_MODULES[@]}" \
    "fuzz/targets/$file" $(objects $modules) -o "$SCRATCH/bin/$name" 2>&1 | { grep -v "Cannot export local symbol" || true; }
  test -x "$SCRATCH/bin/$name"
done

run() {
  local name=$1
  mkdir -p "$SCRATCH/corpus/$name"
  if "$SCRATCH/bin/$name" "$SCRATCH/corpus/$name" "fuzz/corpus/$name" -dict=fuzz/protocol.dict \
      -max_total_time="$SECONDS_EACH" -timeout=20 -detect_leaks=0 -print_final_stats=1 \
      -artifact_prefix="$SCRATCH/crashes/$name-" >"$SCRATCH/logs/$name.log" 2>&1; then
    echo ok >"$SCRATCH/logs/$name.status"
  else
    echo failed >"$SCRATCH/logs/$name.status"
  fi
}

selected() {
  [ -z "$ONLY" ] || [[ " $ONLY " == *" $1 "* ]]
}

echo "fuzz: running each target for $SECONDS_EACH s, $JOBS at a time"
rm -f "$SCRATCH/logs/"*.status
running=0
for entry in "${TARGETS[@]}"; do
  read -r name _ <<<"$entry"
  selected "$name" || continue
  run "$name" &
  running=$((running + 1))
  if [ "$running" -ge "$JOBS" ]; then wait -n; running=$((running - 1)); fi
done
wait

failed=0
printf '\n%-16s %14s %10s %8s %s\n' target executions exec/s corpus result
for entry in "${TARGETS[@]}"; do
  read -r name _ <<<"$entry"
  selected "$name" || continue
  log="$SCRATCH/logs/$name.log"
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  speed=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  corpus=$(ls "$SCRATCH/corpus/$name" | wc -l)
  status=$(cat "$SCRATCH/logs/$name.status")
  printf '%-16s %14s %10s %8s %s\n' "$name" "$runs" "$speed" "$corpus" "$status"
  if [ "$status" != ok ]; then
    failed=1
    echo "--- $name: the end of $log"
    tail -40 "$log"
  fi
done
if [ "$failed" -ne 0 ]; then
  echo "fuzz: a target failed; its input is in $SCRATCH/crashes (rerun: $SCRATCH/bin/<target> <file>)"
  exit 1
fi
echo "fuzz: 0 crashes"
