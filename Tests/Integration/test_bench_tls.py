"""The TLS lock-step's parts (bench/tls.sh, bench/lockstep.sh with TLS=1): the C peer with a certificate speaks
the peers' protocol over wss with TLS 1.2 and up only, and the generator (`storycircle-bench --tls-ca`)
reaches it over wss, trusting that CA and no other."""
import asyncio
import json
import os
import pathlib
import random
import ssl
import subprocess
import time

import pytest

from conftest import BIN
from test_bench_peers import build, exchange
from tls_support import CertificateAuthority

BENCH = pathlib.Path(BIN).with_name("storycircle-bench")


@pytest.fixture
def tls_peer(tmp_path):
    """The C peer (bench/baseline/lws_broadcast.c) serving TLS with a fresh certificate: (port, CA file)."""
    command, reason = build("c", tmp_path)
    if command is None:
        pytest.skip(f"c: {reason}")
    authority = CertificateAuthority(tmp_path / "ca")
    crt, key = authority.issue()
    ca = authority.certificate
    port = random.randrange(20000, 32000)
    log_path = tmp_path / "peer.log"
    with open(log_path, "w+") as log:
        process = subprocess.Popen(command + [str(port), str(crt), str(key)], stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 20
            while f"listening {port} (tls)" not in log_path.read_text():
                assert process.poll() is None, log_path.read_text()
                assert time.monotonic() < deadline, "the peer did not start in 20 s"
                time.sleep(0.05)
            yield port, ca
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def client_context(ca, minimum=ssl.TLSVersion.TLSv1_2, maximum=ssl.TLSVersion.MAXIMUM_SUPPORTED):
    context = ssl.create_default_context(cafile=str(ca))
    context.minimum_version, context.maximum_version = minimum, maximum
    return context


def test_the_c_peer_speaks_the_protocol_over_tls_1_2_and_1_3_only(tls_peer):
    port, ca = tls_peer
    asyncio.run(exchange(port, ssl=client_context(ca)))
    for version in (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3):
        asyncio.run(exchange(port, ssl=client_context(ca, version, version)))
    # TLS 1.1 is refused by the peer (OpenSSL's client would allow it at security level 0).
    old = client_context(ca, ssl.TLSVersion.TLSv1_1, ssl.TLSVersion.TLSv1_1)
    old.set_ciphers("DEFAULT:@SECLEVEL=0")
    with pytest.raises((ssl.SSLError, OSError)):
        asyncio.run(exchange(port, ssl=old))


def lockstep(port, ca, *extra):
    return subprocess.run(
        [str(BENCH), "lockstep", "--target", "baseline-c", "--port", str(port), "--tls-ca", str(ca), "--rooms", "3", "--children", "5",
         "--warmup", "2", "--seconds", "1", *extra],
        capture_output=True, text=True, timeout=120, env=dict(os.environ, STORYCIRCLE_BENCH_CLIENT_THREADS="2"))


def test_the_generator_runs_the_lockstep_over_wss_trusting_the_given_ca_alone(tls_peer, tmp_path):
    port, ca = tls_peer
    result = lockstep(port, ca)
    assert result.returncode == 0, result.stderr
    line = json.loads(result.stdout)
    assert line["target"] == "baseline-c" and line["rounds"] > 0
    assert line["framesToChildren"] > 0
    # A certificate from another CA is refused: the generator does check the chain.
    refused = lockstep(port, CertificateAuthority(tmp_path / "other").certificate)
    assert refused.returncode == 1
    assert "a connection failed" in refused.stderr, refused.stderr
