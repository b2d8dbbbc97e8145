"""A school's retention rules over real sockets against the real binary (docs/privacy.md, "Per school"): a
school administrator reads and changes their own school's, never another school's (404, as an unknown
school); the district's admin token changes any from the CLI; a value out of its bounds is refused (the
CLI before sending: exit 64), changing nothing; and every change is an audit row with the old and new
rules, in the database too."""
import json
import sqlite3

from test_accounts import PASSWORD, api, audit_rows, cli, make_account, make_school
from test_sessions import Browser


def rows(server):
    with sqlite3.connect(f"file:{server.data / 'storycircle.sqlite'}?mode=ro", uri=True) as database:
        return database.execute("SELECT school_id, kind, days FROM school_retention ORDER BY school_id, kind").fetchall()


def test_a_school_administrator_changes_their_schools_rules_and_only_theirs(server):
    north = make_school(server, "North Primary")
    south = make_school(server, "South Primary")
    make_account(server, "nora", north["id"], role="school_admin", password=PASSWORD)
    browser = Browser(server)
    status, _, body = browser.sign_in("nora")
    assert status == 200, body

    status, _, shown = browser.request("GET", f"/api/schools/{north['id']}/retention")
    assert status == 200, shown
    assert shown["retention"]["rooms"] is None and shown["defaults"]["rooms"] == 30
    assert shown["bounds"]["audit"] == {"min": 365, "max": 3650, "keep": False}

    status, _, changed = browser.request("PUT", f"/api/schools/{north['id']}/retention", {"rooms": 14, "audit": 730})
    assert status == 200, changed
    assert changed["retention"]["rooms"] == 14 and changed["retention"]["classes"] is None
    assert rows(server) == [(north["id"], "audit", 730), (north["id"], "rooms", 14)]

    # Another school: as unknown as a school that is not there, and nothing changes.
    for method, body in (("GET", None), ("PUT", {"rooms": 1})):
        status, _, refused = browser.request(method, f"/api/schools/{south['id']}/retention", body)
        assert status == 404 and refused["error"]["code"] == "school_not_found", refused
    status, _, refused = browser.request("PUT", f"/api/schools/{north['id']}/retention", {"audit": 7})
    assert status == 400 and refused["error"]["code"] == "invalid_settings" and refused["error"]["params"]["min"] == "365", refused
    assert rows(server) == [(north["id"], "audit", 730), (north["id"], "rooms", 14)]

    changes = [row for row in audit_rows(server) if row[0] == "retention_changed"]
    assert changes == [("retention_changed", f"school:{north['id']}", north["id"], "account")]
    status, trail = api(server, "GET", "/api/audit?action=retention_changed")
    assert status == 200 and trail["entries"][0]["detail"] == "defaults → rooms=14 audit=730", trail


def test_the_cli_shows_and_changes_a_schools_rules_and_refuses_a_value_out_of_bounds(server):
    make_school(server, "North Primary")
    shown = cli(server, "school", "retention", "North Primary")
    assert shown.returncode == 0, shown.stderr
    assert "rooms" in shown.stdout and "30 days" in shown.stdout and "server default" in shown.stdout

    changed = cli(server, "school", "retention", "north primary", "--rooms", "14", "--classes", "0", "--json")
    assert changed.returncode == 0, changed.stderr
    answer = json.loads(changed.stdout)
    assert answer["retention"]["rooms"] == 14 and answer["retention"]["classes"] == 0 and answer["retention"]["audit"] is None

    # Rules not given keep their value; 'default' gives one back.
    again = cli(server, "school", "retention", "North Primary", "--rooms", "default", "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["retention"] == {**answer["retention"], "rooms": None}

    refused = cli(server, "school", "retention", "North Primary", "--audit", "30")
    assert refused.returncode == 64 and refused.stderr.startswith("Error: "), refused.stderr
    assert rows(server)[0][1:] == ("classes", 0) and len(rows(server)) == 1
