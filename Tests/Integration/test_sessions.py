"""Signing in with a password and the session cookie, over real sockets against the real binary: the cookie's
attributes, sign-out and sign-out everywhere, CSRF refusals, one answer for every failed sign-in, the
throttle against 10,000 guesses from one address and from a hundred (X-Forwarded-For behind a trusted
proxy), a disabled account's session refused within a second, and the admin token still working for the
CLI. Argon2id is the real one (libsodium); accounts are made through the API with the admin token."""
import http.client
import json
import statistics
import time

from conftest import BIN, ROOT  # noqa: F401

PASSWORD = "correct horse battery"


class Browser:
    """A client that keeps the session cookie and CSRF token as a page would (one keep-alive connection)."""

    def __init__(self, server, address=None):
        self.server = server
        self.address = address
        self.cookie = None
        self.csrf = None
        self.connection = None

    def request(self, method, path, body=None, headers=None, cookie=True, csrf=True):
        sent = dict(headers or {})
        if self.address:
            sent["X-Forwarded-For"] = self.address
        if cookie and self.cookie:
            sent["Cookie"] = self.cookie
        if csrf and self.csrf and method not in ("GET", "HEAD"):
            sent["X-CSRF-Token"] = self.csrf
        data = json.dumps(body).encode() if body is not None else None
        if data is not None:
            sent["Content-Type"] = "application/json"
        for attempt in range(2):
            if self.connection is None:
                self.connection = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=15)
            try:
                self.connection.request(method, path, body=data, headers=sent)
                response = self.connection.getresponse()
                raw = response.read()
                headers = {name.lower(): value for name, value in response.getheaders()}
                if response.will_close:
                    self.connection.close()
                    self.connection = None
                return response.status, headers, json.loads(raw) if raw else None
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.connection.close()
                self.connection = None
                if attempt:
                    raise

    def sign_in(self, login, password=PASSWORD, headers=None):
        status, headers, body = self.request("POST", "/api/session", {"login": login, "password": password}, headers=headers, cookie=False)
        if status == 200:
            self.cookie = headers["set-cookie"].split(";")[0]
            self.csrf = body["csrf"]
        return status, headers, body


def admin(server, method, path, body=None):
    status, _, raw = server.request(method, path, server.admin_token, body)
    return status, json.loads(raw) if raw else None


def make_account(server, login, role="teacher", password=PASSWORD, school=None):
    if school is None:
        status, made = admin(server, "POST", "/api/schools", {"name": f"School of {login}"})
        assert status in (200, 201), made
        school = made["id"]
    status, account = admin(server, "POST", "/api/accounts", {
        "login": login, "displayName": login.title(), "role": role, "schoolID": school, "password": password,
    })
    assert status in (200, 201), account
    return account


def disable(server, account):
    status, current = admin(server, "GET", f"/api/accounts/{account['id']}")
    assert status == 200, current
    status, changed = admin(server, "PATCH", f"/api/accounts/{account['id']}", {"version": current["version"], "disabled": True})
    assert status == 200, changed


def test_signing_in_sets_a_strict_cookie_and_signing_out_ends_it(server):
    make_account(server, "ada")
    browser = Browser(server)
    status, headers, body = browser.sign_in("  ADA ")
    assert status == 200, body
    cookie = headers["set-cookie"]
    name, value = cookie.split(";")[0].split("=", 1)
    assert name == "storycircle_session" and len(value) == 43
    attributes = [part.strip() for part in cookie.split(";")[1:]]
    assert attributes == ["HttpOnly", "Secure", "SameSite=Strict", "Path=/"]
    assert "max-age" not in cookie.lower() and "expires" not in cookie.lower()
    assert headers["cache-control"] == "no-store"
    assert body["account"]["login"] == "ada" and body["account"]["role"] == "teacher"
    assert "passwordHash" not in body["account"] and PASSWORD not in json.dumps(body)
    # The store keeps only the digest: the cookie's value is nowhere in the database files.
    for path in server.data.glob("storycircle.sqlite*"):
        assert value.encode() not in path.read_bytes()
    assert value not in "".join(server.output)

    status, _, again = browser.request("GET", "/api/session")
    assert status == 200 and again["csrf"] == browser.csrf

    # Without the CSRF token, with a wrong one, or from another site's page: refused, nothing done.
    for headers, csrf in [
        ({}, False), ({"X-CSRF-Token": "wrong"}, False), ({"X-CSRF-Token": "w" * 43}, False), ({"Origin": "https://evil.example"}, True),
        ({"Sec-Fetch-Site": "cross-site"}, True), ({"Sec-Fetch-Site": "same-site"}, True),
    ]:
        status, _, refused = browser.request("DELETE", "/api/session", headers=headers, csrf=csrf)
        assert status == 403 and refused["error"]["code"] == "csrf_failed", refused
    assert browser.request("GET", "/api/session")[0] == 200

    status, headers, _ = browser.request("DELETE", "/api/session", headers={"Origin": server.http})
    assert status == 200 and "Max-Age=0" in headers["set-cookie"]
    assert browser.request("GET", "/api/session")[0] == 401


def test_signing_in_ends_the_session_the_browser_still_carries(server):
    make_account(server, "eli")
    make_account(server, "fox")
    browser = Browser(server)
    assert browser.sign_in("fox")[0] == 200
    planted = browser.cookie
    # The next sign-in in the same browser sends the cookie it still has.
    status, headers, _ = browser.request("POST", "/api/session", {"login": "eli", "password": PASSWORD})
    assert status == 200
    fresh = headers["set-cookie"].split(";")[0]
    assert fresh != planted
    browser.cookie = planted
    assert browser.request("GET", "/api/session")[0] == 401
    browser.cookie = fresh
    status, _, body = browser.request("GET", "/api/session")
    assert status == 200 and body["account"]["login"] == "eli"


def test_a_sign_in_from_another_sites_page_is_refused(server):
    make_account(server, "bo")
    status, headers, body = Browser(server).sign_in("bo", headers={"Origin": "https://evil.example"})
    assert status == 403 and body["error"]["code"] == "csrf_failed" and "set-cookie" not in headers


def test_every_failed_sign_in_gets_one_answer_in_the_same_time(make_server):
    server = make_server(config={"signInAccountBurst": 1000, "signInAddressBurst": 1000})
    make_account(server, "cy")
    disabled = make_account(server, "dee")
    disable(server, disabled)
    browser = Browser(server)
    answers = {}
    kinds = {"unknown": ("nobody", PASSWORD), "wrong": ("cy", "not it"), "disabled": ("dee", PASSWORD)}
    # Each round tries the three one after the other, in an order that changes from round to round, and is
    # compared within itself: a machine that slows down for a while slows a whole round, not one kind.
    ratios = {kind: [] for kind in kinds}
    for round_ in range(24):
        order = list(kinds)[round_ % 3:] + list(kinds)[:round_ % 3]
        if round_ % 2:
            order.reverse()
        took = {}
        for kind in order:
            login, password = kinds[kind]
            started = time.perf_counter()
            status, headers, body = browser.sign_in(login, password)
            took[kind] = time.perf_counter() - started
            assert status == 401 and "set-cookie" not in headers, body
            answers[kind] = body
        for kind in kinds:
            ratios[kind].append(took[kind] / took["wrong"])
    assert answers["unknown"] == answers["wrong"] == answers["disabled"]
    assert answers["wrong"]["error"]["code"] == "sign_in_failed"
    medians = {kind: statistics.median(values) for kind, values in ratios.items()}
    # Argon2id's work is done for each (tens of milliseconds), so none is told apart by its time; one that
    # skipped it would answer in a fraction of that (a ratio under 0.1).
    assert all(0.4 < medians[kind] < 2.5 for kind in medians), medians
    assert Browser(server).sign_in("cy")[0] == 200


def guesses(server, login, count, addresses):
    """`count` wrong passwords at `login`, the addresses in turn (one keep-alive connection, the address in
    X-Forwarded-For as a proxy would set it); the answers' statuses, counted."""
    browser = Browser(server)
    seen = {}
    for index in range(count):
        browser.address = addresses[index % len(addresses)]
        status, _, _ = browser.request("POST", "/api/session", {"login": login, "password": f"guess {index}"}, cookie=False)
        seen[status] = seen.get(status, 0) + 1
    return seen


def test_ten_thousand_guesses_from_one_address_and_from_a_hundred_get_nowhere(make_server):
    server = make_server(config={"trustForwardedFor": True})
    make_account(server, "eve")
    make_account(server, "fay")
    # Eve signed in at school before: her school's address keeps its own allowance.
    school = Browser(server, "192.0.2.10")
    assert school.sign_in("eve")[0] == 200

    started = time.monotonic()
    one = guesses(server, "eve", 10_000, ["198.51.100.7"])
    many = guesses(server, "fay", 10_000, [f"203.0.113.{n}" for n in range(100)])
    elapsed = time.monotonic() - started
    # Only the allowance (10) and what refilled meanwhile (one every 3 minutes) were even checked.
    allowed = 10 + int(elapsed / 180) + 1
    assert one.get(401, 0) <= allowed and one.get(429, 0) >= 10_000 - allowed, one
    assert many.get(401, 0) <= allowed and many.get(429, 0) >= 10_000 - allowed, many
    assert set(one) | set(many) <= {401, 429}

    # The right password from a new address is not even checked now ...
    status, headers, body = Browser(server, "192.0.2.99").sign_in("fay")
    assert status == 429 and body["error"]["code"] == "rate_limited"
    assert int(headers["retry-after"]) == body["error"]["retryAfter"] > 0
    # ... while Eve, at the address she signed in from before, is not locked out by the guessing.
    assert Browser(server, "192.0.2.10").sign_in("eve")[0] == 200


def test_a_locked_account_opens_again_once_the_guessing_stops(make_server):
    # The account's allowance refilled in a second instead of three minutes, so the test need not wait.
    server = make_server(config={"trustForwardedFor": True, "signInAccountRefillSeconds": 1})
    make_account(server, "gus")
    guesses(server, "gus", 200, [f"203.0.113.{n}" for n in range(20)])
    teacher = Browser(server, "192.0.2.50")
    status, headers, _ = teacher.sign_in("gus")
    assert status == 429
    deadline = time.monotonic() + int(headers["retry-after"]) + 5
    while status == 429 and time.monotonic() < deadline:
        time.sleep(0.2)  # polling with a deadline: the server's real clock refills the allowance
        status, _, _ = teacher.sign_in("gus")
    assert status == 200


def test_signing_out_everywhere_ends_every_session_of_the_account(server):
    make_account(server, "hal")
    laptop, phone = Browser(server), Browser(server)
    assert laptop.sign_in("hal")[0] == 200 and phone.sign_in("hal")[0] == 200
    status, _, body = laptop.request("POST", "/api/session/everywhere")
    assert status == 200 and body["ended"] == 2
    assert phone.request("GET", "/api/session")[0] == 401
    assert laptop.request("GET", "/api/session")[0] == 401


def test_a_disabled_accounts_session_is_refused_within_a_second(server):
    account = make_account(server, "ivy")
    browser = Browser(server)
    assert browser.sign_in("ivy")[0] == 200
    assert browser.request("GET", "/api/session")[0] == 200
    disable(server, account)
    disabled_at = time.monotonic()
    status = 200
    while status == 200 and time.monotonic() - disabled_at < 3:
        status = browser.request("GET", "/api/session")[0]
    assert status == 401
    assert time.monotonic() - disabled_at <= 1.5


def test_roles_and_the_admin_token(server):
    make_account(server, "jo", role="district_admin")
    make_account(server, "kim")
    district, teacher = Browser(server), Browser(server)
    assert district.sign_in("jo")[0] == 200 and teacher.sign_in("kim")[0] == 200
    # Rooms are children's data: a district administrator sees none, a teacher their own (none yet).
    status, _, body = district.request("GET", "/api/rooms")
    assert status == 403 and body["error"]["code"] == "wrong_role"
    status, _, body = teacher.request("GET", "/api/rooms")
    assert status == 200 and body["rooms"] == []
    # The CLI's admin token works as before, with no cookie and no CSRF token.
    status, _, _ = server.request("GET", "/api/rooms", server.admin_token)
    assert status == 200
    room = server.create_room()
    assert room["code"]
