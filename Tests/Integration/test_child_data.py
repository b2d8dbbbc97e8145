"""One child's data over real sockets (docs/protocol.md, "A child's data"; docs/privacy.md), with an
independent client: a typed nickname and a class member exported whole as JSON and as well-formed CSV;
refused requests (a running room, the wrong token, an unknown player) changing nothing; an erasure after
which the export finds nothing and the child's name is in none of the SQLite files (database, -wal,
-shm); a room deleted early, from memory and from the store."""
import asyncio
import csv
import io
import json
import sqlite3
import subprocess

from conftest import BIN, ROOT, SHORT_STORY, Client, join, wait_until

STORY = json.loads(SHORT_STORY.read_text())
QUESTIONS = [q["question"] for q in STORY["quiz"]["questions"]]
RIGHT = [0, 1, 1]
CONFIG = {"failedJoinBurst": 200, "failedJoinsPerMinute": 600}
# Distinctive: its bytes appear nowhere else, so finding them in a file finds this child.
NICKNAME = "Qwzxjorv-Kid"
MEMBER_NAME = "Vexlumdor-Pupil"
CSV_HEADER = ["record", "room", "story", "room_created_at", "player_id", "nickname", "at", "question", "question_text",
              "answer", "result", "points", "time_ms", "detail"]


def api(server, method, path, body=None, token=None):
    status, headers, raw = server.request(method, path, token or server.admin_token, body)
    if raw and headers.get("content-type", "").startswith("application/json"):
        return status, headers, json.loads(raw)
    return status, headers, raw


def files_holding(server, text):
    database = next(server.data.glob("*.sqlite"))
    needle = text.encode()
    found = []
    for path in (database, database.with_name(database.name + "-wal"), database.with_name(database.name + "-shm")):
        if path.exists() and needle in path.read_bytes():
            found.append(path.name)
    return found


async def play(server, room, clients_and_choices, end=True):
    """Plays `room` through its questions: each (client, choices) answers. With `end`, to the finish."""
    server.command(room, "start")
    server.command(room, "skip")
    for index in range(len(RIGHT)):
        question = None
        for client, _ in clients_and_choices:
            question = await client.expect("question")
        await wait_until(question["opensAt"])
        for client, choices in clients_and_choices:
            await client.send({"type": "answer", "question": index, "option": choices[index]})
            await client.expect("answer.ack")
        for client, _ in clients_and_choices:
            await client.expect("reveal")
        if index < len(RIGHT) - 1 or end:
            server.command(room, "next")
    if end:
        for client, _ in clients_and_choices:
            await client.expect("finished")


def player_id(server, room, nickname):
    status, _, results = api(server, "GET", f"/api/rooms/{room['code']}/results", token=room["teacherToken"])
    assert status == 200
    return next(p["id"] for p in results["players"] if p["nickname"] == nickname)


def csv_rows(raw):
    text = raw.decode("utf-8-sig")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == CSV_HEADER
    assert all(len(row) == len(CSV_HEADER) for row in rows), "every row has every column"
    return [dict(zip(CSV_HEADER, row)) for row in rows[1:]]


def test_a_typed_nickname_is_exported_then_erased_for_good_and_refusals_change_nothing(make_server):
    server = make_server(config=CONFIG)
    room = server.create_room()
    other = server.create_room()

    async def lesson():
        kid, _ = await join(server, room, NICKNAME)
        bo, _ = await join(server, room, "Bo")
        await play(server, room, [(kid, RIGHT), (bo, [1, 0, 0])], end=False)
        while_running(player_id(server, room, NICKNAME))
        server.command(room, "end")
        for client in (kid, bo):
            await client.expect("finished")
            await client.close()

    def while_running(kid_id):
        path = f"/api/rooms/{room['code']}/players/{kid_id}/data"
        # The export while the room runs: everything so far.
        status, headers, data = api(server, "GET", path, token=room["teacherToken"])
        assert status == 200, data
        assert headers["cache-control"] == "no-store"
        assert data["kind"] == "nickname" and data["member"] is None
        [stored] = data["rooms"]
        assert stored["code"] == room["code"] and stored["story"] == STORY["title"] and stored["classId"] is None
        assert stored["player"]["nickname"] == NICKNAME and stored["player"]["id"] == kid_id and stored["player"]["joinedAt"]
        assert [(a["question"], a["questionText"], a["option"], a["optionText"], a["correct"]) for a in stored["answers"]] == [
            (0, QUESTIONS[0], 0, "A gear", True), (1, QUESTIONS[1], 1, "Blue", True), (2, QUESTIONS[2], 1, "Dot", True)]
        assert stored["points"] == sum(a["points"] for a in stored["answers"]) > 0
        assert "token" not in json.dumps(data).lower().replace("releasedresumetokens", ""), "no credential is exported"

        # Refused while the room runs, and for the wrong credentials: nothing changes.
        before = api(server, "GET", f"/api/rooms/{room['code']}/results", token=room["teacherToken"])[2]
        for method, target in (("DELETE", path), ("DELETE", f"/api/rooms/{room['code']}")):
            status, _, body = api(server, method, target, token=room["teacherToken"])
            assert status == 409 and body["error"]["code"] == "room_in_use", body
            assert "End it first" in body["error"]["message"]
        for token in (room["dashboardToken"], other["teacherToken"], "guess"):
            for method in ("GET", "DELETE"):
                status, _, body = api(server, method, path, token=token)
                assert status == 401 and body["error"]["code"] == "unauthorized", (token, body)
        status, _, body = api(server, "GET", f"/api/rooms/{room['code']}/players/p999/data", token=room["teacherToken"])
        assert status == 404 and body["error"]["code"] == "player_not_found"
        status, _, body = api(server, "GET", path + "?format=xml", token=room["teacherToken"])
        assert status == 400 and body["error"]["code"] == "invalid_message"
        assert api(server, "GET", f"/api/rooms/{room['code']}/results", token=room["teacherToken"])[2] == before

    asyncio.run(lesson())
    kid_id = player_id(server, room, NICKNAME)
    path = f"/api/rooms/{room['code']}/players/{kid_id}/data"

    # CSV: well-formed, one row per thing stored.
    status, headers, raw = api(server, "GET", path + "?format=csv", token=room["teacherToken"])
    assert status == 200 and headers["content-type"].startswith("text/csv")
    assert headers["content-disposition"].startswith(f'attachment; filename="{NICKNAME} {room["code"]} data ')
    rows = csv_rows(raw)
    assert [r["record"] for r in rows][0] == "joined"
    answers = [r for r in rows if r["record"] == "answer"]
    assert [(r["question"], r["question_text"], r["answer"], r["result"]) for r in answers] == [
        ("1", QUESTIONS[0], "A gear", "right"), ("2", QUESTIONS[1], "Blue", "right"), ("3", QUESTIONS[2], "Dot", "right")]
    assert {r["nickname"] for r in rows} == {NICKNAME} and {r["room"] for r in rows} == {room["code"]}

    # Before the erasure the name is in the files (the check can fail); after it, in none.
    assert files_holding(server, NICKNAME) != []
    status, _, body = api(server, "DELETE", path, token=room["teacherToken"])
    assert status == 204, body
    assert files_holding(server, NICKNAME) == []
    status, _, body = api(server, "GET", path, token=room["teacherToken"])
    assert status == 404 and body["error"]["code"] == "player_not_found"
    status, _, results = api(server, "GET", f"/api/rooms/{room['code']}/results", token=room["teacherToken"])
    assert [p["nickname"] for p in results["players"]] == ["Bo"], "the room in memory shows the child gone"
    status, _, body = api(server, "DELETE", path, token=room["teacherToken"])
    assert status == 404 and body["error"]["code"] == "player_not_found"

    # The room deleted early: gone from memory and from the store; the other room stays.
    status, _, body = api(server, "DELETE", f"/api/rooms/{room['code']}", token=room["dashboardToken"])
    assert status == 401
    status, _, body = api(server, "DELETE", f"/api/rooms/{room['code']}", token=room["teacherToken"])
    assert status == 204, body
    status, _, _ = api(server, "GET", f"/api/rooms/{room['code']}/results", token=room["teacherToken"])
    assert status == 401, "its tokens open nothing any more"
    status, _, body = api(server, "GET", f"/api/rooms/{room['code']}")
    assert status == 404 and body["error"]["code"] == "room_not_found"
    database = next(server.data.glob("*.sqlite"))
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as connection:
        assert connection.execute("SELECT count(*) FROM rooms WHERE code = ?", (room["code"],)).fetchone() == (0,)
        assert connection.execute("SELECT count(*) FROM players WHERE room_code = ?", (room["code"],)).fetchone() == (0,)
        assert connection.execute("SELECT count(*) FROM rooms WHERE code = ?", (other["code"],)).fetchone() == (1,)


def test_a_class_members_data_spans_the_classes_rooms_and_is_gone_after_the_erasure(make_server):
    server = make_server(config=CONFIG)
    status, _, made = api(server, "POST", "/api/classes", {"name": "4D", "children": [{"name": MEMBER_NAME, "avatar": "fox"}, {"name": "Bo"}]})
    assert status == 201, made
    _, _, schoolclass = api(server, "GET", f"/api/classes/{made['id']}")
    ids = {child["name"]: child["id"] for child in schoolclass["children"]}
    rooms = []
    for _ in range(2):
        status, _, room = api(server, "POST", "/api/rooms", {"story": STORY, "classId": schoolclass["id"]})
        assert status == 201
        rooms.append(room)

        async def lesson():
            pupils = []
            for name in (MEMBER_NAME, "Bo"):
                client = await Client.connect(server)
                await client.send({"type": "join", "room": room["code"], "member": ids[name]})
                await client.expect("welcome")
                pupils.append(client)
            await play(server, room, [(pupils[0], RIGHT), (pupils[1], [2, 0, 0])])
            for client in pupils:
                await client.close()
        asyncio.run(lesson())

    path = f"/api/classes/{schoolclass['id']}/members/{ids[MEMBER_NAME]}/data"
    status, _, data = api(server, "GET", path)
    assert status == 200, data
    assert data["kind"] == "class_member"
    assert data["member"] == {"classId": schoolclass["id"], "className": "4D", "memberId": ids[MEMBER_NAME], "name": MEMBER_NAME,
                              "avatar": "fox", "removedAt": None}
    assert sorted(r["code"] for r in data["rooms"]) == sorted(r["code"] for r in rooms)
    assert all(r["player"]["memberId"] == ids[MEMBER_NAME] and len(r["answers"]) == 3 for r in data["rooms"])
    status, headers, raw = api(server, "GET", path + "?format=csv")
    rows = csv_rows(raw)
    assert rows[0]["record"] == "class_member" and MEMBER_NAME in rows[0]["detail"]
    assert sum(r["record"] == "answer" for r in rows) == 6

    # Only the admin token: a room's teacher token (even of this class) reads no child's whole record.
    for token in (rooms[0]["teacherToken"], rooms[0]["dashboardToken"], "guess"):
        status, _, body = api(server, "GET", path, token=token)
        assert status == 401, body
    status, _, body = api(server, "GET", f"/api/classes/{schoolclass['id']}/members/mem_nobody/data")
    assert status == 404 and body["error"]["code"] == "member_not_found"

    # The CLI, a client of the same API: the export as the API gives it; the erasure only with --yes.
    def cli(*args):
        return subprocess.run([BIN, "child", *args, "--server", server.http, "--admin-token", server.admin_token],
                              capture_output=True, text=True, cwd=ROOT, timeout=60)
    exported = cli("export", "4D", MEMBER_NAME, "--csv", "--out", str(server.data / "child.csv"))
    assert exported.returncode == 0, exported.stderr
    # (A closed page's "left" may be stored between the two exports: the rest is the same.)
    assert [r for r in csv_rows((server.data / "child.csv").read_bytes()) if r["record"] != "left"] == [r for r in rows if r["record"] != "left"]
    (server.data / "child.csv").unlink()
    printed = cli("export", "4D", MEMBER_NAME)
    assert printed.returncode == 0 and json.loads(printed.stdout)["member"]["name"] == MEMBER_NAME
    unsure = cli("erase", "4D", MEMBER_NAME)
    assert unsure.returncode == 64 and unsure.stderr.startswith("Error: this would delete everything stored of")
    assert api(server, "GET", path)[0] == 200, "nothing erased without --yes"

    assert files_holding(server, MEMBER_NAME) != []
    erased = cli("erase", "4D", MEMBER_NAME, "--yes")
    assert erased.returncode == 0, erased.stderr
    status, _, body = api(server, "GET", path)
    assert status == 404 and body["error"]["code"] == "member_not_found"
    assert files_holding(server, MEMBER_NAME) == []
    status, _, data = api(server, "GET", f"/api/classes/{schoolclass['id']}/members/{ids['Bo']}/data")
    assert status == 200 and len(data["rooms"]) == 2, "the other child's data stays"
