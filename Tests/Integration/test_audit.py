"""The audit trail over real sockets (docs/protocol.md, "Audit trail"; docs/operations.md, "Audit trail"):
a read of a room's results, a class's report and CSVs, an erasure and a class's deletion each leave a row,
read back as JSON and CSV with the admin token; no row, no page of the trail and no byte of the database's
audit table holds a token; and a read whose row cannot be stored (the table refuses inserts, set up from
outside the server with sqlite3) is refused with 503 and answers nothing of the children; a child's export,
erasure and a room deleted early are recorded by ids, never by the child's name."""
import asyncio
import csv
import io
import json
import sqlite3

from conftest import SHORT_STORY, join

STORY = json.loads(SHORT_STORY.read_text())


def api(server, method, path, token=None, body=None):
    status, headers, raw = server.request(method, path, token or server.admin_token, body)
    if raw and headers.get("content-type", "").startswith("application/json"):
        return status, headers, json.loads(raw)
    return status, headers, raw


def trail(server, **query):
    path = "/api/audit" + ("?" + "&".join(f"{key}={value}" for key, value in query.items()) if query else "")
    status, headers, body = api(server, "GET", path)
    assert status == 200, body
    return body


def database(server):
    return next(server.data.glob("*.sqlite"))


def test_a_results_read_leaves_a_row_that_never_names_a_token(server):
    room = server.create_room()
    code, teacher = room["code"], room["teacherToken"]
    status, _, results = api(server, "GET", f"/api/rooms/{code}/results", teacher)
    assert status == 200 and results["code"] == code
    status, _, raw = api(server, "GET", f"/api/rooms/{code}/results?format=csv")
    assert status == 200 and raw.startswith(b"\xef\xbb\xbf")
    # Refused reads leave no row: they read nothing.
    assert api(server, "GET", f"/api/rooms/{code}/results", "not-a-token")[0] == 401

    entries = trail(server)["entries"]
    assert [(row["action"], row["target"]) for row in entries] == [("export_csv", f"room:{code}"), ("read_room_results", f"room:{code}")]
    assert entries[0]["actor"] == {"kind": "admin_token"}
    assert entries[1]["actor"] == {"kind": "room_teacher", "room": code}
    assert all(row["address"] == "127.0.0.1" for row in entries)
    assert entries[0]["sequence"] > entries[1]["sequence"]

    status, headers, raw = api(server, "GET", "/api/audit?format=csv")
    assert status == 200 and headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig"))))
    assert [(row["action"], row["actor"], row["actor_room"]) for row in rows] == [("export_csv", "admin_token", ""), ("read_room_results", "room_teacher", code)]

    secrets = [teacher, room["dashboardToken"], server.admin_token] + teacher.split(".")[1:]
    pages = json.dumps(trail(server)) + raw.decode("utf-8-sig")
    with sqlite3.connect(f"file:{database(server)}?mode=ro", uri=True) as connection:
        stored = json.dumps(connection.execute("SELECT * FROM audit_rows").fetchall())
    for secret in secrets:
        assert secret not in pages and secret not in stored

    # Nobody but the admin reads the trail.
    assert api(server, "GET", "/api/audit", teacher)[0] == 401
    assert server.request("GET", "/api/audit")[0] == 401


def test_class_reads_an_erasure_and_a_deletion_are_recorded_and_filtered(server):
    status, _, created = api(server, "POST", "/api/classes", body={"name": "Class 2C", "children": [{"name": "Ada"}, {"name": "Bo"}]})
    assert status == 201, created
    class_id = created["id"]
    status, _, schoolclass = api(server, "GET", f"/api/classes/{class_id}")
    bo = next(child["id"] for child in schoolclass["children"] if child["name"] == "Bo")
    assert api(server, "GET", f"/api/classes/{class_id}/report")[0] == 200
    assert api(server, "GET", f"/api/classes/{class_id}/results.csv")[0] == 200
    assert api(server, "DELETE", f"/api/classes/{class_id}/members/{bo}/data")[0] == 204
    # An erasure the store refuses is recorded as asked, then as not done.
    status, _, body = api(server, "DELETE", f"/api/classes/{class_id}/members/{bo}/data")
    assert status == 404 and body["error"]["code"] == "member_not_found"
    assert api(server, "DELETE", f"/api/classes/{class_id}")[0] == 204

    entries = trail(server)["entries"]
    assert [(row["action"], row["target"], row["detail"]) for row in entries] == [
        ("delete_class", f"class:{class_id}", ""),
        ("erase_member", f"class:{class_id}/member:{bo}", "not done: member_not_found"),
        ("erase_member", f"class:{class_id}/member:{bo}", ""),
        ("erase_member", f"class:{class_id}/member:{bo}", ""),
        ("export_csv", f"class:{class_id}", ""),
        ("read_class_report", f"class:{class_id}", ""),
    ]
    # No child's name in the trail: members are named by their ids.
    assert "Bo" not in json.dumps(entries) and "Ada" not in json.dumps(entries)

    erasures = trail(server, action="erase_member", limit=2)
    assert len(erasures["entries"]) == 2 and erasures["next"] is not None
    rest = trail(server, action="erase_member", limit=2, before=erasures["next"])
    assert len(rest["entries"]) == 1 and rest["next"] is None
    assert api(server, "GET", "/api/audit?action=read_everything")[0] == 400
    assert api(server, "GET", "/api/audit?limit=100000")[0] == 400


def test_a_read_whose_row_cannot_be_stored_is_refused(server):
    room = server.create_room()
    code, teacher = room["code"], room["teacherToken"]
    assert api(server, "GET", f"/api/rooms/{code}/results", teacher)[0] == 200
    # From outside the server, as a full disk or a revoked grant would: the table takes no more rows.
    with sqlite3.connect(database(server)) as connection:
        connection.execute("CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_rows BEGIN SELECT RAISE(ABORT, 'no more rows'); END")
    for path in [f"/api/rooms/{code}/results", f"/api/rooms/{code}/results?format=csv"]:
        status, _, body = api(server, "GET", path, teacher)
        assert status == 503 and body["error"]["code"] == "storage_unavailable", body
        assert STORY["title"] not in json.dumps(body), "nothing of the results"
    server.wait_for_output("Audit row could not be stored")

    with sqlite3.connect(database(server)) as connection:
        connection.execute("DROP TRIGGER refuse_audit")
    assert api(server, "GET", f"/api/rooms/{code}/results", teacher)[0] == 200
    assert [row["action"] for row in trail(server)["entries"]] == ["read_room_results", "read_room_results"]


def test_a_childs_export_erasure_and_an_early_deletion_are_recorded_by_ids_never_names(server):
    room = server.create_room()
    code, teacher = room["code"], room["teacherToken"]

    async def play():
        client, welcome = await join(server, room, "Zoë")
        await client.close()
        return welcome["player"]["id"]

    player = asyncio.run(play())
    assert server.command(room, "end")[0] == 200
    data = f"/api/rooms/{code}/players/{player}/data"
    assert api(server, "GET", data, teacher)[0] == 200
    assert api(server, "GET", data + "?format=csv", teacher)[0] == 200
    assert api(server, "DELETE", data, teacher)[0] == 204
    assert api(server, "DELETE", f"/api/rooms/{code}", teacher)[0] == 204

    entries = trail(server)["entries"]
    assert [(row["action"], row["target"], row["detail"]) for row in entries] == [
        ("delete_room", f"room:{code}", ""),
        ("erase_child", f"room:{code}/player:{player}", ""),
        ("export_child", f"room:{code}/player:{player}", "csv"),
        ("export_child", f"room:{code}/player:{player}", "json"),
    ]
    assert all(row["actor"] == {"kind": "room_teacher", "room": code} for row in entries)
    assert "Zo" not in json.dumps(entries)
