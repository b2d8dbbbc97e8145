#!/usr/bin/python3
"""Measures the failure table of docs/operations.md ("The database without a single machine") on
`scripts/cluster.sh up --ha`: one fault after another on one HA database, while a writer commits a row every
50 ms through the multi-host URL (libpq with the store's own connect and keepalive timeouts), and prints for
each fault how long commits stalled or failed, and that every acknowledged commit is still there.

    /usr/bin/python3 scripts/ha-failure-table.py        (Debian's python3-psycopg2, which Patroni brings)

Not part of `make test` (about five minutes); Tests/Integration/test_cluster_ha.py is the test.
"""
import faulthandler
import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import psycopg2

ROOT = pathlib.Path(__file__).resolve().parents[1]


def free_ports(count):
    probes = [socket.socket() for _ in range(count)]
    for probe in probes:
        probe.bind(("127.0.0.1", 0))
    ports = [probe.getsockname()[1] for probe in probes]
    for probe in probes:
        probe.close()
    return ports


class Cluster:
    def __init__(self):
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="storycircle-ha-table-"))
        ports = free_ports(15)
        self.env = dict(os.environ, STORYCIRCLE_CLUSTER_DIR=str(self.dir), STORYCIRCLE_CLUSTER_PORT=str(ports[0]),
                        STORYCIRCLE_CLUSTER_NODE_PORTS=" ".join(map(str, ports[1:4])), STORYCIRCLE_CLUSTER_HTTP_PORT=str(ports[4]),
                        STORYCIRCLE_CLUSTER_HA_PORTS=" ".join(map(str, ports[5:])),
                        STORYCIRCLE_BIN=os.environ.get("STORYCIRCLE_BIN", str(ROOT / ".build" / "debug" / "storycircle")))

    def run(self, *command, check=True):
        done = subprocess.run([str(ROOT / "scripts" / "cluster.sh"), *command], env=self.env, capture_output=True, text=True, timeout=300)
        if check and done.returncode != 0:
            raise RuntimeError(done.stdout + done.stderr)
        return done.stdout.strip()

    def members(self):
        try:
            return {m["name"]: (m["role"], m["state"]) for m in json.loads(self.run("pg-members"))["members"]}
        except (RuntimeError, ValueError):
            return {}

    def primary(self):
        members = self.members()
        return next((name for name, (role, state) in members.items() if role == "leader" and state == "running"), None)

    def sync_standby(self):
        """The member the primary streams to synchronously right now (from the primary itself, not from
        Patroni's view in etcd, which keeps a killed member's last state until its key lapses)."""
        try:
            connection = psycopg2.connect(self.run("pg-url"), connect_timeout=3)
            try:
                cursor = connection.cursor()
                cursor.execute("SELECT application_name FROM pg_stat_replication WHERE sync_state = 'sync' AND state = 'streaming'")
                rows = cursor.fetchall()
                return rows[0][0] if rows else None
            finally:
                connection.close()
        except (psycopg2.Error, RuntimeError):
            return None

    def wait_for_pair(self, timeout=180, standby=None):
        """Waits until a primary streams to a synchronous standby (`standby`, when given); returns the time."""
        started = time.monotonic()
        while True:
            # Both views: the primary streams to it synchronously, and Patroni has recorded it as the
            # synchronous standby in etcd (only then may Patroni promote it: in between, a primary's loss
            # leaves no member it may promote).
            current = self.sync_standby()
            recorded = [name for name, (role, _) in self.members().items() if role == "sync_standby"]
            if current is not None and current in recorded and (standby is None or current == standby):
                return time.monotonic() - started
            if time.monotonic() - started > timeout:
                raise RuntimeError(f"no synchronous pair after {timeout} s: {self.members()}")
            time.sleep(0.1)

    def processes(self, member):
        """Patroni's pid and every PostgreSQL process of `member` (the postmaster and its children)."""
        postmaster = int((self.dir / member / "data" / "postmaster.pid").read_text().split()[0])
        children = subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True, text=True).stdout.split()
        return [int((self.dir / member / "patroni.pid").read_text()), postmaster, *map(int, children)]


class Writer(threading.Thread):
    """Commits one row every 50 ms; keeps (started, ended, id or None) for every attempt."""

    def __init__(self, url):
        super().__init__(daemon=True)
        self.url, self.attempts, self.stopping = url, [], threading.Event()
        self.last_error = None

    def run(self):
        connection = None
        while not self.stopping.is_set():
            started = time.monotonic()
            key = str(uuid.uuid4())
            try:
                if connection is None:
                    connection = psycopg2.connect(self.url, connect_timeout=3, keepalives=1, keepalives_idle=5,
                                                  keepalives_interval=2, keepalives_count=3, tcp_user_timeout=10000)
                with connection.cursor() as cursor:
                    cursor.execute("INSERT INTO ha_probe (id) VALUES (%s)", (key,))
                connection.commit()
                self.attempts.append((started, time.monotonic(), key))
            except psycopg2.Error as error:
                self.attempts.append((started, time.monotonic(), None))
                self.last_error = str(error).strip()
                try:
                    connection.close()
                except Exception:
                    pass
                connection = None
            self.stopping.wait(0.05)  # the writer's pace

    def since(self, at):
        """(seconds from `at` to the acknowledgement of the first commit begun after it, the longest a commit
        took that ended after it, failed attempts)."""
        after = [a for a in self.attempts if a[1] > at]
        acked = [end for start, end, key in after if key and start > at]
        longest = max((end - start for start, end, key in after if key), default=None)
        return (min(acked) - at if acked else None), longest, sum(1 for a in after if a[2] is None)


def main():
    cluster = Cluster()
    results = []
    try:
        print("up --ha ...", flush=True)
        started = time.monotonic()
        cluster.run("up", "--ha")
        print(f"up in {time.monotonic() - started:.1f} s", flush=True)
        url = cluster.run("pg-url")
        setup = psycopg2.connect(url)
        setup.cursor().execute("CREATE TABLE ha_probe (id text PRIMARY KEY, at timestamptz DEFAULT now())")
        setup.commit()
        setup.close()
        writer = Writer(url)
        writer.start()
        time.sleep(2)  # the writer's steady state before the first fault

        def settle(name, at, extra=""):
            time.sleep(1)  # a second of writes after recovery, so the figures include the first ones
            first, longest, failures = writer.since(at)
            if first is None:
                faulthandler.dump_traceback(all_threads=True)
                raise RuntimeError(f"{name}: nothing acknowledged after the fault; {len(writer.attempts)} attempts, the last error: {writer.last_error}, alive {writer.is_alive()}")
            results.append((name, first, longest, failures, extra))
            print(f"{name}: first ack of a commit begun after the fault {first:.2f} s, longest commit {longest:.2f} s, failed attempts {failures}{extra}", flush=True)

        def member_number(name):
            return name[-1]

        # 1. The primary's PostgreSQL crashes (its Patroni lives).
        primary = cluster.primary()
        at = time.monotonic()
        os.kill(cluster.processes(primary)[1], signal.SIGKILL)
        back = cluster.wait_for_pair(standby=primary)
        settle("primary postmaster kill -9", at, f"; {primary} back as sync standby after {back:.1f} s")

        # 2. The primary's machine is gone (Patroni and PostgreSQL), then comes back.
        primary = cluster.primary()
        at = time.monotonic()
        cluster.run("pg-kill-member", member_number(primary))
        while cluster.primary() in (None, primary):
            if time.monotonic() - at > 60:
                raise RuntimeError(f"no promotion after 60 s: {cluster.members()}")
            time.sleep(0.1)
        promoted = time.monotonic() - at
        settle("primary machine lost", at, f"; promoted after {promoted:.1f} s")
        restarted = time.monotonic()
        cluster.run("pg-start-member", member_number(primary))
        back = cluster.wait_for_pair(standby=primary)
        print(f"  {primary} started again: sync standby after {time.monotonic() - restarted:.1f} s", flush=True)

        # 3. The standby's machine is gone, then comes back.
        standby = next(name for name, (role, _) in cluster.members().items() if role == "sync_standby")
        at = time.monotonic()
        cluster.run("pg-kill-member", member_number(standby))
        time.sleep(8)  # how long the standby stays away
        settle("standby machine lost", at)
        restarted = time.monotonic()
        cluster.run("pg-start-member", member_number(standby))
        back = cluster.wait_for_pair(standby=standby)
        print(f"  {standby} started again: sync standby after {time.monotonic() - restarted:.1f} s", flush=True)

        # 4. One etcd member lost.
        at = time.monotonic()
        cluster.run("etcd-kill", "1")
        time.sleep(8)
        settle("one etcd member lost", at, f"; primary still {cluster.primary()}")
        cluster.run("etcd-start", "1")
        cluster.wait_for_pair()

        # 5. Two etcd members lost: no majority, so no one may hold the leader key.
        at = time.monotonic()
        cluster.run("etcd-kill", "1")
        cluster.run("etcd-kill", "2")
        refused = None
        while time.monotonic() - at < 40:
            recent = [a for a in writer.attempts if a[0] > at and a[2] is None]
            if recent:
                refused = recent[0][1] - at
                break
            time.sleep(0.1)
        time.sleep(3)
        restarted = time.monotonic()
        cluster.run("etcd-start", "1")
        cluster.run("etcd-start", "2")
        while not any(a[2] for a in writer.attempts if a[0] > restarted):
            time.sleep(0.1)
        writes_again = next(a[1] for a in writer.attempts if a[0] > restarted and a[2]) - restarted
        refused_text = f"{refused:.1f} s" if refused is not None else "never (within 40 s)"
        results.append(("two etcd members lost", refused, None, None, f"writes refused after {refused_text}; back {writes_again:.1f} s after etcd"))
        print(f"two etcd members lost: first refused write after {refused_text}; writes again {writes_again:.1f} s after the two started again", flush=True)
        cluster.wait_for_pair()

        # 6. The primary frozen (every one of its processes stopped: nothing it sends arrives, as in a
        # network cut, but its kernel still acknowledges what it receives), then running again.
        primary = cluster.primary()
        stopped = cluster.processes(primary)
        at = time.monotonic()
        for pid in stopped:
            os.kill(pid, signal.SIGSTOP)
        while cluster.primary() in (None, primary):
            if time.monotonic() - at > 60:
                raise RuntimeError(f"no promotion after 60 s: {cluster.members()}")
            time.sleep(0.1)
        promoted = time.monotonic() - at
        deadline = time.monotonic() + 15
        while not any(a[2] for a in writer.attempts if a[0] > at) and time.monotonic() < deadline:
            time.sleep(0.1)
        acked_while_frozen = any(a[2] for a in writer.attempts if a[0] > at)
        print(f"primary frozen: promoted after {promoted:.1f} s; a commit acknowledged while it was frozen: {acked_while_frozen}", flush=True)
        resumed = time.monotonic()
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)
        back = cluster.wait_for_pair(standby=primary)
        print(f"  {primary} running again: sync standby after {time.monotonic() - resumed:.1f} s", flush=True)
        settle("primary frozen, then thawed", at, f"; thawed {resumed - at:.1f} s after the freeze")

        writer.stopping.set()
        writer.join()
        acknowledged = {key for _, _, key in writer.attempts if key}
        check = psycopg2.connect(url)
        cursor = check.cursor()
        cursor.execute("SELECT id FROM ha_probe")
        stored = {row[0] for row in cursor.fetchall()}
        lost = acknowledged - stored
        print(f"acknowledged commits: {len(acknowledged)}, lost: {len(lost)}", flush=True)
        return 1 if lost else 0
    finally:
        cluster.run("down", check=False)


if __name__ == "__main__":
    sys.exit(main())
