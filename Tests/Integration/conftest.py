"""Shared fixtures for the integration tests: a real StoryCircle server on a free port, driven by an
independent client (Python `websockets`, urllib), never by the server's own code."""
import asyncio
import json
import os
import pathlib
import queue
import re
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest
import websockets

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("STORYCIRCLE_BIN", str(ROOT / ".build" / "debug" / "storycircle"))
STORIES = pathlib.Path(__file__).resolve().parent / "stories"
SHORT_STORY = STORIES / "short.json"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Each phase's report kept on the test (`item.report_call`), so that a fixture's teardown can tell
    whether the test failed and leave what it saw (a cluster's logs) in the output."""
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"report_{report.when}", report)


def failed(request):
    report = getattr(request.node, "report_call", None)
    return report is None or report.failed


class Server:
    """A `storycircle serve` process with its own data folder."""

    def __init__(self, data, config=None, env=None, args=()):
        self.data = pathlib.Path(data)
        self.data.mkdir(parents=True, exist_ok=True)
        self.config = config or {}
        self.env = env or {}
        self.args = list(args)
        self.process = None
        self.port = None
        self.lines = queue.Queue()
        self.output = []

    def start(self, port=0, timeout=20):
        config_path = self.data / "config.json"
        config_path.write_text(json.dumps(self.config))
        env = dict(os.environ, **self.env)
        self.process = subprocess.Popen(
            [BIN, "serve", "--port", str(port), "--data", str(self.data), "--config", str(config_path), *self.args],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
        )
        threading.Thread(target=self._read, daemon=True).start()
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                line = self.lines.get(timeout=deadline - time.time())
            except queue.Empty:
                break
            match = re.search(r"listening on (\S+) \(port (\d+)\)", line)
            if match:
                self.port = int(match.group(2))
                return self
            if self.process.poll() is not None:
                break
        raise RuntimeError("server did not start:\n" + "".join(self.output))

    def wait_for_output(self, text, timeout=10):
        """Waits for a line of the server's output containing `text`; the lines after "listening" come later."""
        deadline = time.time() + timeout
        while not any(text in line for line in self.output):
            try:
                self.lines.get(timeout=max(0.0, deadline - time.time()))
            except queue.Empty:
                raise AssertionError(f"the server never printed {text!r}:\n" + "".join(self.output))
        return True

    def _read(self):
        for line in self.process.stdout:
            self.output.append(line)
            self.lines.put(line)

    @property
    def admin_token(self):
        return (self.data / "admin-token").read_text().strip()

    @property
    def http(self):
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self):
        return f"ws://127.0.0.1:{self.port}/ws"

    def request(self, method, path, token=None, body=None, raw=None):
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        request = urllib.request.Request(self.http + path, data=data, method=method)
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=15) as response:
                return response.status, self.lower(response.headers), response.read()
        except urllib.error.HTTPError as error:
            return error.code, self.lower(error.headers), error.read()

    @staticmethod
    def lower(headers):
        """Header names are case-insensitive (nginx capitalises them); tests use lowercase."""
        return {name.lower(): value for name, value in headers.items()}

    def create_room(self, story=SHORT_STORY, settings=None):
        document = json.loads(pathlib.Path(story).read_text()) if not isinstance(story, dict) else story
        status, _, body = self.request("POST", "/api/rooms", self.admin_token, {"story": document, "settings": settings or {}})
        assert status == 201, body
        return json.loads(body)

    def command(self, room, command, **extra):
        status, _, body = self.request("POST", f"/api/rooms/{room['code']}/commands", room["teacherToken"], {"command": command, **extra})
        return status, json.loads(body)

    def stop(self, sig=signal.SIGTERM, timeout=10):
        if self.process and self.process.poll() is None:
            started = time.monotonic()
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise
            return time.monotonic() - started
        return 0.0

    def kill(self):
        self.process.kill()
        self.process.wait()


@pytest.fixture
def server(tmp_path):
    running = Server(tmp_path / "data").start()
    yield running
    running.stop()


@pytest.fixture
def make_server(tmp_path):
    """A factory for servers with a given configuration; all are stopped at the end."""
    started = []

    def make(config=None, env=None, data=None, args=()):
        running = Server(data or tmp_path / f"data{len(started)}", config=config, env=env, args=args).start()
        started.append(running)
        return running

    yield make
    for running in started:
        try:
            running.stop()
        except Exception:
            pass


class Client:
    """One WebSocket connection that keeps every frame it received, so tests can check them afterwards."""

    def __init__(self, ws):
        self.ws = ws
        self.frames = []
        self.pending = []

    @classmethod
    async def connect(cls, server, **kwargs):
        return cls(await websockets.connect(server.ws_url, max_size=2**24, **kwargs))

    async def send(self, message):
        await self.ws.send(json.dumps(message) if isinstance(message, dict) else message)

    async def recv(self, timeout=15):
        if self.pending:
            return self.pending.pop(0)
        message = json.loads(await asyncio.wait_for(self.ws.recv(), timeout))
        self.frames.append(message)
        return message

    async def expect(self, kind, timeout=15):
        """The next message of type `kind`; other messages received meanwhile stay readable in order."""
        skipped = []
        deadline = time.monotonic() + timeout
        try:
            while True:
                message = await self.recv(max(0.01, deadline - time.monotonic()))
                if message["type"] == kind:
                    return message
                skipped.append(message)
        finally:
            self.pending = skipped + self.pending

    async def close_code(self, timeout=15):
        """Reads until the server closes; returns (code, reason)."""
        try:
            while True:
                await self.recv(timeout)
        except websockets.ConnectionClosed as closed:
            return (closed.rcvd.code, closed.rcvd.reason) if closed.rcvd else (None, None)

    def types(self):
        return [frame["type"] for frame in self.frames]

    async def close(self):
        await self.ws.close()


async def join(server, room, nickname, **kwargs):
    client = await Client.connect(server, **kwargs)
    await client.send({"type": "join", "room": room["code"], "nickname": nickname})
    welcome = await client.expect("welcome")
    return client, welcome


async def screen(server, room, kind="watch", token_key="dashboardToken"):
    client = await Client.connect(server)
    await client.send({"type": kind, "room": room["code"], "token": room[token_key]})
    await client.expect("welcome")
    return client


async def wait_until(server_time_ms):
    """Waits until the server's instant `server_time_ms` (same machine, same clock)."""
    delay = server_time_ms / 1000 - time.time()
    if delay > 0:
        await asyncio.sleep(delay)


def stop_process(pid, timeout=10):
    """SIGSTOP `pid` and return once every one of its threads has stopped. `kill` returns before that: Linux
    wakes one thread to take the signal, and only that thread stops the others, so a busy machine can let
    the rest run on for milliseconds (answering a WebSocket upgrade, acknowledging an answer) after the
    call. Each thread's state in /proc says when it has stopped."""
    os.kill(pid, signal.SIGSTOP)
    deadline = time.monotonic() + timeout
    while True:
        running = []
        for stat in pathlib.Path(f"/proc/{pid}/task").glob("*/stat"):
            try:
                state = stat.read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue  # a thread that ended meanwhile
            if state not in ("T", "t"):
                running.append(stat.parent.name)
        if not running:
            return
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGCONT)
            raise AssertionError(f"threads {running} of process {pid} had not stopped {timeout} s after SIGSTOP")
        time.sleep(0.001)  # the poll's interval: the loop waits for the threads' state, not for the time
