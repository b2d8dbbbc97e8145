"""Peer: a broadcast server on Python's `websockets` (its asyncio implementation) on `uvloop`, the fastest
ordinary way to run it: `broadcast()` writes one frame to every connection's transport without awaiting.
Speaks bench/baseline/PROTOCOL.md. Run by bench/run.sh from its own venv (.venv-bench: the version
measured is PyPI's current one, pinned in bench/requirements.txt, not the tests' older pin); not part
of StoryCircle."""
import asyncio
import logging
import signal
import sys

import uvloop
from websockets.asyncio.server import broadcast, serve

rooms = {}


async def handler(connection):
    room = None
    try:
        while True:
            # Bytes, not str: the payload is forwarded as it came (text frames stay text), never decoded.
            message = await connection.recv(decode=False)
            if message[:1] == b"J":
                room = message[1:]
                rooms.setdefault(room, set()).add(connection)
                await connection.send("ok")
            elif message[:1] == b"B":
                target, _, payload = message[1:].partition(b"|")
                broadcast(rooms.get(target, ()), payload, text=True)
    except Exception:
        pass  # the generator drops thousands of connections at the end; that is not news
    finally:
        if room is not None:
            rooms[room].discard(connection)


async def main(port):
    stop = asyncio.get_running_loop().create_future()
    for signum in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(signum, stop.set_result, None)
    async with serve(handler, "127.0.0.1", port, max_size=4096, compression=None, ping_interval=None, backlog=4096):
        print(f"listening {port}", flush=True)
        await stop


if __name__ == "__main__":
    logging.getLogger("websockets").setLevel(logging.CRITICAL)
    uvloop.run(main(int(sys.argv[1])))
