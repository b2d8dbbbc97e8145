"""The cluster on a database without a single machine: `scripts/cluster.sh up --ha` (three etcd members, two
PostgreSQL members under Patroni with a synchronous standby, nginx, three nodes given both members in libpq's
multi-host URL). Children in several rooms answer a question in a burst; in the middle of it the primary's
postmaster is killed with SIGKILL. Patroni promotes the synchronous standby; the nodes find it by themselves
(no restart); every answer a child saw acknowledged is stored exactly once; the old primary comes back as the
synchronous standby. The times are printed (run with -s to see them) and, with STORYCIRCLE_HA_FIGURES set,
written there as JSON.
"""
import asyncio
import base64
import http.client
import json
import os
import pathlib
import random
import shutil
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import pytest
import websockets

from conftest import BIN, ROOT, SHORT_STORY, wait_until
# Like the pages, every few seconds: nginx closes an upgraded socket that carries nothing for longer.
from test_cluster import PAGE_PING_SECONDS, Cluster, free_ports
from testssl_support import assert_modern_tls, run_testssl

# Protocols, cipher categories, the certificate and the headers (HSTS): well under a minute. Vulnerabilities
# (-U) are OpenSSL's and nginx's, checked where the server itself is (test_testssl.py).
NGINX_CHECKS = ("-p", "-s", "-S", "-h")

ROOMS = 4
CHILDREN = 8
# The answers are spread over this many seconds after the question opens; the kill falls in the middle.
BURST_SECONDS = 3.0
KILL_AFTER = 1.2


def missing_tools():
    return [tool for tool in ("patroni", "etcd", "envsubst", "psql") if not shutil.which(tool)]


class HACluster(Cluster):
    """The cluster of test_cluster.py on the HA database: etcd x3 and two PostgreSQL members under Patroni,
    every one of them speaking TLS with the cluster's CA (scripts/cluster.sh makes it)."""

    def __init__(self):
        # Not under pytest's tmp_path: PostgreSQL runs as the `postgres` user, who cannot enter it.
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="storycircle-ha-"))
        ports = free_ports(15)
        self.port, self.node_ports, self.http_port = ports[0], ports[1:4], ports[4]
        self.env = dict(os.environ, STORYCIRCLE_CLUSTER_DIR=str(self.dir), STORYCIRCLE_CLUSTER_PORT=str(self.port),
                        STORYCIRCLE_CLUSTER_HTTP_PORT=str(self.http_port),
                        STORYCIRCLE_CLUSTER_NODE_PORTS=" ".join(map(str, self.node_ports)),
                        STORYCIRCLE_CLUSTER_HA_PORTS=" ".join(map(str, ports[5:])), STORYCIRCLE_BIN=BIN)
        self.tls = None

    def script(self, *command, timeout=240):
        return subprocess.run([str(ROOT / "scripts" / "cluster.sh"), *command], env=self.env, capture_output=True, text=True, timeout=timeout)

    def up(self):
        done = self.script("up", "--ha")
        assert done.returncode == 0, done.stdout + done.stderr
        self.started()
        tls = self.dir / "tls"
        # Patroni's REST API and etcd want a client certificate of the cluster's CA.
        self.client_tls = ssl.create_default_context(cafile=str(tls / "ca.crt"))
        self.client_tls.load_cert_chain(str(tls / "client.crt"), str(tls / "client.key"))

    def ha_port(self, index):
        """STORYCIRCLE_CLUSTER_HA_PORTS[index]: etcd client/peer 0–5, PostgreSQL 6–7, Patroni's API 8–9."""
        return int((self.dir / "ha-ports").read_text().split()[index])

    def members(self):
        """Patroni's view: name -> (role, state), or {} while no member answers."""
        done = self.script("pg-members", timeout=30)
        if done.returncode != 0 or not done.stdout.strip():
            return {}
        return {m["name"]: (m["role"], m["state"]) for m in json.loads(done.stdout)["members"]}

    def psql(self, sql, url=None):
        url = url or self.script("pg-url", timeout=30).stdout.strip()
        done = subprocess.run(["psql", url, "-AtF", "\t", "-v", "ON_ERROR_STOP=1", "-c", sql], capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, done.stderr
        return [line.split("\t") for line in done.stdout.splitlines() if line]

    def is_primary(self, member):
        """Whether Patroni's REST API of `member` says it is the primary (read straight from the port, cheap
        enough to poll)."""
        api = self.ha_port(8 + int(member[-1]) - 1)
        try:
            with urllib.request.urlopen(f"https://127.0.0.1:{api}/primary", timeout=2, context=self.client_tls) as response:
                return response.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def postmaster(self, member):
        return int((self.dir / member / "data" / "postmaster.pid").read_text().split()[0])


@pytest.fixture(scope="module")
def ha_cluster(request):
    """One HA cluster for the module (starting one takes a while): the TLS checks first, which change
    nothing, then the failover."""
    missing = missing_tools()
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed and not installable here (scripts/install-deps.sh --test installs them)")
    running = HACluster()
    failures = request.session.testsfailed
    try:
        running.up()
        yield running
    finally:
        if request.session.testsfailed > failures:
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
        self.ws = await websockets.connect(self.cluster.ws_url(self.room["code"]), origin=self.cluster.origin, ssl=self.cluster.tls, local_addr=(self.address, 0),
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


# --- TLS inside the cluster (these run first on the module's cluster and change nothing) ---------------------

def test_a_class_plays_over_wss_through_nginx_and_plain_http_only_redirects(ha_cluster):
    """Children and teacher reach the cluster as browsers do: HTTPS and WSS through nginx, the cluster's CA
    trusted; the answer is stored by a node on the HA database. Plain HTTP gets a redirect to the same
    address over https, nothing else; a client that does not trust the CA is refused by its own TLS."""
    cluster = ha_cluster
    status, headers, health = cluster.request("GET", "/healthz")
    assert status == 200 and health["status"] == "ok", health
    hsts = headers.get("Strict-Transport-Security", "")
    assert hsts.startswith("max-age=") and int(hsts.split("=", 1)[1].split(";")[0]) >= 365 * 86400, hsts

    plain = http.client.HTTPConnection("127.0.0.1", cluster.http_port, timeout=10)
    plain.request("GET", "/?room=123456")
    answer = plain.getresponse()
    assert answer.status == 301 and answer.getheader("Location") == f"{cluster.origin}/?room=123456", (answer.status, answer.getheaders())
    assert b"storycircle" not in answer.read().lower(), "nothing of the server's own comes over plain HTTP"
    plain.close()
    with pytest.raises(urllib.error.URLError) as untrusted:
        urllib.request.urlopen(f"{cluster.origin}/healthz", timeout=10, context=ssl.create_default_context())
    assert isinstance(untrusted.value.reason, ssl.SSLCertVerificationError), untrusted.value

    story = json.loads(SHORT_STORY.read_text())
    status, _, room = cluster.request("POST", "/api/rooms", cluster.admin, {"story": story, "settings": {"speedPoints": False, "timer": False}})
    assert status == 201, room

    async def scenario():
        child = Child(cluster, room, 0, 9)
        await child.join()
        cluster.command(room, "start")
        cluster.command(room, "skip")
        deadline = time.monotonic() + 30
        while (message := await child.next(deadline))["type"] != "question":
            pass
        await wait_until(message["opensAt"])
        outcome = await child.answer(0, 2, time.monotonic() + 30, [])
        assert outcome is not None, "the answer was acknowledged over wss"
        assert child.ws.transport.get_extra_info("ssl_object").version() in ("TLSv1.2", "TLSv1.3")
        await child.ws.close()

    asyncio.run(scenario())
    rows = cluster.psql(f"SELECT option FROM answers WHERE room_code = '{room['code']}'")
    assert rows == [["2"]], rows


def test_the_nodes_reach_postgresql_over_tls_only_as_a_role_that_is_no_superuser(ha_cluster):
    cluster = ha_cluster
    node_url = cluster.script("node-url", timeout=30).stdout.strip()
    assert "sslmode=verify-full" in node_url and "sslrootcert=" in node_url, node_url
    # The nodes' role: no superuser, cannot make roles or databases, owns the tables its migrations made.
    [[superuser, createrole, createdb, replication]] = cluster.psql(
        "SELECT rolsuper, rolcreaterole, rolcreatedb, rolreplication FROM pg_roles WHERE rolname = current_user", url=node_url)
    assert (superuser, createrole, createdb, replication) == ("f", "f", "f", "f")
    owners = cluster.psql("SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = 'public'")
    assert owners == [["storycircle"]], owners
    # Every session of the nodes is encrypted (the script's superuser URL checks the server's name too).
    [[encrypted, plain]] = cluster.psql("""
        SELECT count(*) FILTER (WHERE s.ssl), count(*) FILTER (WHERE NOT s.ssl)
        FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) WHERE a.usename = 'storycircle' AND a.application_name LIKE 'storycircle/%'""")
    assert int(encrypted) >= 3 and plain == "0", (encrypted, plain)
    # Without TLS, from the nodes' network, with the right password: refused by pg_hba (hostssl only).
    password = (cluster.dir / "pg-app-password").read_text().strip()
    for port in (cluster.ha_port(6), cluster.ha_port(7)):
        done = subprocess.run(["psql", f"host=127.0.0.1 port={port} dbname=storycircle user=storycircle sslmode=disable connect_timeout=5",
                               "-Atc", "SELECT 1"], env=dict(os.environ, PGPASSWORD=password), capture_output=True, text=True, timeout=30)
        assert done.returncode != 0 and "no encryption" in done.stderr, done.stdout + done.stderr
    # And the nodes' role cannot make itself more.
    done = subprocess.run(["psql", node_url, "-Atc", "ALTER ROLE storycircle SUPERUSER"], capture_output=True, text=True, timeout=30)
    assert done.returncode != 0 and "must be superuser" in done.stderr, done.stdout + done.stderr


def patroni_call(cluster, method, path, context, password=None):
    """One call to member pg1's REST API: (status, body), or the exception that ended it."""
    connection = http.client.HTTPSConnection("127.0.0.1", cluster.ha_port(8), timeout=10, context=context)
    headers = {"Authorization": "Basic " + base64.b64encode(f"patroni:{password}".encode()).decode()} if password else {}
    try:
        connection.request(method, path, headers=headers)
        response = connection.getresponse()
        return response.status, response.read()
    except (OSError, http.client.HTTPException) as error:
        return error, None
    finally:
        connection.close()


def test_patronis_api_wants_tls_a_client_certificate_and_for_changes_a_password(ha_cluster):
    cluster = ha_cluster
    # Plain HTTP: no answer at all.
    plain = http.client.HTTPConnection("127.0.0.1", cluster.ha_port(8), timeout=10)
    with pytest.raises((OSError, http.client.HTTPException)):
        plain.request("GET", "/cluster")
        plain.getresponse().read()
    plain.close()
    # TLS trusting the CA but without a client certificate: refused in the handshake, even for reading.
    anonymous = ssl.create_default_context(cafile=str(cluster.dir / "tls" / "ca.crt"))
    status, _ = patroni_call(cluster, "GET", "/cluster", anonymous)
    assert isinstance(status, Exception), f"answered {status} without a client certificate"
    # With the client certificate: reading works, a change without the password (or with a wrong one) is 401.
    status, body = patroni_call(cluster, "GET", "/cluster", cluster.client_tls)
    assert status == 200 and json.loads(body)["members"], (status, body)
    assert patroni_call(cluster, "POST", "/reload", cluster.client_tls)[0] == 401
    assert patroni_call(cluster, "POST", "/reload", cluster.client_tls, password="wrong")[0] == 401
    # (A reload changes nothing here: the configuration on disk is the one running.)
    password = cluster.script("api-password", timeout=30).stdout.strip()
    assert patroni_call(cluster, "POST", "/reload", cluster.client_tls, password=password)[0] == 202


def test_etcd_wants_tls_and_a_client_certificate(ha_cluster):
    cluster = ha_cluster
    port = cluster.ha_port(0)
    with urllib.request.urlopen(f"https://127.0.0.1:{port}/version", timeout=10, context=cluster.client_tls) as response:
        assert response.status == 200 and "etcdserver" in json.loads(response.read())
    anonymous = ssl.create_default_context(cafile=str(cluster.dir / "tls" / "ca.crt"))
    with pytest.raises((OSError, urllib.error.URLError)):
        urllib.request.urlopen(f"https://127.0.0.1:{port}/version", timeout=10, context=anonymous).read()
    with pytest.raises((OSError, urllib.error.URLError, http.client.HTTPException)):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/version", timeout=10).read()


def test_testssl_finds_nginx_in_front_of_the_cluster_modern(ha_cluster, tmp_path):
    """testssl.sh (Debian's) against nginx: no protocol below TLS 1.2, no weak cipher, the chain trusted with
    the cluster's CA, HSTS good; nothing HIGH or CRITICAL, nothing MEDIUM about protocols or ciphers. The
    one exception: the throwaway CA publishes no revocation (no CRL, no OCSP; its certificates are replaced,
    not revoked), which testssl rates HIGH."""
    cluster = ha_cluster
    report = run_testssl(f"127.0.0.1:{cluster.port}", cluster.dir / "tls" / "ca.crt", tmp_path, checks=NGINX_CHECKS)
    assert_modern_tls(report)
    protocol_or_cipher = ("SSL", "TLS", "cipher", "FS", "DH", "NPN", "ALPN")
    bad = [(id, entry["severity"], entry["finding"]) for id, entry in report.findings.items()
           if id != "cert_revocation" and (entry["severity"] in ("HIGH", "CRITICAL")
                                           or (entry["severity"] == "MEDIUM" and id.startswith(protocol_or_cipher)))]
    assert not bad, bad


def files_holding(folder, needle):
    """The files under `folder` whose bytes contain `needle`."""
    found = []
    for path in folder.rglob("*"):
        try:
            if path.is_file() and needle in path.read_bytes():
                found.append(str(path.relative_to(folder)))
        except OSError:
            pass
    return found


def test_an_erased_child_is_gone_from_the_synchronous_standby_when_the_erasure_is_answered(ha_cluster):
    """docs/privacy.md, "Erased means gone": an erasure through the cluster is one transaction; when its 204
    arrives the synchronous standby has the deletion, and a read there finds the child within a moment
    (synchronous_commit=on waits for the standby's flush, not its replay: the time is measured and
    printed). The name's bytes may stay only where docs/privacy.md says PostgreSQL keeps them, the data
    pages (`base/`, until VACUUM reuses the space) and the write-ahead log (`pg_wal/`, until recycled):
    in no other file of the standby (no log, no statistics, no replication slot)."""
    cluster = ha_cluster
    nickname = "Plowzervik-Kid"
    members = cluster.members()
    standby = next(name for name, (role, _) in members.items() if role == "sync_standby")
    standby_url = cluster.script("pg-url", standby[-1], timeout=30).stdout.strip()
    story = json.loads(SHORT_STORY.read_text())
    status, _, room = cluster.request("POST", "/api/rooms", cluster.admin, {"story": story})
    assert status == 201, room

    async def scenario():
        child = Child(cluster, room, 0, 12)
        child.name = nickname
        await child.join()
        await child.ws.close()

    asyncio.run(scenario())
    cluster.command(room, "end")

    def on_standby():
        return int(cluster.psql(f"SELECT count(*) FROM players WHERE nickname = '{nickname}'", standby_url)[0][0])

    wait_for(lambda: on_standby() == 1, "the child on the standby", 30)
    status, _, results = cluster.request("GET", f"/api/rooms/{room['code']}/results", room["teacherToken"])
    player = next(p["id"] for p in results["players"] if p["nickname"] == nickname)
    status, _, body = cluster.request("DELETE", f"/api/rooms/{room['code']}/players/{player}/data", room["teacherToken"])
    assert status == 204, body
    first_read = on_standby()
    assert first_read in (0, 1), first_read
    replayed = wait_for(lambda: on_standby() == 0, "the erasure on the standby", 5)
    assert int(cluster.psql(f"SELECT count(*) FROM players WHERE nickname = '{nickname}'")[0][0]) == 0
    cluster.psql("CHECKPOINT", standby_url)
    left = files_holding(cluster.dir / standby / "data", nickname.encode())
    print(f"\nerasure on the synchronous standby: rows at the first read after the 204: {first_read}; "
          f"gone after {replayed:.3f} s; files still holding the name's bytes: {left}")
    elsewhere = [path for path in left if not path.startswith(("base/", "pg_wal/"))]
    assert not elsewhere, f"the erased name's bytes are in files PostgreSQL keeps no rows in: {elsewhere}"


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

    # In the database (this test's rooms; the module's cluster has others): every acknowledged answer exactly
    # once, with its option; nothing stored twice.
    rows = cluster.psql("""
        SELECT a.room_code, p.nickname, a.question, a.option, count(*) OVER (PARTITION BY a.room_code, a.player_id, a.question)
        FROM answers a JOIN players p ON p.room_code = a.room_code AND p.id = a.player_id
        WHERE a.room_code IN ({})
        """.format(", ".join(f"'{room['code']}'" for room in rooms)))
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
