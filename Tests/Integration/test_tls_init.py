"""`storycircle tls init`, run as a teacher would, its files judged by the openssl CLI and Python's ssl module
(OpenSSL's own verifier, not the code that made them)."""
import os
import re
import signal
import socket
import ssl
import stat
import subprocess
import urllib.error
import urllib.request

import pytest

from conftest import BIN, ROOT, SHORT_STORY
from tls_support import serial_served


def run(*args, timeout=60):
    return subprocess.run([BIN, *args], capture_output=True, text=True, cwd=ROOT, timeout=timeout)


def openssl(*args):
    result = subprocess.run(["openssl", *args], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return result.stdout


def fingerprint(path):
    """The SHA-256 fingerprint as `openssl x509 -fingerprint` prints it."""
    return openssl("x509", "-in", str(path), "-noout", "-fingerprint", "-sha256").strip().split("=", 1)[1]


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def split_chain(path):
    return re.findall(r"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----\n", path.read_text(), re.S)


@pytest.fixture
def data(tmp_path):
    return tmp_path / "data"


def test_tls_init_makes_an_authority_and_a_server_chain_openssl_verifies(data, tmp_path):
    result = run("tls", "init", "--data", str(data), "--name", "storycircle.school.example", "--address", "192.0.2.10")
    assert result.returncode == 0, result.stderr
    tls = data / "tls"
    assert mode(data) == 0o700 and mode(tls) == 0o700
    for name in ("ca.crt", "ca.key", "server.crt", "server.key"):
        assert mode(tls / name) == 0o600, name
    # server.crt is the chain: the server's certificate, then the authority's.
    chain = split_chain(tls / "server.crt")
    assert len(chain) == 2
    assert chain[1] == (tls / "ca.crt").read_text()
    leaf = tmp_path / "leaf.pem"
    leaf.write_text(chain[0])
    assert openssl("verify", "-CAfile", str(tls / "ca.crt"), "-purpose", "sslserver", str(tls / "server.crt")).strip().endswith(": OK")

    text = openssl("x509", "-in", str(leaf), "-noout", "-text")
    san = re.search(r"X509v3 Subject Alternative Name: *\n\s*(.+)", text).group(1)
    for entry in ("DNS:localhost", "IP Address:127.0.0.1", "IP Address:0:0:0:0:0:0:0:1", "DNS:storycircle.school.example", "IP Address:192.0.2.10"):
        assert entry in san, san
    assert "TLS Web Server Authentication" in text
    assert "ASN1 OID: prime256v1" in text
    ca = openssl("x509", "-in", str(tls / "ca.crt"), "-noout", "-text", "-subject")
    assert re.search(r"X509v3 Basic Constraints: critical\s*\n\s*CA:TRUE", ca)
    assert re.search(r"X509v3 Key Usage: critical\s*\n\s*Certificate Sign, CRL Sign", ca)
    assert "StoryCircle local CA (" in ca
    # The private keys are the certificates' own.
    for key, certificate in (("server.key", leaf), ("ca.key", tls / "ca.crt")):
        assert openssl("pkey", "-in", str(tls / key), "-pubout") == openssl("x509", "-in", str(certificate), "-noout", "-pubkey")

    # What the teacher reads: what was made, the names, the fingerprint, where to read how to trust it.
    assert "Made a certificate authority" in result.stdout
    assert "127.0.0.1" in result.stdout and "localhost" in result.stdout
    assert fingerprint(tls / "ca.crt") in result.stdout
    assert 'docs/operations.md, "HTTPS on one laptop"' in result.stdout
    assert "HTTPS on one laptop" in (ROOT / "docs" / "operations.md").read_text()


def test_running_again_keeps_the_authority_and_reissues_the_server_certificate(data):
    assert run("tls", "init", "--data", str(data)).returncode == 0
    tls = data / "tls"
    authority = fingerprint(tls / "ca.crt")
    server_key = (tls / "server.key").read_bytes()
    again = run("tls", "init", "--data", str(data), "--address", "198.51.100.7")
    assert again.returncode == 0, again.stderr
    assert "Kept this laptop's certificate authority" in again.stdout
    assert fingerprint(tls / "ca.crt") == authority
    assert (tls / "server.key").read_bytes() != server_key
    assert "IP Address:198.51.100.7" in openssl("x509", "-in", str(tls / "server.crt"), "-noout", "-ext", "subjectAltName")
    openssl("verify", "-CAfile", str(tls / "ca.crt"), str(tls / "server.crt"))

    forced = run("tls", "init", "--data", str(data), "--force")
    assert forced.returncode == 0, forced.stderr
    assert fingerprint(tls / "ca.crt") != authority


def test_a_lost_authority_key_is_refused_not_replaced(data):
    assert run("tls", "init", "--data", str(data)).returncode == 0
    authority = (data / "tls" / "ca.crt").read_bytes()
    (data / "tls" / "ca.key").unlink()
    result = run("tls", "init", "--data", str(data))
    assert result.returncode == 1
    assert result.stderr.startswith("Error: ") and "--force" in result.stderr
    assert (data / "tls" / "ca.crt").read_bytes() == authority


@pytest.mark.parametrize("arguments, message", [
    (["--name", "bad name"], "Error: The value 'bad name' is invalid for '--name <name>'"),
    (["--name", "x,IP:1.2.3.4"], "Error: The value 'x,IP:1.2.3.4' is invalid for '--name <name>'"),
    (["--address", "300.1.1.1"], "Error: The value '300.1.1.1' is invalid for '--address <ip>'"),
    (["--address"], "Error: Missing value for '--address <ip>'."),
    (["--force=yes"], "Error: The flag '--force' does not take a value."),
    (["--colour", "blue"], "Error: Unknown option '--colour'."),
    (["now"], "Error: Unexpected argument 'now'."),
])
def test_bad_usage_says_what_is_wrong_and_exits_64(data, arguments, message):
    result = run("tls", "init", "--data", str(data), *arguments)
    assert result.returncode == 64
    assert result.stderr.startswith(message), result.stderr
    assert result.stdout == ""
    assert not data.exists(), "nothing is written for a command typed wrong"


def test_tls_alone_lists_init():
    result = run("tls")
    assert result.returncode == 64
    assert "init" in result.stdout


def healthz(port, host, context):
    with urllib.request.urlopen(f"https://{host}:{port}/healthz", context=context, timeout=15) as response:
        return response.status


def test_serve_with_the_data_folder_speaks_https_its_authority_vouches_for_even_after_a_new_address(data, make_server):
    assert run("tls", "init", "--data", str(data)).returncode == 0
    server = make_server(data=data)
    assert server.wait_for_output("listening on https://")
    # A device that trusts ca.crt, and nothing else, as a school's managed device would.
    device = ssl.create_default_context(cafile=str(data / "tls" / "ca.crt"))
    for host in ("localhost", "127.0.0.1"):
        assert healthz(server.port, host, device) == 200, host
    # A device that does not trust it refuses the page: what a child's browser shows as "not private".
    with pytest.raises(urllib.error.URLError) as refused:
        healthz(server.port, "localhost", ssl.create_default_context())
    assert isinstance(refused.value.reason, ssl.SSLCertVerificationError)

    # The laptop's address changed: tls init again, then SIGHUP; the same device still trusts it.
    first = serial_served(server.port)
    assert run("tls", "init", "--data", str(data), "--address", "198.51.100.9", "--name", "laptop-2.local").returncode == 0
    server.process.send_signal(signal.SIGHUP)
    server.wait_for_output("TLS certificate reloaded")
    assert serial_served(server.port) != first
    assert healthz(server.port, "localhost", device) == 200
    with socket_to(server.port, "laptop-2.local", device) as tls:
        names = tls.getpeercert()["subjectAltName"]
        assert ("DNS", "laptop-2.local") in names and ("IP Address", "198.51.100.9") in names

    # A name the authority was not made for is refused before anything is written: its key cannot vouch
    # for another site's name, even in the hands of whoever copies the data folder.
    served = (data / "tls" / "server.crt").read_bytes()
    refused = run("tls", "init", "--data", str(data), "--name", "moved.example")
    assert refused.returncode != 0 and "moved.example" in refused.stderr and "--force" in refused.stderr, refused.stderr
    assert (data / "tls" / "server.crt").read_bytes() == served
    constraints = openssl("x509", "-in", str(data / "tls" / "ca.crt"), "-noout", "-ext", "nameConstraints,basicConstraints")
    assert "Permitted:" in constraints and "DNS:local" in constraints and "pathlen:0" in constraints, constraints


def test_start_prints_an_https_join_link_for_the_laptops_address_that_a_trusting_device_opens(data):
    """What `make run` does: tls init, then start; the join link the children get names the laptop's network
    address, and the certificate covers it."""
    assert run("tls", "init", "--data", str(data)).returncode == 0
    process = subprocess.Popen([BIN, "start", str(SHORT_STORY), "--port", "0", "--data", str(data), "--no-keys"],
                               cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        link = None
        for line in process.stdout:
            if line.startswith("  Join link:"):
                link = line.split()[-1]
                break
        assert link and link.startswith("https://"), link
        device = ssl.create_default_context(cafile=str(data / "tls" / "ca.crt"))
        with urllib.request.urlopen(link, context=device, timeout=15) as response:
            assert response.status == 200
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=10)


def socket_to(port, name, context):
    """A TLS connection to 127.0.0.1 that asks for (and checks) the certificate of `name`."""
    raw = socket.create_connection(("127.0.0.1", port), timeout=10)
    return context.wrap_socket(raw, server_hostname=name)
