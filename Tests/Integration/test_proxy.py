"""StoryCircle behind nginx with config/nginx.conf, as docker-compose.yml runs them (both started
directly here: no Docker engine is needed to test the pieces)."""
import asyncio
import json
import os
import pathlib
import shutil
import socket
import subprocess
import time

import pytest

from conftest import ROOT, Client, join


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def proxy(make_server, tmp_path):
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    port = free_port()
    # As docker-compose.yml does: the address children use is the proxy's, and pages from it may connect.
    server = make_server(config={"trustForwardedFor": True, "failedJoinBurst": 3, "failedJoinsPerMinute": 1, "failedJoinMaxDelaySeconds": 1,
                                 "publicURL": f"http://127.0.0.1:{port}"})
    # What the nginx image's entrypoint does with the template: fill in the two placeholders.
    config = (ROOT / "config" / "nginx.conf").read_text()
    config = config.replace("${STORYCIRCLE_UPSTREAM}", f"127.0.0.1:{server.port}").replace("${LISTEN_PORT}", f"127.0.0.1:{port}")
    config_path = tmp_path / "nginx.conf"
    config_path.write_text(config)
    process = subprocess.Popen([nginx, "-c", str(config_path), "-p", str(tmp_path), "-g", "daemon off;"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if process.poll() is not None:
                raise RuntimeError(process.stdout.read())
            time.sleep(0.05)
    server.proxied_port = port
    yield server
    process.terminate()
    process.wait(timeout=5)


def test_pages_api_and_websockets_work_through_nginx(proxy):
    server = proxy
    port = server.proxied_port
    original = server.port
    server.port = port  # speak to nginx from here on
    try:
        status, headers, body = server.request("GET", "/")
        assert status == 200 and b'data-i18n="join.title"' in body  # the child's page (its words come from the catalog)
        assert "default-src 'self'" in headers["content-security-policy"]
        room = server.create_room()
        assert room["code"]

        async def scenario():
            origin = f"http://127.0.0.1:{port}"
            ana, welcome = await join(server, room, "Ana", origin=origin)
            assert welcome["player"]["nickname"] == "Ana"
            server.command(room, "start")
            plan = await ana.expect("narration.plan")
            status, headers, audio = server.request("GET", plan["sentences"][0]["audio"])
            assert status == 200 and headers["content-type"] == "audio/mpeg" and audio[:2] in (b"\xff\xf3", b"\xff\xe3", b"\xff\xfb")
            # The rate limit sees each child's own address through the proxy (nginx sets X-Forwarded-For
            # itself, so a child cannot forge one).
            codes, took = [], []
            for attempt in range(5):
                guess = await Client.connect(server, extra_headers={"X-Forwarded-For": f"10.0.0.{attempt}"})
                started = time.monotonic()
                await guess.send({"type": "join", "room": "100000", "nickname": "Guess"})
                codes.append((await guess.expect("error"))["code"])
                took.append(time.monotonic() - started)
            # Past the address's three wrong codes, guesses are answered late (never refused).
            assert codes == ["room_not_found"] * 5
            assert max(took[:3]) < 0.8 and min(took[3:]) >= 0.8, took
            await ana.close()

        asyncio.run(scenario())
    finally:
        server.port = original


def _masked_frame(opcode, payload):
    """A client's frame (RFC 6455, 5.2): FIN, the opcode, masked, short."""
    mask = os.urandom(4)
    assert len(payload) < 126
    return bytes([0x80 | opcode, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def _read_frame(raw):
    """A server's frame, unmasked: (opcode, payload)."""
    def exactly(count):
        data = b""
        while len(data) < count:
            chunk = raw.recv(count - len(data))
            assert chunk, f"the connection ended after {len(data)} of {count} bytes"
            data += chunk
        return data
    first, second = exactly(2)
    length = second & 0x7F
    if length == 126:
        length = int.from_bytes(exactly(2), "big")
    return first & 0x0F, exactly(length)


def test_a_refused_connection_stays_open_through_nginx_until_the_client_answers_the_close(proxy):
    """The server closes a WebSocket with its close frame and then waits for the client's: it does not end
    its side of the stream first. nginx ends both sides of an upgraded connection as soon as one side's
    stream ends, so a half-close by the server made nginx cut the client off right after the close frame, and
    a client whose pong or tap crossed it got a reset, which makes its kernel drop the close frame unread (a
    page saw 1006 instead of 1012 `try_again` and never learnt why)."""
    port = proxy.proxied_port
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        raw.sendall((f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     f"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                     f"Origin: http://127.0.0.1:{port}\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = raw.recv(1)
            assert chunk, head
            head += chunk
        assert head.startswith(b"HTTP/1.1 101"), head
        # Not a hello: refused with its error, then the close.
        raw.sendall(_masked_frame(0x1, b'{"type":"answer","question":0,"option":1}'))
        opcode, payload = _read_frame(raw)
        assert opcode == 0x1 and json.loads(payload)["code"] == "hello_required", payload
        opcode, payload = _read_frame(raw)
        assert opcode == 0x8 and int.from_bytes(payload[:2], "big") == 1008, payload
        # Still open: nothing more comes, not even the end of the stream, while the client has not answered.
        # (The server's own limit for the answer is 3 s.)
        raw.settimeout(1)
        try:
            more = raw.recv(1)
        except socket.timeout:
            more = None
        assert more is None, f"the connection ended (or sent {more!r}) before the client answered the close"
        # A ping crossing the close is read and dropped; the client's close ends it, cleanly.
        raw.sendall(_masked_frame(0x9, b"late"))
        raw.sendall(_masked_frame(0x8, (1008).to_bytes(2, "big")))
        raw.settimeout(10)
        rest = b""
        while True:
            chunk = raw.recv(4096)  # a reset would raise ConnectionResetError here
            if not chunk:
                break
            rest += chunk
        assert rest == b"" or rest[0] == 0x8A, f"after its close the server sent only lws's pong, if anything: {rest!r}"
