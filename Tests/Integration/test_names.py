"""Nicknames that cannot be gamed, over real sockets: look-alikes of a blocked name are refused as blocked
(after a kill -9 and restart too), look-alikes of a child in the room as taken, and a name that is too long
is refused with the limit, never cut. (The folding rules: docs/protocol.md, "How names are compared".)"""
import asyncio
import json
import re

from conftest import Client, join

CYRILLIC_POOPY = "\u0420\u043e\u043e\u0440\u0443 \u0420\u0430nts"  # Р о о р у / Р а are Cyrillic
BLOCKED_LOOKALIKES = ["P00py Pants", "Poopy  Pants", "poopy pants", CYRILLIC_POOPY, "ＰＯＯＰＹ ＰＡＮＴＳ", "Poopy-Pants"]
# Many refusals from one address in a row: the test is not a flood.
CONFIG = {"failedJoinBurst": 200, "failedJoinsPerMinute": 600}


async def refusal(server, room, nickname):
    """The error a join with `nickname` gets (and the close that follows), or the welcome if it got in."""
    client = await Client.connect(server)
    await client.send({"type": "join", "room": room["code"], "nickname": nickname})
    reply = await client.recv()
    await client.close()
    return reply


def test_lookalikes_of_a_blocked_name_are_blocked_and_of_a_present_child_taken(make_server, tmp_path):
    server = make_server(config=CONFIG, data=tmp_path / "data")
    room = server.create_room()

    async def before_restart():
        poopy, _ = await join(server, room, "Poopy Pants")
        ada, _ = await join(server, room, "Ada")
        status, _ = server.command(room, "block", player="Poopy Pants")
        assert status == 200
        notice = await poopy.expect("kicked")
        assert notice["code"] == "blocked"
        for name in BLOCKED_LOOKALIKES:
            reply = await refusal(server, room, name)
            assert reply["type"] == "error" and reply["code"] == "blocked", (name, reply)
            assert reply["params"]["nickname"] == re.sub(r"\s+", " ", name), "the name as typed (spacing collapsed), not its key"
        for name in ["\u0410da", "ADA", "A da"]:
            reply = await refusal(server, room, name)
            assert reply["type"] == "error" and reply["code"] == "nickname_taken", (name, reply)
        # Names that only resemble in meaning or sound are names of their own.
        for name in ["Puppy Pants", "Adam"]:
            _, welcome = await join(server, room, name)
            assert welcome["player"]["nickname"] == name
        await ada.close()

    asyncio.run(before_restart())
    server.kill()
    restarted = make_server(config=CONFIG, data=tmp_path / "data")

    async def after_restart():
        for name in BLOCKED_LOOKALIKES:
            reply = await refusal(restarted, room, name)
            assert reply["code"] == "blocked", (name, reply)
        reply = await refusal(restarted, room, "\u0410DA")
        assert reply["code"] == "nickname_taken", "Ada is still in the room (disconnected), her name with her"

    asyncio.run(after_restart())


def test_a_name_too_long_is_refused_with_the_limit_and_the_page_shows_the_same_limit(server):
    room = server.create_room()
    long_name = "Maximiliana Theodora Anneliese von Rosenberg"
    assert len(long_name) == 44

    async def scenario():
        reply = await refusal(server, room, long_name)
        assert reply["code"] == "nickname_invalid"
        assert reply["params"] == {"problem": "too_long", "length": "44", "max": "40"}
        assert "at most 40" in reply["message"]
        # Forty letters, emoji counted as one each as the page counts them, are welcome.
        _, welcome = await join(server, room, "👩‍🚀" * 40)
        assert welcome["player"]["nickname"] == "👩‍🚀" * 40

    asyncio.run(scenario())
    status, _, body = server.request("GET", "/index.html")
    assert status == 200
    field = re.search(r'<input id="nickname"[^>]*>', body.decode()).group(0)
    assert 'data-max-length="40"' in field and "maxlength" not in field, "the page shows the limit and never cuts"
    catalogs = {lang: json.loads((server_root() / f"web-static/i18n/{lang}.json").read_text()) for lang in ["en", "es", "fr", "de", "pt", "ar"]}
    for lang, catalog in catalogs.items():
        assert "{max}" in catalog["names.too_long"] and "{count}" in catalog["names.too_long"], lang
        assert "{max}" in catalog["error.nickname_invalid.too_long"], lang


def server_root():
    import pathlib
    return pathlib.Path(__file__).resolve().parents[2]


def results(server, room, csv=False):
    status, _, body = server.request("GET", f"/api/rooms/{room['code']}/results" + ("?format=csv" if csv else ""), room["teacherToken"])
    assert status == 200, body
    return body.decode("utf-8-sig") if csv else json.loads(body)


def test_a_child_removed_by_mistake_comes_back_with_their_points_and_answers_after_a_restart_too(make_server, tmp_path):
    """The teacher removes Ana (not blocks): her browser's token brings back the same child, one row in
    the results and the CSV, and the room stored so after a kill -9 too."""
    from conftest import wait_until
    server = make_server(data=tmp_path / "data")
    room = server.create_room()
    state = {}

    async def before_restart():
        ana, welcome = await join(server, room, "Ana")
        state["token"] = welcome["token"]
        ben, _ = await join(server, room, "Ben")
        server.command(room, "start")
        server.command(room, "skip")
        question = await ana.expect("question")
        await wait_until(question["opensAt"])
        await ana.send({"type": "answer", "question": 0, "option": 0})  # "A gear": right
        await ana.expect("answer.ack")
        await ben.send({"type": "answer", "question": 0, "option": 1})
        reveal = await ana.expect("reveal")
        state["score"] = reveal["you"]["standing"]["score"]
        assert state["score"] > 0

        status, _ = server.command(room, "kick", player="Ana")
        assert status == 200
        assert (await ana.expect("kicked"))["code"] == "kicked"
        assert [p["nickname"] for p in results(server, room)["players"]] == ["Ben"]

        back = await Client.connect(server)
        await back.send({"type": "rejoin", "room": room["code"], "token": state["token"]})
        welcome = await back.expect("welcome")
        assert welcome["player"] == {"id": "p1", "nickname": "Ana"}, "the same child, not a new one"
        assert welcome["room"]["you"]["score"] == state["score"]
        assert welcome["room"]["reveal"]["you"]["outcome"] == "correct"
        players = results(server, room)["players"]
        assert sorted(p["nickname"] for p in players) == ["Ana", "Ben"]
        assert next(p for p in players if p["nickname"] == "Ana")["score"] == state["score"]
        await back.close()

    asyncio.run(before_restart())
    server.kill()
    restarted = make_server(data=tmp_path / "data")

    async def after_restart():
        back = await Client.connect(restarted)
        await back.send({"type": "rejoin", "room": room["code"], "token": state["token"]})
        welcome = await back.expect("welcome")
        assert welcome["player"]["id"] == "p1" and welcome["room"]["you"]["score"] == state["score"]
        csv = results(restarted, room, csv=True)
        import csv as csvmodule
        rows = list(csvmodule.DictReader(csv.splitlines()))
        children = {(row["child"], row["player_id"]) for row in rows}
        assert children == {("Ana", "p1"), ("Ben", "p2")}, csv
        first = next(row for row in rows if row["player_id"] == "p1" and row["question"] == "1")
        assert first["result"] == "right" and int(first["total_points"]) == state["score"], csv
        await back.close()

    asyncio.run(after_restart())
