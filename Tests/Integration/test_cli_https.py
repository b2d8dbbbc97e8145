"""The CLI's client commands against a server on HTTPS: the CLI trusts the laptop's own authority given by
--ca-file, STORYCIRCLE_CA_FILE or found in the data folder (as after `make run`), refuses a server it cannot
verify or whose certificate names another host (and changes nothing there), and still speaks plain HTTP."""
import json
import os
import re
import socket
import subprocess

import pytest

from conftest import BIN, ROOT, SHORT_STORY
from tls_support import CertificateAuthority, tls_ca  # noqa: F401 (the fixture)


def run(*args, env=None, cwd=ROOT, timeout=60):
    # The test's own environment may name a server or an authority; each test says which it means.
    base = {name: value for name, value in os.environ.items()
            if name not in ("STORYCIRCLE_SERVER", "STORYCIRCLE_CA_FILE", "STORYCIRCLE_PORT", "STORYCIRCLE_DATA_DIR")}
    return subprocess.run([BIN, *args], capture_output=True, text=True, cwd=cwd, timeout=timeout, env=dict(base, **(env or {})))


def rooms(server):
    return json.loads(server.request("GET", "/api/rooms", server.admin_token)[2])["rooms"]


def https_server(make_server, ca, names=("DNS:localhost", "IP:127.0.0.1")):
    certificate, key = ca.issue("server", names=names)
    return make_server(config={"tls": {"certificate": str(certificate), "key": str(key)}})


def base_env(server, tmp_path):
    return {"STORYCIRCLE_HOME": str(tmp_path / "home"), "STORYCIRCLE_ADMIN_TOKEN": server.admin_token}


def created_code(result):
    assert result.returncode == 0, result.stderr
    return re.search(r"Room (\d{6}) created", result.stdout).group(1)


@pytest.fixture
def tls_server(make_server, tls_ca):
    return https_server(make_server, tls_ca)


def test_the_ca_is_trusted_from_the_flag_and_from_the_environment(tls_server, tls_ca, tmp_path):
    url = f"https://127.0.0.1:{tls_server.port}"
    env = base_env(tls_server, tmp_path)
    code = created_code(run("room", "create", str(SHORT_STORY), "--server", url, "--ca-file", str(tls_ca.certificate), env=env))
    status = run("room", "status", code, "--json", "--server", f"https://localhost:{tls_server.port}", "--ca-file", str(tls_ca.certificate), env=env)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["code"] == code

    env = dict(env, STORYCIRCLE_SERVER=url, STORYCIRCLE_CA_FILE=str(tls_ca.certificate))
    second = created_code(run("room", "create", str(SHORT_STORY), env=env))
    assert second != code
    assert run("class", "create", "2A", "--child", "Ana", env=env).returncode == 0
    listed = run("class", "list", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    assert "2A" in listed.stdout
    listing = run("room", "list", "--json", env=env)
    assert {room["code"] for room in json.loads(listing.stdout)["rooms"]} == {code, second}


def test_after_tls_init_the_cli_finds_the_server_and_its_authority_by_itself(make_server, tmp_path):
    """What a teacher does after `make run`: no flags; the data folder in the working folder has the CA."""
    data = tmp_path / "data"
    assert run("tls", "init", "--data", str(data)).returncode == 0
    server = make_server(data=data)
    env = {"STORYCIRCLE_HOME": str(tmp_path / "home"), "STORYCIRCLE_PORT": str(server.port)}
    # data/admin-token and data/tls/ca.crt are found from the working folder, as `serve` would find them.
    created = run("room", "create", str(SHORT_STORY), env=env, cwd=tmp_path)
    code = created_code(created)
    listing = run("room", "list", "--json", env=env, cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    assert [room["code"] for room in json.loads(listing.stdout)["rooms"]] == [code]
    assert run("class", "create", "3C", env=env, cwd=tmp_path).returncode == 0
    # The same folder through STORYCIRCLE_DATA_DIR, from anywhere else.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    listed = run("class", "list", env=dict(env, STORYCIRCLE_DATA_DIR=str(data), STORYCIRCLE_ADMIN_TOKEN=server.admin_token), cwd=elsewhere)
    assert listed.returncode == 0, listed.stderr
    assert "3C" in listed.stdout


def test_a_server_the_cli_cannot_verify_is_refused_and_nothing_is_created(tls_server, tls_ca, tmp_path):
    stranger = CertificateAuthority(tmp_path / "stranger")
    env = base_env(tls_server, tmp_path)
    url = f"https://127.0.0.1:{tls_server.port}"
    for extra in ([], ["--ca-file", str(stranger.certificate)]):
        result = run("room", "create", str(SHORT_STORY), "--server", url, *extra, env=env)
        assert result.returncode != 0
        assert "the server's certificate is not trusted" in result.stderr, result.stderr
        assert "--ca-file" in result.stderr and "storycircle tls init" in result.stderr
        assert "Room" not in result.stdout
    assert not (tmp_path / "home" / "rooms").exists()
    # Still nothing there, asked with the right authority.
    listing = run("room", "list", "--json", "--server", url, "--ca-file", str(tls_ca.certificate), env=env)
    assert listing.returncode == 0, listing.stderr
    assert json.loads(listing.stdout)["rooms"] == []


def test_a_certificate_for_another_name_is_refused_by_name(make_server, tls_ca, tmp_path):
    server = https_server(make_server, tls_ca, names=("DNS:storycircle.school.example",))
    env = base_env(server, tmp_path)
    for host in ("127.0.0.1", "localhost"):
        result = run("room", "create", str(SHORT_STORY), "--server", f"https://{host}:{server.port}", "--ca-file", str(tls_ca.certificate), env=env)
        assert result.returncode != 0
        assert f"the server's certificate does not name {host}" in result.stderr, result.stderr
    assert not (tmp_path / "home" / "rooms").exists()


def test_a_missing_authority_file_and_a_closed_port_say_so(tls_server, tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    result = run("room", "list", "--server", f"https://127.0.0.1:{closed}", env=base_env(tls_server, tmp_path))
    assert result.returncode != 0 and "connection refused" in result.stderr, result.stderr
    missing = tmp_path / "nowhere.crt"
    result = run("room", "list", "--server", f"https://127.0.0.1:{tls_server.port}", "--ca-file", str(missing), env=base_env(tls_server, tmp_path))
    assert result.returncode != 0 and f"cannot read the certificate authority file {missing}" in result.stderr, result.stderr


def test_plain_http_still_works_and_is_the_default_without_a_certificate(server, tmp_path):
    env = {"STORYCIRCLE_HOME": str(tmp_path / "home"), "STORYCIRCLE_ADMIN_TOKEN": server.admin_token}
    code = created_code(run("room", "create", str(SHORT_STORY), "--server", server.http, env=env))
    # No --server, no certificate in ./data: this computer's server on plain HTTP at the configured port.
    listing = run("room", "list", "--json", env=dict(env, STORYCIRCLE_PORT=str(server.port)), cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    assert [room["code"] for room in json.loads(listing.stdout)["rooms"]] == [code]
    assert rooms(server)[0]["code"] == code


@pytest.mark.parametrize("scheme", ["https", "http"])
def test_a_server_that_never_answers_is_given_up_on_in_time(scheme, tmp_path):
    """A listener that accepts and says nothing: no handshake (https) or no answer (http). The CLI waits its
    15 seconds, not forever, and says why."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        port = silent.getsockname()[1]
        env = {"STORYCIRCLE_HOME": str(tmp_path / "home"), "STORYCIRCLE_ADMIN_TOKEN": "x" * 43}
        result = run("room", "list", "--server", f"{scheme}://127.0.0.1:{port}", env=env, timeout=45)
    assert result.returncode != 0
    assert "no answer in time" in result.stderr, result.stderr
