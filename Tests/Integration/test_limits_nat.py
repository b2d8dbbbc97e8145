"""A school behind one NAT address: one pupil guessing room codes must not lock out the rest of it
(docs/operations.md, "Guessing room codes"). Real sockets, every client from 127.0.0.1."""
import asyncio
import time

import pytest
import websockets

from conftest import Client, join, screen

GUESS = {"type": "join", "room": "100000", "nickname": "Guess"}


async def guess(server, code="100000"):
    """One wrong code on its own connection: (error code, close code, seconds until the answer)."""
    client = await Client.connect(server)
    started = time.monotonic()
    await client.send({**GUESS, "room": code})
    error = await client.expect("error", timeout=30)
    took = time.monotonic() - started
    close, _ = await client.close_code()
    return error["code"], close, took


async def everyone_else_gets_in(server, room, token, timeout):
    """From the same address: the child coming back, the teacher, the projector and a new child."""
    back = await Client.connect(server)
    await back.send({"type": "rejoin", "room": room["code"], "token": token})
    assert (await back.expect("welcome", timeout=timeout))["player"]["nickname"] == "Ana"
    teacher = await Client.connect(server)
    await teacher.send({"type": "control", "room": room["code"], "token": room["teacherToken"]})
    assert (await teacher.expect("welcome", timeout=timeout))["role"] == "teacher"
    projector = await Client.connect(server)
    await projector.send({"type": "watch", "room": room["code"], "token": room["dashboardToken"]})
    assert (await projector.expect("welcome", timeout=timeout))["role"] == "dashboard"
    return back, teacher, projector


def test_the_issues_probe_fifteen_wrong_codes_lock_nobody_out(make_server):
    # The defaults, as a school runs them.
    server = make_server()
    room = server.create_room()

    async def scenario():
        ana, welcome = await join(server, room, "Ana")
        token = welcome["token"]
        await ana.close()
        for _ in range(15):
            code, close, _ = await guess(server)
            assert (code, close) == ("room_not_found", 1008)
        screens = await everyone_else_gets_in(server, room, token, timeout=5)
        bea, _ = await join(server, room, "Bea")
        for client in (*screens, bea):
            await client.close()

    asyncio.run(scenario())


def test_a_guesser_past_the_budget_is_slowed_while_the_others_of_its_address_are_not(make_server):
    # Five wrong codes allowed, one back a second, at most 3 s of waiting.
    server = make_server(config={"failedJoinBurst": 5, "failedJoinsPerMinute": 60, "failedJoinMaxDelaySeconds": 3})
    room = server.create_room()

    async def scenario():
        ana, welcome = await join(server, room, "Ana")
        token = welcome["token"]
        await ana.close()
        for _ in range(5):
            code, _, took = await guess(server)
            assert code == "room_not_found" and took < 1
        # Ten more side by side, then a new child with the right code: each waits for the ones before it
        # (1 s, 2 s, then the 3 s at most), the child too, right or wrong alike, so the timing tells nothing.
        guessers = [await Client.connect(server) for _ in range(10)]
        started = time.monotonic()
        for n, client in enumerate(guessers):
            await client.send({**GUESS, "room": str(100001 + n)})
        bea = await Client.connect(server)
        await bea.send({"type": "join", "room": room["code"], "nickname": "Bea"})
        # Meanwhile the child coming back, the teacher and the projector are answered at once.
        screens_started = time.monotonic()
        screens = await everyone_else_gets_in(server, room, token, timeout=5)
        assert time.monotonic() - screens_started < 0.9

        async def answer(client):
            error = await client.expect("error", timeout=10)
            return error["code"], (await client.close_code())[0], time.monotonic() - started

        answers = await asyncio.gather(*(answer(client) for client in guessers))
        assert {(code, close) for code, close, _ in answers} == {("room_not_found", 1008)}
        assert 2.5 <= max(took for _, _, took in answers) < 6
        # The guessing connections were closed; the new child got in, after its wait.
        assert (await bea.expect("welcome", timeout=10))["player"]["nickname"] == "Bea"
        assert 2.5 <= time.monotonic() - started < 6
        status, _, body = server.request("GET", "/metrics")
        assert status == 200
        held_count = next(int(line.split()[-1]) for line in body.decode().splitlines() if line.startswith("storycircle_joins_held_total"))
        assert held_count >= 10
        for client in (*screens, bea):
            await client.close()

    asyncio.run(scenario())


def test_a_guesser_cannot_open_more_than_its_share_of_connections(make_server):
    server = make_server(config={"maxConnectionsPerAddress": 8, "failedJoinBurst": 1, "failedJoinMaxDelaySeconds": 5})

    async def scenario():
        assert (await guess(server))[0] == "room_not_found"
        # Eight guesses waiting side by side fill the address's places; the ninth connection is refused.
        waiting = [await Client.connect(server) for _ in range(8)]
        for n, client in enumerate(waiting):
            await client.send({**GUESS, "room": str(200000 + n)})
        with pytest.raises(websockets.InvalidStatusCode) as refused:
            await Client.connect(server)
        assert refused.value.status_code == 429
        for client in waiting:
            await client.close()

    asyncio.run(scenario())


def test_too_many_hellos_are_refused_with_the_seconds_to_wait(make_server):
    server = make_server(config={"joinBurst": 2, "joinsPerSecond": 0.2})
    room = server.create_room()

    async def scenario():
        first, _ = await join(server, room, "Ana")
        second, _ = await join(server, room, "Bea")
        third = await Client.connect(server)
        await third.send({"type": "join", "room": room["code"], "nickname": "Cy"})
        error = await third.expect("error")
        assert error["code"] == "rate_limited"
        assert 1 <= int(error["params"]["retryAfter"]) <= 5
        assert await third.close_code() == (1008, "rate_limited")
        # The teacher's screen is never one of the hellos counted.
        teacher = await screen(server, room, kind="control", token_key="teacherToken")
        for client in (first, second, teacher):
            await client.close()

    asyncio.run(scenario())
