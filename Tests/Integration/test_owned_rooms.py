"""A room whose owner account is disabled mid-lesson, over real sockets against the real binary: the room
carries on for the children and the projector, while its teacher token controls nothing (WebSocket commands
and the teacher's HTTP routes refused with `account_disabled`) within a second of the disabling, whichever
node disabled it; enabled again, the teacher carries on."""
import asyncio
import json
import pathlib
import sqlite3
import time

from conftest import SHORT_STORY, Client, join, screen, wait_until
from test_sessions import Browser, admin, make_account


def teachers_room(server, login):
    """A room started by a signed-in teacher (so it is theirs), and the teacher's account."""
    account = make_account(server, login)
    browser = Browser(server)
    assert browser.sign_in(login)[0] == 200
    story = json.loads(pathlib.Path(SHORT_STORY).read_text())
    status, _, room = browser.request("POST", "/api/rooms", {"story": story}, headers={"Origin": server.http})
    assert status == 201, room
    return account, room


def set_disabled_in_the_store(server, account, disabled):
    """What another node's administrator does: the row changes in the shared store, and this node only
    learns it from its next read."""
    with sqlite3.connect(server.data / "storycircle.sqlite", timeout=10) as db:
        db.execute("UPDATE accounts SET disabled = ?, version = version + 1 WHERE id = ?", (1 if disabled else 0, account["id"]))


async def refused_within(teacher, seconds):
    """Sends a command the room refuses for its own reason (no such child) until it is refused for the
    owner's instead; returns how long that took and the refusal. The tries are 50 ms apart: the room allows
    a teacher's page a burst of 40 messages and 10 a second, which this stays within for 4 seconds."""
    started = time.monotonic()
    while True:
        await teacher.send({"type": "command", "command": "kick", "player": "p99"})
        error = await teacher.expect("error")
        if error["code"] == "account_disabled" or time.monotonic() - started > seconds:
            return time.monotonic() - started, error
        assert error["code"] == "player_not_found", error
        await asyncio.sleep(0.05)


def test_a_disabled_owners_room_carries_on_but_its_teacher_controls_nothing_within_a_second(server):
    account, room = teachers_room(server, "tia")

    async def scenario():
        teacher = await screen(server, room, kind="control", token_key="teacherToken")
        projector = await screen(server, room)
        ana, _ = await join(server, room, "Ana")
        await teacher.send({"type": "command", "command": "start"})
        await teacher.send({"type": "command", "command": "skip"})
        question = await ana.expect("question")
        await wait_until(question["opensAt"])

        # Disabled on another node: this one stops the controls on its next read of the store.
        set_disabled_in_the_store(server, account, True)
        took, error = await refused_within(teacher, 3.5)
        assert error["code"] == "account_disabled", error
        assert error["params"]["code"] == room["code"] and error["message"]
        assert took <= 1.0, f"the teacher's controls stopped {took:.2f} s after the disabling"
        await teacher.send({"type": "command", "command": "next"})
        assert (await teacher.expect("error"))["code"] == "account_disabled", "nothing the teacher sends is done"

        # The children play on: the answer counts (everyone answered, so the room reveals by itself), and
        # the projector still follows the room.
        await ana.send({"type": "answer", "question": question["index"], "option": 0})
        await ana.expect("answer.ack")
        reveal = await ana.expect("reveal")
        assert reveal["you"]["outcome"] in ("correct", "wrong"), "the answer given while the teacher was stopped counted"
        await projector.expect("reveal")
        status, _, shown = server.request("GET", f"/api/rooms/{room['code']}", room["dashboardToken"])
        assert status == 200 and json.loads(shown)["phase"] == "reveal"
        # The teacher's HTTP routes are refused too, with the same words; the admin token still controls it.
        for method, path, body in [("POST", f"/api/rooms/{room['code']}/commands", {"command": "next"}), ("GET", f"/api/rooms/{room['code']}/results", None)]:
            status, _, refused = server.request(method, path, room["teacherToken"], body)
            assert status == 403 and json.loads(refused)["error"]["code"] == "account_disabled", (path, refused)
        assert server.request("GET", f"/api/rooms/{room['code']}/results", server.admin_token)[0] == 200

        # Enabled again through the API: this node gives the controls back at once.
        status, current = admin(server, "GET", f"/api/accounts/{account['id']}")
        status, changed = admin(server, "PATCH", f"/api/accounts/{account['id']}", {"version": current["version"], "disabled": False})
        assert status == 200 and changed["disabled"] is False, changed
        await teacher.send({"type": "command", "command": "kick", "player": "p99"})
        assert (await teacher.expect("error"))["code"] == "player_not_found"
        status, reply = server.command(room, "next")
        assert status == 200, reply
        assert (await ana.expect("question"))["index"] == question["index"] + 1
        for client in (teacher, projector, ana):
            await client.close()

    asyncio.run(scenario())


def test_disabling_through_the_api_stops_the_teacher_at_once_and_a_new_connection_too(server):
    account, room = teachers_room(server, "uma")

    async def scenario():
        ana, _ = await join(server, room, "Ana")
        status, current = admin(server, "GET", f"/api/accounts/{account['id']}")
        status, changed = admin(server, "PATCH", f"/api/accounts/{account['id']}", {"version": current["version"], "disabled": True})
        assert status == 200, changed
        # No wait at all on the node that disabled it, and a teacher who reconnects is no better off.
        teacher = await screen(server, room, kind="control", token_key="teacherToken")
        await teacher.send({"type": "command", "command": "start"})
        error = await teacher.expect("error")
        assert error["code"] == "account_disabled", error
        status, _, refused = server.request("POST", f"/api/rooms/{room['code']}/commands", room["teacherToken"], {"command": "start"})
        assert status == 403 and json.loads(refused)["error"]["code"] == "account_disabled"
        status, _, shown = server.request("GET", f"/api/rooms/{room['code']}", room["dashboardToken"])
        assert status == 200 and json.loads(shown)["phase"] == "lobby", "nothing was started"
        for client in (teacher, ana):
            await client.close()

    asyncio.run(scenario())
