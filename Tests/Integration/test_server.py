"""The room server over real sockets, judged by an independent client (issue #3)."""
import asyncio
import http.client
import json
import random
import re
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
    room = server.create_room()

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
    server = make_server(config={"failedJoinBurst": 5, "failedJoinsPerMinute": 1, "maxMessageBytes": 4096})
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

        # A join flood with guessed codes is stopped, per address.
        codes = []
        for attempt in range(8):
            client = await Client.connect(server)
            await client.send({"type": "join", "room": str(100000 + attempt), "nickname": "Guess"})
            codes.append((await client.expect("error"))["code"])
            await client.close()
        # The allowance is 5 failures per address; the wrong token above already spent one.
        assert codes[:4] == ["room_not_found"] * 4
        assert set(codes[4:]) == {"rate_limited"}
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


def upgrade_status(port, path="/ws", origin=None):
    """The HTTP status a WebSocket upgrade request gets, read from a raw socket."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        request = (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n")
        if origin:
            request += f"Origin: {origin}\r\n"
        raw.sendall((request + "\r\n").encode())
        return int(raw.recv(1024).split(b" ", 2)[1])


def test_security_headers_and_origin_check(server):
    status, headers, _ = server.request("GET", "/")
    assert status == 200
    assert "default-src 'self'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    assert upgrade_status(server.port, origin="http://evil.example") == 403
    assert upgrade_status(server.port, path="/other") == 404
    assert upgrade_status(server.port, origin=f"http://127.0.0.1:{server.port}") == 101
    assert upgrade_status(server.port) == 101, "clients that are not browsers send no Origin"


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
