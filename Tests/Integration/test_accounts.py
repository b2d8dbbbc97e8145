"""Accounts and schools over real sockets (docs/protocol.md, "Accounts"), with an independent client: made
by the API and the CLI, every bad input refused with its code and nothing changed by a refused request, two
administrators changing one account, the last district administrator kept, and a reset's one-time setup
link that sets a password once; the database keeps only the hashes of passwords and setup codes."""
import hashlib
import json
import re
import sqlite3
import subprocess

from conftest import BIN, ROOT

PASSWORD = "correct horse battery"


def api(server, method, path, body=None, token=None, raw=None):
    status, headers, data = server.request(method, path, server.admin_token if token is None else token, body, raw=raw)
    return status, (json.loads(data) if data and headers.get("content-type", "").startswith("application/json") else data)


def cli(server, *args, stdin=None):
    return subprocess.run([BIN, *args, "--server", server.http, "--admin-token", server.admin_token],
                          capture_output=True, text=True, cwd=ROOT, timeout=60, input=stdin)


def make_school(server, name):
    status, body = api(server, "POST", "/api/schools", {"name": name})
    assert status == 201, body
    return body


def make_account(server, login, school, role="teacher", **extra):
    status, body = api(server, "POST", "/api/accounts", {"login": login, "displayName": login.title(), "role": role, "schoolID": school, **extra})
    assert status == 201, body
    return body


def database(server):
    return sqlite3.connect(f"file:{server.data / 'storycircle.sqlite'}?mode=ro", uri=True)


def code_of(link):
    assert "/account-setup#code=" in link, link
    return link.split("#code=", 1)[1]


def test_schools_and_accounts_are_made_read_and_listed_and_no_answer_carries_a_hash(server):
    north = make_school(server, "North Primary")
    south = make_school(server, "South Primary")
    assert north["id"].startswith("sch_") and north["name"] == "North Primary" and north["version"] == 1
    status, body = api(server, "GET", "/api/schools")
    assert status == 200 and [s["name"] for s in body["schools"]] == ["North Primary", "South Primary"]

    ana = make_account(server, " Ana.Lopez@North.example ", north["id"], password=PASSWORD)
    assert ana["login"] == "ana.lopez@north.example"
    assert ana["role"] == "teacher" and ana["schoolID"] == north["id"] and ana["hasPassword"] is True
    assert ana["disabled"] is False and ana["version"] == 1 and "setupLink" not in ana
    ben = make_account(server, "ben", south["id"], role="school_admin")
    assert ben["hasPassword"] is False and code_of(ben["setupLink"]), "no password: a setup link instead"
    dee = make_account(server, "dee", None, role="district_admin", password=PASSWORD)
    assert dee["schoolID"] is None

    status, one = api(server, "GET", f"/api/accounts/{ana['id']}")
    assert status == 200 and one == ana
    status, listed = api(server, "GET", "/api/accounts")
    assert [a["login"] for a in listed["accounts"]] == ["ana.lopez@north.example", "ben", "dee"]
    status, listed = api(server, "GET", f"/api/accounts?school={north['id']}")
    assert [a["login"] for a in listed["accounts"]] == ["ana.lopez@north.example"]
    status, body = api(server, "GET", "/api/accounts?school=sch_nowhere")
    assert status == 404 and body["error"]["code"] == "school_not_found"
    status, body = api(server, "GET", "/api/accounts/acc_nobody")
    assert status == 404 and body["error"]["code"] == "account_not_found"

    # Nothing the API says holds a password or its hash; the database holds Argon2id at OWASP's cost.
    for path in ["/api/accounts", f"/api/accounts/{ana['id']}"]:
        _, raw = api(server, "GET", path)
        text = json.dumps(raw)
        assert "argon2" not in text and PASSWORD not in text and "passwordHash" not in text
    with database(server) as db:
        (stored,) = db.execute("SELECT password_hash FROM accounts WHERE login = 'ana.lopez@north.example'").fetchone()
    assert stored.startswith("$argon2id$v=19$m=19456,t=2,p=1$") and PASSWORD not in stored


def test_bad_input_is_refused_with_its_code_and_changes_nothing(server):
    north = make_school(server, "North Primary")
    make_account(server, "ana", north["id"], password=PASSWORD)

    def state():
        return api(server, "GET", "/api/accounts")[1], api(server, "GET", "/api/schools")[1]

    before = state()
    refusals = [
        ({"login": "ana lopez", "displayName": "Ana", "role": "teacher", "schoolID": north["id"]}, 400, "invalid_account", ["login_invalid"]),
        ({"login": "bo", "displayName": "x" * 81, "role": "teacher", "schoolID": north["id"]}, 400, "invalid_account", ["name_too_long"]),
        ({"login": "bo", "displayName": "  ", "role": "boss", "schoolID": north["id"]}, 400, "invalid_account", ["name_empty", "role_unknown"]),
        ({"login": "bo", "displayName": "Bo", "role": "teacher"}, 400, "invalid_account", ["school_required"]),
        ({"login": "bo", "displayName": "Bo", "role": "teacher", "schoolID": north["id"], "password": "too short"}, 400, "invalid_account", ["password_too_short"]),
        ({"login": "bo", "displayName": "Bo", "role": "teacher", "schoolID": north["id"], "password": "p" * 129}, 400, "invalid_account", ["password_too_long"]),
        ({"login": "bo", "displayName": "Bo", "role": "teacher", "schoolID": "sch_nowhere", "password": PASSWORD}, 404, "school_not_found", None),
        ({"login": "ANA", "displayName": "Ana again", "role": "teacher", "schoolID": north["id"], "password": PASSWORD}, 409, "login_taken", None),
        ({"login": 7, "displayName": "Bo", "role": "teacher", "schoolID": north["id"]}, 400, "invalid_message", None),
    ]
    for body, status, code, problems in refusals:
        got, answer = api(server, "POST", "/api/accounts", body)
        assert (got, answer["error"]["code"]) == (status, code), (body, answer)
        assert answer["error"]["message"], "every refusal says why in words"
        if problems:
            assert [p["code"] for p in answer["error"]["problems"]] == problems
    for body, status, code in [({"name": "north  PRIMARY"}, 409, "school_name_taken"), ({"name": ""}, 400, "invalid_account"), ({}, 400, "invalid_message")]:
        got, answer = api(server, "POST", "/api/schools", body)
        assert (got, answer["error"]["code"]) == (status, code), (body, answer)
    got, answer = api(server, "POST", "/api/accounts", raw=b"{not json")
    assert got == 400 and answer["error"]["code"] == "invalid_json"
    got, answer = api(server, "POST", "/api/accounts", raw=json.dumps({"login": "bo", "displayName": "B" * 5000}).encode())
    assert got == 413 and answer["error"]["code"] == "payload_too_large"

    # Without the admin token: refused before anything is read; a room's teacher token is no better.
    room = server.create_room()
    for token in ["", "not-the-token", room["teacherToken"]]:
        for method, path, body in [("GET", "/api/accounts", None), ("POST", "/api/accounts", {"login": "eve"}), ("GET", "/api/schools", None),
                                   ("POST", "/api/schools", {"name": "Evil"}), ("POST", "/api/accounts/acc_x/reset", None)]:
            got, answer = api(server, method, path, body, token=token)
            assert got in (401, 403) and answer["error"]["code"] in ("unauthorized", "wrong_role"), (method, path, token[:6], answer)
    assert state() == before, "no refused request changed anything"


def test_two_administrators_changing_one_account_and_the_last_district_administrator(server):
    north = make_school(server, "North Primary")
    south = make_school(server, "South Primary")
    ana = make_account(server, "ana", north["id"])
    status, moved = api(server, "PATCH", f"/api/accounts/{ana['id']}", {"version": 1, "displayName": "Ana L.", "schoolID": south["id"], "role": "school_admin"})
    assert status == 200 and (moved["displayName"], moved["schoolID"], moved["role"], moved["version"]) == ("Ana L.", south["id"], "school_admin", 2)
    # The second administrator saved on version 1 too: refused with what is stored now.
    status, body = api(server, "PATCH", f"/api/accounts/{ana['id']}", {"version": 1, "displayName": "Stale"})
    assert status == 409 and body["error"]["code"] == "conflict" and body["error"]["current"] == moved
    for change, code in [({"version": 2, "role": "teacher", "schoolID": None}, "invalid_account"), ({"version": 2, "schoolID": "sch_nowhere"}, "school_not_found"),
                         ({"version": 2, "disabled": "yes"}, "invalid_message"), ({"version": 2, "password": PASSWORD}, "invalid_message"),
                         ({"displayName": "No version"}, "invalid_message"), ({"version": 2, "displayName": ""}, "invalid_account")]:
        status, body = api(server, "PATCH", f"/api/accounts/{ana['id']}", change)
        assert status in (400, 404) and body["error"]["code"] == code, (change, body)
    assert api(server, "GET", f"/api/accounts/{ana['id']}")[1] == moved

    dee = make_account(server, "dee", None, role="district_admin")
    status, body = api(server, "PATCH", f"/api/accounts/{dee['id']}", {"version": 1, "disabled": True})
    assert status == 409 and body["error"]["code"] == "last_district_admin"
    eve = make_account(server, "eve", None, role="district_admin")
    status, body = api(server, "PATCH", f"/api/accounts/{dee['id']}", {"version": 1, "disabled": True})
    assert status == 200 and body["disabled"] is True
    status, body = api(server, "PATCH", f"/api/accounts/{eve['id']}", {"version": 1, "role": "teacher", "schoolID": north["id"]})
    assert status == 409 and body["error"]["code"] == "last_district_admin"


def test_a_reset_gives_a_one_time_link_that_sets_a_password_once(server):
    north = make_school(server, "North Primary")
    ana = make_account(server, "ana", north["id"], password=PASSWORD)
    status, body = api(server, "POST", f"/api/accounts/{ana['id']}/reset")
    # On the server's public address (what the person opens), the code in the fragment.
    assert status == 200 and re.match(r"^https?://[^/]+:%d/account-setup#code=[A-Za-z0-9_-]{43}$" % server.port, body["setupLink"]), body
    code = code_of(body["setupLink"])
    assert api(server, "GET", f"/api/accounts/{ana['id']}")[1]["hasPassword"] is False, "the old password stops working"
    with database(server) as db:
        stored = db.execute("SELECT code_hash FROM account_setup_codes").fetchall()
    assert stored == [(hashlib.sha256(code.encode()).hexdigest(),)], "only the code's hash is kept"

    # The setup route needs no token: the code is its authority. A bad password is refused and the link stays.
    status, body = api(server, "POST", "/api/accounts/setup", {"code": code, "password": "short"}, token="")
    assert status == 400 and body["error"]["problems"][0]["code"] == "password_too_short"
    status, body = api(server, "POST", "/api/accounts/setup", {"code": ("y" if code[0] == "x" else "x") + code[1:], "password": "another good password"}, token="")
    assert status == 404 and body["error"]["code"] == "setup_link_invalid"
    status, body = api(server, "POST", "/api/accounts/setup", {"code": code, "password": "another good password"}, token="")
    assert status == 200 and body["account"]["login"] == "ana" and body["account"]["hasPassword"] is True
    status, body = api(server, "POST", "/api/accounts/setup", {"code": code, "password": "and a third password"}, token="")
    assert status == 404 and body["error"]["code"] == "setup_link_invalid", "a link works once"
    with database(server) as db:
        assert db.execute("SELECT count(*) FROM account_setup_codes").fetchone() == (0,)

    # A newer reset replaces the link; a disabled account gets none.
    first = code_of(api(server, "POST", f"/api/accounts/{ana['id']}/reset")[1]["setupLink"])
    second = code_of(api(server, "POST", f"/api/accounts/{ana['id']}/reset")[1]["setupLink"])
    assert api(server, "POST", "/api/accounts/setup", {"code": first, "password": PASSWORD}, token="")[0] == 404
    version = api(server, "GET", f"/api/accounts/{ana['id']}")[1]["version"]
    assert api(server, "PATCH", f"/api/accounts/{ana['id']}", {"version": version, "disabled": True})[0] == 200
    assert api(server, "POST", "/api/accounts/setup", {"code": second, "password": PASSWORD}, token="")[0] == 404
    status, body = api(server, "POST", f"/api/accounts/{ana['id']}/reset")
    assert status == 400 and "disabled" in body["error"]["message"]
    status, body = api(server, "POST", "/api/accounts/acc_nobody/reset")
    assert status == 404 and body["error"]["code"] == "account_not_found"


def test_the_cli_adds_lists_disables_enables_and_resets_accounts_and_schools(server):
    added = cli(server, "school", "add", "North Primary")
    assert added.returncode == 0 and added.stdout.startswith("School North Primary added: sch_"), added.stderr
    assert cli(server, "school", "add", "north primary").returncode == 1
    listed = cli(server, "school", "list")
    assert listed.returncode == 0 and "North Primary" in listed.stdout

    added = cli(server, "account", "add", "ana", "--name", "Ana López", "--school", "north primary", "--password-stdin", stdin=PASSWORD + "\n")
    assert added.returncode == 0 and added.stdout.startswith("Account ana added (teacher): acc_"), added.stderr
    assert "http" not in added.stdout, "a password was given: no link"
    status, listed = api(server, "GET", "/api/accounts")
    assert listed["accounts"][0]["hasPassword"] is True and listed["accounts"][0]["displayName"] == "Ana López"
    added = cli(server, "account", "add", "ben", "--role", "school_admin", "--school", "North Primary")
    assert added.returncode == 0 and "/account-setup#code=" in added.stdout
    added = cli(server, "account", "add", "dee", "--role", "district_admin", "--json")
    assert added.returncode == 0 and json.loads(added.stdout)["role"] == "district_admin"

    table = cli(server, "account", "list")
    assert table.returncode == 0
    rows = [line.split() for line in table.stdout.splitlines()]
    assert rows[0][:4] == ["LOGIN", "ROLE", "SCHOOL", "STATE"] and [row[0] for row in rows[1:]] == ["ana", "ben", "dee"]
    assert json.loads(cli(server, "account", "list", "--school", "North Primary", "--json").stdout)["accounts"][1]["login"] == "ben"

    disabled = cli(server, "account", "disable", "ANA")
    assert disabled.returncode == 0 and "disabled" in disabled.stdout
    assert api(server, "GET", "/api/accounts")[1]["accounts"][0]["disabled"] is True
    assert cli(server, "account", "enable", "ana").returncode == 0
    assert api(server, "GET", "/api/accounts")[1]["accounts"][0]["disabled"] is False
    reset = cli(server, "account", "reset", "ana")
    assert reset.returncode == 0 and "/account-setup#code=" in reset.stdout

    # Bad usage: exit 64 with the reason; a refusal of the server: exit 1 with its words; nothing stored.
    for args, words in [(["account", "add", "eve", "--role", "boss", "--school", "North Primary"], "use teacher, school_admin or district_admin"),
                        (["account", "add", "eve"], "pass --school"), (["account", "add"], "Missing")]:
        bad = cli(server, *args)
        assert bad.returncode == 64 and bad.stderr.startswith("Error: ") and words in bad.stderr, (args, bad.stderr)
    for args, stdin, words in [(["account", "add", "eve", "--school", "Nowhere"], None, "no school called Nowhere"),
                               (["account", "add", "Ana", "--school", "North Primary"], None, "[login_taken]"),
                               (["account", "add", "eve", "--school", "North Primary", "--password-stdin"], "short\n", "[invalid_account]"),
                               (["account", "disable", "nobody"], None, "no account nobody")]:
        bad = cli(server, *args, stdin=stdin)
        assert bad.returncode == 1 and bad.stderr.startswith("Error: ") and words in bad.stderr, (args, bad.stderr)
    assert [a["login"] for a in api(server, "GET", "/api/accounts")[1]["accounts"]] == ["ana", "ben", "dee"]


def audit_rows(server):
    status, body = api(server, "GET", "/api/audit")
    assert status == 200, body
    return [(row["action"], row["target"], row.get("schoolId"), row["actor"]["kind"]) for row in reversed(body["entries"])]


def test_every_administration_change_leaves_an_audit_row_naming_its_account_or_school(server):
    north = make_school(server, "North Primary")
    south = make_school(server, "South Primary")
    ana = make_account(server, "ana", north["id"], password=PASSWORD)
    ben = make_account(server, "ben", north["id"])
    version = ana["version"]
    for change in [{"disabled": True}, {"disabled": False}, {"role": "school_admin"}, {"displayName": "Ana L."}, {"schoolID": south["id"]}]:
        status, body = api(server, "PATCH", f"/api/accounts/{ana['id']}", {"version": version, **change})
        assert status == 200, body
        version = body["version"]
    code = code_of(api(server, "POST", f"/api/accounts/{ana['id']}/reset")[1]["setupLink"])
    assert api(server, "POST", "/api/accounts/setup", {"code": code, "password": "another good password"}, token="")[0] == 200
    # Refused requests change nothing and write nothing.
    assert api(server, "POST", "/api/accounts", {"login": "ana", "displayName": "Ana", "role": "teacher", "schoolID": north["id"]})[0] == 409
    assert api(server, "PATCH", f"/api/accounts/{ana['id']}", {"version": 1, "disabled": True})[0] == 409

    a, b = f"account:{ana['id']}", f"account:{ben['id']}"
    assert audit_rows(server) == [
        ("school_created", f"school:{north['id']}", north["id"], "admin_token"),
        ("school_created", f"school:{south['id']}", south["id"], "admin_token"),
        ("account_created", a, north["id"], "admin_token"),
        ("account_created", b, north["id"], "admin_token"),
        ("account_disabled", a, north["id"], "admin_token"),
        ("account_enabled", a, north["id"], "admin_token"),
        ("role_changed", a, north["id"], "admin_token"),
        ("account_changed", a, north["id"], "admin_token"),
        ("account_changed", a, south["id"], "admin_token"),
        ("password_reset", a, south["id"], "admin_token"),
        ("password_set", a, south["id"], "account"),
    ]


def test_a_password_typed_with_a_windows_line_ending_is_stored_without_it(server):
    import ctypes
    sodium = ctypes.CDLL("libsodium.so.23")
    assert sodium.sodium_init() >= 0
    assert cli(server, "school", "add", "North Primary").returncode == 0
    added = cli(server, "account", "add", "ana", "--school", "North Primary", "--password-stdin", stdin=PASSWORD + "\r\n")
    assert added.returncode == 0, added.stderr
    with database(server) as db:
        (stored,) = db.execute("SELECT password_hash FROM accounts WHERE login = 'ana'").fetchone()

    def verifies(password):
        raw = password.encode()
        return sodium.crypto_pwhash_str_verify(ctypes.c_char_p(stored.encode()), ctypes.c_char_p(raw), ctypes.c_ulonglong(len(raw))) == 0

    assert verifies(PASSWORD) and not verifies(PASSWORD + "\r")
