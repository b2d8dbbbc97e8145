"""StoryCircle behind nginx with config/nginx.conf, as docker-compose.single-node.yml runs them (both
started directly here: no Docker engine is needed to test the pieces). nginx speaks HTTPS and WSS with a
certificate of a throwaway CA (made here with the openssl command), which the clients trust; its plain HTTP
port only redirects."""
import asyncio
import copy
import http.client
import json
import os
import pathlib
import re
import shutil
import socket
import ssl
import subprocess
import time
import urllib.request

import pytest

from conftest import ROOT, Client, join


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def make_certificates(folder):
    """A throwaway CA (ca.crt) and, signed by it, server.crt and server.key for 127.0.0.1 and localhost: what
    the proxy's mounted TLS folder holds. Made with the openssl command, as scripts/cluster.sh makes its own."""
    folder.mkdir(parents=True, exist_ok=True)

    def openssl(*arguments):
        subprocess.run(["openssl", *arguments], cwd=folder, check=True, capture_output=True)

    openssl("req", "-x509", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "365",
            "-subj", "/CN=StoryCircle test CA", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign", "-keyout", "ca.key", "-out", "ca.crt")
    openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=storycircle-proxy",
            "-keyout", "server.key", "-out", "server.csr")
    (folder / "server.ext").write_text("basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
                                       "extendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n"
                                       "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid,issuer\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-days", "365",
            "-sha256", "-extfile", "server.ext", "-out", "server.crt")
    return folder


def render_nginx(template, environment):
    """What the nginx image's entrypoint does with a template: fill in the given placeholders (envsubst
    limited to them; nginx's own `$host`, `$uri`… stay)."""
    text = (ROOT / "config" / template).read_text()
    for name, value in environment.items():
        text = text.replace("${" + name + "}", value)
    left = re.findall(r"\$\{[A-Z0-9_]+\}", text)
    assert not left, f"{template}: placeholders not filled in: {left}"
    return text


def through_nginx(server, port):
    """`server` as the children reach it through the proxy: its http and ws_url are nginx's https and wss
    addresses (conftest's requests then go through nginx)."""
    proxied = copy.copy(server)
    proxied.__class__ = type("ThroughNginx", (type(server),), {
        "http": property(lambda self: f"https://127.0.0.1:{port}"),
        "ws_url": property(lambda self: f"wss://127.0.0.1:{port}/ws"),
    })
    return proxied


@pytest.fixture
def proxy(make_server, tmp_path):
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    port, redirect_port = free_port(), free_port()
    # As docker-compose.single-node.yml does: the address children use is the proxy's, and pages from it may connect.
    server = make_server(config={"trustForwardedFor": True, "failedJoinBurst": 3, "failedJoinsPerMinute": 1, "failedJoinMaxDelaySeconds": 1,
                                 "publicURL": f"https://127.0.0.1:{port}"})
    tls_dir = make_certificates(tmp_path / "tls")
    config = render_nginx("nginx.conf", {"STORYCIRCLE_UPSTREAM": f"127.0.0.1:{server.port}", "LISTEN_PORT": f"127.0.0.1:{port}",
                                         "REDIRECT_PORT": f"127.0.0.1:{redirect_port}", "PUBLIC_HTTPS_PORT": str(port),
                                         "TLS_DIR": str(tls_dir)})
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
    server.redirect_port = redirect_port
    server.tls = ssl.create_default_context(cafile=str(tls_dir / "ca.crt"))
    # conftest's requests (urlopen without a context of their own) trust the throwaway CA.
    urllib.request.install_opener(urllib.request.build_opener(urllib.request.HTTPSHandler(context=server.tls)))
    yield server
    urllib.request.install_opener(None)
    process.terminate()
    process.wait(timeout=5)


def test_pages_api_and_websockets_work_through_nginx_over_https_and_wss(proxy):
    port = proxy.proxied_port
    tls = proxy.tls
    server = through_nginx(proxy, port)  # speak to nginx from here on
    status, headers, body = server.request("GET", "/")
    assert status == 200 and b'data-i18n="join.title"' in body  # the child's page (its words come from the catalog)
    assert "default-src 'self'" in headers["content-security-policy"]
    assert headers["strict-transport-security"] == "max-age=63072000"
    room = server.create_room()
    assert room["code"]

    async def scenario():
        origin = f"https://127.0.0.1:{port}"
        ana, welcome = await join(server, room, "Ana", origin=origin, ssl=tls)
        assert welcome["player"]["nickname"] == "Ana"
        server.command(room, "start")
        plan = await ana.expect("narration.plan")
        status, headers, audio = server.request("GET", plan["sentences"][0]["audio"])
        assert status == 200 and headers["content-type"] == "audio/mpeg" and audio[:2] in (b"\xff\xf3", b"\xff\xe3", b"\xff\xfb")
        # The rate limit sees each child's own address through the proxy (nginx sets X-Forwarded-For
        # itself, so a child cannot forge one).
        codes, took = [], []
        for attempt in range(5):
            guess = await Client.connect(server, extra_headers={"X-Forwarded-For": f"10.0.0.{attempt}"}, ssl=tls)
            started = time.monotonic()
            await guess.send({"type": "join", "room": "100000", "nickname": "Guess"})
            codes.append((await guess.expect("error"))["code"])
            took.append(time.monotonic() - started)
        # Past the address's three wrong codes, guesses are answered late (never refused).
        assert codes == ["room_not_found"] * 5
        assert max(took[:3]) < 0.8 and min(took[3:]) >= 0.8, took
        await ana.close()

    asyncio.run(scenario())


@pytest.mark.filterwarnings("ignore:ssl.TLSVersion:DeprecationWarning")
def test_plain_http_only_redirects_to_https_and_old_protocols_are_refused(proxy):
    plain = http.client.HTTPConnection("127.0.0.1", proxy.redirect_port, timeout=10)
    for path in ("/?room=123456", "/api/rooms", "/ws"):
        plain.request("GET", path)
        answer = plain.getresponse()
        answer.read()
        assert answer.status == 301 and answer.getheader("Location") == f"https://127.0.0.1:{proxy.proxied_port}{path}", (path, answer.status)
    plain.close()
    # A client that offers TLS 1.1 at most gets no connection (testssl checks the same thoroughly in the cluster).
    old = ssl.create_default_context(cafile=None)
    old.check_hostname, old.verify_mode = False, ssl.CERT_NONE
    old.set_ciphers("ALL:@SECLEVEL=0")
    old.minimum_version, old.maximum_version = ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1
    with socket.create_connection(("127.0.0.1", proxy.proxied_port), timeout=10) as raw:
        with pytest.raises(ssl.SSLError):
            old.wrap_socket(raw, server_hostname="127.0.0.1")
    # The same client with TLS 1.2 allowed connects: the refusal above was the protocol's.
    old.maximum_version = ssl.TLSVersion.TLSv1_2
    with socket.create_connection(("127.0.0.1", proxy.proxied_port), timeout=10) as raw:
        with old.wrap_socket(raw, server_hostname="127.0.0.1") as wrapped:
            assert wrapped.version() == "TLSv1.2"


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
    with proxy.tls.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10), server_hostname="127.0.0.1") as raw:
        raw.sendall((f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     f"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                     f"Origin: https://127.0.0.1:{port}\r\n\r\n").encode())
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
