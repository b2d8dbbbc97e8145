"""Baseline: a broadcast server on Python's `websockets`, the stack many open-source quiz servers use.
Same protocol as lws_broadcast.c: `J<room>` joins (answered "ok"), `B<room>|<payload>` broadcasts.
Run by bench/run.sh; not part of StoryCircle."""
import asyncio
import logging
import signal
import sys

import websockets

rooms = {}


async def handler(connection):
    room = None
    try:
        async for message in connection:
            if message.startswith("J"):
                room = message[1:]
                rooms.setdefault(room, set()).add(connection)
                await connection.send("ok")
            elif message.startswith("B"):
                target, _, payload = message[1:].partition("|")
                websockets.broadcast(rooms.get(target, ()), payload)
    finally:
        if room is not None:
            rooms[room].discard(connection)


async def main(port):
    stop = asyncio.get_running_loop().create_future()
    for signum in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(signum, stop.set_result, None)
    async with websockets.serve(handler, "127.0.0.1", port, max_size=4096, compression=None, ping_interval=None):
        print(f"listening {port}", flush=True)
        await stop


if __name__ == "__main__":
    # Load generators drop thousands of connections at the end; that is not news.
    logging.getLogger("websockets").setLevel(logging.CRITICAL)
    asyncio.run(main(int(sys.argv[1])))
