"""Rooms spread over three nodes behind nginx, stored in one PostgreSQL, surviving a node's death.

The topology comes from scripts/cluster.sh (the same as docker-compose.yml, as local processes). 20 rooms of
10 children each play through the proxy; during an open question the node holding the most rooms is killed
with SIGKILL. Afterwards every acknowledged answer is in the results, every child of the dead node's rooms
is back in its room with its score (rejoining with its token, through the proxy, on the child page's own
reconnection schedule, and one of them is the real page in headless Chromium), p99 of the time until they
are welcomed back is under 3 s, and the rooms on the other nodes never noticed (not one of their
connections closed). Then the faults a dead node is not: a node paused past its lease (SIGSTOP), and
PostgreSQL itself killed and started again.
"""
import asyncio
import json
import math
import os
import pathlib
import random
import re
import shutil
import signal
import socket
import ssl
import statistics
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import pytest
import websockets

from conftest import BIN, ROOT, SHORT_STORY, failed, stop_process, wait_until

ROOMS = 20
CHILDREN = 10
# The nodes' lease (scripts/cluster.sh passes STORYCIRCLE_LEASE_SECONDS on): how long a paused node's rooms
# wait (a dead node's are taken at once: its database session, and the lock beside each lease, end with it).
LEASE_SECONDS = int(os.environ.get("STORYCIRCLE_LEASE_SECONDS", "10"))

# The child page's reconnection schedule and ping interval, read from the page itself so the Python children
# cannot drift from it (web-static/js/connection.js: BACKOFF, reconnectDelay, CLOCK_SYNC).
_CONNECTION_JS = (ROOT / "web-static" / "js" / "connection.js").read_text()
PAGE_BACKOFF = {key: float(value) for key, value in
                re.findall(r"(\w+): ([\d.]+)", re.search(r"const BACKOFF = \{([^}]*)\}", _CONNECTION_JS).group(1))}
PAGE_PING_SECONDS = int(re.search(r"const CLOCK_SYNC = \{[^}]*intervalMs: (\d+)", _CONNECTION_JS).group(1)) / 1000


def page_reconnect_delay(attempt, rng=random):
    """Seconds the page waits before reconnection attempt `attempt` (1: the first after a drop), as
    connection.js's reconnectDelay: a few quick, slightly growing tries jittered up by half, then doubling,
    jittered down to half."""
    def js_round(x):  # Math.round: halves go up (Python's round() goes to even)
        return math.floor(x + 0.5)

    quick_ms, quick_tries = PAGE_BACKOFF.get("quickMs", 0), PAGE_BACKOFF.get("quickTries", 0)
    if attempt <= quick_tries:
        return js_round(quick_ms * PAGE_BACKOFF.get("quickGrowth", 1) ** (attempt - 1) * (1 + rng.random() * 0.5)) / 1000
    base = min(PAGE_BACKOFF["firstMs"] * 2 ** (attempt - quick_tries - 1), PAGE_BACKOFF["maxMs"])
    return js_round(base * (0.5 + rng.random() * 0.5)) / 1000


class FixedRandom:
    """A random source that always says `value` (to compare the Python schedule with the page's)."""

    def __init__(self, value):
        self.value = value

    def random(self):
        return self.value


def nearest_rank(values, fraction):
    return sorted(values)[math.ceil(len(values) * fraction) - 1]


def free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    try:
        for probe in sockets:
            probe.bind(("127.0.0.1", 0))
        return [probe.getsockname()[1] for probe in sockets]
    finally:
        for probe in sockets:
            probe.close()


class Cluster:
    """scripts/cluster.sh's cluster. The children reach it as browsers do: HTTPS and WSS through nginx
    (`port`), trusting the cluster's own CA (`tls`); nginx's plain HTTP port (`http_port`) only redirects.
    The nodes' own ports (`node_ports`) speak plain HTTP on the cluster's network."""

    def __init__(self, lease_seconds=None):
        # Not under pytest's tmp_path: PostgreSQL runs as the `postgres` user, who cannot enter it.
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="storycircle-cluster-"))
        ports = free_ports(5)
        self.port, self.node_ports, self.http_port = ports[0], ports[1:4], ports[4]
        self.env = dict(os.environ, STORYCIRCLE_CLUSTER_DIR=str(self.dir), STORYCIRCLE_CLUSTER_PORT=str(self.port),
                        STORYCIRCLE_CLUSTER_HTTP_PORT=str(self.http_port),
                        STORYCIRCLE_CLUSTER_NODE_PORTS=" ".join(map(str, self.node_ports)), STORYCIRCLE_BIN=BIN)
        self.tls = None
        if lease_seconds is not None:
            self.env["STORYCIRCLE_LEASE_SECONDS"] = str(lease_seconds)

    def script(self, *command):
        return subprocess.run([str(ROOT / "scripts" / "cluster.sh"), *command], env=self.env, capture_output=True, text=True, timeout=120)

    def up(self):
        for tool in ("nginx", "initdb"):
            assert shutil.which(tool) or pathlib.Path(f"/usr/sbin/{tool}").exists() or list(pathlib.Path("/usr/lib/postgresql").glob(f"*/bin/{tool}")), \
                f"{tool} is missing: run scripts/install-deps.sh --test"
        done = self.script("up")
        assert done.returncode == 0, done.stdout + done.stderr
        self.started()

    def started(self):
        self.admin = (self.dir / "admin-token").read_text().strip()
        self.tls = ssl.create_default_context(cafile=str(self.dir / "tls" / "ca.crt"))

    @property
    def origin(self):
        """The pages' origin: the proxy's https address (STORYCIRCLE_PUBLIC_URL)."""
        return f"https://127.0.0.1:{self.port}"

    def ws_url(self, code):
        return f"wss://127.0.0.1:{self.port}/ws?room={code}"

    def down(self):
        self.script("down")
        shutil.rmtree(self.dir, ignore_errors=True)

    def print_logs(self, lines=60):
        """The end of every log in the cluster's folder (nodes, nginx, etcd, Patroni), for a failed test's
        output: what the processes said is gone with the folder once the test has ended."""
        for log in sorted(self.dir.rglob("*.log")):
            tail = log.read_text(errors="replace").splitlines()[-lines:]
            print(f"\n--- the last {len(tail)} lines of {log.relative_to(self.dir)} ---\n" + "\n".join(tail))

    def held_by(self, node):
        """The codes of the rooms node `node` holds, from the lease table. Asking the node itself about a room
        it does not hold would be traffic for that room, which the node answers by wanting it (a handover)."""
        url = subprocess.run([str(ROOT / "scripts" / "postgres-test.sh"), "url"], env=dict(self.env, STORYCIRCLE_PG_DIR=str(self.dir / "pg")),
                             capture_output=True, text=True, timeout=30, check=True).stdout.strip()
        rows = subprocess.run(["psql", url, "-Atc", f"SELECT room_code FROM room_owners WHERE node = 'node{node}' AND expires_at > now()"],
                              capture_output=True, text=True, timeout=30, check=True).stdout
        return set(rows.split())

    def pid(self, node):
        return int((self.dir / f"node{node}.pid").read_text())

    def request(self, method, path, token=None, body=None, port=None):
        data = json.dumps(body).encode() if body is not None else None
        # Through nginx: HTTPS with the cluster's CA; a node's own port: plain HTTP.
        address = f"http://127.0.0.1:{port}" if port else self.origin
        request = urllib.request.Request(f"{address}{path}", data=data, method=method)
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=15, context=None if port else self.tls) as response:
                return response.status, dict(response.headers), json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), json.loads(error.read() or b"null")

    def command(self, room, command, deadline=30):
        """A teacher's command through the proxy; a 503 `try_again` (the room is moving) is retried."""
        until = time.monotonic() + deadline
        while True:
            status, headers, body = self.request("POST", f"/api/rooms/{room['code']}/commands", room["teacherToken"], {"command": command})
            if status != 503 or time.monotonic() > until:
                assert status == 200, (command, status, body)
                return body
            assert body["error"]["code"] in ("try_again", "storage_unavailable") and "Retry-After" in headers
            time.sleep(0.2)


@pytest.fixture
def cluster(request):
    running = Cluster()
    try:
        running.up()
        yield running
    finally:
        if failed(request):
            running.print_logs()
        running.down()


@pytest.fixture
def quick_cluster(request):
    """Leases of 3 s (the least a node accepts): a failover, then a handover back, fit in a short test."""
    running = Cluster(lease_seconds=3)
    try:
        running.up()
        yield running
    finally:
        if failed(request):
            running.print_logs()
        running.down()


class Child:
    """One child's page, as the browser runs it: a WebSocket to /ws?room=<code>, pinging as often as the page
    does (which keeps it open through nginx's short read timeout), rejoining with its token after a close on
    the page's schedule. One reader per connection keeps what arrives in order; `reading` ends when the
    connection does, with its close code."""

    def __init__(self, cluster, room, index, room_index):
        self.cluster, self.room, self.name = cluster, room, f"Kid {index}"
        # Each child from an address of its own (all of 127/8 is this machine), as in a classroom: the
        # nodes rate-limit joins per address, and nginx passes the address on in X-Forwarded-For.
        self.address = f"127.1.{room_index}.{index + 1}"
        self.token = None
        self.ws = None
        self.reading = None
        self.welcomes = []

    async def open(self, hello):
        url = self.cluster.ws_url(self.room["code"])
        # The page never gives up on a pong, so neither does this child (ping_timeout None).
        self.ws = await websockets.connect(url, origin=self.cluster.origin, ssl=self.cluster.tls, local_addr=(self.address, 0),
                                           open_timeout=10, max_queue=None, ping_interval=PAGE_PING_SECONDS, ping_timeout=None)
        self.inbox = asyncio.Queue()
        self.reading = asyncio.ensure_future(self.read(self.ws, self.inbox))
        await self.ws.send(json.dumps(hello))

    async def read(self, ws, inbox):
        try:
            async for frame in ws:
                message = json.loads(frame)
                if message["type"] == "welcome":
                    self.welcomes.append(message)
                inbox.put_nowait(message)
        except websockets.ConnectionClosed:
            pass
        inbox.put_nowait(None)
        return ws.close_code

    async def join(self):
        await self.open({"type": "join", "room": self.room["code"], "nickname": self.name})
        welcome = await self.expect("welcome")
        self.token = welcome["token"]
        return welcome

    async def expect_any(self, kinds, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            message = await asyncio.wait_for(self.inbox.get(), max(0.01, deadline - time.monotonic()))
            if message is None:
                raise ConnectionError(f"{self.name} of room {self.room['code']}: closed while waiting for {kinds}")
            if message["type"] in kinds:
                return message

    async def expect(self, kind, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            message = await asyncio.wait_for(self.inbox.get(), max(0.01, deadline - time.monotonic()))
            if message is None:
                raise ConnectionError(f"{self.name} of room {self.room['code']}: closed while waiting for {kind}")
            if message["type"] == kind:
                return message

    async def rejoin(self, deadline):
        """Reconnects until welcomed again, waiting before each attempt as the page does (its schedule, from
        the first attempt after the drop)."""
        attempt = 0
        while time.monotonic() < deadline:
            attempt += 1
            await asyncio.sleep(page_reconnect_delay(attempt))  # the page's wait before this attempt; not synchronisation
            try:
                await self.open({"type": "rejoin", "room": self.room["code"], "token": self.token})
                while True:
                    message = await asyncio.wait_for(self.inbox.get(), 10)
                    if message is None:
                        break
                    if message["type"] == "welcome":
                        return message
                    if message["type"] == "error":
                        assert message["code"] in ("try_again", "storage_unavailable"), message
            except (websockets.ConnectionClosed, websockets.InvalidStatus, OSError, asyncio.TimeoutError):
                pass
        raise AssertionError(f"{self.name} of room {self.room['code']} was not welcomed back in time")


# Records when the page is welcomed, on the browser's wall clock (this machine's): installed before the
# page's own scripts, it sees every socket the page opens.
_RECORD_WELCOMES = """
window.__welcomes = [];
const NativeWebSocket = window.WebSocket;
window.WebSocket = class extends NativeWebSocket {
  constructor(...args) {
    super(...args);
    this.addEventListener("message", (event) => {
      try { if (JSON.parse(event.data).type === "welcome") window.__welcomes.push(Date.now()); } catch (error) {}
    });
  }
};
"""


def open_child_page(cluster, code, nickname):
    """The child page in headless Chromium, through the proxy, joined to room `code`."""
    from selenium.webdriver.common.by import By
    from browser_support import browser, join_screen, trusting_home, wait
    # A device that trusts the cluster's CA, as a school's managed devices trust the district's.
    driver = browser(home=trusting_home(cluster.dir / "tls" / "ca.crt", cluster.dir / "browser-home"))
    try:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": _RECORD_WELCOMES})
        driver.get(f"{cluster.origin}/?room={code}")
        join_screen(driver).send_keys(nickname)
        driver.find_element(By.ID, "join-button").click()
        wait(driver, lambda d: len(d.execute_script("return window.__welcomes")) >= 1, message=f"{nickname} was welcomed")
        return driver
    except BaseException:
        driver.quit()
        raise


def node_rooms(cluster):
    """Rooms each node runs, from its own /healthz (asked directly, not through the proxy)."""
    counts = {}
    for node, port in enumerate(cluster.node_ports, start=1):
        status, _, health = cluster.request("GET", "/healthz", port=port)
        assert status == 200, health
        counts[node] = health["rooms"]
    return counts


def test_kill_9_of_the_busiest_node_loses_no_acknowledged_answer_and_disturbs_no_other_room(cluster):
    story = json.loads(SHORT_STORY.read_text())
    rooms = []
    for _ in range(ROOMS):
        status, _, room = cluster.request("POST", "/api/rooms", cluster.admin, {"story": story, "settings": {"speedPoints": False, "timer": False}})
        assert status == 201, room
        rooms.append(room)
    assert len({room["code"] for room in rooms}) == ROOMS

    acknowledged = {}   # (code, nickname, question) -> option
    scores = {}         # (code, nickname) -> score after question 1's reveal
    rng = random.Random(12)

    async def scenario():
        children = {room["code"]: [Child(cluster, room, i, r) for i in range(CHILDREN)] for r, room in enumerate(rooms)}
        await asyncio.gather(*(child.join() for kids in children.values() for child in kids))

        # Question 1 everywhere: everyone answers, it is revealed, points are given.
        for room in rooms:
            cluster.command(room, "start")
            cluster.command(room, "skip")

        async def answer(child, question):
            asked = await child.expect("question")
            assert asked["index"] == question
            await wait_until(asked["opensAt"])
            option = rng.randrange(3)
            await child.ws.send(json.dumps({"type": "answer", "question": question, "option": option}))
            ack = await child.expect("answer.ack")
            acknowledged[(child.room["code"], child.name, question)] = ack["option"]

        await asyncio.gather(*(answer(child, 0) for kids in children.values() for child in kids))
        for kids in children.values():
            for child in kids:
                reveal = await child.expect("reveal")
                scores[(child.room["code"], child.name)] = reveal["you"]["standing"]["score"]

        # Question 2, open: six children of each room answer and are acknowledged; four have not answered.
        for room in rooms:
            cluster.command(room, "next")
        await asyncio.gather(*(answer(child, 1) for kids in children.values() for child in kids[:6]))

        counts = node_rooms(cluster)
        assert sum(counts.values()) == ROOMS, counts
        victim = max(counts, key=counts.get)
        assert counts[victim] < ROOMS, f"the ring put every room on one node: {counts}"
        affected = cluster.held_by(victim)
        assert len(affected) == counts[victim], (affected, counts)

        watchers = {(code, child.name): child.reading for code, kids in children.items() for child in kids}
        # One more child of the dead node's rooms is the page itself, in headless Chromium.
        page = await asyncio.to_thread(open_child_page, cluster, sorted(affected)[0], "Web")
        pages.append(page)
        # The Python children's schedule is the page's own: the same waits, from the page's reconnectDelay.
        randoms = (0, 0.5, 0.999)
        schedule = page.execute_async_script("""
            const [randoms, done] = arguments;
            import("/js/connection.js").then((m) => done(randoms.map((r) => [1, 2, 3, 4, 5, 6, 7, 8].map((a) => m.reconnectDelay(a, undefined, r)))));
            """, list(randoms))
        for r, waits in zip(randoms, schedule):
            assert [round(page_reconnect_delay(a, FixedRandom(r)) * 1000) for a in range(1, 9)] == waits, (r, waits)

        # Where the kill falls against the nodes' renewal timer (every third of a lease): at random in each
        # run (make bench runs this several times), or fixed by STORYCIRCLE_FAILOVER_KILL_DELAY (seconds).
        kill_delay = float(os.environ.get("STORYCIRCLE_FAILOVER_KILL_DELAY", random.uniform(0, LEASE_SECONDS / 3)))
        await asyncio.sleep(kill_delay)  # the fault's timing, not synchronisation
        os.kill(cluster.pid(victim), 9)
        killed_at = time.monotonic()
        killed_wall = time.time()

        failover = []

        def page_back():
            from browser_support import wait
            wait(page, lambda d: len(d.execute_script("return window.__welcomes")) >= 2, timeout=60, message="the page was welcomed back")
            return page.execute_script("return window.__welcomes")[1] / 1000 - killed_wall

        async def come_back(child):
            await watchers[(child.room["code"], child.name)]
            welcome = await child.rejoin(deadline=killed_at + 60)
            failover.append(time.monotonic() - killed_at)
            assert welcome["player"]["nickname"] == child.name
            you = welcome["room"]["you"]
            assert you["score"] == scores[(child.room["code"], child.name)], f"{child.name} finds their points"
            question = welcome["room"]["question"]
            assert question["index"] == 1, "the open question comes back"
            key = (child.room["code"], child.name, 1)
            if key in acknowledged:
                assert welcome["room"].get("yourAnswer") is not None, "an acknowledged answer stands"
            return welcome

        affected_children = [child for code in affected for child in children[code]]
        welcomes, page_seconds = await asyncio.gather(asyncio.gather(*(come_back(child) for child in affected_children)),
                                                      asyncio.to_thread(page_back))
        failover.append(page_seconds)
        p50 = statistics.median(failover)
        p99 = nearest_rank(failover, 0.99)
        figures.update(rooms=len(affected), children=len(failover), p50=p50, p99=p99, max=max(failover),
                       page=page_seconds, killDelay=kill_delay, leaseSeconds=LEASE_SECONDS, backoff=PAGE_BACKOFF)
        print(f"\nfailover: {len(affected)} rooms, {len(failover)} children (one in Chromium) back after kill -9 "
              f"{kill_delay:.2f} s after the last join; p50 {p50:.2f} s, p99 {p99:.2f} s, max {max(failover):.2f} s, "
              f"the Chromium page {page_seconds:.2f} s (node {victim} held {counts})")

        # The children who had not answered question 2 do so now, on the room's new node.
        for child, welcome in zip(affected_children, welcomes):
            key = (child.room["code"], child.name, 1)
            if key not in acknowledged:
                await wait_until(welcome["room"]["question"]["opensAt"])
                option = rng.randrange(4)
                await child.ws.send(json.dumps({"type": "answer", "question": 1, "option": option}))
                ack = await child.expect("answer.ack")
                acknowledged[key] = ack["option"]

        # The other rooms never noticed: their children answer on the same connections.
        others = [child for code, kids in children.items() if code not in affected for child in kids]
        for child in others:
            assert not watchers[(child.room["code"], child.name)].done(), f"{child.name} of room {child.room['code']} was disconnected"
            assert len(child.welcomes) == 1, "no second welcome: the room was not rebuilt or moved"
        for child in others:
            key = (child.room["code"], child.name, 1)
            if key not in acknowledged:
                option = rng.randrange(4)
                await child.ws.send(json.dumps({"type": "answer", "question": 1, "option": option}))
                ack = await child.expect("answer.ack")
                acknowledged[key] = ack["option"]
        for child in others:
            assert not watchers[(child.room["code"], child.name)].done()
        for watcher in watchers.values():
            watcher.cancel()
        for kids in children.values():
            for child in kids:
                await child.ws.close()

    figures = {}
    pages = []
    try:
        asyncio.run(scenario())
    finally:
        for page in pages:
            page.quit()

    # Every acknowledged answer is in the results, and nothing else.
    stored = {}
    for room in rooms:
        status, _, results = cluster.request("GET", f"/api/rooms/{room['code']}/results", room["teacherToken"])
        assert status == 200, results
        stored.update({(room["code"], p["nickname"], a["question"]): a["option"]
                       for p in results["players"] for a in p["answers"] if a.get("option") is not None})
    lost = sum(1 for key, option in acknowledged.items() if stored.get(key) != option)
    figures.update(acknowledged=len(acknowledged), lost=lost)
    # make bench's failover scenario runs this test and keeps its figures.
    if os.environ.get("STORYCIRCLE_FAILOVER_FIGURES"):
        pathlib.Path(os.environ["STORYCIRCLE_FAILOVER_FIGURES"]).write_text(json.dumps(figures))
    assert lost == 0, "acknowledged answers missing or changed after the failover"
    assert stored == acknowledged, "nothing that was not acknowledged was stored"
    assert len(acknowledged) == ROOMS * CHILDREN * 2
    assert figures["p99"] < 3, f"p99 back after kill -9 is {figures['p99']:.2f} s with the page's backoff (at most 3 s)"


def test_a_killed_node_that_comes_back_gets_its_rooms_handed_back_and_teachers_reach_them(quick_cluster):
    """After kill -9 and a failover, the node starts again: nginx sends its rooms' traffic to it, it is
    refused (the rooms are held elsewhere) and says it wants them, the holders hand them over at their next
    renewal, and the children, told to try again, reconnect to it with their scores. No acknowledged
    answer is lost, and the rooms that never lived on that node are not disturbed."""
    cluster = quick_cluster
    story = json.loads(SHORT_STORY.read_text())
    rooms = []
    for _ in range(8):
        status, _, room = cluster.request("POST", "/api/rooms", cluster.admin, {"story": story, "settings": {"speedPoints": False, "timer": False}})
        assert status == 201, room
        rooms.append(room)
    acknowledged = {}
    figures = {}

    async def scenario():
        children = {room["code"]: [Child(cluster, room, i, r) for i in range(3)] for r, room in enumerate(rooms)}
        await asyncio.gather(*(child.join() for kids in children.values() for child in kids))
        for room in rooms:
            cluster.command(room, "start")
            cluster.command(room, "skip")

        async def answer(child, question):
            asked = await child.expect("question")
            assert asked["index"] == question
            await wait_until(asked["opensAt"])
            await child.ws.send(json.dumps({"type": "answer", "question": question, "option": question % 3}))
            ack = await child.expect("answer.ack")
            acknowledged[(child.room["code"], child.name, question)] = ack["option"]

        await asyncio.gather(*(answer(child, 0) for kids in children.values() for child in kids))
        scores = {}
        for kids in children.values():
            for child in kids:
                reveal = await child.expect("reveal")
                scores[(child.room["code"], child.name)] = reveal["you"]["standing"]["score"]

        counts = node_rooms(cluster)
        victim = max(counts, key=counts.get)
        assert 0 < counts[victim] < len(rooms), f"the ring put every room on one node, or none: {counts}"
        affected = cluster.held_by(victim)
        moving = [child for code in affected for child in children[code]]
        others = [child for code, kids in children.items() if code not in affected for child in kids]

        async def welcomed_back(child, since, deadline):
            await child.reading
            welcome = await child.rejoin(deadline=deadline)
            assert welcome["player"]["nickname"] == child.name
            assert welcome["room"]["you"]["score"] == scores[(child.room["code"], child.name)], f"{child.name} finds their points"
            return time.monotonic() - since

        # The failover, as in the test above.
        os.kill(cluster.pid(victim), 9)
        killed_at = time.monotonic()
        await asyncio.gather(*(welcomed_back(child, killed_at, killed_at + 40) for child in moving))
        other_readers = {child.name + child.room["code"]: child.reading for child in others}

        # The node comes back (same name, port and data folder, as a restarted container), once the killed
        # process is gone: the failover is quicker than a big process's teardown, and scripts/cluster.sh
        # takes a process still in /proc for a node still running.
        gone_by = time.monotonic() + 30
        while pathlib.Path(f"/proc/{cluster.pid(victim)}").exists():
            assert time.monotonic() < gone_by, "the killed node's process never went away"
            await asyncio.sleep(0.05)  # the poll's interval; the loop waits for the process, not for the time
        started = await asyncio.to_thread(cluster.script, "start-node", str(victim))
        assert started.returncode == 0, started.stdout + started.stderr
        restarted_at = time.monotonic()
        deadline = restarted_at + 30
        returning = [asyncio.ensure_future(welcomed_back(child, restarted_at, deadline)) for child in moving]

        # Teachers look at their rooms through the proxy, as the CLI and the dashboard do. Once nginx sends
        # them to the returned node (it waits out fail_timeout first), those requests are its wish for the
        # rooms; poll until it runs all of them again.
        while True:
            for code in affected:
                room = next(r for r in rooms if r["code"] == code)
                await asyncio.to_thread(cluster.request, "GET", f"/api/rooms/{code}", room["teacherToken"])
            held = (await asyncio.to_thread(node_rooms, cluster))[victim]
            if held == len(affected):
                break
            assert time.monotonic() < deadline, f"node {victim} runs {held} of its {len(affected)} rooms again after 30 s"
            await asyncio.sleep(0.2)  # the poll's interval; the loop waits for the rooms, not for the time
        rooms_back = time.monotonic() - restarted_at
        back = await asyncio.gather(*returning)

        # A teacher's command through the proxy reaches each room on the node it came back to.
        commanded = time.monotonic()
        for code in affected:
            room = next(r for r in rooms if r["code"] == code)
            await asyncio.to_thread(cluster.command, room, "next", 10)
        command_seconds = time.monotonic() - commanded
        assert (await asyncio.to_thread(node_rooms, cluster))[victim] == len(affected), "the rooms stayed on the returned node"
        await asyncio.gather(*(answer(child, 1) for child in moving))
        assert cluster.held_by(victim) == affected, "the returned node runs its rooms"

        for key, reader in other_readers.items():
            assert not reader.done(), f"{key}: a room that never lived on the returned node was disturbed"
        figures.update(rooms=len(affected), children=len(moving), rooms_back=rooms_back, children_back_max=max(back), command=command_seconds)
        print(f"\nhandback: node {victim} restarted; its {len(affected)} rooms back in {rooms_back:.2f} s, "
              f"{len(moving)} children welcomed there within {max(back):.2f} s, the teachers' commands took {command_seconds:.2f} s")
        for kids in children.values():
            for child in kids:
                child.reading.cancel()
                await child.ws.close()

    asyncio.run(scenario())
    stored = {}
    for room in rooms:
        status, _, results = cluster.request("GET", f"/api/rooms/{room['code']}/results", room["teacherToken"])
        assert status == 200, results
        stored.update({(room["code"], p["nickname"], a["question"]): a["option"]
                       for p in results["players"] for a in p["answers"] if a.get("option") is not None})
    lost = [key for key, option in acknowledged.items() if stored.get(key) != option]
    assert not lost, f"acknowledged answers missing after the handover: {lost}"


def stored_answers(cluster, rooms):
    """Every answer stored, by (room, nickname, question); a room that is moving (503 `try_again`: a node
    that came back wants it) is asked again, as the CLI does."""
    stored = {}
    for room in rooms:
        until = time.monotonic() + 30
        while True:
            status, _, results = cluster.request("GET", f"/api/rooms/{room['code']}/results", room["teacherToken"])
            if status != 503 or time.monotonic() > until:
                break
            time.sleep(0.2)  # the retry's interval; the loop waits for the room, not for the time
        assert status == 200, results
        stored.update({(room["code"], p["nickname"], a["question"]): a["option"]
                       for p in results["players"] for a in p["answers"] if a.get("option") is not None})
    return stored


def create_rooms(cluster, count):
    story = json.loads(SHORT_STORY.read_text())
    rooms = []
    for _ in range(count):
        status, _, room = cluster.request("POST", "/api/rooms", cluster.admin, {"story": story, "settings": {"speedPoints": False, "timer": False}})
        assert status == 201, room
        rooms.append(room)
    return rooms


async def at_first_question(cluster, rooms, per_room):
    """Children joined to every room, every room at its first question, open; returns them by room code."""
    children = {room["code"]: [Child(cluster, room, i, r) for i in range(per_room)] for r, room in enumerate(rooms)}
    await asyncio.gather(*(child.join() for kids in children.values() for child in kids))
    for room in rooms:
        await asyncio.to_thread(cluster.command, room, "start")
        await asyncio.to_thread(cluster.command, room, "skip")
    for kids in children.values():
        for child in kids:
            asked = await child.expect("question")
            child.opens_at = asked["opensAt"]
    await wait_until(max(child.opens_at for kids in children.values() for child in kids))
    return children


def test_a_node_paused_past_its_lease_acknowledges_nothing_after_resuming_and_its_rooms_are_reached_elsewhere(quick_cluster):
    """SIGSTOP keeps a node's process, its sockets and its database session: its rooms cannot be taken
    before their leases lapse (3 s here), but then they must be, through nginx, although the paused node's
    kernel still accepts connections. Taps sent to the paused node are never acknowledged: on resuming it
    finds its leases gone, stores nothing, and closes its connections with 1012 `try_again`; the children
    rejoin (on the page's schedule) and tap again."""
    cluster = quick_cluster
    rooms = create_rooms(cluster, 6)
    acknowledged = {}
    figures = {}

    async def scenario():
        children = await at_first_question(cluster, rooms, 2)
        counts = node_rooms(cluster)
        victim = max(counts, key=counts.get)
        affected = sorted(cluster.held_by(victim))
        # The ring may put every room on the paused node (six random codes on three nodes: about one run in
        # 250): the other nodes then take them all, which is the same test.
        assert affected, counts
        paused_children = [child for code in affected for child in children[code]]
        probe = next(room for room in rooms if room["code"] == affected[0])

        pid = cluster.pid(victim)
        stop_process(pid)
        stopped_at = time.monotonic()
        try:
            # Each child of the paused node's rooms taps: the frames wait in the paused node's socket.
            for child in paused_children:
                await child.ws.send(json.dumps({"type": "answer", "question": 0, "option": 1}))
            # The projector opens a paused room through nginx, and the teacher's page asks about it: both
            # reach another node, which takes the room once its lease has lapsed. The projector's upgrade
            # meets the paused node first (nginx gives up on it after its read timeout and leaves the node
            # out for a while), so the teacher's request goes elsewhere at once.
            projector = Child(cluster, probe, 99, 99)
            opened = time.monotonic()
            while True:
                await projector.open({"type": "watch", "room": probe["code"], "token": probe["dashboardToken"]})
                first = await asyncio.wait_for(projector.inbox.get(), 15)
                if first and first["type"] == "welcome":
                    break
                assert first is None or first["code"] == "try_again", first
                await projector.reading
                await asyncio.sleep(page_reconnect_delay(1))  # the page's wait before trying again
                assert time.monotonic() - opened < 20, "the projector never reached the paused node's room elsewhere"
            figures["projector"] = time.monotonic() - stopped_at
            asked = time.monotonic()
            status, _, body = await asyncio.to_thread(cluster.request, "GET", f"/api/rooms/{probe['code']}", probe["teacherToken"])
            figures["api"] = time.monotonic() - asked
            assert status == 200, (status, body)
            assert probe["code"] not in cluster.held_by(victim), "another node holds the room now"
            # Until every lease of the paused node has lapsed (by the database's clock): then it is paused
            # past its lease whatever nginx did.
            while cluster.held_by(victim):
                await asyncio.sleep(0.2)  # the poll's interval; the loop waits for the leases, not for the time
            figures["paused"] = time.monotonic() - stopped_at
        finally:
            os.kill(pid, signal.SIGCONT)
        resumed_at = time.monotonic()

        # Nothing the paused node took is acknowledged; its connections close with 1012.
        codes = await asyncio.wait_for(asyncio.gather(*(child.reading for child in paused_children)), 30)
        figures["closed"] = time.monotonic() - resumed_at
        assert set(codes) == {1012}, codes
        for child in paused_children:
            while not child.inbox.empty():
                message = child.inbox.get_nowait()
                assert message is None or message["type"] != "answer.ack", f"{child.name} was acknowledged by a node that had lost the room"
        # Their pages rejoin and find their taps not stored; they tap again, and that is acknowledged.
        for child in paused_children:
            welcome = await child.rejoin(deadline=time.monotonic() + 40)
            assert welcome["room"].get("yourAnswer") is None, f"{child.name}: a tap sent to the paused node was stored"
            question = welcome["room"]["question"]
            await wait_until(question["opensAt"])
            await child.ws.send(json.dumps({"type": "answer", "question": 0, "option": 2}))
            ack = await child.expect("answer.ack")
            acknowledged[(child.room["code"], child.name, 0)] = ack["option"]
        for kids in children.values():
            for child in kids:
                child.reading.cancel()
                await child.ws.close()
        await projector.ws.close()

    asyncio.run(scenario())
    print(f"\npaused node: the projector welcomed elsewhere {figures['projector']:.2f} s after the pause began, a teacher's "
          f"request then answered in {figures['api']:.2f} s; paused {figures['paused']:.2f} s; its connections closed 1012 "
          f"{figures['closed']:.2f} s after resuming")
    assert figures["projector"] < 12, "nginx's upgrade timeout (6 s) and the lease (3 s) bound the wait, not the pause"
    stored = stored_answers(cluster, rooms)
    assert {key: option for key, option in stored.items() if key in acknowledged} == acknowledged
    paused_rooms = {code for code, _, _ in acknowledged}
    assert {key for key in stored if key[0] in paused_rooms} == set(acknowledged), "only acknowledged taps were stored"


def postgres_data(cluster):
    return cluster.dir / "pg" / "data"


def kill_postgres(cluster):
    """kill -9 of this cluster's PostgreSQL: the postmaster and every backend it started (by their pids),
    as when its machine dies. Killing the postmaster alone would leave backends that still commit for a
    moment."""
    pid = int((postgres_data(cluster) / "postmaster.pid").read_text().split()[0])
    children = []
    for stat in pathlib.Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            children.append(int(stat.parent.name))
    os.kill(pid, 9)
    for child in children:
        try:
            os.kill(child, 9)
        except ProcessLookupError:
            pass
    return pid


def start_postgres_again(cluster):
    """Starts the killed PostgreSQL on its own data (scripts/postgres-test.sh start would make a new one),
    with the options that script gives it. Its orphaned backends exit by themselves on noticing the
    postmaster is gone; until they have, the new postmaster refuses to start, so it is tried again."""
    bindir = sorted(pathlib.Path("/usr/lib/postgresql").glob("*/bin"))[-1]
    pg = cluster.dir / "pg"
    command = [str(bindir / "pg_ctl"), "-D", str(pg / "data"), "-l", str(pg / "server.log"), "-w", "-t", "30",
               "-o", f"-c listen_addresses='' -c unix_socket_directories='{pg}' -c max_connections=300 -c fsync=on", "start"]
    if os.geteuid() == 0:
        command = ["runuser", "-u", "postgres", "--"] + command
    deadline = time.monotonic() + 30
    while True:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
        if done.returncode == 0:
            return
        assert time.monotonic() < deadline, done.stdout + done.stderr
        time.sleep(0.2)  # orphaned backends still hold the old shared memory; try again


def test_postgresql_down_for_5_s_bounces_no_room_and_no_node_refuses_its_own_room(cluster):
    """kill -9 of PostgreSQL (postmaster and backends) during an open question, started again 5 s later,
    with leases of 10 s. No lease is lost: no room stops with 1012, and a room with nothing to write keeps
    every connection. In the rooms where a child tapped during the outage, the tap's write outlives
    `storageRetrySeconds` (5 s): the room gives up as the storage rules say (its connections close 1013,
    and it lets its lease go, which cannot reach the database); when those children come back, their node
    takes its own room again at once instead of refusing it as "held by" itself, and every tap is
    acknowledged. Nothing is acknowledged while the database is down."""
    rooms = create_rooms(cluster, 6)
    acknowledged = {}
    figures = {}

    async def tap(child, option):
        """The answer's outcome: its ack, or None when it was refused (or the connection closed): the page
        then taps again."""
        question = child.welcomes[-1]["room"].get("question") if len(child.welcomes) > 1 else None
        if question:
            await wait_until(question["opensAt"])  # a rebuilt room reopens its question a moment later
        try:
            await child.ws.send(json.dumps({"type": "answer", "question": 0, "option": option}))
            message = await child.expect_any(("answer.ack", "error"), timeout=40)
        except (ConnectionError, websockets.ConnectionClosed):
            return None
        if message["type"] == "answer.ack":
            return message
        assert message["code"] in ("storage_unavailable", "try_again"), message
        return None

    async def bring_back(kids, since):
        """Children whose connection the storage rules closed (1013) reconnect at once, as their pages do."""
        closed = [child for child in kids if child.reading.done()]
        for child in closed:
            assert child.reading.result() == 1013, f"{child.name}'s connection closed {child.reading.result()}: only the storage rules' 1013 is expected"
        await asyncio.gather(*(child.rejoin(deadline=since + 30) for child in closed))
        return len(closed)

    async def tap_until_acknowledged(child, option, since):
        while True:
            outcome = await tap(child, option)
            if outcome is not None:
                return outcome
            assert time.monotonic() - since < 30, f"{child.name}'s tap was never acknowledged after PostgreSQL came back"
            if child.reading.done():
                await bring_back([child], since)
                await wait_until(child.welcomes[-1]["room"]["question"]["opensAt"])
            else:
                await asyncio.sleep(page_reconnect_delay(1))  # the page's pause before tapping again

    async def scenario():
        children = await at_first_question(cluster, rooms, 3)
        # One child of each room answers while all is well.
        for kids in children.values():
            ack = await tap(kids[0], 0)
            acknowledged[(kids[0].room["code"], kids[0].name, 0)] = ack["option"]
        quiet = [room["code"] for room in rooms[:3]]
        quiet_readers = [child.reading for code in quiet for child in children[code]]

        kill_postgres(cluster)
        down_at = time.monotonic()
        # In the other three rooms one child taps during the outage.
        during = [children[room["code"]][1] for room in rooms[3:]]
        pending = [asyncio.ensure_future(tap(child, 1)) for child in during]
        await asyncio.sleep(5)  # the outage's length: the fault, not synchronisation
        assert not any(task.done() and task.result() is not None for task in pending), "acknowledged while PostgreSQL was down"
        await asyncio.to_thread(start_postgres_again, cluster)
        back_at = time.monotonic()
        figures["down"] = back_at - down_at
        outcomes = await asyncio.gather(*pending)
        figures["reconnected"] = await bring_back([child for room in rooms[3:] for child in children[room["code"]]], back_at)
        for child, outcome in zip(during, outcomes):
            if outcome is None:
                outcome = await tap_until_acknowledged(child, 1, back_at)
            acknowledged[(child.room["code"], child.name, 0)] = outcome["option"]
        figures["acked"] = time.monotonic() - back_at
        # Then the third child of every room taps, on whatever connection the storage rules left it.
        for kids in children.values():
            ack = await tap_until_acknowledged(kids[2], 2, back_at)
            acknowledged[(kids[2].room["code"], kids[2].name, 0)] = ack["option"]
        figures["after"] = time.monotonic() - back_at
        assert not any(reader.done() for reader in quiet_readers), "a room with nothing to write lost a connection: it bounced"
        for code in quiet:
            for child in children[code]:
                assert len(child.welcomes) == 1, f"{child.name} was welcomed again: the room moved or restarted"
        for kids in children.values():
            for child in kids:
                assert not child.reading.done() or child.reading.result() == 1013
                child.reading.cancel()
                await child.ws.close()

    asyncio.run(scenario())
    print(f"\npostgresql down {figures['down']:.2f} s; {figures['reconnected']} children of the rooms that gave up a write reconnected; "
          f"the outage's taps acknowledged within {figures['acked']:.2f} s "
          f"of its return, every room's last tap within {figures['after']:.2f} s")
    stored = stored_answers(cluster, rooms)
    assert stored == acknowledged
    taken_back = 0
    for n in (1, 2, 3):
        log = (cluster.dir / f"node{n}.log").read_text()
        assert f"is held by node{n}" not in log, f"node{n} refused a room as held by itself"
        assert "its lease is lost" not in log, f"node{n} stopped a room for its lease"
        taken_back += log.count("Room lease released late, then taken again")
    print(f"rooms whose release had failed, released late and taken again by their own node on a hello: {taken_back}")


def test_an_erase_through_one_node_leaves_no_other_node_showing_the_child(quick_cluster):
    """A finished class room held by one node, its teacher's page open on it; the child's data erased
    through another node: the holder sees the class change in the store at its next lease renewal and
    reloads the room in place, so the open page gets the results without the child, on the same connection."""
    cluster = quick_cluster
    story = json.loads(SHORT_STORY.read_text())
    status, _, made = cluster.request("POST", "/api/classes", cluster.admin, {"name": "8J", "children": [{"name": "Ada"}, {"name": "Bo"}]})
    assert status == 201, made
    status, _, schoolclass = cluster.request("GET", f"/api/classes/{made['id']}", cluster.admin)
    ids = {child["name"]: child["id"] for child in schoolclass["children"]}
    status, _, room = cluster.request("POST", "/api/rooms", cluster.admin, {"story": story, "classId": made["id"]})
    assert status == 201, room
    origin, url = cluster.origin, cluster.ws_url(room["code"])

    async def scenario():
        children = []
        for n, name in enumerate(("Ada", "Bo")):
            ws = await websockets.connect(url, origin=origin, ssl=cluster.tls, local_addr=(f"127.2.0.{n + 1}", 0), open_timeout=10)
            await ws.send(json.dumps({"type": "join", "room": room["code"], "member": ids[name]}))
            while json.loads(await asyncio.wait_for(ws.recv(), 15))["type"] != "welcome":
                pass
            children.append(ws)
        cluster.command(room, "end")
        for ws in children:
            await ws.close()
        teacher = await websockets.connect(url, origin=origin, ssl=cluster.tls, open_timeout=10)
        await teacher.send(json.dumps({"type": "control", "room": room["code"], "token": room["teacherToken"]}))
        first = json.loads(await asyncio.wait_for(teacher.recv(), 15))
        assert first["type"] == "welcome" and first["room"]["phase"] == "finished" and '"Bo"' in json.dumps(first)
        holder = next(node for node in (1, 2, 3) if room["code"] in cluster.held_by(node))
        other_port = cluster.node_ports[holder % 3]
        status, _, body = cluster.request("DELETE", f"/api/classes/{made['id']}/members/{ids['Bo']}/data", cluster.admin, port=other_port)
        assert status == 204, body
        # Within a few renewals (leases of 3 s: one a second), on the same connection.
        deadline = time.monotonic() + 15
        while True:
            message = json.loads(await asyncio.wait_for(teacher.recv(), max(0.1, deadline - time.monotonic())))
            if message["type"] == "welcome":
                break
        assert '"Bo"' not in json.dumps(message) and ids["Bo"] not in json.dumps(message) and '"Ada"' in json.dumps(message)
        assert room["code"] in cluster.held_by(holder), "the room stayed where it was"
        await teacher.close()

    asyncio.run(scenario())


def test_a_node_refuses_to_start_on_a_database_across_the_network_without_verified_tls(tmp_path):
    """A node given a PostgreSQL URL whose host is elsewhere on the network, without sslmode=verify-full,
    stops at once with a message that says how to fix it (and never shows the password); the explicit
    allowance lets it go on to connecting (which then fails: nothing listens there)."""
    url = "postgresql://storycircle:s3cret@db.invalid:5432/storycircle?target_session_attrs=read-write"
    env = dict(os.environ, STORYCIRCLE_DATABASE=url, STORYCIRCLE_PORT="0", STORYCIRCLE_DATA_DIR=str(tmp_path / "data"),
               STORYCIRCLE_WEB_ROOT=str(ROOT / "web-static"), PGCONNECT_TIMEOUT="2")
    env.pop("PGSSLMODE", None)
    refused = subprocess.run([BIN, "serve"], env=env, capture_output=True, text=True, timeout=60)
    said = refused.stdout + refused.stderr
    assert refused.returncode != 0, said
    assert "db.invalid" in said and "sslmode=verify-full" in said and "allowUnverifiedDatabase" in said, said
    assert "s3cret" not in said
    allowed = subprocess.run([BIN, "serve"], env=dict(env, STORYCIRCLE_ALLOW_UNVERIFIED_DATABASE="true"), capture_output=True, text=True, timeout=60)
    said = allowed.stdout + allowed.stderr
    assert allowed.returncode != 0 and "cannot open the database" in said and "allowUnverifiedDatabase" not in said, said
