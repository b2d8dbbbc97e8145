"""Classes from a OneRoster 1.2 CSV export, over real sockets against the real binary: the CLI imports the
sample bundle (fixtures/oneroster/sample, the specification's layout with roles.csv), a second import of
the same bundle changes nothing, a changed export renames, moves and withdraws in place, damaged copies
(a missing column, an unknown enrolment role, a duplicate sourcedId) are refused at their rows with
nothing imported, 5,000 children import in one go, a ZIP export is read (libzip) while a ZIP bomb, an
oversized or a damaged one is refused, and only the district's administrators import."""
import csv
import json
import os
import pathlib
import shutil
import subprocess
import zipfile

from conftest import BIN, ROOT
from test_sessions import PASSWORD, Browser, make_account

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures" / "oneroster"


def cli(server, *args):
    return subprocess.run([BIN, *args, "--server", server.http, "--admin-token", server.admin_token],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)


def api(server, method, path, body=None):
    status, _, raw = server.request(method, path, server.admin_token, body)
    return status, json.loads(raw) if raw else None


def classes(server):
    """Every class by name, with its children's names in order."""
    status, listed = api(server, "GET", "/api/classes")
    assert status == 200, listed
    found = {}
    for entry in listed["classes"]:
        status, one = api(server, "GET", f"/api/classes/{entry['id']}")
        assert status == 200, one
        found[one["name"]] = [member["name"] for member in one["children"]]
    return found


def damaged(tmp_path, name, change):
    """A copy of the sample with `change(rows)` applied to one file's rows (the header is rows[0])."""
    folder = tmp_path / name
    shutil.copytree(FIXTURES / "sample", folder)
    target = folder / change.file
    with target.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    change(rows)
    with target.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, lineterminator="\r\n").writerows(rows)
    return folder


def test_the_cli_imports_the_sample_and_a_changed_export_updates_it_in_place(server):
    result = cli(server, "roster", "import", str(FIXTURES / "sample"), "--check")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("The roster is fine; importing it would do this: 2 schools made, 3 teachers made, 3 classes made, 10 children added")
    assert classes(server) == {}, "a check imports nothing"

    result = cli(server, "roster", "import", str(FIXTURES / "sample"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == ("Imported the roster: 2 schools made, 3 teachers made, 3 classes made, 10 children added, "
                                             "1 other teachers of a class not kept (a class has one owner).")
    assert classes(server) == {
        "1B Reading": ["Maya R.", "Leo B.", "Zoë K.", "Amir H."],
        "2A Stories": ["Maya Rivera", "Sam O.", "Maya Rossi"],
        "Kindergarten Circle": ["Lena B.", "Yuki T.", "Noah D."],
    }
    status, accounts = api(server, "GET", "/api/accounts")
    teachers = {a["login"]: a for a in accounts["accounts"]}
    assert set(teachers) == {"ana.lima", "bo.chen", "chi.okafor"}
    assert teachers["chi.okafor"]["displayName"] == "Chi Okafor", "the preferred given name"
    assert not any(a["hasPassword"] for a in teachers.values()), "they set their own password from a setup link"
    status, listed = api(server, "GET", "/api/classes")
    first = {c["name"]: c for c in listed["classes"]}["1B Reading"]
    status, before = api(server, "GET", f"/api/classes/{first['id']}")

    again = cli(server, "roster", "import", str(FIXTURES / "sample"))
    assert again.returncode == 0 and "nothing to change" in again.stdout, again.stdout

    changed = cli(server, "roster", "import", str(FIXTURES / "changed"))
    assert changed.returncode == 0, changed.stderr
    assert "1 schools renamed" in changed.stdout and "1 classes changed" in changed.stdout
    assert "1 children added" in changed.stdout and "1 children taken out of their classes" in changed.stdout
    status, after = api(server, "GET", f"/api/classes/{first['id']}")
    assert after["name"] == "1B Readers" and after["version"] == before["version"] + 1
    assert [m["name"] for m in after["children"]] == ["Maya R.", "Zoë K.", "Amir H.", "Ida N."]
    assert after["children"][0] == before["children"][0], "Maya keeps her id and picture"
    status, schools = api(server, "GET", "/api/schools")
    assert sorted(s["name"] for s in schools["schools"]) == ["Brookside Elementary", "Hillside Primary"]

    status, audit = api(server, "GET", "/api/audit?action=roster_imported")
    assert status == 200 and len(audit["entries"]) == 3, audit
    assert "childrenAdded=1" in audit["entries"][0]["detail"]


class Change:
    def __init__(self, file, edit):
        self.file = file
        self.edit = edit

    def __call__(self, rows):
        self.edit(rows)


def test_damaged_copies_are_refused_at_their_rows_and_nothing_is_imported(server, tmp_path):
    def drop_given_name(rows):
        column = rows[0].index("givenName")
        for row in rows:
            del row[column]

    def unknown_role(rows):
        rows[3][rows[0].index("role")] = "learner"

    def duplicate(rows):
        rows[5][0] = rows[4][0]

    cases = [
        (Change("users.csv", drop_given_name), ["users.csv line 1, givenName: The file has no givenName column."]),
        (Change("enrollments.csv", unknown_role), ["enrollments.csv line 4, role: \"learner\" is not one of administrator, proctor, student, teacher."]),
        (Change("users.csv", duplicate), ["users.csv line 6, sourcedId: \"usr-a-it\" is also the sourcedId of line 5."]),
    ]
    for index, (change, expected) in enumerate(cases):
        folder = damaged(tmp_path, f"damaged{index}", change)
        result = cli(server, "roster", "import", str(folder))
        assert result.returncode == 1, result.stdout
        assert result.stderr.splitlines()[:len(expected)] == expected, result.stderr
        assert "[invalid_roster]" in result.stderr
    assert classes(server) == {}
    status, accounts = api(server, "GET", "/api/accounts")
    assert accounts["accounts"] == []

    missing = cli(server, "roster", "import", str(tmp_path / "nowhere"))
    assert missing.returncode == 1 and "is not a folder" in missing.stderr
    nozip = cli(server, "roster", "import", str(tmp_path / "export.zip"))
    assert nozip.returncode == 1 and "is not a file" in nozip.stderr, nozip.stderr


def test_a_zip_export_is_read_with_its_files_in_a_folder_and_a_zip_bomb_is_refused_unpacked(server, tmp_path):
    export = tmp_path / "oneroster-export.zip"
    with zipfile.ZipFile(export, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted((FIXTURES / "sample").glob("*.csv")):
            archive.write(path, f"riverside-export/{path.name}")
        archive.writestr("__MACOSX/riverside-export/._users.csv", b"\x00\x05\x16\x07 resource fork")
        archive.writestr("riverside-export/README.txt", "Exported by the SIS.")
    result = cli(server, "roster", "import", str(export))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Imported the roster: 2 schools made, 3 teachers made, 3 classes made, 10 children added"), result.stdout

    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("manifest.csv", "propertyName,value\r\n")
        archive.writestr("users.csv", b"0" * (12 * 1024 * 1024))
    refused = cli(server, "roster", "import", str(bomb))
    assert refused.returncode == 1 and "users.csv unpacks to far more than a text file would" in refused.stderr, refused.stderr
    large = tmp_path / "large.zip"
    with zipfile.ZipFile(large, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("manifest.csv", "propertyName,value\r\n")
        for number in range(3):
            archive.writestr(f"users{number}.csv", os.urandom(6 * 1024 * 1024))
    too_large = cli(server, "roster", "import", str(large))
    assert too_large.returncode == 1 and ("larger than 16 MB" in too_large.stderr), too_large.stderr
    damaged = tmp_path / "damaged.zip"
    damaged.write_bytes(export.read_bytes()[:200])
    unreadable = cli(server, "roster", "import", str(damaged))
    assert unreadable.returncode == 1 and "cannot be read: it is not a ZIP file StoryCircle can read" in unreadable.stderr, unreadable.stderr
    status, listed = api(server, "GET", "/api/classes")
    assert len(listed["classes"]) == 3, "only the good export was imported"


def test_five_thousand_children_import_in_one_go(server, tmp_path):
    folder = tmp_path / "district"
    shutil.copytree(FIXTURES / "sample", folder)
    with (folder / "users.csv").open(newline="", encoding="utf-8") as handle:
        header = next(csv.reader(handle))
    users, roles, classes_rows, enrollments = [], [], [], []
    blank = {name: "" for name in header}
    for number in range(100):
        teacher = f"usr-t-{number}"
        users.append({**blank, "sourcedId": teacher, "enabledUser": "true", "username": f"teacher{number}", "givenName": "Teacher", "familyName": f"N{number}"})
        roles.append([f"rol-t-{number}", "", "", teacher, "primary", "teacher", "", "", "org-hill", ""])
        classes_rows.append([f"cls-{number}", "", "", f"Class {number}", "01", "crs-read", "", "homeroom", "", "org-hill", "as-fall", "", "", ""])
        enrollments.append([f"enr-t-{number}", "", "", f"cls-{number}", "org-hill", teacher, "teacher", "true", "", ""])
    for number in range(5000):
        child = f"usr-c-{number}"
        users.append({**blank, "sourcedId": child, "enabledUser": "true", "username": f"child{number}", "givenName": f"Kid{number}", "familyName": "Doe"})
        roles.append([f"rol-c-{number}", "", "", child, "primary", "student", "", "", "org-hill", ""])
        enrollments.append([f"enr-c-{number}", "", "", f"cls-{number % 100}", "org-hill", child, "student", "false", "", ""])
    with (folder / "users.csv").open("a", newline="", encoding="utf-8") as handle:
        csv.DictWriter(handle, header, lineterminator="\r\n").writerows(users)
    for name, rows in [("roles.csv", roles), ("classes.csv", classes_rows), ("enrollments.csv", enrollments)]:
        with (folder / name).open("a", newline="", encoding="utf-8") as handle:
            csv.writer(handle, lineterminator="\r\n").writerows(rows)
    result = cli(server, "roster", "import", str(folder))
    assert result.returncode == 0, result.stderr
    assert "103 teachers made, 103 classes made, 5010 children added" in result.stdout, result.stdout
    status, listed = api(server, "GET", "/api/classes")
    assert sum(c["children"] for c in listed["classes"]) == 5010


def test_only_the_districts_administrators_import_a_roster(server):
    status, school = api(server, "POST", "/api/schools", {"name": "Hillside Primary"})
    assert status == 201, school
    make_account(server, "hill.admin", role="school_admin", school=school["id"])
    browser = Browser(server)
    assert browser.sign_in("hill.admin")[0] == 200
    files = {path.name: path.read_text(encoding="utf-8") for path in (FIXTURES / "sample").glob("*.csv")}
    # Even their own school alone (Brookside's rows taken out): an import's links are the district's.
    own = dict(files)
    own["orgs.csv"] = "".join(line for line in files["orgs.csv"].splitlines(True) if "org-brook" not in line)
    for name in ("users.csv", "roles.csv", "enrollments.csv", "classes.csv"):
        own[name] = "".join(line for line in files[name].splitlines(True)
                            if not any(key in line for key in ("org-brook", "okafor", "lena", "yuki", "noah")))
    for sent in (files, own):
        status, _, body = browser.request("POST", "/api/roster/import", {"files": sent, "check": True})
        assert status == 403 and body["error"]["code"] == "wrong_role", body
        status, _, body = browser.request("POST", "/api/roster/import", {"files": sent})
        assert status == 403 and body["error"]["code"] == "wrong_role", body
    status, accounts = api(server, "GET", f"/api/accounts?school={school['id']}")
    assert {a["login"] for a in accounts["accounts"]} == {"hill.admin"}, accounts
    status, listed = api(server, "GET", "/api/classes")
    assert listed["classes"] == [], listed

    teacher = Browser(server)
    make_account(server, "plain.teacher", school=school["id"])
    assert teacher.sign_in("plain.teacher")[0] == 200
    status, _, body = teacher.request("POST", "/api/roster/import", {"files": own})
    assert status == 403, body
    status, _, body = Browser(server).request("POST", "/api/roster/import", {"files": own})
    assert status == 401, body

    # The district's administrator imports it, for every school of the export.
    status, made = api(server, "POST", "/api/accounts", {
        "login": "district.admin", "displayName": "District", "role": "district_admin", "schoolID": None, "password": PASSWORD})
    assert status == 201, made
    district = Browser(server)
    assert district.sign_in("district.admin")[0] == 200
    status, _, body = district.request("POST", "/api/roster/import", {"files": own})
    assert status == 200 and body["counts"]["schoolsCreated"] == 0 and body["counts"]["classesCreated"] == 2, body
