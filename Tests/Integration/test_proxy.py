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
    server = make_server(config={"trustForwardedFor": True, "failedJoinBurst": 3, "failedJoinsPerMinute": 1,
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
            codes = []
            for attempt in range(5):
                guess = await Client.connect(server, extra_headers={"X-Forwarded-For": f"10.0.0.{attempt}"})
                await guess.send({"type": "join", "room": "100000", "nickname": "Guess"})
                codes.append((await guess.expect("error"))["code"])
            assert codes == ["room_not_found"] * 3 + ["rate_limited"] * 2
            await ana.close()

        asyncio.run(scenario())
    finally:
        server.port = original
