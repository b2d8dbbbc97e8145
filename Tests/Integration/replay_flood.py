"""A flood of hello-less connections at full size (not part of the suite; the suite has a small version in
test_server.py): 3,000 WebSockets from one address that never say hello, against a server with
maxConnections 300, then a real child from another address, who must still get a place: the hello timeout
and the per-address limit keep one address from taking every place. Prints the figures.

    STORYCIRCLE_BIN=.build/debug/storycircle .venv/bin/python Tests/Integration/replay_flood.py
"""
import asyncio
import json
import pathlib
import re
import resource
import socket
import sys
import tempfile
import time

import websockets

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from conftest import Server  # noqa: E402


async def flood(server):
    room = server.create_room()
    held, statuses = [], {}

    async def attempt():
        try:
            held.append(await websockets.connect(server.ws_url, open_timeout=30))
            statuses[101] = statuses.get(101, 0) + 1
        except websockets.InvalidStatusCode as error:
            statuses[error.status_code] = statuses.get(error.status_code, 0) + 1

    for _ in range(15):
        await asyncio.gather(*(attempt() for _ in range(200)))
    print("3,000 hello-less upgrades from 127.0.0.1:", dict(sorted(statuses.items())))

    sock = socket.create_connection(("127.0.0.1", server.port), source_address=("127.0.0.2", 0))
    child = await websockets.connect(server.ws_url, sock=sock)
    await child.send(json.dumps({"type": "join", "room": room["code"], "nickname": "Real child"}))
    print("a real child from 127.0.0.2 gets:", json.loads(await child.recv())["type"])

    started = time.monotonic()
    await asyncio.gather(*(ws.wait_closed() for ws in held))
    timed_out = sum(1 for ws in held if (ws.close_code, ws.close_reason) == (1008, "hello_timeout"))
    print(f"closed by the server within {time.monotonic() - started:.1f} s: {timed_out} of {len(held)} with 1008 hello_timeout;",
          "left open:", sum(1 for ws in held if ws.open))
    metrics = server.request("GET", "/metrics")[2].decode()
    for name in ("storycircle_connections_open", "storycircle_hello_timeouts_total", "storycircle_upgrades_rejected_per_address_total"):
        print(re.search(rf"^{name} \d+$", metrics, re.M).group(0))
    await child.send(json.dumps({"type": "ping", "id": 1}))
    print("the child afterwards gets:", json.loads(await child.recv())["type"])


if __name__ == "__main__":
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
    with tempfile.TemporaryDirectory() as folder:
        running = Server(pathlib.Path(folder) / "data", config={"maxConnections": 300}).start()
        try:
            asyncio.run(flood(running))
        finally:
            running.stop()
