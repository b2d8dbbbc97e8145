#!/bin/sh
# The shape of the code in numbers (not its speed), to compare before and after a restructuring. Run from
# the repository root; compare two commits with: git stash; git checkout A; scripts/structure-numbers.sh; git checkout B; ...
set -eu
echo "== files and lines per target (*.swift, *.h, *.c under Sources/<target>)"
for d in Sources/*/; do
  n=$(find "$d" -type f \( -name '*.swift' -o -name '*.h' -o -name '*.c' \) | wc -l)
  l=$(find "$d" -type f \( -name '*.swift' -o -name '*.h' -o -name '*.c' \) -exec cat {} + | wc -l)
  printf '%-28s %3s files %6s lines\n' "$(basename "$d")" "$n" "$l"
done
# Occurrences of an extended regex in code, not in comments (lines starting with //).
count() { grep -rhE "$1" $2 2>/dev/null | grep -vE '^[[:space:]]*//' | grep -oE "$1" | wc -l; }
echo "== '@unchecked Sendable' in Sources: $(count '@unchecked Sendable' Sources)"
echo "== NSCondition/NSLock/DispatchSemaphore in Sources: $(count 'NSCondition|NSLock|DispatchSemaphore' Sources)"
echo "== option lookups by name in the CLI (parsed.value(\"…\")/parsed.has(\"…\")): $(count 'parsed\.(value|has)\(' Sources/storycircle)"
echo "== 'default:' in Sources/storycircle/main.swift: $(count 'default:' Sources/storycircle/main.swift)"
echo "== ISO8601DateFormatter() in Sources: $(count 'ISO8601DateFormatter\(\)' Sources)"
echo "== the name 'Logger' in Sources: $(count '\bLogger\b' Sources)"
echo "== test doubles in production targets (ManualClock, testRequest, WebSocketClientPool): $(grep -rlE 'class ManualClock|func testRequest|class WebSocketClientPool' Sources | grep -vE '^Sources/[A-Za-z]+Testing/' | wc -l) files"
echo "== dead shims (sc_http_status_ok, sc_espeak_initialize_dont_exit) defined: $(count 'sc_http_status_ok\(void\)|sc_espeak_initialize_dont_exit\(void\)' Sources)"
echo "== Swift test targets: $(ls -d Tests/*Tests | wc -l); @Test functions: $(count '@Test' Tests)"
echo "== StoryCircleServer files importing a C module or WebSocketTransport: $(grep -rlE '^import (WebSocketTransport|C[A-Z][A-Za-z]+)$' Sources/StoryCircleServer | wc -l) of $(find Sources/StoryCircleServer -name '*.swift' | wc -l)"
