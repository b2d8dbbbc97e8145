"""HTTPS and WSS in the server itself, over real sockets with Python's ssl module: the API and a child's join
with the test CA trusted, TLS below 1.2 and weak ciphers refused, HSTS, the redirect port, certificates reloaded
on SIGHUP without dropping anyone, refusals at start, and the plain-HTTP warning."""
import asyncio
import http.client
import json
import shutil
import signal
import socket
import ssl
import subprocess
import urllib.error
import urllib.request
import warnings

import pytest
import websockets

from conftest import BIN, ROOT, SHORT_STORY, Client, Server, wait_until
from tls_support import serial_served, tls_ca  # noqa: F401 (the fixture)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def https(server, ca, method, path, token=None, body=None, host="localhost"):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"https://{host}:{server.port}{path}", data=data, method=method)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=15, context=ca.client_context()) as response:
            return response.status, Server.lower(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, Server.lower(error.headers), error.read()


@pytest.fixture
def tls_server(tmp_path, tls_ca):
    """A server on HTTPS with a certificate from the test CA, its files where a reload reads them, and a
    redirect port."""
    certificate, key = tls_ca.issue("first")
    served = tmp_path / "served"
    served.mkdir()
    shutil.copy(certificate, served / "server.crt")
    shutil.copy(key, served / "server.key")
    redirect = free_port()
    running = Server(tmp_path / "data", config={"tls": {"certificate": str(served / "server.crt"), "key": str(served / "server.key"), "redirectPort": redirect}})
    running.start()
    running.redirect_port = redirect
    running.served = served
    yield running
    running.stop()


def create_room(server, ca):
    document = json.loads(SHORT_STORY.read_text())
    status, _, body = https(server, ca, "POST", "/api/rooms", server.admin_token, {"story": document, "settings": {}})
    assert status == 201, body
    return json.loads(body)


async def wss_join(server, ca, room, nickname):
    # As a browser would open it from a page the server served: with the page's https origin.
    client = Client(await websockets.connect(f"wss://localhost:{server.port}/ws", ssl=ca.client_context(), max_size=2**24, origin=f"https://localhost:{server.port}"))
    await client.send({"type": "join", "room": room["code"], "nickname": nickname})
    return client, await client.expect("welcome")


def handshake(port, minimum=None, maximum=None, ciphers=None):
    """A handshake with whatever the server accepts checked by the server alone: the client offers old
    protocols and weak ciphers too (security level 0), so a refusal is the server's alert."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_ciphers((ciphers or "ALL") + ":@SECLEVEL=0")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        if minimum:
            context.minimum_version = minimum
        if maximum:
            context.maximum_version = maximum
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw, context.wrap_socket(raw) as tls:
        return tls.version(), tls.cipher()[0], tls.compression()


def test_the_api_and_a_child_over_https_and_wss(tls_server, tls_ca):
    assert tls_server.wait_for_output("listening on https://")
    assert tls_server.wait_for_output("The TLS certificate expires within two weeks"), "the test CA's certificates last two days"
    status, headers, body = https(tls_server, tls_ca, "GET", "/healthz")
    assert status == 200 and json.loads(body)["status"] == "ok"
    assert headers["strict-transport-security"] == "max-age=31536000"
    status, headers, _ = https(tls_server, tls_ca, "GET", "/", host="127.0.0.1")
    assert status == 200 and headers["strict-transport-security"] == "max-age=31536000", "static pages carry HSTS too"
    status, headers, _ = https(tls_server, tls_ca, "GET", "/api/rooms")
    assert status == 401 and headers["strict-transport-security"] == "max-age=31536000", "and refusals"

    room = create_room(tls_server, tls_ca)
    assert room["joinURL"].startswith("https://"), "every link the server hands out is https"

    async def child():
        client, welcome = await wss_join(tls_server, tls_ca, room, "Ada")
        assert welcome["role"] == "child"
        await client.send({"type": "ping", "id": 3, "clientTime": 0})
        assert (await client.expect("pong"))["id"] == 3
        await client.close()

    asyncio.run(child())


def test_protocols_below_tls_1_2_are_refused(tls_server):
    for old in (ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1):
        with pytest.raises(ssl.SSLError, match="ALERT_PROTOCOL_VERSION"):
            handshake(tls_server.port, minimum=old, maximum=old)
    assert handshake(tls_server.port, maximum=ssl.TLSVersion.TLSv1_2)[0] == "TLSv1.2"
    version, _, compression = handshake(tls_server.port)
    assert version == "TLSv1.3" and compression is None


def test_weak_ciphers_are_refused(tls_server):
    for weak in ("AES128-SHA", "AES128-GCM-SHA256", "ECDHE-ECDSA-AES128-SHA", "ECDHE-ECDSA-AES128-SHA256", "DES-CBC3-SHA", "RC4-SHA"):
        try:
            ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).set_ciphers(weak + ":@SECLEVEL=0")
        except ssl.SSLError:
            continue  # this OpenSSL cannot even offer it
        with pytest.raises(ssl.SSLError, match="ALERT_HANDSHAKE_FAILURE"):
            handshake(tls_server.port, maximum=ssl.TLSVersion.TLSv1_2, ciphers=weak)
    assert handshake(tls_server.port, maximum=ssl.TLSVersion.TLSv1_2, ciphers="ECDHE-ECDSA-AES128-GCM-SHA256")[1] == "ECDHE-ECDSA-AES128-GCM-SHA256"


def plain_request(port, path, host, method="GET", headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.putrequest(method, path, skip_host=True)
    if host is not None:
        connection.putheader("Host", host)
    for name, value in (headers or {}).items():
        connection.putheader(name, value)
    connection.endheaders()
    response = connection.getresponse()
    result = response.status, Server.lower(response.headers), response.read()
    connection.close()
    return result


def test_the_redirect_port_sends_browsers_to_https_and_nowhere_else(tls_server):
    port = tls_server.redirect_port
    status, headers, _ = plain_request(port, "/?room=123456&lang=en", f"localhost:{port}")
    assert status == 308 and headers["location"] == f"https://localhost:{tls_server.port}/?room=123456&lang=en"
    status, headers, _ = plain_request(port, "/teacher", "127.0.0.1")
    assert status == 308 and headers["location"] == f"https://127.0.0.1:{tls_server.port}/teacher"
    status, headers, _ = plain_request(port, "/api/rooms", "LOCALHOST", method="POST", headers={"Content-Length": "0"})
    assert status == 308 and headers["location"] == f"https://localhost:{tls_server.port}/api/rooms", "no API on the plain port"

    for bad in ("evil.example", "evil.example:80", "localhost/evil", "localhost@evil.example", "localhost:80:80", "local host", "[::1", "a" * 300, None):
        status, headers, _ = plain_request(port, "/", bad)
        assert status == 400 and "location" not in headers, bad

    upgrade = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
    try:
        status, headers, _ = plain_request(port, "/ws", "localhost", headers=upgrade)
        assert status != 101, "no WebSocket on the plain port"
    except (http.client.RemoteDisconnected, ConnectionResetError):
        pass


def test_plain_http_on_the_tls_port_is_sent_to_https_and_nothing_is_served_in_the_clear(tls_server, tls_ca):
    """A child typing the projector's "address:port" sends http:// to the TLS port: a redirect, not a reset."""
    port = tls_server.port
    status, headers, _ = plain_request(port, "/", f"127.0.0.1:{port}")
    assert status == 308 and headers["location"] == f"https://127.0.0.1:{port}/"
    status, headers, _ = plain_request(port, "/teacher/?room=123456", f"localhost:{port}")
    assert status == 308 and headers["location"] == f"https://localhost:{port}/teacher/"
    status, headers, body = plain_request(port, "/api/join", f"localhost:{port}")
    assert status == 308 and b"roomCodeDigits" not in body, "no API in the clear"
    for bad in ("evil.example", "localhost@evil.example", None):
        status, headers, _ = plain_request(port, "/", bad)
        assert status == 400 and "location" not in headers, bad

    upgrade = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
    status, headers, _ = plain_request(port, "/ws", f"127.0.0.1:{port}", headers=upgrade)
    assert status == 308 and headers["location"] == f"https://127.0.0.1:{port}/ws", "no WebSocket in the clear"
    # The same port still speaks HTTPS.
    assert https(tls_server, tls_ca, "GET", "/api/join")[0] == 200


def test_sighup_serves_a_new_certificate_without_dropping_anyone(tls_server, tls_ca):
    first = serial_served(tls_server.port)
    room = create_room(tls_server, tls_ca)

    async def scenario():
        ada, _ = await wss_join(tls_server, tls_ca, room, "Ada")
        old_serial = ada.ws.transport.get_extra_info("ssl_object").getpeercert(binary_form=True)

        certificate, key = tls_ca.issue("second")
        shutil.copy(certificate, tls_server.served / "server.crt")
        shutil.copy(key, tls_server.served / "server.key")
        tls_server.process.send_signal(signal.SIGHUP)
        await asyncio.to_thread(tls_server.wait_for_output, "TLS certificate reloaded")
        second = serial_served(tls_server.port)
        assert second != first and second == 1000 + tls_ca.issued

        # Ada's connection, made with the first certificate, is still open and still in the room.
        assert ada.ws.transport.get_extra_info("ssl_object").getpeercert(binary_form=True) == old_serial
        await ada.send({"type": "ping", "id": 1, "clientTime": 0})
        assert (await ada.expect("pong"))["id"] == 1
        bo, _ = await wss_join(tls_server, tls_ca, room, "Bo")
        status, _, body = https(tls_server, tls_ca, "GET", f"/api/rooms/{room['code']}", room["teacherToken"])
        report = json.loads(body)
        assert status == 200 and report["players"] == 2 and report["connectedPlayers"] == 2

        # A broken pair (the first certificate with the second's key) is refused; the second stays.
        shutil.copy(tls_ca.folder / "first.crt", tls_server.served / "server.crt")
        tls_server.process.send_signal(signal.SIGHUP)
        await asyncio.to_thread(tls_server.wait_for_output, "TLS certificate not reloaded")
        assert serial_served(tls_server.port) == second
        await ada.send({"type": "ping", "id": 2, "clientTime": 0})
        assert (await ada.expect("pong"))["id"] == 2

        # An RSA pair over the ECDSA one is refused too: OpenSSL would keep serving the ECDSA certificate
        # beside it to every client that prefers ECDSA. Changing the key's type takes a restart.
        certificate, key = tls_ca.issue("rsa", rsa=True)
        shutil.copy(certificate, tls_server.served / "server.crt")
        shutil.copy(key, tls_server.served / "server.key")
        tls_server.process.send_signal(signal.SIGHUP)
        await asyncio.to_thread(tls_server.wait_for_output, "restart the server to change the key")
        assert serial_served(tls_server.port) == second
        await ada.close()
        await bo.close()

    asyncio.run(scenario())
    assert tls_server.process.poll() is None


def refused_start(tmp_path, *args):
    result = subprocess.run([BIN, "serve", "--port", "0", "--data", str(tmp_path / "refused"), *args],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    return result.stderr


def test_start_refuses_an_expired_mismatched_or_missing_pair(tmp_path, tls_ca):
    expired, expired_key = tls_ca.issue("expired", days=-1)
    good, good_key = tls_ca.issue("good")
    message = refused_start(tmp_path, "--tls-certificate", str(expired), "--tls-key", str(expired_key))
    assert f"Error: the server could not start: the TLS certificate {expired} expired" in message
    message = refused_start(tmp_path, "--tls-certificate", str(good), "--tls-key", str(expired_key))
    assert f"the TLS key {expired_key} does not match the certificate {good}" in message
    message = refused_start(tmp_path, "--tls-certificate", str(tmp_path / "nothing.crt"), "--tls-key", str(good_key))
    assert f"the TLS certificate {tmp_path / 'nothing.crt'} does not exist" in message
    message = refused_start(tmp_path, "--tls-certificate", str(good))
    assert "Error: configuration: tls: set both tls.certificate and tls.key" in message


def test_the_data_folders_certificate_is_used_when_none_is_configured(tmp_path, tls_ca, make_server):
    certificate, key = tls_ca.issue("made")
    (tmp_path / "data" / "tls").mkdir(parents=True)
    shutil.copy(certificate, tmp_path / "data" / "tls" / "server.crt")
    shutil.copy(key, tmp_path / "data" / "tls" / "server.key")
    server = make_server(data=tmp_path / "data", config={"publicURL": "https://localhost"})
    assert server.wait_for_output("listening on https://localhost")
    assert https(server, tls_ca, "GET", "/healthz")[0] == 200
    assert not any("does not name the address" in line for line in server.output), "localhost is in the certificate"


def test_a_certificate_that_does_not_name_the_printed_address_is_a_warning(tmp_path, tls_ca, make_server):
    certificate, key = tls_ca.issue("elsewhere", names=("DNS:elsewhere.example",))
    server = make_server(args=("--tls-certificate", str(certificate), "--tls-key", str(key)), config={"publicURL": "https://laptop.school.example"})
    assert server.wait_for_output("The TLS certificate does not name the address children are sent to")
    assert any("host=laptop.school.example" in line for line in server.output)


def test_plain_http_says_so_in_its_first_log_line(server, make_server):
    assert "Plain HTTP" in server.output[0] and "storycircle tls init" in server.output[0]
    assert server.wait_for_output("listening on http://")
    proxied = make_server(config={"publicURL": "https://stories.school.example"})
    assert "Plain HTTP behind a proxy that speaks HTTPS" in proxied.output[0], "a node behind nginx says where TLS is"


def test_sighup_reloads_but_a_closed_terminal_still_stops_the_server(tmp_path):
    """SIGHUP asks for a reload; the same signal from a terminal that closed (its window shut) stops the
    server cleanly, as it did before SIGHUP meant anything else."""
    import os
    import pty
    import select
    import time

    pid, master = pty.fork()
    if pid == 0:
        os.chdir(ROOT)
        os.execv(BIN, [BIN, "serve", "--port", "0", "--data", str(tmp_path / "data")])
    seen = b""
    deadline = time.monotonic() + 30
    while b"Press Ctrl-C" not in seen and time.monotonic() < deadline:
        if select.select([master], [], [], 1)[0]:
            seen += os.read(master, 4096)
    assert b"Press Ctrl-C" in seen, seen
    os.kill(pid, signal.SIGHUP)
    while b"No TLS certificate to reload" not in seen and time.monotonic() < deadline:
        if select.select([master], [], [], 1)[0]:
            seen += os.read(master, 4096)
    assert b"No TLS certificate to reload" in seen and os.waitpid(pid, os.WNOHANG) == (0, 0), "a reload, not a stop"
    os.close(master)  # the kernel hangs the terminal up and sends SIGHUP
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0, "stopped cleanly, not killed by a write to the gone terminal"
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    raise AssertionError("the server kept running after its terminal closed")


def test_a_class_of_thirty_over_wss_from_join_to_podium(tls_server, tls_ca):
    """A whole story over TLS: broadcasts to thirty children at once (written where rooms send, and through
    the lanes), reveals, the podium, and a large page, all through OpenSSL's records."""
    import random

    status, _, body = https(tls_server, tls_ca, "GET", "/i18n/en.json")
    assert status == 200 and body == (ROOT / "web-static" / "i18n" / "en.json").read_bytes(), "a file larger than one TLS record"
    room = create_room(tls_server, tls_ca)

    async def connect():
        return Client(await websockets.connect(f"wss://localhost:{tls_server.port}/ws", ssl=tls_ca.client_context(), max_size=2**24))

    async def scenario():
        teacher = await connect()
        await teacher.send({"type": "control", "room": room["code"], "token": room["teacherToken"]})
        await teacher.expect("welcome")
        children = []
        for i in range(30):
            child, welcome = await wss_join(tls_server, tls_ca, room, f"Child {i:02d}")
            assert welcome["role"] == "child"
            children.append(child)
        await teacher.send({"type": "command", "command": "start"})
        await children[0].expect("quiz.unlock", timeout=30)
        rng = random.Random(5)
        for index in range(3):
            questions = [await child.expect("question") for child in children]
            await wait_until(questions[0]["opensAt"])
            for child in children:
                await child.send({"type": "answer", "question": index, "option": rng.randrange(len(questions[0]["options"]))})
            for child in children:
                await child.expect("answer.ack")
                assert (await child.expect("reveal"))["question"] == index
            await teacher.send({"type": "command", "command": "next"})
        for child in children:
            assert "you" in await child.expect("finished")
        for client in children + [teacher]:
            await client.close()

    asyncio.run(scenario())
