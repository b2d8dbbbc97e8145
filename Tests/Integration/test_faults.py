"""Acknowledged means stored, under every fault of the disk: a full disk, a read-only mount at
start, a filesystem that turns read-only while the server runs. The data folder is a real small filesystem
(a tmpfs, or an ext4 image on a loop device), so SQLite meets the kernel's own ENOSPC and EROFS.

Every test counts what it was told: the acknowledged answers and the tokens handed out must all be there
after a restart. Each prints one FIGURE line (`pytest -s` shows them): how many were acknowledged, refused and lost.
"""
import asyncio
import errno
import json
import os
import pathlib
import queue
import signal
import subprocess
import threading
import time

import pytest
import websockets

from conftest import BIN, ROOT, SHORT_STORY, Client, Server, join, wait_until

FAST = {"storageRetrySeconds": 1}
NAMES = ["Ana", "Ben", "Cat", "Dan", "Eve", "Fay", "Gus", "Hal"]


def _run(*command):
    return subprocess.run([str(part) for part in command], capture_output=True, text=True)


def _require_root():
    if os.geteuid() != 0:
        pytest.skip("mounting a small filesystem needs root")


@pytest.fixture
def small_fs(tmp_path):
    """An 8 MiB tmpfs: it fills up for real, and can be remounted read-only while nothing writes."""
    _require_root()
    mount = tmp_path / "small"
    mount.mkdir()
    mounted = _run("mount", "-t", "tmpfs", "-o", "size=8m,mode=0755", "tmpfs", mount)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    yield mount
    _run("mount", "-o", "remount,rw", mount)
    _run("umount", "-l", mount)


class Ext4:
    """An ext4 image on a loop device, mounted with errors=remount-ro: a filesystem error makes the kernel
    turn it read-only under a running server, as after a failing disk."""

    def __init__(self, image, mount):
        self.image = image
        self.mount = mount

    def attach(self):
        mounted = _run("mount", "-o", "loop,errors=remount-ro", self.image, self.mount)
        if mounted.returncode != 0:
            pytest.skip(f"cannot mount an ext4 image on a loop device: {mounted.stderr.strip()}")

    def fail(self):
        device = os.path.basename(_run("findmnt", "-n", "-o", "SOURCE", self.mount).stdout.strip())
        trigger = pathlib.Path(f"/sys/fs/ext4/{device}/trigger_fs_error")
        if not trigger.exists():
            pytest.skip(f"this kernel cannot trigger an ext4 error ({trigger} is missing)")
        trigger.write_text("storycircle test\n")
        assert "ro" in _run("findmnt", "-n", "-o", "OPTIONS", self.mount).stdout.split(",") or _is_read_only(self.mount)

    def repair(self):
        """Unmounted, checked and mounted again: what an operator does after such an error."""
        assert _run("umount", self.mount).returncode == 0
        checked = _run("e2fsck", "-fy", self.image)
        assert checked.returncode in (0, 1), checked.stdout + checked.stderr
        self.attach()


def _is_read_only(path):
    try:
        probe = pathlib.Path(path) / ".probe"
        probe.write_text("x")
        probe.unlink()
        return False
    except OSError as error:
        return error.errno == errno.EROFS


@pytest.fixture
def ext4_fs(tmp_path):
    _require_root()
    image = tmp_path / "disk.img"
    with open(image, "wb") as file:
        file.truncate(32 * 1024 * 1024)
    made = _run("mkfs.ext4", "-q", "-F", image)
    if made.returncode != 0:
        pytest.skip(f"cannot make an ext4 image: {made.stderr.strip()}")
    mount = tmp_path / "ext4"
    mount.mkdir()
    disk = Ext4(image, mount)
    disk.attach()
    yield disk
    _run("umount", "-l", mount)


def fill(folder):
    """Writes a file until the filesystem has no byte left."""
    path = pathlib.Path(folder) / "filler"
    with open(path, "ab", buffering=0) as file:
        for size in (1 << 16, 1 << 12, 1 << 8, 1):
            try:
                while True:
                    file.write(b"\0" * size)
            except OSError as error:
                assert error.errno == errno.ENOSPC, error
    return path


def start_refused(data, *extra):
    """Runs `serve` on `data`, which must refuse to start; returns (exit code, output)."""
    result = subprocess.run(
        [BIN, "serve", "--port", "0", "--data", str(data), *extra], cwd=ROOT, capture_output=True, text=True, timeout=30,
    )
    return result.returncode, result.stdout + result.stderr


def results_of(server, room):
    status, _, body = server.request("GET", f"/api/rooms/{room['code']}/results", room["teacherToken"])
    assert status == 200, body
    results = json.loads(body)
    return {(p["nickname"], a["question"]): a["option"] for p in results["players"] for a in p["answers"] if a.get("option") is not None}


async def control(server, room):
    """The teacher's connection. It is read only now and then, so it queues what it is sent meanwhile
    without a bound (by default the client stops reading after 16, and then misses the pongs too)."""
    client = await Client.connect(server, max_queue=None)
    await client.send({"type": "control", "room": room["code"], "token": room["teacherToken"]})
    await client.expect("welcome")
    return client


async def rejoin_all(server, room, tokens):
    """Every token handed out must still let its child in."""
    refused = []
    for name, token in tokens.items():
        client = await Client.connect(server)
        await client.send({"type": "rejoin", "room": room["code"], "token": token})
        message = await client.recv()
        if message["type"] != "welcome" or message["player"]["nickname"] != name:
            refused.append((name, message))
        await client.close()
    return refused


async def storage_banner(teacher, ok):
    """The teacher's next `storage` message saying `ok` (others said meanwhile are passed over)."""
    while True:
        message = await teacher.expect("storage")
        if message["ok"] is ok:
            return message


def opens_at(client):
    """When the question a child last saw opens (from a `question` or a `welcome`)."""
    for frame in reversed(client.frames):
        if frame["type"] == "question":
            return frame["opensAt"]
        if frame["type"] == "welcome" and frame["room"].get("question"):
            return frame["room"]["question"]["opensAt"]
    raise AssertionError("no question seen")


def test_a_full_disk_mid_quiz_loses_no_acknowledged_answer_and_the_room_carries_on(small_fs):
    data = small_fs / "data"
    server = Server(data, config=FAST).start()
    room = server.create_room()
    acknowledged, tokens = {}, {}
    filler = None
    try:
        async def quiz():
            nonlocal filler
            children = {}
            for name in NAMES:
                client, welcome = await join(server, room, name, max_queue=None)
                children[name] = client
                tokens[name] = welcome["token"]
            teacher = await control(server, room)
            assert server.command(room, "start")[0] == 200
            assert server.command(room, "skip")[0] == 200
            question = await children["Ana"].expect("question")
            await wait_until(question["opensAt"])
            before, after = NAMES[:4], NAMES[4:]
            for i, name in enumerate(before):
                await children[name].send({"type": "answer", "question": 0, "option": i % 3})
            for name in before:
                acknowledged[(name, 0)] = (await children[name].expect("answer.ack"))["option"]

            filler = fill(small_fs)
            # The disk is full: no answer is acknowledged, each child is told to tap again.
            for i, name in enumerate(after):
                await children[name].send({"type": "answer", "question": 0, "option": i % 3})
            for name in after:
                error = await children[name].expect("error")
                assert error["code"] == "storage_unavailable", error
                assert error["message"] == "Your answer could not be saved yet — tap again."
            banner = await storage_banner(teacher, ok=False)
            assert "full" in banner["message"], banner
            assert banner["reason"] == "disk_full", banner  # the cause as a code, for the page to word
            status, _, body = server.request("GET", "/healthz")
            health = json.loads(body)
            assert status == 503 and health["status"] == "degraded", body
            assert health["reason"] == "database or disk is full (No space left on device)", body
            # A late joiner gets no token; the teacher's command does not happen.
            late = await Client.connect(server)
            await late.send({"type": "join", "room": room["code"], "nickname": "Ivy"})
            error = await late.expect("error")
            assert error["code"] == "storage_unavailable"
            assert await late.close_code() == (1013, "storage_unavailable")
            assert "welcome" not in late.types()
            status, refusal = server.command(room, "next")
            assert status == 503 and refusal["error"]["code"] == "storage_unavailable", refusal
            # Three rebuilds (the answers, the join, the command): each connection was told three times.
            for client in [*children.values(), teacher]:
                for _ in range(3):
                    await client.expect("welcome")
            for name in after:
                assert "answer.ack" not in children[name].types()

            # Space comes back: the teacher hears it, the children tap again, the late joiner gets in.
            filler.unlink()
            await storage_banner(teacher, ok=True)
            assert server.request("GET", "/healthz")[0] == 200
            ivy, welcome = await join(server, room, "Ivy", max_queue=None)
            children["Ivy"], tokens["Ivy"] = ivy, welcome["token"]
            await wait_until(max(opens_at(children[name]) for name in [*after, "Ivy"]))
            for i, name in enumerate([*after, "Ivy"]):
                await children[name].send({"type": "answer", "question": 0, "option": (i + 1) % 3})
            for name in [*after, "Ivy"]:
                acknowledged[(name, 0)] = (await children[name].expect("answer.ack"))["option"]
            await children["Ana"].expect("reveal")
            assert server.command(room, "next")[0] == 200

            # Question 2: the disk fills up while the answers are being stored (it has room for about one
            # commit). Whatever was acknowledged stays; the others are told to tap again, and do once
            # there is space.
            question = await children["Ana"].expect("question")
            await wait_until(question["opensAt"])
            filler = fill(small_fs)
            os.truncate(filler, filler.stat().st_size - 12 * 1024)
            for i, (name, client) in enumerate(children.items()):
                await client.send({"type": "answer", "question": 1, "option": i % 4})
            refused = []
            for name, client in children.items():
                while True:
                    message = await client.recv()
                    if message["type"] == "answer.ack":
                        acknowledged[(name, 1)] = message["option"]
                        break
                    if message["type"] == "error":
                        assert message["code"] == "storage_unavailable", message
                        refused.append(name)
                        break
            filler.unlink()
            if refused:
                await storage_banner(teacher, ok=True)
                await wait_until(max(opens_at(children[name]) for name in refused))
                for name in refused:
                    await children[name].send({"type": "answer", "question": 1, "option": 3})
                for name in refused:
                    acknowledged[(name, 1)] = (await children[name].expect("answer.ack"))["option"]
            print(f"FIGURE disk-full question 2: {len(children) - len(refused)} acknowledged before the disk filled, {len(refused)} told to tap again")
            return len(refused)

        asyncio.run(quiz())
        status, _, body = server.request("GET", f"/api/rooms/{room['code']}", room["teacherToken"])
        before_crash = json.loads(body)
        server.kill()
    finally:
        server.stop()

    again = Server(data, config=FAST).start()
    try:
        stored = results_of(again, room)
        lost = {key: option for key, option in acknowledged.items() if stored.get(key) != option}
        refused = asyncio.run(rejoin_all(again, room, tokens))
        print(f"FIGURE disk-full: {len(acknowledged)} answers acknowledged, {len(lost)} lost after restart; {len(tokens)} tokens handed out, {len(refused)} refused")
        assert lost == {}, f"acknowledged answers missing after the restart: {lost}"
        assert stored == acknowledged, "nothing that was not acknowledged was stored"
        assert refused == [], refused
        status, _, body = again.request("GET", f"/api/rooms/{room['code']}", room["teacherToken"])
        report = json.loads(body)
        assert (report["phase"], report["question"]) == (before_crash["phase"], before_crash["question"]), "the room resumes where it was"
    finally:
        again.stop()


def test_a_database_on_a_read_only_filesystem_is_refused_at_start_with_the_reason(small_fs):
    data = small_fs / "data"
    server = Server(data, config=FAST).start()
    room = server.create_room()
    asyncio.run(join(server, room, "Ana"))
    server.kill()  # as after a crash: the -wal and -shm files stay
    assert (data / "storycircle.sqlite-wal").exists() and (data / "storycircle.sqlite-shm").exists()

    remounted = _run("mount", "-o", "remount,ro", small_fs)
    assert remounted.returncode == 0, remounted.stderr
    code, output = start_refused(data, "--config", str(data / "config.json"))
    print(f"FIGURE read-only at start: exit {code}: {output.strip().splitlines()[-1] if output.strip() else ''}")
    assert code == 1, output
    assert "Read-only file system" in output, output
    assert "listening" not in output
    # The same database with the data folder elsewhere: SQLite would open it read-only without a word;
    # the write at open finds out.
    code, output = start_refused(small_fs.parent / "elsewhere", "--database", str(data / "storycircle.sqlite"))
    print(f"FIGURE read-only database at start: exit {code}: {output.strip().splitlines()[-1] if output.strip() else ''}")
    assert code == 1, output
    assert "attempt to write a readonly database (Read-only file system)" in output, output

    assert _run("mount", "-o", "remount,rw", small_fs).returncode == 0
    again = Server(data, config=FAST).start()
    try:
        assert again.wait_for_output("Restored 1 unfinished room")
    finally:
        again.stop()


def test_a_filesystem_turning_read_only_under_the_server_acknowledges_nothing(ext4_fs):
    data = ext4_fs.mount / "data"
    server = Server(data, config=FAST).start()
    room = server.create_room()
    acknowledged, tokens, told = {}, {}, 0
    try:
        async def quiz():
            nonlocal told
            children = {}
            for name in NAMES[:4]:
                children[name], welcome = await join(server, room, name, max_queue=None)
                tokens[name] = welcome["token"]
            teacher = await control(server, room)
            server.command(room, "start")
            server.command(room, "skip")
            question = await children["Ana"].expect("question")
            await wait_until(question["opensAt"])
            for i, name in enumerate(["Ana", "Ben"]):
                await children[name].send({"type": "answer", "question": 0, "option": i})
                acknowledged[(name, 0)] = (await children[name].expect("answer.ack"))["option"]

            ext4_fs.fail()
            for name in ["Cat", "Dan"]:
                await children[name].send({"type": "answer", "question": 0, "option": 2})
            for name in ["Cat", "Dan"]:
                error = await children[name].expect("error")
                assert error["code"] == "storage_unavailable", error
                assert "answer.ack" not in children[name].types()
                told += 1
            banner = await storage_banner(teacher, ok=False)
            status, _, body = server.request("GET", "/healthz")
            assert status == 503, body
            reason = json.loads(body)["reason"]
            assert reason.endswith("(Read-only file system)"), reason
            assert reason in banner["message"]
            assert banner["reason"] == "read_only", banner
            late = await Client.connect(server)
            await late.send({"type": "join", "room": room["code"], "nickname": "Eve"})
            assert (await late.expect("error"))["code"] == "storage_unavailable"
            assert await late.close_code() == (1013, "storage_unavailable")
            print(f"FIGURE read-only while running: the server said: {reason}")

        asyncio.run(quiz())
        server.stop()
    finally:
        if server.process.poll() is None:
            server.kill()

    ext4_fs.repair()
    again = Server(data, config=FAST).start()
    try:
        stored = results_of(again, room)
        lost = {key: option for key, option in acknowledged.items() if stored.get(key) != option}
        refused = asyncio.run(rejoin_all(again, room, tokens))
        print(f"FIGURE read-only while running: {len(acknowledged)} answers acknowledged, {len(lost)} lost after restart; {told} answers refused with storage_unavailable; {len(refused)} of {len(tokens)} tokens refused")
        assert lost == {} and stored == acknowledged, (stored, acknowledged)
        assert refused == []
    finally:
        again.stop()


def test_the_start_terminal_says_when_results_cannot_be_saved_and_when_they_can_again(small_fs, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(FAST))
    process = subprocess.Popen(
        [BIN, "start", str(SHORT_STORY), "--port", "0", "--data", str(small_fs / "data"), "--config", str(config)],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()
    seen = []

    def read_until(*texts, timeout=20):
        """Reads lines until each of `texts` was printed (in any order); returns the lines that had them."""
        found = {}
        deadline = time.monotonic() + timeout
        while len(found) < len(texts):
            try:
                line = lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"never printed {texts!r}:\n" + "".join(seen))
            seen.append(line)
            found.update({text: line for text in texts if text in line})
        return [found[text] for text in texts]

    try:
        read_until("● 0 children")
        filler = fill(small_fs)
        process.stdin.write("s")
        process.stdin.flush()
        # The command waits for its record, then says it did not happen; the banner says why.
        banner, refusal = read_until("⚠ Results cannot be saved", "Cannot start now")
        assert "database or disk is full (No space left on device)" in banner, banner
        assert "This could not be saved" in refusal and "so it did not happen" in refusal, refusal
        filler.unlink()
        read_until("✓ Storage works again")
        process.stdin.write("s")
        process.stdin.flush()
        read_until("→ start")
        print(f"FIGURE start terminal: {banner.strip()}")
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=15)
