"""The bench's peers (bench/baseline/, PROTOCOL.md there), in both forms, speak their protocol: a child
that joined a room gets every broadcast to it, whole, in order, as text frames, for payloads whose frame
header takes the short and the 16-bit length form (the batching forms frame their bytes by hand), and
after a burst of broadcasts queued at once (what the batching forms send in one write). Peers whose
toolchain is not installed (`scripts/install-deps.sh --bench`) are skipped, saying which."""
import asyncio
import os
import pathlib
import random
import shutil
import subprocess
import sys
import time

import pytest
import websockets

ROOT = pathlib.Path(__file__).resolve().parents[2]
BASELINE = ROOT / "bench" / "baseline"
BENCH_PYTHON = ROOT / ".venv-bench" / "bin" / "python"


def build(peer, folder):
    """The command that runs `peer` on a port (appended), building it into `folder` first; or a reason to skip."""
    if peer in ("c", "c-batch"):
        if not shutil.which("gcc") or subprocess.run(["pkg-config", "--exists", "libwebsockets"]).returncode != 0:
            return None, "gcc or libwebsockets is not installed"
        source = BASELINE / ("lws_broadcast.c" if peer == "c" else "lws_batch_broadcast.c")
        # OpenSSL's own calls: the C peer finishes its TLS context as the server does (bench/baseline/lws_broadcast.c).
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libwebsockets", "openssl"], capture_output=True, text=True, check=True).stdout.split()
        binary = folder / peer
        subprocess.run(["gcc", "-O2", "-Wall", "-o", str(binary), str(source), *flags] + (["-lev"] if peer == "c-batch" else []), check=True)
        return [str(binary)], None
    if peer in ("go", "go-batch"):
        if not shutil.which("go") or not pathlib.Path("/usr/share/gocode/src/github.com/gorilla/websocket").exists():
            return None, "go or gorilla/websocket is not installed"
        binary = folder / peer
        env = dict(os.environ, GOPATH="/usr/share/gocode", GO111MODULE="off", GOCACHE=str(folder / "gocache"))
        source = BASELINE / ("go_broadcast.go" if peer == "go" else "go_batch_broadcast.go")
        subprocess.run(["go", "build", "-o", str(binary), str(source)], check=True, env=env)
        return [str(binary)], None
    if peer in ("node", "node-cork"):
        if not shutil.which("node") or not pathlib.Path("/usr/share/nodejs/ws/package.json").exists():
            return None, "node or node-ws is not installed"
        return ["env", "NODE_PATH=/usr/share/nodejs", "node", str(BASELINE / ("node_broadcast.js" if peer == "node" else "node_cork_broadcast.js"))], None
    if not BENCH_PYTHON.exists():
        return None, ".venv-bench is not there (make bench makes it)"
    return [str(BENCH_PYTHON), str(BASELINE / ("python_broadcast.py" if peer == "python" else "python_batch_broadcast.py"))], None


async def exchange(port, ssl=None):
    """Two rooms; the trigger broadcasts to room 1 one by one, then a burst queued at once (over TLS with
    `ssl`, a client context)."""
    uri = f"{'wss' if ssl else 'ws'}://127.0.0.1:{port}/"
    async with websockets.connect(uri, ssl=ssl) as trigger, websockets.connect(uri, ssl=ssl) as child, websockets.connect(uri, ssl=ssl) as other:
        for connection, room in ((child, 1), (other, 2)):
            await connection.send(f"J{room}")
            assert await asyncio.wait_for(connection.recv(), 10) == "ok"
        payloads = ["a" * 5, "b" * 125, "c" * 126, "d" * 300, "e" * 4000]
        for payload in payloads:
            await trigger.send(f"B1|{payload}")
            got = await asyncio.wait_for(child.recv(), 10)
            assert isinstance(got, str) and got == payload
        burst = [f"{k:03d}" + "x" * random.Random(k).randrange(1, 300) for k in range(200)]
        for payload in burst:
            await trigger.send(f"B1|{payload}")
        received = [await asyncio.wait_for(child.recv(), 10) for _ in burst]
        assert received == burst
        # The other room got none of it.
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(other.recv(), 0.3)


@pytest.mark.parametrize("peer", ["c", "c-batch", "python", "python-batch", "node", "node-cork", "go", "go-batch"])
def test_peer_speaks_the_protocol(peer, tmp_path):
    command, reason = build(peer, tmp_path)
    if command is None:
        pytest.skip(f"{peer}: {reason}")
    port = random.randrange(20000, 32000)
    log = open(tmp_path / "peer.log", "w+")
    process = subprocess.Popen(command + [str(port)], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 20
        while "listening" not in (tmp_path / "peer.log").read_text():
            assert process.poll() is None, (tmp_path / "peer.log").read_text()
            assert time.monotonic() < deadline, "the peer did not start in 20 s"
            time.sleep(0.05)
        asyncio.run(exchange(port))
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
