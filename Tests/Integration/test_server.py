"""The room server over real sockets, judged by an independent client."""
import asyncio
import contextlib
import http.client
import json
import os
import random
import re
import resource
import socket
import time

import pytest
import websockets

from conftest import Client, join, screen, wait_until


def secret_keys(message):
    """Every key anywhere in a message (to look for answer fields)."""
    keys = set()
    if isinstance(message, dict):
        for key, value in message.items():
            keys.add(key)
            keys |= secret_keys(value)
    elif isinstance(message, list):
        for item in message:
            keys |= secret_keys(item)
    return keys


def test_a_room_of_thirty_children_from_join_to_final_scoreboard(server):
    # A contest: each child is sent the top of the class and their own place.
    room = server.create_room(settings={"competitive": True})

    async def scenario():
        dashboard = await screen(server, room)
        teacher = await screen(server, room, kind="control", token_key="teacherToken")
        children = []
        for i in range(30):
            client, welcome = await join(server, room, f"Child {i:02d}")
            assert welcome["role"] == "child" and welcome["token"]
            children.append(client)

        await teacher.send({"type": "command", "command": "start"})
        plan = await children[0].expect("narration.plan")
        assert len(plan["sentences"]) == 2 and plan["playsAudio"]
        # The narration is real: espeak-ng timings, progress at each sentence, then the unlock for all.
        unlock = await children[0].expect("quiz.unlock", timeout=30)
        rng = random.Random(7)
        answers_sent = 0
        for index in range(3):
            questions = [await child.expect("question") for child in children]
            assert all(q["opensAt"] == questions[0]["opensAt"] for q in questions), "one instant for everyone"
            if index == 0:
                assert questions[0]["opensAt"] == unlock["at"]
            await wait_until(questions[0]["opensAt"])
            for child in children:
                await child.send({"type": "answer", "question": index, "option": rng.randrange(len(questions[0]["options"]))})
                answers_sent += 1
            for child in children:
                await child.expect("answer.ack")
                reveal = await child.expect("reveal")
                assert reveal["question"] == index and "you" in reveal and len(reveal["top"]) == 5
            dashboard_reveal = await dashboard.expect("reveal")
            assert sum(dashboard_reveal["distribution"]) == 30
            await teacher.send({"type": "command", "command": "next"})

        final = await dashboard.expect("finished")
        board = final["entries"]
        assert len(board) == 30
        scores = [entry["score"] for entry in board]
        assert scores == sorted(scores, reverse=True)
        for entry in board:
            assert entry["rank"] == 1 + sum(1 for other in board if other["score"] > entry["score"])
        for child in children:
            finished = await child.expect("finished")
            assert finished["you"]["rank"] == next(e["rank"] for e in board if e["nickname"] == child.frames[0]["player"]["nickname"])

        # Dashboards get a coalesced board, not one message per answer.
        scoreboards = [f for f in dashboard.frames if f["type"] == "scoreboard"]
        assert 0 < len(scoreboards) < answers_sent
        # No frame to a child carried a question's answer before its reveal.
        for child in children:
            revealed = set()
            for frame in child.frames:
                if frame["type"] == "reveal":
                    revealed.add(frame["question"])
                    continue
                if frame["type"] in ("finished",):
                    continue
                assert not ({"correctOption", "correct", "answer"} & secret_keys(frame)), frame
        for client in children + [dashboard, teacher]:
            await client.close()

    asyncio.run(scenario())


def test_rejoin_after_a_dropped_connection_keeps_the_player_and_points(server):
    room = server.create_room()

    async def scenario():
        ana, welcome = await join(server, room, "Ana")
        token = welcome["token"]
        ben, _ = await join(server, room, "Ben")
        server.command(room, "start")
        server.command(room, "skip")
        question = await ana.expect("question")
        await wait_until(question["opensAt"])
        await ana.send({"type": "answer", "question": 0, "option": 0})
        await ana.expect("answer.ack")
        await ben.send({"type": "answer", "question": 0, "option": 1})
        reveal = await ana.expect("reveal")
        score = reveal["you"]["standing"]["score"]
        assert score > 0
        ana.ws.transport.abort()  # the Wi-Fi drops: no close frame

        back = await Client.connect(server)
        await back.send({"type": "rejoin", "room": room["code"], "token": token})
        welcome = await back.expect("welcome")
        assert welcome["player"] == {"id": "p1", "nickname": "Ana"}
        assert "token" not in welcome
        assert welcome["room"]["you"]["score"] == score
        assert welcome["room"]["phase"] == "reveal"
        assert welcome["room"]["reveal"]["you"]["outcome"] == "correct"
        status, body = server.command(room, "next")
        assert status == 200
        nxt = await back.expect("question")
        assert nxt["index"] == 1

    asyncio.run(scenario())


def test_every_bad_input_gets_its_error_or_close_while_another_room_keeps_serving(make_server):
    server = make_server(config={"failedJoinBurst": 5, "failedJoinsPerMinute": 1, "failedJoinMaxDelaySeconds": 1, "maxMessageBytes": 4096})
    room = server.create_room()
    other = server.create_room()

    async def scenario():
        # A second room, checked after every kind of abuse below.
        busy, _ = await join(server, other, "Busy")
        served = []

        async def other_room_still_served():
            n = len(served) + 1
            await busy.send({"type": "ping", "id": n})
            assert (await busy.expect("pong", timeout=5))["id"] == n
            served.append(n)

        async def first_message(payload):
            client = await Client.connect(server)
            await client.send(payload)
            error = await client.expect("error")
            code, reason = await client.close_code()
            return error, code, reason

        error, code, reason = await first_message({"type": "watch", "room": room["code"], "token": "wrong"})
        assert (error["code"], code, reason) == ("bad_token", 1008, "bad_token")
        error, code, _ = await first_message({"type": "control", "room": room["code"], "token": room["dashboardToken"]})
        assert (error["code"], code) == ("wrong_role", 1008)
        error, code, _ = await first_message({"type": "teleport", "room": room["code"]})
        assert (error["code"], code) == ("unknown_type", 1008)
        error, code, _ = await first_message("{this is not json")
        assert (error["code"], code) == ("invalid_json", 1008)
        error, code, _ = await first_message({"type": "answer", "question": 0, "option": 1})
        assert (error["code"], code) == ("hello_required", 1008)
        assert error["message"] == "Say who you are first: join, rejoin, watch or control."
        await other_room_still_served()

        # Oversize and binary frames.
        client = await Client.connect(server)
        await client.send("x" * 5000)
        error = await client.expect("error")
        assert error["code"] == "message_too_big"
        assert await client.close_code() == (1009, "message_too_big")
        client = await Client.connect(server)
        await client.ws.send(b"\x00\x01\x02")
        assert (await client.expect("error"))["code"] == "binary_not_supported"
        assert await client.close_code() == (1003, "binary_not_supported")
        await other_room_still_served()

        # After the hello: wrong role, bad message, unknown type, all answered without a close.
        child, _ = await join(server, room, "Ana")
        await child.send({"type": "command", "command": "start"})
        assert (await child.expect("error"))["code"] == "wrong_role"
        await child.send("[1, 2")
        assert (await child.expect("error"))["code"] == "invalid_json"
        await child.send({"type": "answer", "question": "zero", "option": 1})
        assert (await child.expect("error"))["code"] == "invalid_message"
        await child.send({"type": "dance"})
        assert (await child.expect("error"))["code"] == "unknown_type"
        await other_room_still_served()

        # (Joined now: the guessing below spends this address's allowance.)
        flooder, _ = await join(server, other, "Flood")

        # A join flood with guessed codes is slowed, per address: never refused (a class may share the
        # address), answered late once the address's wrong codes are spent.
        codes, took = [], []
        for attempt in range(8):
            client = await Client.connect(server)
            started = time.monotonic()
            await client.send({"type": "join", "room": str(100000 + attempt), "nickname": "Guess"})
            codes.append((await client.expect("error"))["code"])
            took.append(time.monotonic() - started)
            await client.close()
        # The allowance is 5 failures per address; the wrong token above already spent one.
        assert codes == ["room_not_found"] * 8
        assert max(took[:4]) < 0.8 and min(took[4:]) >= 0.8, took
        await other_room_still_served()

        # A message flood closes the flooder only.
        try:
            for n in range(200):
                await flooder.send({"type": "ping", "id": n})
        except websockets.ConnectionClosed:
            pass
        assert (await flooder.expect("error"))["code"] == "too_many_messages"
        assert (await flooder.close_code())[0] == 1008
        await other_room_still_served()

        assert len(served) == 5
        status, _, _ = server.request("GET", "/healthz")
        assert status == 200

    asyncio.run(scenario())


def test_a_stalled_client_is_dropped_without_delaying_the_others(make_server):
    server = make_server(config={"maxQueuedKilobytesPerConnection": 32, "maxQueuedMessagesPerConnection": 100000, "socketSendBufferKilobytes": 8})
    room = server.create_room()

    async def scenario():
        # A child whose device stops reading: a tiny receive buffer, then reading paused.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)  # before connect, so the window is small
        sock.connect(("127.0.0.1", server.port))
        stalled = Client(await websockets.connect(server.ws_url, sock=sock, max_size=2**24))
        await stalled.send({"type": "join", "room": room["code"], "nickname": "Stalled"})
        await stalled.expect("welcome")
        reader, _ = await join(server, room, "Reader")
        stalled.ws.transport.pause_reading()

        server.command(room, "start")
        await reader.expect("narration.plan")
        # Teacher commands broadcast to everyone: pause/resume again and again, over one HTTP connection, from
        # a thread, while the reading child keeps reading.
        cycles = 1000

        def send_commands():
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
            for n in range(cycles):
                for command in ("pause", "resume"):
                    connection.request("POST", f"/api/rooms/{room['code']}/commands", json.dumps({"command": command}),
                                       {"Authorization": f"Bearer {room['teacherToken']}", "Content-Type": "application/json"})
                    response = connection.getresponse()
                    response.read()
                    assert response.status == 200

        async def read_pauses():
            paused = 0
            while paused < cycles:
                if (await reader.recv(timeout=20))["type"] == "paused":
                    paused += 1
            return paused

        started = time.monotonic()
        commands = asyncio.get_running_loop().run_in_executor(None, send_commands)
        paused = await read_pauses()
        await commands
        commands_took = time.monotonic() - started
        assert paused == cycles, "the reading child got every broadcast"

        status, _, metrics = server.request("GET", "/metrics")
        dropped = int(re.search(rb"storycircle_slow_clients_dropped_total (\d+)", metrics).group(1))
        assert dropped == 1
        stalled.ws.transport.resume_reading()
        code, _ = await stalled.close_code(timeout=10)
        assert code != 1000
        assert commands_took < 30

    asyncio.run(scenario())


def test_clock_sync_ping_carries_server_time(server):
    room = server.create_room()

    async def scenario():
        child, _ = await join(server, room, "Ana")
        samples = []
        for n in range(5):
            sent = time.time() * 1000
            await child.send({"type": "ping", "id": n, "clientTime": sent, "rtt": 12})
            pong = await child.expect("pong")
            received = time.time() * 1000
            assert pong["id"] == n and pong["clientTime"] == sent
            samples.append((received - sent, pong["serverTime"] - (sent + received) / 2))
        rtt, offset = min(samples)
        assert abs(offset) < 50 + rtt, "same machine: the offset is about zero"

    asyncio.run(scenario())


def test_health_and_metrics(server):
    status, headers, body = server.request("GET", "/healthz")
    assert status == 200
    health = json.loads(body)
    assert health["status"] == "ok" and health["version"]
    server.create_room()
    status, headers, body = server.request("GET", "/metrics")
    assert status == 200
    assert headers["content-type"].startswith("text/plain; version=0.0.4")
    text = body.decode()
    for name in ("storycircle_connections_open", "storycircle_messages_received_total", "storycircle_errors_sent_total",
                 "storycircle_rooms{phase=\"lobby\"} 1", "storycircle_rooms_created_total 1"):
        assert name in text, name


def test_metrics_give_the_process_cpu_memory_and_files_as_prometheus_clients_name_them(server):
    """A node's CPU and open-file headroom, readable from another machine (a school's monitoring, or the
    bench's generator on a second host): CPU in nanosecond steps over every thread, the server's own."""
    pid = server.process.pid
    ticks = os.sysconf("SC_CLK_TCK")

    def from_proc():
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / ticks, len(os.listdir(f"/proc/{pid}/fd"))

    def figures():
        status, _, body = server.request("GET", "/metrics")
        assert status == 200
        return {line.split(" ")[0]: float(line.split(" ")[1]) for line in body.decode().splitlines()
                if line.startswith(("process_", "storycircle_connections_"))}

    cpu_before, files_before = from_proc()
    metrics = figures()
    cpu_after, files_after = from_proc()
    assert {name for name in metrics if name.startswith("process_")} == {
        "process_cpu_seconds_total", "process_resident_memory_bytes", "process_virtual_memory_bytes",
        "process_open_fds", "process_max_fds", "process_start_time_seconds"}
    # /proc's user + system of the same process, read on either side: whole ticks, split from the same
    # clock by sampling and kept from going backwards, so they may trail it by a few.
    assert cpu_before - 3 / ticks <= metrics["process_cpu_seconds_total"] <= cpu_after + 3 / ticks
    # The HTTP connection that asked is open while the server counts; the listing here may see it or not.
    assert min(files_before, files_after) - 1 <= metrics["process_open_fds"] <= max(files_before, files_after) + 1
    max_files = resource.prlimit(pid, resource.RLIMIT_NOFILE)[0]
    assert metrics["process_max_fds"] == max_files
    # The connections the transport takes fit under that limit, with a margin for the server's own files.
    assert 0 < metrics["storycircle_connections_max"] <= max_files - 64
    assert metrics["process_resident_memory_bytes"] > 1 << 20
    assert time.time() - 120 < metrics["process_start_time_seconds"] <= time.time() + 1
    with contextlib.ExitStack() as sockets:
        for _ in range(10):
            sockets.enter_context(socket.create_connection(("127.0.0.1", server.port), timeout=5))
        deadline = time.time() + 10
        while figures()["process_open_fds"] < metrics["process_open_fds"] + 10:
            assert time.time() < deadline, "ten more sockets were never counted"
            time.sleep(0.05)  # the next look at /metrics, not a wait for an event

def upgrade_response(port, path="/ws", origin=None, host=None, source="127.0.0.1", headers=()):
    """A WebSocket upgrade request on a raw socket: (status, headers, JSON body or None). On 101 the socket
    is closed at once."""
    with socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0)) as raw:
        request = (f"GET {path} HTTP/1.1\r\nHost: {host or f'127.0.0.1:{port}'}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n")
        if origin:
            request += f"Origin: {origin}\r\n"
        for header in headers:
            request += header + "\r\n"
        raw.sendall((request + "\r\n").encode())
        return read_http_response(raw)


def read_http_response(raw, head_only=False):
    """One HTTP response from a socket: (status, lowercase headers, body parsed as JSON when it is JSON)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = raw.recv(4096)
        if not chunk:
            raise AssertionError(f"the connection ended before a response: {data!r}")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0].startswith("HTTP/1."), f"not a status line: {lines[0]!r}"
    status = int(lines[0].split(" ")[1])
    headers = {line.split(":", 1)[0].lower(): line.split(":", 1)[1].strip() for line in lines[1:]}
    length = 0 if head_only or status == 101 else int(headers.get("content-length", "0"))
    while len(body) < length:
        chunk = raw.recv(4096)
        if not chunk:
            break
        body += chunk
    assert len(body) == length, f"{len(body)} bytes of body after a {'HEAD' if head_only else 'response'} that announced {length}"
    parsed = json.loads(body) if body and headers.get("content-type", "").startswith("application/json") else None
    return status, headers, parsed


def upgrade_status(port, **kwargs):
    return upgrade_response(port, **kwargs)[0]


def test_security_headers_and_origin_check(make_server):
    server = make_server(config={"publicURL": "https://quiz.school.example", "allowedOrigins": ["https://other.school.example"]})
    status, headers, _ = server.request("GET", "/")
    assert status == 200
    assert "default-src 'self'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    # A page on another site, and a DNS-rebinding page whose Host and Origin are both that site: the Origin
    # is checked against the server's own origins, never against the Host, which the page controls too.
    status, _, body = upgrade_response(server.port, origin="http://evil.example")
    assert (status, body["error"]["code"]) == (403, "origin_not_allowed")
    assert upgrade_status(server.port, origin=f"http://evil.example:{server.port}", host=f"evil.example:{server.port}") == 403
    assert upgrade_status(server.port, origin="http://evil.example", host="evil.example") == 403
    status, _, body = upgrade_response(server.port, path="/other")
    assert (status, body["error"]["code"]) == (404, "not_found")
    # The server's own pages: the public URL, its loopback addresses on its own port, allowedOrigins.
    assert upgrade_status(server.port, origin="https://quiz.school.example") == 101
    assert upgrade_status(server.port, origin="https://other.school.example") == 101
    assert upgrade_status(server.port, origin=f"http://127.0.0.1:{server.port}") == 101
    assert upgrade_status(server.port, origin=f"http://localhost:{server.port}") == 101
    assert upgrade_status(server.port, origin=f"http://127.0.0.1:{server.port + 1}") == 403, "another program here"
    assert upgrade_status(server.port, origin="http://quiz.school.example") == 403, "not the scheme children use"
    assert upgrade_status(server.port) == 101, "clients that are not browsers send no Origin"


def test_the_address_the_server_printed_is_an_allowed_origin(server):
    printed = re.search(r"listening on (\S+) \(port", "".join(server.output)).group(1)
    assert upgrade_status(server.port, origin=printed) == 101
    assert upgrade_status(server.port, origin=printed.replace("http://", "https://")) == 403


def test_head_never_sends_a_body_so_keep_alive_goes_on(server):
    # HEAD on /healthz, /metrics and /api/... answers with the headers only: a body would be read as the
    # start of the next response on the connection, which then no longer parses.
    room = server.create_room()
    paths = ["/healthz", "/metrics", f"/api/rooms/{room['code']}", "/api/rooms", "/api/nothing", "/", "/dashboard"]
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw:
        for path in paths:
            auth = f"Authorization: Bearer {room['dashboardToken'] if 'rooms/' in path else server.admin_token}\r\n"
            raw.sendall(f"HEAD {path} HTTP/1.1\r\nHost: x\r\n{auth}\r\n".encode())
            head_status, head_headers, _ = read_http_response(raw, head_only=True)
            raw.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n{auth}\r\n".encode())
            # A stray body from the HEAD would come first here, and this would not parse.
            status, headers, _ = read_http_response(raw)
            assert head_status == status, path
            assert head_headers["content-type"] == headers["content-type"], path
    # HEAD on a route that only takes POST: the 405 has headers only, too.
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw:
        raw.sendall(f"HEAD /api/rooms/{room['code']}/commands HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        status, headers, _ = read_http_response(raw, head_only=True)
        assert status == 405 and headers["allow"] == "POST"
        raw.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert read_http_response(raw)[0] == 200


def test_unknown_methods_get_a_json_405_with_allow(server):
    # Any method a route does not take, known or not (FOO, TRACE), is a JSON 405 with the route's Allow, like
    # every other error the server sends.
    for method, path, allowed in [("FOO", "/", "GET, HEAD"), ("TRACE", "/", "GET, HEAD"), ("TRACE", "/healthz", "GET, HEAD, POST"),
                                  ("FOO", "/api/rooms", "GET, HEAD, POST"), ("PUT", "/", "GET, HEAD"), ("DELETE", "/dashboard", "GET, HEAD"),
                                  ("DELETE", "/api/rooms", "GET, HEAD, POST"), ("POST", "/healthz", "GET, HEAD")]:
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw:
            raw.sendall(f"{method} {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            status, headers, body = read_http_response(raw)
            assert (status, headers.get("allow")) == (405, allowed), (method, path)
            assert body["error"]["code"] == "method_not_allowed", (method, path)
    assert server.request("GET", "/healthz")[0] == 200


def test_headers_over_the_limit_end_the_connection_without_a_reply(server):
    # libwebsockets 4.1 fails such a request in its parser, before any callback, and closes it; it cannot
    # be answered 431 (docs/protocol.md). The server goes on.
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw:
        raw.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Padding: " + b"a" * 9000 + b"\r\n\r\n")
        assert raw.recv(4096) == b""
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw:
        raw.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Padding: " + b"a" * 6000 + b"\r\n\r\n")
        assert read_http_response(raw)[0] == 200


def test_contract_slips_over_real_sockets(server):
    room = server.create_room()

    async def scenario():
        ana, _ = await join(server, room, "Ana")
        # These are valid JSON, just not indexes: invalid_message, not invalid_json.
        for raw in ('{"type":"answer","question":0,"option":2.5}', '{"type":"answer","question":0,"option":18446744073709551616}'):
            await ana.send(raw)
            error = await ana.expect("error")
            assert error["code"] == "invalid_message", raw
            assert error["message"] == 'The "option" field must be a whole number.'
        # Question -1 was never open, so it is not_open, not question_closed.
        await ana.send({"type": "answer", "question": -1, "option": 0})
        assert (await ana.expect("error"))["code"] == "not_open"
        # Names that render blank would show as empty places on the podium: nickname_invalid.
        for blank in ["\u3164", "\u3164\u3164", "\u2800", "\u115f\u1160", "\uffa0", "\u200d", "Ana\u3164"]:
            client = await Client.connect(server)
            await client.send({"type": "join", "room": room["code"], "nickname": blank})
            assert (await client.expect("error"))["code"] == "nickname_invalid", repr(blank)
            assert (await client.close_code())[0] == 1008
        spaced = await Client.connect(server)
        await spaced.send({"type": "join", "room": room["code"], "nickname": "\u3000\u2003"})
        assert (await spaced.expect("error"))["code"] == "nickname_invalid"

    asyncio.run(scenario())


def test_a_one_byte_close_payload_is_closed_with_1002(server):
    # A 1-byte close payload has no room for a status code, so it is a protocol error (1002), not a close to
    # echo back.
    raw = raw_websocket(server.port)
    raw.sendall(client_frame(0x8, b"\x03"))
    assert read_close(raw, timeout=5) == 1002
    raw.close()
    raw = raw_websocket(server.port)
    raw.sendall(client_frame(0x8, b"\x03\xe8"))
    assert read_close(raw, timeout=5) == 1000, "a well-formed close is answered in kind"
    raw.close()


def test_a_child_that_only_listens_is_kept_past_the_hang_up_time(make_server):
    # The transport's keepalive: a real client answers the server's pings with pongs that echo the payload,
    # and those count as life, so a child who says nothing for twice the hang-up time is still there.
    server = make_server(config={"pingAfterIdleSeconds": 1, "hangUpAfterIdleSeconds": 2})
    room = server.create_room()

    async def scenario():
        child, _ = await join(server, room, "Listener")
        # The window to watch: nothing comes (no story is playing), and the connection is not closed.
        with pytest.raises(asyncio.TimeoutError):
            await child.expect("anything", timeout=4.5)
        await child.send({"type": "ping", "id": 7})
        assert (await child.expect("pong"))["id"] == 7
        metrics = server.request("GET", "/metrics")[2].decode()
        assert re.search(r"^storycircle_connections_open 1$", metrics, re.M)

    asyncio.run(scenario())


def test_hello_less_connections_are_closed_after_the_timeout_and_a_flood_costs_no_one_else_a_place(make_server):
    # Connections that never say hello (while answering pings) are closed after the hello timeout, and one
    # address can hold only its own share of places, so a flood from one address cannot turn a real child
    # away with 503. Here: the per-address limit is 20 and the whole server takes 21; the flood fills its
    # 20, the 21st place stays for another device.
    server = make_server(config={"helloTimeoutSeconds": 2, "pingAfterIdleSeconds": 1, "hangUpAfterIdleSeconds": 30,
                                 "maxConnectionsPerAddress": 20, "maxConnections": 21})
    room = server.create_room()

    async def scenario():
        # The flood: connections that answer pings (websockets does) but never say who they are.
        flood = [await Client.connect(server) for _ in range(20)]
        refused = []
        for _ in range(30):
            with pytest.raises(websockets.InvalidStatusCode) as error:
                await Client.connect(server)
            refused.append(error.value.status_code)
        assert set(refused) == {429}
        status, _, body = upgrade_response(server.port)
        assert (status, body["error"]["code"]) == (429, "too_many_connections")

        # A real child on another device (another address on this machine) still gets in and plays.
        sock = socket.create_connection(("127.0.0.1", server.port), source_address=("127.0.0.2", 0))
        child = Client(await websockets.connect(server.ws_url, sock=sock))
        await child.send({"type": "join", "room": room["code"], "nickname": "Real child"})
        assert (await child.expect("welcome"))["player"]["nickname"] == "Real child"

        # The flood is closed by the hello timeout: every one of them, with its reason.
        closes = await asyncio.gather(*(client.close_code(timeout=10) for client in flood))
        assert closes == [(1008, "hello_timeout")] * 20
        assert all(client.frames[0]["code"] == "hello_timeout" for client in flood)
        left_open = sum(1 for client in flood if client.ws.open)
        assert left_open == 0

        # The child was pinged all along and said hello: still here.
        await child.send({"type": "ping", "id": 1})
        assert (await child.expect("pong"))["id"] == 1
        metrics = server.request("GET", "/metrics")[2].decode()
        assert re.search(r"^storycircle_connections_open 1$", metrics, re.M), "only the child is open on the server"
        assert re.search(r"^storycircle_hello_timeouts_total 20$", metrics, re.M)
        assert re.search(r"^storycircle_upgrades_rejected_per_address_total 31$", metrics, re.M)
        # The flood's address may come back now.
        again = await Client.connect(server)
        await again.send({"type": "join", "room": room["code"], "nickname": "Back"})
        await again.expect("welcome")

    asyncio.run(scenario())


def test_behind_a_trusted_proxy_the_limit_counts_forwarded_addresses(make_server):
    server = make_server(config={"trustForwardedFor": True, "maxConnectionsPerAddress": 2})

    async def scenario():
        held = [await Client.connect(server, extra_headers={"X-Forwarded-For": "10.0.0.7"}) for _ in range(2)]
        with pytest.raises(websockets.InvalidStatusCode) as error:
            await Client.connect(server, extra_headers={"X-Forwarded-For": "10.0.0.7"})
        assert error.value.status_code == 429
        other = await Client.connect(server, extra_headers={"X-Forwarded-For": "10.0.0.8"})
        # What a client writes in front of the proxy's entry proves nothing: the last entry counts.
        with pytest.raises(websockets.InvalidStatusCode):
            await Client.connect(server, extra_headers={"X-Forwarded-For": "1.2.3.4, 10.0.0.7"})
        for client in held + [other]:
            await client.close()

    asyncio.run(scenario())


def test_sigterm_stops_cleanly_within_two_seconds(server):
    room = server.create_room()

    async def scenario():
        child, _ = await join(server, room, "Ana")
        elapsed = await asyncio.get_running_loop().run_in_executor(None, server.stop)
        code, reason = await child.close_code(timeout=5)
        return elapsed, code, reason

    elapsed, code, reason = asyncio.run(scenario())
    assert server.process.returncode == 0
    assert elapsed < 2.0, f"took {elapsed:.2f}s"
    assert (code, reason) == (1001, "server_shutting_down")


def raw_websocket(port):
    """A WebSocket opened by hand on a plain socket: it can send what a polite client library will not."""
    import base64
    raw = socket.create_connection(("127.0.0.1", port), timeout=10)
    key = base64.b64encode(b"0123456789abcdef").decode()
    raw.sendall((f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    response = b""
    while b"\r\n\r\n" not in response:
        response += raw.recv(1024)
    assert b" 101 " in response.split(b"\r\n")[0]
    return raw


def client_frame(opcode, payload):
    """A masked client frame (the mask is zero: XOR with zero leaves the payload as it is)."""
    assert len(payload) < 126
    return bytes([0x80 | opcode, 0x80 | len(payload)]) + b"\x00\x00\x00\x00" + payload


def read_close(raw, timeout):
    """Reads frames until a close frame; returns its status (None if the connection just ended)."""
    raw.settimeout(timeout)
    data = b""
    try:
        while True:
            chunk = raw.recv(4096)
            if not chunk:
                break
            data += chunk
            while len(data) >= 2:
                length = data[1] & 0x7F
                if len(data) < 2 + length:
                    break
                if data[0] & 0x0F == 0x8:
                    return int.from_bytes(data[2:4], "big")
                data = data[2 + length:]
    except (socket.timeout, ConnectionResetError):
        pass
    return None


def test_invalid_utf8_text_is_refused_with_1007(server):
    raw = raw_websocket(server.port)
    raw.sendall(client_frame(0x1, b'{"type":"join","nickname":"\xff\xfe"}'))
    assert read_close(raw, timeout=5) == 1007
    raw.close()
    status, _, _ = server.request("GET", "/healthz")
    assert status == 200


def test_a_silent_connection_is_pinged_then_closed(make_server):
    server = make_server(config={"pingAfterIdleSeconds": 1, "hangUpAfterIdleSeconds": 3})
    raw = raw_websocket(server.port)
    raw.settimeout(6)
    started = time.monotonic()
    first = raw.recv(16)
    assert first[0] & 0x0F == 0x9, "the server pings an idle connection"
    assert time.monotonic() - started < 2.5
    # Never answer: the server hangs up.
    ended_at = None
    while True:
        try:
            chunk = raw.recv(4096)
        except (socket.timeout, ConnectionResetError):
            break
        if not chunk:
            ended_at = time.monotonic()
            break
    assert ended_at is not None, "the connection was closed"
    assert ended_at - started < 6
