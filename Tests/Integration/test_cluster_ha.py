"""The cluster on a database without a single machine: `scripts/cluster.sh up --ha` (three etcd members, two
PostgreSQL members under Patroni with a synchronous standby, nginx, three nodes given both members in libpq's
multi-host URL). Children in several rooms answer a question in a burst; in the middle of it the primary's
postmaster is killed with SIGKILL. Patroni promotes the synchronous standby; the nodes find it by themselves
(no restart); every answer a child saw acknowledged is stored exactly once; the old primary comes back as the
synchronous standby. The times are printed (run with -s to see them) and, with STORYCIRCLE_HA_FIGURES set,
written there as JSON.
"""
import asyncio
import json
import os
import pathlib
import random
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import pytest
import websockets

from conftest import BIN, ROOT, SHORT_STORY, failed, wait_until
# Like the pages, every few seconds: nginx closes an upgraded socket that carries nothing for longer.
from test_cluster import PAGE_PING_SECONDS, Cluster, free_ports

ROOMS = 4
CHILDREN = 8
# The answers are spread over this many seconds after the question opens; the kill falls in the middle.
BURST_SECONDS = 3.0
KILL_AFTER = 1.2


def missing_tools():
    return [tool for tool in ("patroni", "etcd", "envsubst", "psql") if not shutil.which(tool)]


class HACluster(Cluster):
    """The cluster of test_cluster.py on the HA database: etcd x3 and two PostgreSQL members under Patroni."""

    def __init__(self):
        # Not under pytest's tmp_path: PostgreSQL runs as the `postgres` user, who cannot enter it.
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="storycircle-ha-"))
        ports = free_ports(14)
        self.port, self.node_ports = ports[0], ports[1:4]
        self.env = dict(os.environ, STORYCIRCLE_CLUSTER_DIR=str(self.dir), STORYCIRCLE_CLUSTER_PORT=str(self.port),
                        STORYCIRCLE_CLUSTER_NODE_PORTS=" ".join(map(str, self.node_ports)),
                        STORYCIRCLE_CLUSTER_HA_PORTS=" ".join(map(str, ports[4:])), STORYCIRCLE_BIN=BIN)

    def script(self, *command, timeout=240):
        return subprocess.run([str(ROOT / "scripts" / "cluster.sh"), *command], env=self.env, capture_output=True, text=True, timeout=timeout)

    def up(self):
        done = self.script("up", "--ha")
        assert done.returncode == 0, done.stdout + done.stderr
        self.admin = (self.dir / "admin-token").read_text().strip()

    def members(self):
        """Patroni's view: name -> (role, state), or {} while no member answers."""
        done = self.script("pg-members", timeout=30)
        if done.returncode != 0 or not done.stdout.strip():
            return {}
        return {m["name"]: (m["role"], m["state"]) for m in json.loads(done.stdout)["members"]}

    def psql(self, sql):
        url = self.script("pg-url", timeout=30).stdout.strip()
        done = subprocess.run(["psql", url, "-AtF", "\t", "-v", "ON_ERROR_STOP=1", "-c", sql], capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, done.stderr
        return [line.split("\t") for line in done.stdout.splitlines() if line]

    def is_primary(self, member):
        """Whether Patroni's REST API of `member` says it is the primary (read straight from the port, cheap
        enough to poll)."""
        ports = (self.dir / "ha-ports").read_text().split()
        api = ports[8 + int(member[-1]) - 1]
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{api}/primary", timeout=2) as response:
                return response.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def postmaster(self, member):
        return int((self.dir / member / "data" / "postmaster.pid").read_text().split()[0])


@pytest.fixture
def ha_cluster(request):
    missing = missing_tools()
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed and not installable here (scripts/install-deps.sh --test installs them)")
    running = HACluster()
    try:
        running.up()
        yield running
    finally:
        if failed(request):
            running.print_logs()
        running.down()


class Child:
    """A child's page: a WebSocket through nginx, rejoining with its token after a close, tapping again after
    `storage_unavailable` until its answer is acknowledged."""

    def __init__(self, cluster, room, index, room_index):
        self.cluster, self.room, self.name = cluster, room, f"Kid {index}"
        self.address = f"127.2.{room_index}.{index + 1}"
        self.token = None
        self.inbox = None

    async def open(self, hello):
        url = f"ws://127.0.0.1:{self.cluster.port}/ws?room={self.room['code']}"
        self.ws = await websockets.connect(url, origin=f"http://127.0.0.1:{self.cluster.port}", local_addr=(self.address, 0),
                                           open_timeout=10, max_queue=None, ping_interval=PAGE_PING_SECONDS, ping_timeout=None)
        self.inbox = asyncio.Queue()
        asyncio.ensure_future(self.read(self.ws, self.inbox))
        await self.ws.send(json.dumps(hello))

    async def read(self, ws, inbox):
        try:
            async for frame in ws:
                inbox.put_nowait(json.loads(frame))
        except websockets.ConnectionClosed:
            pass
        inbox.put_nowait(None)

    async def next(self, deadline):
        return await asyncio.wait_for(self.inbox.get(), max(0.01, deadline - time.monotonic()))

    async def join(self):
        await self.open({"type": "join", "room": self.room["code"], "nickname": self.name})
        deadline = time.monotonic() + 30
        while (message := await self.next(deadline))["type"] != "welcome":
            assert message["type"] != "error", message
        self.token = message["token"]

    async def rejoin(self, deadline):
        delay = 0.1
        while time.monotonic() < deadline:
            try:
                await self.open({"type": "rejoin", "room": self.room["code"], "token": self.token})
                while (message := await self.next(deadline)) is not None:
                    if message["type"] == "welcome":
                        return message
            except (websockets.ConnectionClosed, websockets.InvalidStatus, OSError, asyncio.TimeoutError):
                pass
            await asyncio.sleep(delay)  # the page's backoff between attempts
            delay = min(delay * 2, 1.0)
        raise AssertionError(f"{self.name} of room {self.room['code']} was not welcomed back")

    async def answer(self, question, option, deadline, sent_times):
        """Sends the answer until it is acknowledged; returns the ack's arrival time and when the answer it
        acknowledges was sent. None when the server says it was stored without an ack reaching us."""
        while True:
            sent_times.append(time.monotonic())
            sent = sent_times[-1]
            try:
                await self.ws.send(json.dumps({"type": "answer", "question": question, "option": option}))
            except websockets.ConnectionClosed:
                pass
            while True:
                message = await self.next(deadline)
                if message is None:
                    welcome = await self.rejoin(deadline)
                    if welcome["room"].get("yourAnswer") is not None:
                        return None
                    break
                if message["type"] == "answer.ack":
                    assert message["option"] == option
                    return time.monotonic(), sent
                if message["type"] == "error":
                    if message["code"] == "already_answered":
                        return None
                    assert message["code"] in ("storage_unavailable", "try_again"), message
                    break
                if message["type"] == "welcome" and message["room"].get("yourAnswer") is not None:
                    return None
            await asyncio.sleep(0.1)  # a child tapping again, not synchronisation


def wait_for(condition, what, timeout):
    """Polls `condition` (every 50 ms) until it holds; returns the seconds it took."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout, f"{what}: not after {timeout} s"
        time.sleep(0.05)  # the poll's interval: the loop waits for the condition
    return time.monotonic() - started


def test_kill_9_of_the_primary_during_an_answer_burst_loses_no_acknowledged_answer_and_the_old_primary_rejoins(ha_cluster):
    cluster = ha_cluster
    members = cluster.members()
    primary = next(name for name, (role, _) in members.items() if role == "leader")
    standby = next(name for name, (role, state) in members.items() if role == "sync_standby")
    story = json.loads(SHORT_STORY.read_text())
    rooms = []
    for _ in range(ROOMS):
        status, _, room = cluster.request("POST", "/api/rooms", cluster.admin, {"story": story, "settings": {"speedPoints": False, "timer": False}})
        assert status == 201, room
        rooms.append(room)
    rng = random.Random(22)
    acknowledged = {}   # (code, nickname, question) -> option
    stored_unacked = set()
    figures = {}

    async def scenario():
        children = [Child(cluster, room, i, r) for r, room in enumerate(rooms) for i in range(CHILDREN)]
        await asyncio.gather(*(child.join() for child in children))
        for room in rooms:
            await asyncio.to_thread(cluster.command, room, "start")
            await asyncio.to_thread(cluster.command, room, "skip")
        opens = {}
        for child in children:
            deadline = time.monotonic() + 30
            while (message := await child.next(deadline))["type"] != "question":
                pass
            opens[child.room["code"]] = message["opensAt"]
        await wait_until(max(opens.values()))

        burst_started = time.monotonic()
        killed = {}
        acks = []   # (arrived, sent)
        deadline = burst_started + 90

        async def one(child):
            await asyncio.sleep(rng.uniform(0, BURST_SECONDS))  # when this child taps, spread over the burst
            option = rng.randrange(3)
            outcome = await child.answer(0, option, deadline, [])
            key = (child.room["code"], child.name, 0)
            if outcome is None:
                stored_unacked.add(key)
            else:
                acknowledged[key] = option
                acks.append(outcome)

        async def kill():
            await asyncio.sleep(KILL_AFTER)  # where in the burst the kill falls
            os.kill(cluster.postmaster(primary), 9)
            killed["at"] = time.monotonic()
            killed["acks_before"] = len(acks)
            await asyncio.to_thread(wait_for, lambda: cluster.is_primary(standby), f"{standby} promoted", 60)
            killed["promoted"] = time.monotonic() - killed["at"]

        await asyncio.gather(kill(), *(one(child) for child in children))
        killed_at = killed["at"]
        after = [arrived for arrived, sent in acks if sent > killed_at]
        assert after, "no answer was sent after the kill: the burst was not cut"
        figures.update(acked=len(acks), acked_before_kill=killed["acks_before"], sent_after_kill=len(after), promoted=killed["promoted"],
                       first_ack_after_kill=min(after) - killed_at, last_ack_after_kill=max(after) - killed_at,
                       stored_without_ack=len(stored_unacked))

        # The next question, on the promoted primary with the old one back as its synchronous standby.
        back = await asyncio.to_thread(wait_for, lambda: cluster.members().get(primary) in (("sync_standby", "streaming"), ("sync_standby", "running")),
                                       f"{primary} back as the synchronous standby", 120)
        figures["old_primary_back_as_sync_standby"] = time.monotonic() - killed_at
        for room in rooms:
            await asyncio.to_thread(cluster.command, room, "next")
        opens = []
        for child in children:
            deadline = time.monotonic() + 30
            while (message := await child.next(deadline)) is not None and message["type"] != "question":
                pass
            if message is None:
                message = (await child.rejoin(deadline))["room"]["question"]
            opens.append(message["opensAt"])
        await wait_until(max(opens))
        second = time.monotonic()
        outcomes = await asyncio.gather(*(child.answer(1, 1, second + 30, []) for child in children))
        for child, outcome in zip(children, outcomes):
            assert outcome is not None, f"{child.name}: the second answer was acknowledged"
            acknowledged[(child.room["code"], child.name, 1)] = 1
        figures["second_burst_seconds"] = time.monotonic() - second
        for child in children:
            await child.ws.close()
        return back

    asyncio.run(scenario())
    promoted = cluster.members()
    assert promoted.get(standby, (None,))[0] == "leader", f"the synchronous standby was promoted: {promoted}"

    # In the database: every acknowledged answer exactly once, with its option; nothing stored twice.
    rows = cluster.psql("""
        SELECT a.room_code, p.nickname, a.question, a.option, count(*) OVER (PARTITION BY a.room_code, a.player_id, a.question)
        FROM answers a JOIN players p ON p.room_code = a.room_code AND p.id = a.player_id
        """)
    stored = {}
    for code, nickname, question, option, copies in rows:
        assert copies == "1", f"{nickname} of {code}: question {question} stored {copies} times"
        stored[(code, nickname, int(question))] = int(option)
    lost = [key for key, option in acknowledged.items() if stored.get(key) != option]
    figures.update(acknowledged=len(acknowledged), lost=len(lost))
    print(f"\nHA database: primary {primary} killed (kill -9 of its postmaster) {KILL_AFTER} s into a {BURST_SECONDS} s burst "
          f"of {ROOMS * CHILDREN} answers; first ack of an answer sent after the kill {figures['first_ack_after_kill']:.2f} s after it, "
          f"the last {figures['last_ack_after_kill']:.2f} s; {standby} promoted {figures['promoted']:.2f} s after the kill; {primary} back as sync standby "
          f"{figures['old_primary_back_as_sync_standby']:.2f} s after the kill; acknowledged {len(acknowledged)}, lost {len(lost)}, "
          f"stored without an ack reaching the child {len(stored_unacked)}; the next question's {ROOMS * CHILDREN} answers "
          f"acknowledged in {figures['second_burst_seconds']:.2f} s")
    if os.environ.get("STORYCIRCLE_HA_FIGURES"):
        pathlib.Path(os.environ["STORYCIRCLE_HA_FIGURES"]).write_text(json.dumps(figures))
    assert not lost, f"acknowledged answers missing or changed: {lost}"
    assert set(stored) == set(acknowledged) | stored_unacked, "nothing stored that no child sent"
