# StoryCircle: `make run` starts a demo room, `make test` runs every test. Both install what is missing.
SWIFT   ?= swift
PYTHON  ?= python3
VENV    := .venv
BENCH_VENV := .venv-bench
PY      := $(VENV)/bin/python
STORY   ?= config/stories/pip-the-robot.json
PORT    ?= 8080
BIN     := .build/debug/storycircle
RELEASE := .build/release

FUZZ_SECONDS ?= 60

.PHONY: all deps test-deps bench-deps build release run test swift-test page-test tsan-test fuzz integration-test bench bench-signin bench-readme bench-profile bench-lockstep bench-tls bench-capacity store-bench cluster clean screenshots

all: build

deps:
	@scripts/install-deps.sh

test-deps:
	@scripts/install-deps.sh --test

bench-deps:
	@scripts/install-deps.sh --bench

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

## make run: build, then start a demo room on the sample story (prints the join code and https:// URLs), read
## by the natural voice when it is installed (scripts/install-deps.sh puts it in .venv-voice unless
## NATURAL_VOICE=0; VOICE=en-gb for espeak-ng). The first run makes this laptop's certificate authority
## (`storycircle tls init`, docs/operations.md "HTTPS on one laptop") and says how devices trust it; later
## runs keep it and only renew the server's certificate for the laptop's current addresses, quietly.
run: build
	@if test -f data/tls/ca.crt; then $(BIN) tls init --data data >/dev/null; else $(BIN) tls init --data data && echo; fi
	$(BIN) start $(STORY) --port $(PORT) $(if $(VOICE),--voice $(VOICE),$$(test -f .venv-voice/.ready && echo --voice piper:en_US-joe-medium))

## make test: every test: the Swift unit and server tests, the same under ThreadSanitizer, the fuzzers (60 s
## each), then the integration tests (real sockets, the CLI, a crash, headless Chromium) driven from Python.
test: test-deps $(VENV)/.ready
	$(MAKE) page-test
	$(SWIFT) build --build-tests
	scripts/postgres-test.sh run $(SWIFT) test --skip-build
	$(MAKE) tsan-test
	$(MAKE) fuzz FUZZ_SECONDS=60
	$(MAKE) integration-test

# The room store suite runs against SQLite and a throwaway PostgreSQL (scripts/postgres-test.sh);
# STORYCIRCLE_TEST_POSTGRES=skip leaves PostgreSQL out, on purpose only.
swift-test: deps
	scripts/postgres-test.sh run $(SWIFT) test

## make page-test: the pages' own unit tests (the room reducer, the child's join stage, the API client) under
## node's built-in test runner; no npm packages, nothing to build (Tests/Pages/*.test.mjs).
page-test: test-deps
	node --test --test-reporter=spec Tests/Pages/*.test.mjs

# The transport, room and store tests again under ThreadSanitizer, in their own build folder so the normal
# build is not invalidated.
tsan-test: deps
	$(SWIFT) test --sanitize=thread --scratch-path .build/tsan --filter 'StoryCircleServerTests|StoryCircleAppTests|WebSocketTransportTests|SQLiteStorageTests'

## make fuzz FUZZ_SECONDS=N: the libFuzzer targets in fuzz/targets (client messages, stories, nicknames,
## pictures, passkeys' CBOR, ID tokens and key sets, the HTTP API), instrumented with AddressSanitizer, each for N seconds from fuzz/corpus; fails on any crash.
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) SWIFT=$(SWIFT) fuzz/run.sh

integration-test: test-deps $(VENV)/.ready
	$(SWIFT) build
	STORYCIRCLE_BIN=$(abspath $(BIN)) $(PY) -m pytest Tests/Integration -q -rs

$(VENV)/.ready: Tests/Integration/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r Tests/Integration/requirements.txt
	touch $@

# The Python peer of the bench runs PyPI's current websockets (bench/requirements.txt), which the
# tests' pin must not hold back: a venv of its own.
$(BENCH_VENV)/.ready: bench/requirements.txt
	$(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install -q --upgrade pip
	$(BENCH_VENV)/bin/python -m pip install -q -r bench/requirements.txt
	touch $@

## make bench: release build, then StoryCircle's scenarios and its broadcast against four peers (C
## libwebsockets, Python websockets+uvloop, Node.js ws, Go gorilla), each in its ordinary form (one write per
## frame) and its batching form (bench/baseline/PROTOCOL.md), and StoryCircle with coalescing off; 3 runs
## each, the servers' order rotated, server and generator pinned to separate cores. The headline is the
## classroom's regime (lock-step, one frame per child, 250 × 40 and 1 × 2,000, 10 s windows); the fan-out's
## burst follows as "draining a backlog"; 500 teachers signing in within a minute (p99 < 300 ms, Argon2id at
## OWASP's cost, bench/signin.py); last, a node's capacity (bench/capacity.sh). Writes bench/results.json
## and bench/results.md.
## BENCH_QUICK=1 make bench: small sizes, one run, results under build/bench/ (a check of the machinery).
bench: release bench-deps $(VENV)/.ready $(BENCH_VENV)/.ready
	bench/run.sh

## make bench-signin: the sign-in scenario alone, 3 runs (RUNS, SIGNIN_TEACHERS, SIGNIN_SECONDS), its p99
## judged against the 300 ms target; results under build/bench/.
bench-signin: release $(VENV)/.ready
	SCENARIOS=signin bench/run.sh

## make bench-readme: the README's Performance table from the committed bench/results.json.
bench-readme: $(VENV)/.ready
	$(PY) bench/report.py --readme README.md --document bench/results.json

## make bench-profile: where StoryCircle's time goes in the 250-room fan-out (perf, strace; docs/performance.md).
bench-profile: release bench-deps
	bench/profile.sh

## make bench-lockstep: the classroom's regime alone, one frame per child (lock-step broadcasts), StoryCircle
## against the C and Node.js peers, 250 × 40 and 1 × 2,000, 3 runs with the order rotated (bench/lockstep.sh;
## SERVERS="before=DIR after=DIR" compares two builds).
bench-lockstep: release bench-deps
	bench/lockstep.sh

## make bench-tls: what HTTPS/WSS costs: the lock-step (250 × 40) with StoryCircle and the C peer each plain and
## over TLS, alternated in one run, and a join storm of 2,000 in 2 s plain and over TLS (bench/tls.sh; RUNS, SIZES).
bench-tls: release bench-deps
	bench/tls.sh

## make bench-capacity: a node's capacity alone: the sustained classroom load ramped 10,000 → 20,000 →
## 40,000 → … children until p99 ≥ 25 ms or an error (bench/capacity.sh; CAPACITY_LOADS, CAPACITY_SECONDS).
bench-capacity: release
	bench/capacity.sh

## make screenshots: copies the README's screenshots from build/screenshots/ (made by the browser tests).
README_SCREENSHOTS := phone-lobby phone-story phone-question-scrolled-countdown phone-reveal-your-answer phone-podium \
	projector-1920-lobby projector-1920-reveal-colours projector-1280-question-8-options \
	projector-1920-reveal-8-options-answer-grid teacher-question-roster teacher-finished-results teacher-roster-32 teacher-reveal-chart \
	es-phone-question es-phone-reveal ar-projector-1920-question ar-projector-1920-reveal ar-phone-question \
	teacher-library teacher-editor-problem phone-name-picker teacher-class-page \
	phone-picture-story phone-picture-question projector-1920-picture-question projector-1920-picture-reveal \
	first-hour-editor-answer-removed first-hour-teacher first-hour-phone-not-me first-hour-phone-end first-hour-class-report \
	walk-sign-in walk-admin-accounts walk-passkey-added
screenshots:
	@mkdir -p docs/screenshots
	@for name in $(README_SCREENSHOTS); do cp build/screenshots/$$name.png docs/screenshots/ || exit 1; done

## make cluster: nginx + 3 nodes + PostgreSQL as local processes (scripts/cluster.sh; `down` to stop).
cluster: build
	scripts/cluster.sh up

## make store-bench: SQLite against PostgreSQL, 2,000 answers in one second, acknowledgement latency.
store-bench: release test-deps
	scripts/postgres-test.sh run $(RELEASE)/storycircle-store-bench --postgres '{url}'

clean:
	rm -rf .build $(VENV) $(BENCH_VENV)
