"""A crash in the middle of a quiz loses nothing that was acknowledged: an answer is acknowledged only once
it is stored, so a child told "Saved" has nothing to answer again after a restart."""
import asyncio
import csv
import io
import json
import signal
import subprocess

from conftest import BIN, ROOT, Client, Server, join, wait_until


def test_kill_9_after_acknowledged_answers_loses_nothing(tmp_path):
    data = tmp_path / "data"
    server = Server(data).start()
    room = server.create_room()
    acknowledged = {}
    tokens = {}

    async def before_the_crash():
        children = []
        for name in ("Ana", "Ben", "Cat", "Dan", "Eve"):
            client, welcome = await join(server, room, name)
            tokens[name] = welcome["token"]
            children.append((name, client))
        server.command(room, "start")
        server.command(room, "skip")
        # Question 1: everyone answers; the reveal comes when all have.
        question = await children[0][1].expect("question")
        await wait_until(question["opensAt"])
        for i, (name, client) in enumerate(children):
            await client.send({"type": "answer", "question": 0, "option": i % 3})
        for name, client in children:
            ack = await client.expect("answer.ack")
            acknowledged[(name, 0)] = ack["option"]
            await client.expect("reveal")
        assert server.command(room, "next")[0] == 200
        # Question 2: a batch of answers from four children, each acknowledged, then the crash.
        question = await children[0][1].expect("question")
        await wait_until(question["opensAt"])
        for i, (name, client) in enumerate(children[:4]):
            await client.send({"type": "answer", "question": 1, "option": (i + 1) % 4})
        for name, client in children[:4]:
            ack = await client.expect("answer.ack")
            acknowledged[(name, 1)] = ack["option"]
        scores = {}
        for name, client in children:
            last = [f for f in client.frames if f["type"] == "reveal"][-1]
            scores[name] = last["you"]["standing"]["score"]
        # The crash comes while every child is still connected: were Eve to leave first, the four who
        # answered would be everyone, and the room would rightly reveal before the crash.
        server.kill()  # SIGKILL: no goodbye, no flush
        return scores

    scores = asyncio.run(before_the_crash())
    assert server.process.returncode == -signal.SIGKILL

    again = Server(data).start()
    try:
        assert again.wait_for_output("Restored 1 unfinished room")
        status, _, body = again.request("GET", f"/api/rooms/{room['code']}/results", room["teacherToken"])
        assert status == 200
        results = json.loads(body)
        stored = {(p["nickname"], a["question"]): a["option"] for p in results["players"] for a in p["answers"] if a.get("option") is not None}
        assert stored == acknowledged, "every acknowledged answer is there, and nothing else"

        status, _, body = again.request("GET", f"/api/rooms/{room['code']}", room["teacherToken"])
        report = json.loads(body)
        assert report["phase"] == "question" and report["question"] == 1, "the room resumes at question 2"
        assert report["players"] == 5 and report["connectedPlayers"] == 0

        async def after_the_restart():
            for name, token in tokens.items():
                client = await Client.connect(again)
                await client.send({"type": "rejoin", "room": room["code"], "token": token})
                welcome = await client.expect("welcome")
                assert welcome["player"]["nickname"] == name
                assert welcome["room"]["you"]["score"] == scores[name], f"{name} finds their points"
                question = welcome["room"]["question"]
                assert question["index"] == 1
                # The rule (docs/operations.md): the open question reopens with its full time, a few
                # seconds after the restart, and answers given before the crash stand.
                assert question["deadline"] - question["opensAt"] == question["timeLimitMs"]
                if (name, 1) in acknowledged:
                    assert welcome["room"]["yourAnswer"] == acknowledged[(name, 1)]
                else:
                    await wait_until(question["opensAt"])
                    await client.send({"type": "answer", "question": 1, "option": 0})
                    await client.expect("answer.ack")
                await client.close()

        asyncio.run(after_the_restart())
        status, _, body = again.request("GET", f"/api/rooms/{room['code']}/results?format=csv", room["teacherToken"])
        rows = list(csv.DictReader(io.StringIO(body.decode("utf-8-sig"))))
        assert len(rows) == 5 * 3, "one row per child per question"
        answered = {(r["child"], int(r["question"]) - 1) for r in rows if r["answer"]}
        assert set(acknowledged) <= answered
        assert ("Eve", 1) in answered, "the child who had not answered could, after the restart"
    finally:
        again.stop()


def test_a_second_server_on_the_same_data_folder_is_refused_naming_the_first(tmp_path):
    data = tmp_path / "data"
    first = Server(data).start()
    try:
        result = subprocess.run(
            [BIN, "serve", "--port", "0", "--data", str(data)], cwd=ROOT, capture_output=True, text=True, timeout=30,
        )
        output = result.stdout + result.stderr
        print(f"FIGURE two servers: the second exited {result.returncode}: {output.strip()}")
        assert result.returncode == 1, output
        assert f"another StoryCircle server (pid {first.process.pid}) is already using the data folder" in output
        assert "listening" not in output
        assert first.request("GET", "/healthz")[0] == 200, "the first one runs on, untouched"
    finally:
        first.stop()
    # Once the first has stopped, the folder is free (a crash frees it too: the lock dies with the process).
    second = Server(data).start()
    second.kill()
    Server(data).start().stop()


def test_a_finished_room_comes_back_after_a_restart(tmp_path):
    data = tmp_path / "data"
    server = Server(data).start()
    room = server.create_room()

    async def play():
        ana, welcome = await join(server, room, "Ana")
        server.command(room, "start")
        server.command(room, "skip")
        question = await ana.expect("question")
        await wait_until(question["opensAt"])
        await ana.send({"type": "answer", "question": 0, "option": 0})
        await ana.expect("reveal")
        assert server.command(room, "end")[0] == 200
        finished = await ana.expect("finished")
        return welcome["token"], finished["you"]["score"]

    token, score = asyncio.run(play())
    before = server.request("GET", f"/api/rooms/{room['code']}/results", room["teacherToken"])[2]
    server.stop()

    again = Server(data).start()
    try:
        async def come_back():
            ana = await Client.connect(again)
            await ana.send({"type": "rejoin", "room": room["code"], "token": token})
            welcome = await ana.expect("welcome")
            assert welcome["room"]["phase"] == "finished"
            assert welcome["room"]["finished"]["you"]["score"] == score
            late = await Client.connect(again)
            await late.send({"type": "join", "room": room["code"], "nickname": "Late"})
            assert (await late.expect("error"))["code"] == "room_ended", "not room_not_found: the room is there"

        asyncio.run(come_back())
        status, _, after = again.request("GET", f"/api/rooms/{room['code']}/results", room["teacherToken"])
        assert status == 200
        assert json.loads(after) == json.loads(before), "results stay"
    finally:
        again.stop()
