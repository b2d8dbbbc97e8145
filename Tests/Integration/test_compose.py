"""docker-compose.yml and docker-compose.single-node.yml, checked without a Docker engine: each is valid
against the Compose specification (the PyPI package compose-spec), and each agrees with the programs it
starts — every setting a node is given is one the server reads, every placeholder of the nginx template is
filled, and nginx accepts the rendered configuration. The same programs run for real in test_proxy.py
(one node), test_cluster.py (three nodes and PostgreSQL) and test_cluster_ha.py (three nodes on two PostgreSQL
members under Patroni with three etcd members, from the same config/patroni.yml)."""
import http.server
import json
import os
import re
import shutil
import string
import ssl
import subprocess
import threading
import time
import urllib.parse
import urllib.request

import pytest
import yaml
from compose_spec import PyCompose

from conftest import ROOT
from test_proxy import free_port, make_certificates

FILES = ["docker-compose.yml", "docker-compose.single-node.yml"]
# The settings and the environment variables that set them are declared in ServerConfiguration+Settings.swift.
SETTINGS = "".join(p.read_text() for p in sorted((ROOT / "Sources" / "StoryCircleApp" / "Application").glob("ServerConfiguration*.swift")))


def load(name):
    """The file as Compose sees it: YAML anchors and merge keys resolved first."""
    return yaml.safe_load((ROOT / name).read_text())


@pytest.mark.parametrize("name", FILES)
def test_the_file_is_valid_compose(name):
    compose = PyCompose.from_yaml(yaml.safe_dump(load(name)))
    assert set(compose.services.keys()) == set(load(name)["services"])


def test_the_validator_refuses_what_compose_refuses():
    """The check above can fail: a misspelt restart policy is refused."""
    broken = load("docker-compose.yml")
    broken["services"]["node1"]["restart"] = "unless-stoped"
    with pytest.raises(ValueError):
        PyCompose.from_yaml(yaml.safe_dump(broken))


@pytest.mark.parametrize("name", FILES)
def test_every_setting_given_to_a_node_is_one_the_server_reads(name):
    nodes = [s for s in load(name)["services"].values() if s.get("build") == "."]
    assert nodes
    for node in nodes:
        for key in node.get("environment", {}):
            assert f'"{key}"' in SETTINGS, f"{name}: the server does not read {key}"


def test_the_cluster_has_three_nodes_a_database_on_two_members_and_a_proxy_over_all_of_them():
    services = load("docker-compose.yml")["services"]
    nodes = sorted(name for name, s in services.items() if s.get("build") == ".")
    assert nodes == ["node1", "node2", "node3"]
    ids = {services[n]["environment"]["STORYCIRCLE_NODE_ID"] for n in nodes}
    assert len(ids) == 3, "each node has its own id"
    members = sorted(name for name, s in services.items() if isinstance(s.get("build"), dict) and s["build"].get("dockerfile") == "config/patroni.Dockerfile")
    assert members == ["pg1", "pg2"]
    for n in nodes:
        env = services[n]["environment"]
        database = env["STORYCIRCLE_DATABASE"]
        assert database.startswith("postgresql://") and "@pg1:5432,pg2:5432/" in database, "both members, in libpq's multi-host form"
        query = urllib.parse.parse_qs(database.rsplit("?", 1)[1])
        assert query["target_session_attrs"] == ["read-write"], "only the primary takes a node's connection"
        assert query["sslmode"] == ["verify-full"], "TLS, the member's certificate checked against the CA and its name"
        assert any(v.endswith(":" + query["sslrootcert"][0] + ":ro") for v in services[n]["volumes"]), "the CA file is mounted where the URL names it"
        assert database.startswith("postgresql://storycircle:${STORYCIRCLE_DB_PASSWORD"), "the nodes' own role, not the superuser"
        assert "/storycircle?" in database, "the nodes' own database"
        assert env["STORYCIRCLE_TRUST_FORWARDED_FOR"] == "true"
        assert all(services[n]["depends_on"][m]["condition"] == "service_healthy" for m in members)
        assert services[n]["volumes"][0].startswith(f"{n}-data:"), "each node keeps its own data folder"
    proxy = services["proxy"]["environment"]
    assert sorted(v for k, v in proxy.items() if k.startswith("STORYCIRCLE_NODE_")) == [f"{n}:8080" for n in nodes]
    assert "postgres" not in services, "no single PostgreSQL left"
    for m in members:
        assert "healthcheck" in services[m]
        assert services[m]["volumes"][0].startswith(f"{m}-data:"), "each member keeps its own data"


def etcd_flags(service):
    return dict(flag[2:].split("=", 1) for flag in service["command"][1:] if "=" in flag)


def test_etcd_has_three_members_that_name_each_other():
    services = load("docker-compose.yml")["services"]
    etcds = sorted(name for name in services if name.startswith("etcd"))
    assert etcds == ["etcd1", "etcd2", "etcd3"], "three members: one may be lost and a majority remains"
    clusters = set()
    for name in etcds:
        flags = etcd_flags(services[name])
        assert flags["name"] == name
        assert flags["advertise-client-urls"] == f"https://{name}:2379"
        assert flags["initial-advertise-peer-urls"] == f"https://{name}:2380"
        assert flags["listen-client-urls"].startswith("https://") and flags["listen-peer-urls"].startswith("https://")
        clusters.add(flags["initial-cluster"])
        assert services[name]["volumes"][0].startswith(f"{name}-data:")
    assert clusters == {",".join(f"{n}=https://{n}:2380" for n in etcds)}, "every member names the same three"


def test_etcd_takes_only_clients_and_peers_with_a_certificate_of_the_clusters_ca():
    services = load("docker-compose.yml")["services"]
    for name in ("etcd1", "etcd2", "etcd3"):
        command = services[name]["command"]
        assert "--client-cert-auth" in command and "--peer-client-cert-auth" in command, name
        flags = dict(flag[2:].split("=", 1) for flag in command[1:] if "=" in flag)
        mounted = {volume.split(":")[1] for volume in services[name]["volumes"]}
        for key in ("cert-file", "key-file", "trusted-ca-file", "peer-cert-file", "peer-key-file", "peer-trusted-ca-file"):
            assert flags[key] in mounted, f"{name}: {key} {flags[key]} is not mounted"


def test_each_member_fills_every_placeholder_of_the_patroni_configuration():
    """config/patroni.yml as each member's entrypoint renders it: every placeholder set, the result valid
    YAML with what the HA promises rest on (synchronous replication, pg_rewind, a quick failover), pointed at
    the etcd members of the file. (Patroni's own --validate-config wants the etcd members reachable and
    refuses loopback addresses, which scripts/cluster.sh uses; test_cluster_ha.py runs the same template in
    real Patroni instead.)"""
    services = load("docker-compose.yml")["services"]
    template = (ROOT / "config" / "patroni.yml").read_text()
    entrypoint = (ROOT / "config" / "patroni-entrypoint.sh").read_text()
    placeholders = set(re.findall(r"\$\{([A-Z0-9_]+)\}", template))
    assert placeholders == set(re.findall(r"\$\{([A-Z0-9_]+)\}", entrypoint)), "the entrypoint substitutes exactly the template's names"
    script = (ROOT / "scripts" / "cluster.sh").read_text()
    assert all(f"${{{name}}}" in script for name in placeholders), "scripts/cluster.sh fills in the same names"
    etcds = sorted(name for name in services if name.startswith("etcd"))
    for member in ("pg1", "pg2"):
        # Compose's required variables (`${NAME:?message}`) as an operator sets them.
        environment = {k: re.sub(r"\$\{([A-Z_]+):\?[^}]*\}", r"secret-\1", str(v)) for k, v in services[member]["environment"].items()}
        missing = placeholders - set(environment)
        assert not missing, f"{member}: placeholders its environment does not set: {sorted(missing)}"
        config = yaml.safe_load(string.Template(template).safe_substitute(environment))
        assert config["name"] == member
        assert config["etcd3"]["hosts"] == ",".join(f"{n}:2379" for n in etcds)
        assert config["postgresql"]["connect_address"] == f"{member}:5432"
        assert config["restapi"]["connect_address"] == f"{member}:8008"
        dcs = config["bootstrap"]["dcs"]
        assert dcs["synchronous_mode"] is True and dcs["postgresql"]["use_pg_rewind"] is True
        assert dcs["loop_wait"] + 2 * dcs["retry_timeout"] <= dcs["ttl"], "Patroni's rule for its timings"
        assert dcs["primary_start_timeout"] == 0, "a crashed primary fails over rather than restarting in place"
        assert "statement_timeout" not in dcs["postgresql"]["parameters"], "a cancelled synchronous wait commits locally"
        mounted = {volume.split(":")[1] for volume in services[member]["volumes"]}
        # The REST API: TLS, a client certificate on every call, a password for changes; patronictl the same.
        api = config["restapi"]
        assert {api["certfile"], api["keyfile"], api["cafile"]} <= mounted
        assert api["verify_client"] == "required"
        assert api["authentication"]["username"] and api["authentication"]["password"] == "secret-PATRONI_API_PASSWORD"
        assert {config["ctl"]["certfile"], config["ctl"]["keyfile"], config["ctl"]["cacert"]} <= mounted
        # etcd over TLS with the member's certificate.
        assert config["etcd3"]["protocol"] == "https" and {config["etcd3"]["cacert"], config["etcd3"]["cert"], config["etcd3"]["key"]} <= mounted
        # PostgreSQL: TLS, and over the network only TLS from the cluster's own network.
        parameters = config["postgresql"]["parameters"]
        assert parameters["ssl"] == "on" and {parameters["ssl_cert_file"], parameters["ssl_key_file"]} <= mounted
        network_rules = [rule for rule in config["postgresql"]["pg_hba"] if not rule.startswith("local ")]
        assert network_rules and all(rule.startswith("hostssl ") and rule.endswith(" scram-sha-256") for rule in network_rules), network_rules
        assert "pg_hba" not in config["bootstrap"], "the whole pg_hba.conf is Patroni's, written at every start"
        for user in ("replication", "rewind"):
            assert config["postgresql"]["authentication"][user]["sslmode"] == "verify-full"
        assert config["postgresql"]["authentication"]["superuser"]["username"] != "storycircle", "the nodes' role is no superuser"
        assert config["bootstrap"]["post_bootstrap"] == environment["MEMBER_POST_BOOTSTRAP"]
    dockerfile = (ROOT / "config" / "patroni.Dockerfile").read_text()
    assert f"COPY config/patroni-post-bootstrap.sh {environment['MEMBER_POST_BOOTSTRAP']}" in dockerfile


def test_the_nodes_role_is_made_without_any_power_beyond_its_own_database():
    script = (ROOT / "config" / "patroni-post-bootstrap.sh").read_text()
    create = next(line for line in script.splitlines() if line.startswith("CREATE ROLE storycircle"))
    for attribute in ("NOSUPERUSER", "NOCREATEDB", "NOCREATEROLE", "NOREPLICATION"):
        assert attribute in create.split(), create
    assert "CREATE DATABASE storycircle OWNER storycircle;" in script
    # The password reaches psql through its environment, never its arguments (which every process can read).
    assert "\\getenv app_password PG_APP_PASSWORD" in script
    assert not any(line.startswith("psql ") and "PG_APP_PASSWORD" in line for line in script.splitlines()), script


@pytest.mark.parametrize("name", FILES)
def test_no_service_is_open_to_every_address(name):
    text = (ROOT / name).read_text()
    assert "0.0.0.0/0" not in text and "::/0" not in text


def test_postgresql_is_reached_only_from_the_data_network_which_nginx_is_not_on():
    compose = load("docker-compose.yml")
    services = compose["services"]
    [subnet] = [pool["subnet"] for pool in compose["networks"]["data"]["ipam"]["config"]]
    for member in ("pg1", "pg2"):
        assert services[member]["environment"]["PG_NETWORK"] == subnet
        assert services[member]["networks"] == ["data"]
    assert "data" not in services["proxy"]["networks"], "nginx cannot reach the database"
    assert all(services[f"node{n}"]["networks"] == ["front", "data"] for n in (1, 2, 3))
    assert all(services[f"etcd{n}"]["networks"] == ["data"] for n in (1, 2, 3))


@pytest.mark.parametrize("name", FILES)
def test_the_proxy_publishes_https_and_a_redirect_only(name):
    proxy = load(name)["services"]["proxy"]
    assert sorted(proxy["ports"]) == ["443:443", "80:80"]
    environment = proxy["environment"]
    assert (environment["LISTEN_PORT"], environment["REDIRECT_PORT"], environment["PUBLIC_HTTPS_PORT"]) == ("443", "80", "443")
    assert any(volume.split(":")[1] == environment["TLS_DIR"] for volume in proxy["volumes"]), "the certificate folder is mounted"
    for service in load(name)["services"].values():
        if service.get("build") == ".":
            assert service["environment"]["STORYCIRCLE_PUBLIC_URL"].startswith("${STORYCIRCLE_PUBLIC_URL:-https://")


def test_both_proxies_speak_the_same_tls():
    """The single-node and the cluster's nginx: the same protocols, ciphers, HSTS and redirect."""
    def tls_lines(template):
        text = (ROOT / "config" / template).read_text()
        return [line.strip() for line in text.splitlines() if re.match(r"\s*(ssl_|add_header Strict|return 301|listen )", line)]
    single, cluster = tls_lines("nginx.conf"), tls_lines("nginx-cluster.conf")
    assert single == cluster
    assert "ssl_protocols TLSv1.2 TLSv1.3;" in single and "listen ${LISTEN_PORT} ssl;" in single


def rendered(name, environment):
    """The nginx template with its placeholders filled as the nginx image's envsubst fills them (only the
    variables it is given; nginx's own `$room`, `$uri`… stay)."""
    template = (ROOT / "config" / name).read_text()
    placeholders = set(re.findall(r"\$\{([A-Z0-9_]+)\}", template))
    missing = placeholders - set(environment)
    assert not missing, f"{name}: placeholders the proxy service does not set: {sorted(missing)}"
    return string.Template(template).safe_substitute(environment)


@pytest.mark.parametrize("compose_file,template", [("docker-compose.yml", "nginx-cluster.conf"),
                                                   ("docker-compose.single-node.yml", "nginx.conf")])
def test_nginx_accepts_the_configuration_the_proxy_service_renders(compose_file, template, tmp_path):
    proxy = load(compose_file)["services"]["proxy"]
    mount = next(v for v in proxy["volumes"] if v.startswith(f"./config/{template}:"))
    assert mount.endswith("/etc/nginx/templates/nginx.conf.template:ro")
    environment = {k: str(v) for k, v in proxy["environment"].items()}
    # The containers' host names do not resolve here: the same ports on this machine instead.
    environment = {k: re.sub(r"^[a-z0-9-]+:(\d+)$", r"127.0.0.1:\1", v) for k, v in environment.items()}
    environment["LISTEN_PORT"] = f"127.0.0.1:{free_port()}"
    environment["REDIRECT_PORT"] = f"127.0.0.1:{free_port()}"
    # The mounted folder: a certificate and key where the proxy's TLS_DIR is.
    environment["TLS_DIR"] = str(make_certificates(tmp_path / "tls"))
    if "NGINX_TEMP" in environment:
        environment["NGINX_TEMP"] = str(tmp_path)
    config = tmp_path / "nginx.conf"
    config.write_text(rendered(template, environment))
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.path.exists(nginx):
        pytest.fail("nginx is not installed (scripts/install-deps.sh --test installs it)")
    checked = subprocess.run([nginx, "-t", "-c", str(config), "-e", "stderr"], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr


def health_checks():
    """Every health check a StoryCircle container runs: the Dockerfile's and the cluster nodes'."""
    dockerfile = (ROOT / "Dockerfile").read_text()
    line = next(l for l in dockerfile.splitlines() if l.startswith("HEALTHCHECK"))
    checks = [("Dockerfile", json.loads(line.split(" CMD ", 1)[1]))]
    for name, service in load("docker-compose.yml")["services"].items():
        if service.get("build") == ".":
            checks.append((f"docker-compose.yml {name}", service["healthcheck"]["test"][1:]))
    return checks


def test_the_containers_health_checks_pass_on_a_healthy_server_and_fail_without_one(server):
    for where, command in health_checks():
        on_server = [part.replace("/8080", f"/{server.port}") for part in command]
        assert subprocess.run(on_server, capture_output=True, timeout=10).returncode == 0, f"{where}: {command}"
        nobody = [part.replace("/8080", "/1") for part in command]
        assert subprocess.run(nobody, capture_output=True, timeout=10).returncode != 0, where


def test_the_image_builds_with_every_library_the_build_needs():
    """The container's build stage installs every Debian package scripts/install-deps.sh installs to build
    (a C library added to the package and to install-deps but not to the Dockerfile breaks only the image,
    which no other test builds), and its runtime stage carries the matching shared libraries."""
    deps = (ROOT / "scripts" / "install-deps.sh").read_text().split('if [ "$want_test" = yes ]', 1)[0]
    needed = re.findall(r"^need_(?:pkgconfig \S+|package) (\S+)$", deps, re.M)
    build, runtime = (ROOT / "Dockerfile").read_text().split("\nFROM debian:", 1)
    missing = [package for package in needed if not re.search(rf"(?<![\w.+-]){re.escape(package)}(?![\w.+-])", build)]
    assert not missing, f"the Dockerfile's build stage lacks {missing}"
    for library in ["libicu72", "libpng16-16", "libjpeg62-turbo", "libwebp7", "libwebsockets17", "libpq5"]:
        assert library in runtime, f"the image's runtime stage lacks {library}"


def test_the_image_carries_the_natural_voice_pinned_as_install_deps_pins_it():
    """The image's Piper and English voice are the versions scripts/install-deps.sh installs (a pin moved
    in one place only would narrate the cluster's rooms differently from a laptop's), in the .venv-voice the
    server looks for beside its working folder, with the worker script it runs."""
    deps = (ROOT / "scripts" / "install-deps.sh").read_text()
    pins = re.search(r'^\s*want="([^"]+)"', deps, re.M).group(1).split()
    runtime = (ROOT / "Dockerfile").read_text().split("\nFROM debian:", 1)[1]
    assert "WORKDIR /srv/storycircle" in runtime
    venv = re.search(r"python3 -m venv (\S+)", runtime)
    assert venv and venv.group(1) == ".venv-voice", "the server finds Piper in .venv-voice beside its working folder"
    install = next(line for line in runtime.splitlines() if "pip install" in line)
    installed = sorted(p.rstrip(";") for p in install.split() if "==" in p)
    assert installed == sorted(pins), f"the image installs {install.strip()}, install-deps.sh {pins}"
    assert re.search(r"^COPY scripts/piper-worker\.py \./scripts/piper-worker\.py$", runtime, re.M)
    assert "python3-venv" in runtime and 'ARG NATURAL_VOICE=1' in runtime
    assert (ROOT / "scripts" / "piper-worker.py").exists()


def test_keys_and_childrens_data_stay_out_of_every_image_build_context():
    """A Docker build sends the whole folder to the daemon: the cluster's keys (./tls, scripts/cluster.sh), a
    laptop's data folder (results, its local CA's key) and build output are ignored, and nothing a
    Dockerfile copies is."""
    ignored = [line.strip().rstrip("/") for line in (ROOT / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")]
    assert {"tls", "data", ".build", ".git", ".env", "*.env"} <= set(ignored), ignored
    for dockerfile in (ROOT / "Dockerfile", ROOT / "config" / "patroni.Dockerfile"):
        for line in dockerfile.read_text().splitlines():
            words = line.split()
            if words[:1] == ["COPY"] and not words[1].startswith("--from"):
                for source in words[1:-1]:
                    top = source.strip("./").split("/")[0]
                    assert top not in ignored, (dockerfile.name, source)


def test_the_cluster_proxy_keeps_a_passkey_ceremony_on_one_node_and_spreads_the_rest(tmp_path):
    """nginx-cluster.conf in front of three stand-in nodes that say which they are: a passkey ceremony's
    requests (options, then the answer: the challenge lives in the memory of the node that issued it) all
    reach one node, a room's requests one node, and requests of no room are spread over them."""
    class Node(http.server.BaseHTTPRequestHandler):
        def answer(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = json.dumps({"node": self.server.server_port}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_DELETE = answer

        def log_message(self, *arguments):
            pass

    nodes = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), Node) for _ in range(3)]
    for node in nodes:
        threading.Thread(target=node.serve_forever, daemon=True).start()
    listen, redirect = free_port(), free_port()
    tls = make_certificates(tmp_path / "tls")
    environment = {"LISTEN_PORT": f"127.0.0.1:{listen}", "REDIRECT_PORT": f"127.0.0.1:{redirect}", "PUBLIC_HTTPS_PORT": str(listen),
                   "TLS_DIR": str(tls), "NGINX_TEMP": str(tmp_path),
                   **{f"STORYCIRCLE_NODE_{index + 1}": f"127.0.0.1:{node.server_port}" for index, node in enumerate(nodes)}}
    config = tmp_path / "nginx.conf"
    config.write_text(rendered("nginx-cluster.conf", environment))
    nginx = subprocess.Popen([shutil.which("nginx") or "/usr/sbin/nginx", "-c", str(config), "-e", "stderr", "-g", "daemon off;"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    context = ssl.create_default_context(cafile=str(tls / "ca.crt"))

    def node_for(method, path):
        request = urllib.request.Request(f"https://127.0.0.1:{listen}{path}", method=method, data=b"{}" if method != "GET" else None)
        with urllib.request.urlopen(request, timeout=10, context=context) as response:
            return json.loads(response.read())["node"]

    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                node_for("GET", "/healthz")
                break
            except OSError:
                assert nginx.poll() is None and time.monotonic() < deadline, nginx.stderr.read().decode() if nginx.poll() is not None else "nginx never answered"
                time.sleep(0.05)
        ceremony = [("POST", "/api/session/passkey/options"), ("POST", "/api/session/passkey"),
                    ("POST", "/api/passkeys/options"), ("POST", "/api/passkeys"), ("GET", "/api/passkeys"), ("DELETE", "/api/passkeys/abc")]
        assert len({node_for(method, path) for method, path in ceremony * 4}) == 1
        assert len({node_for("GET", "/api/rooms/482913") for _ in range(6)}) == 1
        assert len({node_for("GET", "/api/join") for _ in range(9)}) > 1
    finally:
        nginx.terminate()
        nginx.wait(timeout=30)
        for node in nodes:
            node.shutdown()
