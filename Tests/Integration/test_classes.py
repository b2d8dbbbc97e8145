"""Classes over real sockets (docs/protocol.md, "Classes" and "Class rooms"), with an independent client:
a class made by the API and the CLI and every bad input refused with its code; a class room joined by
picking a name, a taken name shown taken, a typed name refused, a name released for a new device which
then is the same player; the report after two rooms; a child erased from the report, the CSVs and the
database file; a release and a class room's members kept across kill -9; tokens of other rooms refused."""
import asyncio
import csv
import io
import json
import re
import signal
import sqlite3
import subprocess

from conftest import BIN, ROOT, SHORT_STORY, Client, screen, wait_until

STORY = json.loads(SHORT_STORY.read_text())
# The short story's answers: 0 "A gear", 1 "Blue", 1 "Dot".
RIGHT = [0, 1, 1]
# Many hellos from one address: the test is not a flood.
CONFIG = {"failedJoinBurst": 200, "failedJoinsPerMinute": 600}


def api(server, method, path, body=None, token=None):
    status, headers, raw = server.request(method, path, token or server.admin_token, body)
    return status, (json.loads(raw) if raw and headers.get("content-type", "").startswith("application/json") else raw)


def make_class(server, name, children):
    status, body = api(server, "POST", "/api/classes", {"name": name, "children": children})
    assert status == 201, body
    status, read = api(server, "GET", f"/api/classes/{body['id']}")
    assert status == 200
    return read


def class_room(server, schoolclass):
    status, room = api(server, "POST", "/api/rooms", {"story": STORY, "classId": schoolclass["id"]})
    assert status == 201, room
    return room


def cli(server, *args):
    return subprocess.run([BIN, *args, "--server", server.http, "--admin-token", server.admin_token],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)


async def picker(server, room):
    client = await Client.connect(server)
    await client.send({"type": "names", "room": room["code"]})
    return client, await client.expect("names")


async def pick(server, room, member, client=None):
    client = client or (await picker(server, room))[0]
    await client.send({"type": "join", "room": room["code"], "member": member})
    return client, await client.expect("welcome")


def member_ids(schoolclass):
    return {child["name"]: child["id"] for child in schoolclass["children"]}


def test_a_class_is_made_by_the_api_and_the_cli_and_bad_input_is_refused_with_its_code(server, tmp_path):
    made = make_class(server, "Class 1B", [{"name": "Ada", "avatar": "owl"}, {"name": "Bo", "avatar": "emoji:🦊"}])
    assert [(c["name"], c["avatar"]) for c in made["children"]] == [("Ada", "owl"), ("Bo", "emoji:🦊")]
    assert made["version"] == 1 and made["id"].startswith("cls_") and all(c["id"].startswith("mem_") for c in made["children"])
    empty = make_class(server, "Nobody yet", [])
    assert empty["children"] == []

    # 500 names: one problem, with the limit.
    status, body = api(server, "POST", "/api/classes", {"name": "Too many", "children": [{"name": f"Child {i}"} for i in range(500)]})
    assert status == 400 and body["error"]["code"] == "invalid_class"
    assert body["error"]["problems"] == [{"path": "children", "code": "class_too_large", "params": {"max": "60", "count": "500"},
                                          "message": body["error"]["problems"][0]["message"]}]
    # Duplicates, look-alikes included (a Cyrillic А), at the second name's path; nothing stored.
    status, body = api(server, "POST", "/api/classes", {"name": "Dupes", "children": [{"name": "Ada"}, {"name": "\u0410da"}, {"name": "ADA"}, {"name": "Cy", "avatar": "unicorn"}]})
    assert status == 400
    assert [(p["path"], p["code"]) for p in body["error"]["problems"]] == [
        ("children[1].name", "duplicate_name"), ("children[2].name", "duplicate_name"), ("children[3].avatar", "avatar_unknown")]
    assert body["error"]["problems"][0]["params"] == {"other": "children[0].name", "name": "\u0410da"}
    status, body = api(server, "POST", "/api/classes", {"name": "class 1b", "children": []})
    assert status == 400 and body["error"]["problems"][0]["code"] == "class_name_taken"
    status, body = api(server, "POST", "/api/classes", {"name": "Long", "children": [{"name": "x" * 43}]})
    assert body["error"]["problems"] == [{"path": "children[0].name", "code": "name_too_long", "params": {"max": "40", "length": "43"},
                                          "message": body["error"]["problems"][0]["message"]}], "refused with the limit, never cut"
    status, listed = api(server, "GET", "/api/classes")
    assert [c["name"] for c in listed["classes"]] == ["Class 1B", "Nobody yet"]

    # Two teachers edit one class: the stale save is refused with the class as it is, nothing lost.
    ids = member_ids(made)
    first = {"version": 1, "name": "Class 1B", "children": [{"id": ids["Ada"], "name": "Ada", "avatar": "owl"}, {"id": ids["Bo"], "name": "Bo", "avatar": "fox"}, {"name": "Cy"}]}
    status, body = api(server, "PUT", f"/api/classes/{made['id']}", first)
    assert (status, body) == (200, {"version": 2})
    status, body = api(server, "PUT", f"/api/classes/{made['id']}", {"version": 1, "name": "Class 1B", "children": []})
    assert status == 409 and body["error"]["code"] == "version_conflict" and body["error"]["params"] == {"version": "2"}
    assert [c["name"] for c in body["error"]["current"]["children"]] == ["Ada", "Bo", "Cy"]
    status, now = api(server, "GET", f"/api/classes/{made['id']}")
    assert now["version"] == 2 and member_ids(now)["Ada"] == ids["Ada"] and len(now["children"]) == 3

    # The CLI: made from options and from a file, shown, changed, and its mistakes refused.
    names = tmp_path / "names.txt"
    names.write_text("Dee\nEd\n\nFay\n")
    result = cli(server, "class", "create", "2A", "--child", "Gus:bear", "--child", "Hal:emoji:🐸", "--from", str(names))
    assert result.returncode == 0, result.stderr
    result = cli(server, "class", "show", "2a", "--json")
    shown = json.loads(result.stdout)
    assert [(c["name"], c["avatar"]) for c in shown["children"]] == [("Gus", "bear"), ("Hal", "emoji:🐸"), ("Dee", "bear"), ("Ed", "rabbit"), ("Fay", "cat")], "a child without a picture gets the one of their place"
    assert cli(server, "class", "add", "2A", "Ivy", "--avatar", "cat").returncode == 0
    assert cli(server, "class", "remove", "2A", "ed").returncode == 0
    assert [c["name"] for c in json.loads(cli(server, "class", "show", shown["id"], "--json").stdout)["children"]] == ["Gus", "Hal", "Dee", "Fay", "Ivy"]
    result = cli(server, "class", "add", "2A", "\u0406vy")  # a Cyrillic І: a look-alike of Ivy
    assert result.returncode == 1 and "looks the same" in result.stderr and "[invalid_class]" in result.stderr, result.stderr
    result = cli(server, "class", "list")
    assert "2A" in result.stdout and "Class 1B" in result.stdout
    result = cli(server, "class", "erase", "2A", "Gus")
    assert result.returncode == 64 and "--yes" in result.stderr
    assert "Gus" in cli(server, "class", "show", "2A").stdout, "nothing deleted without --yes"


def test_teachers_each_have_their_own_4b_but_not_two(server):
    """A class's name is unique among its owner's classes: teachers of two schools, and two of one school,
    each make a "4B"; a teacher's second "4b" is refused with the clear code; the admin token's unowned
    classes keep the old rule, unique among all classes."""
    from test_sessions import Browser, make_account

    north = make_account(server, "ana-4b")
    make_account(server, "bo-4b", school=north["schoolID"])
    make_account(server, "cy-4b")
    teachers = {login: Browser(server) for login in ("ana-4b", "bo-4b", "cy-4b")}
    for login, browser in teachers.items():
        assert browser.sign_in(login)[0] == 200
        status, _, made = browser.request("POST", "/api/classes", {"name": "4B", "children": [{"name": "Ada"}]})
        assert status == 201, (login, made)
    status, _, body = teachers["ana-4b"].request("POST", "/api/classes", {"name": "4b", "children": []})
    assert status == 400 and body["error"]["code"] == "invalid_class"
    assert [(p["path"], p["code"], p["params"]) for p in body["error"]["problems"]] == [("name", "class_name_taken", {"name": "4b"})]
    status, _, listed = teachers["ana-4b"].request("GET", "/api/classes")
    assert [c["name"] for c in listed["classes"]] == ["4B"]
    status, body = api(server, "POST", "/api/classes", {"name": "4B", "children": []})
    assert status == 400 and body["error"]["problems"][0]["code"] == "class_name_taken"


def test_a_class_room_is_joined_by_picking_a_name_and_a_released_name_is_the_same_player_on_a_new_device(make_server, tmp_path):
    server = make_server(config=CONFIG, data=tmp_path / "data")
    schoolclass = make_class(server, "Class 1B", [{"name": "Ada", "avatar": "owl"}, {"name": "Bo", "avatar": "emoji:🦊"}])
    ids = member_ids(schoolclass)
    room = class_room(server, schoolclass)
    kept = {}

    async def scenario():
        teacher = await Client.connect(server)
        await teacher.send({"type": "control", "room": room["code"], "token": room["teacherToken"]})
        welcome = await teacher.expect("welcome")
        assert welcome["room"]["class"]["name"] == "Class 1B"
        assert [(m["name"], m["taken"], m["player"]) for m in welcome["room"]["class"]["members"]] == [("Ada", False, None), ("Bo", False, None)]

        first, names = await picker(server, room)
        assert names == {"type": "names", "room": room["code"], "class": {"name": "Class 1B"},
                         "children": [{"id": ids["Ada"], "name": "Ada", "avatar": "owl", "taken": False},
                                      {"id": ids["Bo"], "name": "Bo", "avatar": "emoji:🦊", "taken": False}]}
        second, _ = await picker(server, room)
        tablet, welcome = await pick(server, room, ids["Ada"], client=first)
        old_token = kept["old"] = welcome["token"]
        assert welcome["player"]["nickname"] == "Ada" and old_token.startswith(room["code"] + ".")
        update = await second.expect("names")
        assert [c["taken"] for c in update["children"]] == [True, False], "the other picker sees Ada taken"
        roster = await teacher.expect("class.roster")
        assert roster["members"][0]["taken"] is True and roster["members"][0]["connected"] is True

        # A taken name: refused, and the connection stays a picker.
        await second.send({"type": "join", "room": room["code"], "member": ids["Ada"]})
        refused = await second.expect("error")
        assert refused["code"] == "name_taken" and refused["params"] == {"name": "Ada"}
        # A typed nickname is refused in a class room.
        typed = await Client.connect(server)
        await typed.send({"type": "join", "room": room["code"], "nickname": "Ada"})
        refused = await typed.expect("error")
        assert refused["code"] == "class_room" and refused["params"] == {"class": "Class 1B"}
        assert (await typed.close_code())[0] == 1008

        # Ada scores on the first question.
        status, _ = server.command(room, "start")
        assert status == 200
        server.command(room, "skip")
        question = await tablet.expect("question")
        await wait_until(question["opensAt"])
        await tablet.send({"type": "answer", "question": 0, "option": RIGHT[0]})
        await tablet.expect("answer.ack")
        reveal = await tablet.expect("reveal")
        points = reveal["you"]["standing"]["score"]
        assert points > 0

        # Her tablet's battery is flat: the teacher releases the name.
        status, _ = server.command(room, "release", member=ids["Ada"])
        assert status == 200
        kicked = await tablet.expect("kicked")
        assert kicked["code"] == "released"
        assert await tablet.close_code() == (1008, "released")
        freed = await second.expect("names")
        assert freed["children"][0]["taken"] is False
        stale = await Client.connect(server)
        await stale.send({"type": "rejoin", "room": room["code"], "token": old_token})
        assert (await stale.expect("error"))["code"] == "released"
        # The new device is Ada: the same player, with her points.
        _, again = await pick(server, room, ids["Ada"], client=second)
        assert again["player"]["id"] == welcome["player"]["id"]
        assert again["room"]["you"]["score"] == points
        # Releasing a name nobody holds says so.
        status, body = server.command(room, "release", member=ids["Bo"])
        assert status == 409 and body["error"]["params"]["problem"] == "not_taken"

    asyncio.run(scenario())
    # kill -9: the release and the class room's members come back.
    server.kill()
    restarted = make_server(config=CONFIG, data=tmp_path / "data")

    async def after_restart():
        stale = await Client.connect(restarted)
        await stale.send({"type": "rejoin", "room": room["code"], "token": kept["old"]})
        assert (await stale.expect("error"))["code"] == "released", "the release was stored before it was acknowledged"
        client, names = await picker(restarted, room)
        assert [c["taken"] for c in names["children"]] == [True, False], "Ada's name is still held by her new device"
        _, bo = await pick(restarted, room, ids["Bo"], client=client)
        assert bo["player"]["nickname"] == "Bo"
        status, results = api(restarted, "GET", f"/api/rooms/{room['code']}/results", token=room["teacherToken"])
        assert sorted(p["member"] for p in results["players"]) == sorted([ids["Ada"], ids["Bo"]])

    asyncio.run(after_restart())


async def play(server, room, choices):
    """Plays `room` to the end: each child (member id → the options they choose) picks and answers."""
    children = {}
    for member in choices:
        children[member], _ = await pick(server, room, member)
    server.command(room, "start")
    server.command(room, "skip")
    for index in range(len(RIGHT)):
        question = None
        for client in children.values():
            question = await client.expect("question")
        await wait_until(question["opensAt"])
        for member, client in children.items():
            await client.send({"type": "answer", "question": index, "option": choices[member][index]})
            await client.expect("answer.ack")
        for client in children.values():
            await client.expect("reveal")
        server.command(room, "next")
    for client in children.values():
        await client.expect("finished")
        await client.close()


def test_after_two_rooms_the_report_says_what_to_teach_again_and_an_erased_child_is_gone_everywhere(make_server, tmp_path):
    server = make_server(config=CONFIG, data=tmp_path / "data")
    schoolclass = make_class(server, "3C", [{"name": "Ada"}, {"name": "Bo"}, {"name": "Cy"}])
    ids = member_ids(schoolclass)
    first = class_room(server, schoolclass)
    # Room 1: Ada all right; Bo wrong on 0 (chose 2) and 1 (chose 0); Cy wrong on 0 (chose 2).
    asyncio.run(play(server, first, {ids["Ada"]: RIGHT, ids["Bo"]: [2, 0, 1], ids["Cy"]: [2, 1, 1]}))
    second = class_room(server, schoolclass)
    # Room 2: Ada wrong on 2 (chose 0); Bo wrong on all; Cy all right.
    asyncio.run(play(server, second, {ids["Ada"]: [0, 1, 0], ids["Bo"]: [1, 2, 0], ids["Cy"]: RIGHT}))

    status, report = api(server, "GET", f"/api/classes/{schoolclass['id']}/report")
    assert status == 200
    assert [r["code"] for r in report["rooms"]] == [second["code"], first["code"]], "newest first"
    older = report["rooms"][1]
    assert [(q["present"], q["answered"], q["right"], q["unanswered"], q["shareRight"]) for q in older["questions"]] == [
        (3, 3, 1, 0, 0.3333), (3, 3, 2, 0, 0.6667), (3, 3, 3, 0, 1.0)]
    assert older["questions"][0]["mostChosenWrong"] == {"option": 2, "text": "A key", "count": 2}
    assert older["questions"][2]["mostChosenWrong"] is None
    assert older["endedAt"] is not None and older["players"] == 3
    assert [(h["name"], h["wrong"], h["answered"], h["rooms"]) for h in report["needsHelp"]] == [("Bo", 5, 6, 2), ("Ada", 1, 6, 2), ("Cy", 1, 6, 2)]
    ada = next(c for c in report["children"] if c["name"] == "Ada")
    assert [r["code"] for r in ada["rooms"]] == [second["code"], first["code"]] and ada["rooms"][1]["right"] == 3

    # The teacher of one of the class's rooms may read it; another class's teacher may not.
    status, _ = api(server, "GET", f"/api/classes/{schoolclass['id']}/report", token=first["teacherToken"])
    assert status == 200
    other = make_class(server, "Other", [{"name": "Zed"}])
    stranger = class_room(server, other)
    status, body = api(server, "GET", f"/api/classes/{schoolclass['id']}/report", token=stranger["teacherToken"])
    assert status == 401 and body["error"]["code"] == "unauthorized"

    status, raw = api(server, "GET", f"/api/classes/{schoolclass['id']}/results.csv")
    rows = list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig"))))
    assert len(rows) == 2 * 3 * 3 and {r["child"] for r in rows} == {"Ada", "Bo", "Cy"}, "a row per room, child and question"
    status, raw = api(server, "GET", f"/api/rooms/{first['code']}/results?format=csv", token=first["teacherToken"])
    assert "member" in raw.decode().splitlines()[0].split(",")

    # One room's rows from the class CSV, for the admin and the teacher of a room of the class.
    for token in (None, second["teacherToken"]):
        status, raw = api(server, "GET", f"/api/classes/{schoolclass['id']}/results.csv?room={first['code']}", token=token)
        assert status == 200, raw
        one = list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig"))))
        assert len(one) == 9 and {r["room"] for r in one} == {first["code"]} and {r["child"] for r in one} == {"Ada", "Bo", "Cy"}
        assert {name: sum(r["result"] == "right" for r in one if r["child"] == name) for name in ("Ada", "Bo", "Cy")} == {"Ada": 3, "Bo": 1, "Cy": 2}
    status, headers, raw = server.request("GET", f"/api/classes/{schoolclass['id']}/results.csv?room={second['code']}", server.admin_token)
    assert status == 200 and 'filename="3C Test The Short Story ' in headers["content-disposition"], headers["content-disposition"]
    assert [r["room"] for r in csv.DictReader(io.StringIO(raw.decode("utf-8-sig")))] == [second["code"]] * 9
    # Another class's room, an unknown room and a code that is no code: 404 room_not_found, nothing sent.
    unknown = next(code for code in ("000000", "999999") if code not in {first["code"], second["code"], stranger["code"]})
    for code in (stranger["code"], unknown, "not-a-room"):
        status, body = api(server, "GET", f"/api/classes/{schoolclass['id']}/results.csv?room={code}")
        assert status == 404 and body["error"]["code"] == "room_not_found", body
        assert body["error"]["params"]["code"] == code
    # The other class's teacher may not read this class's rooms either.
    status, body = api(server, "GET", f"/api/classes/{schoolclass['id']}/results.csv?room={first['code']}", token=stranger["teacherToken"])
    assert status == 401 and body["error"]["code"] == "unauthorized"

    # Bo's data, erased: gone from the report, both CSVs and the database file.
    status, _ = api(server, "DELETE", f"/api/classes/{other['id']}/members/{ids['Bo']}/data")
    assert status == 404, "not the other class's child"
    status, body = api(server, "DELETE", f"/api/classes/{schoolclass['id']}/members/{ids['Bo']}/data")
    assert status == 204, body
    status, report = api(server, "GET", f"/api/classes/{schoolclass['id']}/report")
    assert "Bo" not in json.dumps(report)
    assert report["rooms"][1]["questions"][0]["answered"] == 2
    status, raw = api(server, "GET", f"/api/classes/{schoolclass['id']}/results.csv")
    assert "Bo" not in raw.decode()
    status, raw = api(server, "GET", f"/api/rooms/{first['code']}/results?format=csv", token=first["teacherToken"])
    assert "Bo" not in {row["child"] for row in csv.DictReader(io.StringIO(raw.decode("utf-8-sig")))} and ids["Bo"] not in raw.decode()
    status, body = api(server, "DELETE", f"/api/classes/{schoolclass['id']}/members/{ids['Bo']}/data")
    assert status == 404 and body["error"]["code"] == "member_not_found"
    database = next((tmp_path / "data").glob("*.sqlite"))
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as connection:
        assert connection.execute("SELECT count(*) FROM players WHERE nickname = 'Bo' OR member_id = ?", (ids["Bo"],)).fetchone() == (0,)
        assert connection.execute("SELECT count(*) FROM class_members WHERE id = ?", (ids["Bo"],)).fetchone() == (0,)
        assert connection.execute("SELECT count(*) FROM players WHERE member_id IS NOT NULL").fetchone() == (4,)

    # Deleting the class deletes its rooms' results too: nothing of its children is left that nobody could erase.
    status, body = api(server, "DELETE", f"/api/classes/{schoolclass['id']}")
    assert status == 204, body
    status, _ = api(server, "GET", f"/api/rooms/{first['code']}/results?format=csv", token=first["teacherToken"])
    assert status != 200, "the deleted room is gone from memory too"
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as connection:
        assert connection.execute("SELECT count(*) FROM rooms WHERE code IN (?, ?)", (first["code"], second["code"])).fetchone() == (0,)
        assert connection.execute("SELECT count(*) FROM players WHERE member_id IS NOT NULL OR nickname IN ('Ada', 'Cy')").fetchone() == (0,)
        assert connection.execute("SELECT count(*) FROM rooms WHERE code = ?", (stranger["code"],)).fetchone() == (1,)


def test_an_erase_reloads_a_finished_room_in_place_and_the_pages_on_it_stay_open(make_server, tmp_path):
    server = make_server(config=CONFIG, data=tmp_path / "data")
    schoolclass = make_class(server, "4D", [{"name": "Ada"}, {"name": "Bo"}])
    ids = member_ids(schoolclass)
    room = class_room(server, schoolclass)
    asyncio.run(play(server, room, {ids["Ada"]: RIGHT, ids["Bo"]: [2, 0, 1]}))

    async def erase_while_watched():
        teacher = await screen(server, room, "control", "teacherToken")
        podium = await screen(server, room)
        assert all('"Bo"' in json.dumps(client.frames[-1]) for client in (teacher, podium)), "Bo is on the results"
        status, body = api(server, "DELETE", f"/api/classes/{schoolclass['id']}/members/{ids['Bo']}/data")
        assert status == 204, body
        for client in (teacher, podium):
            # The room as stored now, on the same connection: no room_ended, no reconnecting.
            welcome = await client.expect("welcome")
            assert welcome["room"]["phase"] == "finished"
            assert '"Bo"' not in json.dumps(welcome) and ids["Bo"] not in json.dumps(welcome)
            assert '"Ada"' in json.dumps(welcome)
            await client.send({"type": "ping", "id": 7, "clientTime": 0})
            assert (await client.expect("pong"))["id"] == 7
            assert not any(frame["type"] == "error" for frame in client.frames)
        await teacher.close()
        await podium.close()

    asyncio.run(erase_while_watched())
    status, raw = api(server, "GET", f"/api/rooms/{room['code']}/results?format=csv", token=room["teacherToken"])
    assert status == 200 and {row["child"] for row in csv.DictReader(io.StringIO(raw.decode("utf-8-sig")))} == {"Ada"}


def test_a_class_behind_one_address_joins_with_one_hello_each_from_the_names_connection(make_server, tmp_path):
    # The default burst of hellos per address (joinBurst 60), nearly without refill: 40 children of one
    # school, one address, each asking the names and joining on that same connection, as the page does, all
    # get in; two hellos each would have been 80.
    server = make_server(config={"joinsPerSecond": 0.01}, data=tmp_path / "data")
    schoolclass = make_class(server, "5F", [{"name": f"Kid {n}"} for n in range(10)])
    plain_room, class_room_ = server.create_room(), class_room(server, schoolclass)

    async def children(room, count, join):
        clients = []
        for n in range(count):
            client, names = await picker(server, room)
            await client.send({"type": "join", "room": room["code"], **join(n, names)})
            welcome = await client.expect("welcome")
            assert welcome["role"] == "child" and welcome["token"], (n, welcome)
            clients.append(client)
        return clients

    async def class_of_forty():
        plain = await children(plain_room, 30, lambda n, names: {"nickname": f"Child {n}"})
        picked = await children(class_room_, 10, lambda n, names: {"member": names["children"][n]["id"]})
        for client in plain + picked:
            await client.close()
        # The burst is real: 20 more hellos fit, the next is refused.
        more = []
        for _ in range(20):
            client, _ = await picker(server, plain_room)
            more.append(client)
        refused = await Client.connect(server)
        await refused.send({"type": "names", "room": plain_room["code"]})
        assert (await refused.expect("error"))["code"] == "rate_limited"
        for client in more:
            await client.close()

    asyncio.run(class_of_forty())
    status, results = api(server, "GET", f"/api/rooms/{plain_room['code']}/results", token=plain_room["teacherToken"])
    assert status == 200 and len(results["players"]) == 30


def test_a_live_room_follows_its_class_when_the_teacher_saves_it(make_server, tmp_path):
    server = make_server(config=CONFIG, data=tmp_path / "data")
    schoolclass = make_class(server, "6G", [{"name": "Ada"}, {"name": "Bo"}])
    ids = member_ids(schoolclass)
    room = class_room(server, schoolclass)

    async def scenario():
        ada, _ = await pick(server, room, ids["Ada"])
        waiting, names = await picker(server, room)
        assert [c["name"] for c in names["children"]] == ["Ada", "Bo"]
        # Cy joins the class, and Ada (who is in the room) and Bo (who is not) leave it.
        status, body = api(server, "PUT", f"/api/classes/{schoolclass['id']}",
                           {"version": schoolclass["version"], "name": "6G", "children": [{"name": "Cy", "avatar": "cat"}]})
        assert status == 200, body
        fresh = await waiting.expect("names")
        assert [(c["name"], c["taken"]) for c in fresh["children"]] == [("Cy", False), ("Ada", True)]
        await waiting.send({"type": "join", "room": room["code"], "member": fresh["children"][0]["id"]})
        assert (await waiting.expect("welcome"))["player"]["nickname"] == "Cy"
        late, _ = await picker(server, room)
        await late.send({"type": "join", "room": room["code"], "member": ids["Bo"]})
        assert (await late.expect("error"))["code"] == "member_not_found"
        for client in (ada, waiting, late):
            await client.close()

    asyncio.run(scenario())


def test_names_is_refused_in_a_locked_room_but_a_released_name_can_be_picked_again(make_server, tmp_path):
    server = make_server(config=CONFIG, data=tmp_path / "data")
    schoolclass = make_class(server, "7H", [{"name": "Ada"}, {"name": "Bo"}])
    ids = member_ids(schoolclass)
    room = class_room(server, schoolclass)
    plain_room = server.create_room()

    async def scenario():
        tablet, welcome = await pick(server, room, ids["Ada"])
        for locked in (room, plain_room):
            assert server.command(locked, "lock")[0] == 200
        for locked in (room, plain_room):
            stranger = await Client.connect(server)
            await stranger.send({"type": "names", "room": locked["code"]})
            assert (await stranger.expect("error"))["code"] == "room_locked"
            assert await stranger.close_code() == (1008, "room_locked")
            assert "names" not in stranger.types(), "nobody with the code learns who is in the room"
        # Ada's tablet is flat: released, her new device is offered her name alone, and she is back.
        assert server.command(room, "release", member=ids["Ada"])[0] == 200
        new_device, names = await picker(server, room)
        assert [c["name"] for c in names["children"]] == ["Ada"]
        await new_device.send({"type": "join", "room": room["code"], "member": ids["Ada"]})
        assert (await new_device.expect("welcome"))["player"]["id"] == welcome["player"]["id"]
        await new_device.close()
        await tablet.close()

    asyncio.run(scenario())


def test_a_token_of_another_room_and_an_unknown_class_are_refused_clearly(make_server, tmp_path):
    server = make_server(config=CONFIG, data=tmp_path / "data")
    schoolclass = make_class(server, "4D", [{"name": "Ada"}])
    one = class_room(server, schoolclass)
    two = class_room(server, schoolclass)

    async def scenario():
        _, welcome = await pick(server, one, member_ids(schoolclass)["Ada"])
        client = await Client.connect(server)
        await client.send({"type": "rejoin", "room": two["code"], "token": welcome["token"]})
        refused = await client.expect("error")
        assert refused["code"] == "token_not_for_room"
        assert (await client.close_code())[0] == 1008

    asyncio.run(scenario())
    status, body = api(server, "POST", "/api/rooms", {"story": STORY, "classId": "cls_nothing"})
    assert status == 404 and body["error"]["code"] == "class_not_found"
    status, body = api(server, "DELETE", f"/api/classes/{schoolclass['id']}")
    assert status == 409 and body["error"]["code"] == "class_in_use"


def test_start_with_a_class_runs_a_class_room(make_server, tmp_path):
    data = tmp_path / "data"
    server = make_server(data=data)
    schoolclass = make_class(server, "5E", [{"name": "Ada", "avatar": "owl"}])
    server.stop()

    process = subprocess.Popen([BIN, "start", str(SHORT_STORY), "--class", "5e", "--port", "0", "--data", str(data), "--no-keys"],
                               cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        lines = []
        for line in process.stdout:
            lines.append(line)
            if line.startswith("● "):
                break
        banner = "".join(lines)
        port, code = re.search(r"Join link: +http://[^:/]+:(\d+)/\?room=(\d{6})", banner).groups()

        async def names():
            import websockets
            async with websockets.connect(f"ws://127.0.0.1:{port}/ws") as ws:
                await ws.send(json.dumps({"type": "names", "room": code}))
                return json.loads(await asyncio.wait_for(ws.recv(), 15))

        answer = asyncio.run(names())
        assert answer["class"] == {"name": "5E"}, banner
        assert [c["name"] for c in answer["children"]] == ["Ada"]
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=20)
    missing = subprocess.run([BIN, "start", str(SHORT_STORY), "--class", "nobody", "--port", "0", "--data", str(data), "--no-keys"],
                             cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert missing.returncode == 1 and "Error: there is no class called nobody" in missing.stderr
