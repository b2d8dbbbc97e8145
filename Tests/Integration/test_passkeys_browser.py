"""Passkeys in real headless Chromium with the DevTools protocol's virtual authenticator (WebAuthn domain:
CTAP2, internal, resident keys, user verification): a teacher signed in with a password registers a passkey
through web-static/js/passkeys.js, signs out, and signs in with it, which starts the same session cookie as a
password. Then responses made here with the authenticator's own key (signed by the openssl command, not
the server's code) show each refusal: a passkey ceremony from another site (its origin, its relying party
id), a replayed challenge, a counter gone back, a forged signature. Over real sockets against the real binary.

The relying party is the server's public address: http://localhost:PORT (a secure context for Chromium, as
https is), so the relying party id is "localhost"."""
import base64
import hashlib
import json
import socket
import struct
import subprocess
import urllib.request

import sqlite3

import pytest
from selenium.webdriver.common.by import By

from browser_support import PHONE, PROJECTOR, TEACHER, axe, browsers, plain, screenshot, text, visible, wait  # noqa: F401 (browsers is a fixture)
from conftest import ROOT

PASSWORD = "correct horse battery"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def site(make_server):
    """A server whose public address is http://localhost:PORT, and a teacher's account with a password."""
    port = free_port()
    server = make_server(config={"publicURL": f"http://localhost:{port}"}, args=("--port", str(port)))
    origin = f"http://localhost:{port}"

    def admin(method, path, body=None):
        status, _, raw = server.request(method, path, server.admin_token, body)
        assert status in (200, 201), raw
        return json.loads(raw)

    school = admin("POST", "/api/schools", {"name": "Hilltop"})
    account = admin("POST", "/api/accounts", {"login": "ana", "displayName": "Ana", "role": "teacher", "schoolID": school["id"], "password": PASSWORD})
    return dict(server=server, origin=origin, port=port, account=account)


def api(site, method, path, body=None, headers=None):
    """A request as another program would send it (no cookie), with the server's own origin."""
    request = urllib.request.Request(site["origin"] + path, data=json.dumps(body).encode() if body is not None else None, method=method)
    request.add_header("Content-Type", "application/json")
    request.add_header("Origin", site["origin"])
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=15) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def in_page(driver, script):
    """Runs `script` (an async function body with `passkeys` imported) in the page; its value or its error."""
    return driver.execute_async_script(
        """const done = arguments[arguments.length - 1];
        import('/js/passkeys.js').then(async (passkeys) => {
          try { done({ value: await (async () => { %s })() }); }
          catch (error) { done({ error: String(error?.error?.code ?? error?.name ?? error) }); }
        });""" % script)


def sign(private_key_pkcs8, message, tmp_path):
    """An ES256 signature (DER) by the openssl command, with the virtual authenticator's own key."""
    key = tmp_path / "credential.key"
    key.write_text("-----BEGIN PRIVATE KEY-----\n" + base64.encodebytes(private_key_pkcs8).decode() + "-----END PRIVATE KEY-----\n")
    return subprocess.run(["openssl", "dgst", "-sha256", "-sign", str(key)], input=message, capture_output=True, check=True).stdout


def assertion(site, credential, tmp_path, *, origin=None, rp_id="localhost", counter, challenge=None, user_handle=True):
    """A `navigator.credentials.get()` answer made here: the challenge the server gives, signed with the
    credential's key for `rp_id` from `origin`."""
    if challenge is None:
        status, options = api(site, "POST", "/api/session/passkey/options", {})
        assert status == 200, options
        challenge = options["publicKey"]["challenge"]
    client = json.dumps({"type": "webauthn.get", "challenge": challenge, "origin": origin or site["origin"], "crossOrigin": False}).encode()
    data = hashlib.sha256(rp_id.encode()).digest() + bytes([0x05]) + struct.pack(">I", counter)
    signature = sign(unb64url(credential["privateKey"]), data + hashlib.sha256(client).digest(), tmp_path)
    response = {"clientDataJSON": b64url(client), "authenticatorData": b64url(data), "signature": b64url(signature)}
    if user_handle:
        response["userHandle"] = b64url(site["account"]["id"].encode())
    credential_id = b64url(unb64url(credential["credentialId"]))
    return {"credential": {"id": credential_id, "rawId": credential_id, "type": "public-key", "response": response}}, challenge


def test_a_teacher_registers_a_passkey_and_signs_in_with_it_and_other_sites_are_refused(site, browsers, tmp_path):
    driver = browsers(width=1280, height=800)
    driver.get(site["origin"] + "/")
    driver.execute_cdp_cmd("WebAuthn.enable", {})
    authenticator = driver.execute_cdp_cmd("WebAuthn.addVirtualAuthenticator", {"options": {
        "protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
        "isUserVerified": True, "automaticPresenceSimulation": True,
    }})["authenticatorId"]

    # Signed in with the password, the teacher registers a passkey.
    signed_in = in_page(driver, f"""
        const response = await fetch('/api/session', {{ method: 'POST', headers: {{ 'Content-Type': 'application/json' }},
          body: JSON.stringify({{ login: 'ana', password: '{PASSWORD}' }}) }});
        const session = await response.json();
        const passkey = await passkeys.registerPasskey('School laptop', session.csrf);
        return {{ passkey, list: await passkeys.listPasskeys() }};""")
    assert "value" in signed_in, signed_in
    passkey = signed_in["value"]["passkey"]
    assert passkey["name"] == "School laptop" and passkey["algorithm"] == -7
    assert [item["id"] for item in signed_in["value"]["list"]] == [passkey["id"]]
    credentials = driver.execute_cdp_cmd("WebAuthn.getCredentials", {"authenticatorId": authenticator})["credentials"]
    assert len(credentials) == 1 and credentials[0]["rpId"] == "localhost" and credentials[0]["isResidentCredential"]
    assert b64url(unb64url(credentials[0]["credentialId"])) == passkey["id"]

    # Signed out, the passkey alone signs the teacher in: the same session cookie as a password.
    signed_out = in_page(driver, """
        const session = await (await fetch('/api/session')).json();
        await fetch('/api/session', { method: 'DELETE', headers: { 'X-CSRF-Token': session.csrf } });
        return (await fetch('/api/session')).status;""")
    assert signed_out == {"value": 401}
    again = in_page(driver, """
        const session = await passkeys.signInWithPasskey();
        const current = await (await fetch('/api/session')).json();
        return { login: session.account.login, same: current.csrf === session.csrf };""")
    assert again == {"value": {"login": "ana", "same": True}}, again
    cookie = next(c for c in driver.get_cookies() if c["name"] == "__Host-storycircle_session")
    assert cookie["httpOnly"] and cookie["secure"] and cookie["sameSite"] == "Strict"
    counter = driver.execute_cdp_cmd("WebAuthn.getCredentials", {"authenticatorId": authenticator})["credentials"][0]["signCount"]
    assert counter >= 2

    # Responses made here with the authenticator's key: first one the server accepts, which shows that the
    # refusals below are for what each changes.
    credential = driver.execute_cdp_cmd("WebAuthn.getCredentials", {"authenticatorId": authenticator})["credentials"][0]
    body, challenge = assertion(site, credential, tmp_path, counter=counter + 10)
    status, answer = api(site, "POST", "/api/session/passkey", body)
    assert status == 200 and answer["account"]["login"] == "ana", answer
    # The same answer again: its challenge is used up.
    status, answer = api(site, "POST", "/api/session/passkey", body)
    assert status == 401 and answer["error"]["reason"] == "unknown_challenge", answer

    def refused(reason, **changes):
        made, _ = assertion(site, credential, tmp_path, **{"counter": counter + 20, **changes})
        status, answer = api(site, "POST", "/api/session/passkey", made)
        assert status == 401 and answer["error"]["code"] == "sign_in_failed", answer
        assert answer["error"]["reason"] == reason, answer
        return answer["error"]["message"]

    # A passkey ceremony run by another site: its page's origin, or a passkey made for its relying party id.
    assert "evil.example" in refused("origin_not_allowed", origin="https://evil.example", rp_id="evil.example")
    assert "another site" in refused("relying_party_mismatch", rp_id="evil.example")
    assert "cloned" in refused("possible_clone", counter=counter + 10)
    forged, _ = assertion(site, credential, tmp_path, counter=counter + 30)
    forged["credential"]["response"]["signature"] = b64url(unb64url(forged["credential"]["response"]["signature"])[:-2] + b"\x00\x00")
    status, answer = api(site, "POST", "/api/session/passkey", forged)
    assert status == 401 and answer["error"]["reason"] in ("bad_signature",), answer
    # A challenge never issued, and a passkey this server never registered.
    made, _ = assertion(site, credential, tmp_path, counter=counter + 40, challenge=b64url(b"\x01" * 32))
    status, answer = api(site, "POST", "/api/session/passkey", made)
    assert status == 401 and answer["error"]["reason"] == "unknown_challenge", answer
    made, _ = assertion(site, credential, tmp_path, counter=counter + 40)
    made["credential"]["id"] = made["credential"]["rawId"] = b64url(b"\x02" * 16)
    status, answer = api(site, "POST", "/api/session/passkey", made)
    assert status == 401 and answer["error"]["reason"] == "unknown_passkey", answer
    # From another site's page, nothing is even looked at.
    status, answer = api(site, "POST", "/api/session/passkey", body, headers={"Origin": "https://evil.example"})
    assert status == 403 and answer["error"]["code"] == "csrf_failed", answer

    # Removed, the passkey signs nobody in.
    removed = in_page(driver, f"""
        const session = await (await fetch('/api/session')).json();
        await passkeys.deletePasskey('{passkey["id"]}', session.csrf);
        await fetch('/api/session', {{ method: 'DELETE', headers: {{ 'X-CSRF-Token': session.csrf }} }});
        return await passkeys.signInWithPasskey();""")
    assert removed == {"error": "sign_in_failed"}, removed

    # The audit trail has each of it: the passkey added and removed by its account, the sign-ins with it,
    # and every refused one with its reason (never a key, a signature or a challenge).
    server = site["server"]
    status, _, raw = server.request("GET", "/api/audit?limit=500", server.admin_token)
    assert status == 200, raw
    rows = [(row["action"], row["detail"]) for row in json.loads(raw)["entries"]]
    assert ("passkey_added", "passkey School laptop") in rows and ("passkey_removed", "passkey School laptop") in rows, rows
    assert rows.count(("sign_in", "passkey")) == 2, rows
    failed = {detail for action, detail in rows if action == "sign_in_failed" and detail.startswith("passkey")}
    assert {"passkey, unknown_challenge", "passkey, unknown_passkey", "passkey, origin_not_allowed",
            "passkey, relying_party_mismatch", "passkey, possible_clone", "passkey, bad_signature"} <= failed, failed
    assert body["credential"]["response"]["signature"] not in raw.decode() and challenge not in raw.decode()


CATALOG = json.loads((ROOT / "web-static" / "i18n" / "en.json").read_text(encoding="utf-8"))


def virtual_authenticator(driver):
    driver.execute_cdp_cmd("WebAuthn.enable", {})
    return driver.execute_cdp_cmd("WebAuthn.addVirtualAuthenticator", {"options": {
        "protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
        "isUserVerified": True, "automaticPresenceSimulation": True,
    }})["authenticatorId"]


@pytest.mark.parametrize("size", ["phone", "laptop"])
def test_a_sign_in_older_than_five_minutes_asks_for_the_password_before_a_passkey_is_added(site, browsers, size):
    """The sign-in is made older in the database (from outside, as five minutes would), so the server asks for
    the password: the bar shows a field, a wrong password is said and counted, the right one adds the passkey."""
    driver = browsers(**(PHONE if size == "phone" else TEACHER))
    driver.get(site["origin"] + "/sign-in")
    authenticator = virtual_authenticator(driver)
    driver.find_element(By.ID, "sign-in-login").send_keys("ana")
    driver.find_element(By.ID, "sign-in-password").send_keys(PASSWORD)
    driver.find_element(By.ID, "sign-in-submit").click()
    wait(driver, lambda d: d.current_url.rstrip("/").endswith("/stories"), message="the library")
    add = wait(driver, lambda d: visible(d, "#account-add-passkey"), message="Add a passkey")

    database = next(site["server"].data.glob("*.sqlite"))
    with sqlite3.connect(database) as connection:
        connection.execute("UPDATE sessions SET created_at = created_at - 600000")
    cookie = next(c["value"] for c in driver.get_cookies() if c["name"] == "__Host-storycircle_session")
    csrf = driver.execute_async_script("const done = arguments[0]; fetch('/api/session').then((r) => r.json()).then((s) => done(s.csrf));")
    headers = {"Cookie": f"__Host-storycircle_session={cookie}", "X-CSRF-Token": csrf}

    def refused(_):
        status, answer = api(site, "POST", "/api/passkeys/options", {}, headers=headers)
        return status == 403 and answer["error"] == {**answer["error"], "code": "recent_sign_in_needed", "reason": "password_needed"}
    # This node keeps a session it looked up for a second: until then the sign-in still counts as recent.
    wait(driver, refused, timeout=10, message="the server sees the older sign-in")

    add.click()
    field = wait(driver, lambda d: visible(d, "#account-passkey-password"), message="the password asked for")
    assert text(driver, "#account-passkey-why") == CATALOG["account.passkey.password_needed"]
    assert driver.switch_to.active_element == field and field.get_attribute("autocomplete") == "current-password"
    assert driver.execute_cdp_cmd("WebAuthn.getCredentials", {"authenticatorId": authenticator})["credentials"] == []
    axe(driver, f"passkey-password-{size}")
    screenshot(driver, f"passkey-password-{size}")

    field.send_keys("wrong horse")
    driver.find_element(By.ID, "account-passkey-confirm").click()
    wait(driver, lambda d: visible(d, "#account-bar-problem") and text(d, "#account-bar-problem") == CATALOG["account.passkey.password_wrong"],
         message="the wrong password said")
    assert field.get_attribute("aria-invalid") == "true" and field.get_attribute("value") == ""
    assert driver.execute_cdp_cmd("WebAuthn.getCredentials", {"authenticatorId": authenticator})["credentials"] == []
    screenshot(driver, f"passkey-password-wrong-{size}")

    field.send_keys(PASSWORD)
    driver.find_element(By.ID, "account-passkey-confirm").click()
    wait(driver, lambda d: text(d, "#account-bar-status") == CATALOG["account.passkey.added"], message="the passkey added")
    assert not driver.find_elements(By.ID, "account-passkey-form")
    assert len(driver.execute_cdp_cmd("WebAuthn.getCredentials", {"authenticatorId": authenticator})["credentials"]) == 1

    server = site["server"]
    status, _, raw = server.request("GET", "/api/audit?limit=50", server.admin_token)
    assert status == 200, raw
    rows = [(row["action"], row["detail"]) for row in json.loads(raw)["entries"]]
    assert ("sign_in_failed", "password, before adding a passkey") in rows and ("passkey_added", "passkey This device") in rows, rows
    assert "horse" not in raw.decode()


@pytest.mark.parametrize("size", ["phone", "laptop", "projector"])
def test_an_administrator_sees_a_teachers_passkeys_and_removes_the_lost_one(site, browsers, size):
    """The teacher's laptop registers a passkey; a second one (a phone's) is put in the database from outside.
    The administrators' screen lists both by name and date, and removes the laptop's after asking: it signs
    nobody in any more, the phone's stays, and the audit trail says who removed it."""
    sizes = {"phone": PHONE, "laptop": TEACHER, "projector": PROJECTOR}
    teacher = browsers(**TEACHER)
    teacher.get(site["origin"] + "/")
    virtual_authenticator(teacher)
    registered = in_page(teacher, f"""
        const response = await fetch('/api/session', {{ method: 'POST', headers: {{ 'Content-Type': 'application/json' }},
          body: JSON.stringify({{ login: 'ana', password: '{PASSWORD}' }}) }});
        return await passkeys.registerPasskey('School laptop', (await response.json()).csrf);""")
    assert "value" in registered, registered
    laptop = registered["value"]
    with sqlite3.connect(next(site["server"].data.glob("*.sqlite"))) as connection:
        connection.execute("INSERT INTO passkeys (credential_id, account_id, public_key, algorithm, sign_count, name, created_at, last_used_at) "
                           "VALUES ('cGhvbmU', ?, x'a501', -7, 4, 'Phone', 1700000000000, 1700000600000)", (site["account"]["id"],))

    admin = browsers(**sizes[size])
    admin.get(f"{site['origin']}/admin#token={site['server'].admin_token}")
    wait(admin, lambda d: d.execute_script("return window.storycircle?.admin?.ready === true"), message="the administrators' screen")
    item = wait(admin, lambda d: next((node for node in d.find_elements(By.CSS_SELECTOR, "#account-list .admin-item")
                                       if "Login: ana " in plain(node.find_element(By.CSS_SELECTOR, ".facts").text)), None), message="Ana listed")
    toggle = item.find_element(By.CSS_SELECTOR, '[data-action="passkeys"]')
    assert toggle.get_attribute("aria-expanded") == "false"
    toggle.click()
    wait(admin, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".passkey-list li")) == 2, message="both passkeys listed")
    assert admin.find_element(By.CSS_SELECTOR, '[data-action="passkeys"]').get_attribute("aria-expanded") == "true"
    names = [plain(node.text) for node in admin.find_elements(By.CSS_SELECTOR, ".passkey-list .passkey-name")]
    assert sorted(names) == ["Phone", "School laptop"], names
    phone = admin.find_element(By.CSS_SELECTOR, '.passkey-list li[data-passkey="cGhvbmU"] .facts').text
    assert "2023" in phone and plain(phone).startswith("Added on"), phone
    assert "never used" not in phone
    assert "a501" not in admin.page_source.lower(), "never a key"
    axe(admin, f"admin-passkeys-{size}")
    screenshot(admin, f"admin-passkeys-{size}")

    admin.find_element(By.CSS_SELECTOR, f'.passkey-list li[data-passkey="{laptop["id"]}"] [data-action="remove-passkey"]').click()
    wait(admin, lambda d: visible(d, "#admin-confirm"), message="asked first")
    assert text(admin, "#admin-confirm-title") == "Remove the passkey School laptop of Ana?"
    axe(admin, f"admin-passkeys-confirm-{size}")
    screenshot(admin, f"admin-passkeys-confirm-{size}")
    admin.find_element(By.ID, "admin-confirm-yes").click()
    wait(admin, lambda d: [plain(node.text) for node in d.find_elements(By.CSS_SELECTOR, ".passkey-list .passkey-name")] == ["Phone"],
         message="the laptop's passkey removed")
    assert admin.switch_to.active_element.get_attribute("data-action") == "remove-passkey", "the focus stays in the list"
    screenshot(admin, f"admin-passkeys-removed-{size}")

    # The removed passkey signs nobody in; the audit trail names the admin token as who removed it.
    refused = in_page(teacher, """
        const session = await (await fetch('/api/session')).json();
        await fetch('/api/session', { method: 'DELETE', headers: { 'X-CSRF-Token': session.csrf } });
        return await passkeys.signInWithPasskey();""")
    assert refused == {"error": "sign_in_failed"}, refused
    server = site["server"]
    status, _, raw = server.request("GET", "/api/audit?limit=50", server.admin_token)
    removed = [row for row in json.loads(raw)["entries"] if row["action"] == "passkey_removed"]
    assert len(removed) == 1 and removed[0]["detail"] == "passkey School laptop", removed
    assert removed[0]["actor"]["kind"] == "admin_token" and removed[0]["target"] == f"account:{site['account']['id']}", removed


def test_passkey_sign_ins_that_fail_are_throttled_per_address(site):
    """Made-up answers cost the address its sign-in allowance as wrong passwords do (20 tries, then 429 with
    Retry-After), so a flood can neither guess nor fill the audit trail; the password's own sign-in from
    the same address is limited as well, and another address's is not."""
    def made(number):
        credential_id = b64url(bytes([number]) * 16)
        return {"credential": {"id": credential_id, "rawId": credential_id, "type": "public-key", "response": {
            "clientDataJSON": b64url(b'{"type":"webauthn.get","challenge":"AAAA","origin":"x"}'),
            "authenticatorData": b64url(b"\x00" * 37), "signature": b64url(b"\x00" * 8)}}}

    def until_limited(numbers):
        answers = []
        for number in numbers:
            status, answer = api(site, "POST", "/api/session/passkey", made(number))
            answers.append((status, answer["error"]["code"]))
            if status == 429:
                break
        return answers

    # One credential: its own allowance (an account's, 10 tries) ends first.
    assert until_limited([3] * 30) == [(401, "sign_in_failed")] * 10 + [(429, "rate_limited")]
    # Other credentials each time: the address's allowance (20) ends after 10 more.
    assert until_limited(range(4, 60)) == [(401, "sign_in_failed")] * 10 + [(429, "rate_limited")]
    status, answer = api(site, "POST", "/api/session", {"login": "ana", "password": PASSWORD})
    assert status == 429, answer


def test_a_server_reached_by_its_address_offers_no_passkeys(make_server):
    server = make_server()
    status, _, raw = server.request("POST", "/api/session/passkey/options", body={})
    assert status == 404 and "name" in json.loads(raw)["error"]["message"]
