"""Peer: Python `websockets` on `uvloop` in its batching form: a broadcast frames its payload once, appends
the frame to each member's list of pending frames, and one callback per turn of the loop (`call_soon`)
hands every connection's list to its transport in one `writelines`. `websockets` does the handshake and
the reading; the frames go to the transport directly (a server's frames are unmasked: the bytes are exactly
what `broadcast()` would send). Speaks bench/baseline/PROTOCOL.md. Run by bench/run.sh from .venv-bench;
not part of StoryCircle."""
import asyncio
import logging
import signal
import struct
import sys

import uvloop
from websockets.asyncio.server import serve

rooms = {}
pending = {}  # connection → the frames queued for it in this turn of the loop
flush_scheduled = False


def frame(payload):
    """A text frame as a server sends it: FIN + text opcode, the length, the payload (never masked)."""
    n = len(payload)
    if n < 126:
        return bytes((0x81, n)) + payload
    if n < 65536:
        return struct.pack("!BBH", 0x81, 126, n) + payload
    return struct.pack("!BBQ", 0x81, 127, n) + payload


def flush():
    global flush_scheduled
    flush_scheduled = False
    for connection, frames in pending.items():
        if connection.transport is not None and not connection.transport.is_closing():
            connection.transport.writelines(frames)
    pending.clear()


def send(connection, framed):
    global flush_scheduled
    frames = pending.get(connection)
    if frames is None:
        pending[connection] = [framed]
    else:
        frames.append(framed)
    if not flush_scheduled:
        flush_scheduled = True
        asyncio.get_running_loop().call_soon(flush)


OK = frame(b"ok")


async def handler(connection):
    room = None
    try:
        while True:
            message = await connection.recv(decode=False)
            if message[:1] == b"J":
                room = message[1:]
                rooms.setdefault(room, set()).add(connection)
                send(connection, OK)
            elif message[:1] == b"B":
                target, _, payload = message[1:].partition(b"|")
                framed = frame(payload)
                for member in rooms.get(target, ()):
                    send(member, framed)
    except Exception:
        pass  # the generator drops thousands of connections at the end; that is not news
    finally:
        if room is not None:
            rooms[room].discard(connection)
        pending.pop(connection, None)


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
