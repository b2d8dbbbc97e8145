# StoryCircle: `make run` starts a demo room, `make test` runs every test. Both install what is missing.
SWIFT   ?= swift
PYTHON  ?= python3
VENV    := .venv
PY      := $(VENV)/bin/python
STORY   ?= config/stories/pip-the-robot.json
PORT    ?= 8080
BIN     := .build/debug/storycircle
RELEASE := .build/release

.PHONY: all deps test-deps build release run test swift-test tsan-test integration-test bench clean

all: build

deps:
	@scripts/install-deps.sh

test-deps:
	@scripts/install-deps.sh --test

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

## make run: build, then start a demo room on the sample story (prints the join code and URLs).
run: build
	$(BIN) start $(STORY) --port $(PORT)

## make test: every test: the Swift unit and server tests, the same under ThreadSanitizer, then the
## integration tests (real sockets, the CLI, a crash, headless Chromium) driven from Python.
test: test-deps $(VENV)/.ready
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	$(MAKE) tsan-test
	$(MAKE) integration-test

swift-test: deps
	$(SWIFT) test

# The transport and room tests again under ThreadSanitizer, in their own build folder so the normal
# build is not invalidated.
tsan-test: deps
	$(SWIFT) test --sanitize=thread --scratch-path .build/tsan --filter StoryCircleServerTests

integration-test: test-deps $(VENV)/.ready
	$(SWIFT) build
	STORYCIRCLE_BIN=$(abspath $(BIN)) $(PY) -m pytest Tests/Integration -q -rs

$(VENV)/.ready: Tests/Integration/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r Tests/Integration/requirements.txt
	touch $@

## make bench: release build, load generator and baselines; writes bench/results.json and a table.
bench: release test-deps $(VENV)/.ready
	bench/run.sh

clean:
	rm -rf .build $(VENV)
