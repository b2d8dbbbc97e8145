"""The pages' side of the protocol that other parts of the server send only when something goes wrong:
`storage_unavailable` for an answer and for a join (close 1013), the teacher's `storage` banner, a
`welcome` at any time, upgrades refused with 429/503 and closes 1012/1013, retried with growing pauses;
and the clock sync's timers after "Try again". A tiny scripted server (Python's
websockets) serves the real pages and plays the other side, so each case happens exactly when the test
says. The real server's own paths are tested in test_browser.py."""
import asyncio
import http
import json
import mimetypes
import threading
import time

import pytest
from selenium.webdriver.common.by import By
from websockets.asyncio.server import serve
from websockets.datastructures import Headers
from websockets.http11 import Response

from browser_support import PHONE, TEACHER, axe, browser, join_screen, screenshot, text, visible, wait
from conftest import ROOT

WEB = ROOT / "web-static"
PAGES = {"/": "index.html", "/teacher": "teacher.html", "/dashboard": "dashboard.html"}
CODE = "123456"


def now_ms():
    return int(time.time() * 1000)


class FakeRoomServer:
    """Serves web-static/ over HTTP and answers /ws with `script(fake, ws, hello)`. `refuse` lists HTTP
    statuses for the next upgrades (429, 503); every upgrade is recorded with its time and path."""

    def __init__(self, script):
        self.script = script
        self.refuse = []
        self.upgrades = []
        self.hellos = []
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        threading.Thread(target=self._run, args=(ready,), daemon=True).start()
        assert ready.wait(10), "the fake server did not start"

    def _run(self, ready):
        asyncio.set_event_loop(self.loop)

        async def main():
            self.server = await serve(self._handler, "127.0.0.1", 0, process_request=self._process, ping_interval=None)
            self.port = self.server.sockets[0].getsockname()[1]
            ready.set()
            await self.server.serve_forever()

        try:
            self.loop.run_until_complete(main())
        except asyncio.CancelledError:
            pass

    @property
    def http(self):
        return f"http://127.0.0.1:{self.port}"

    def _process(self, connection, request):
        path = request.path
        if path.startswith("/ws"):
            status = self.refuse.pop(0) if self.refuse else 101
            self.upgrades.append((time.monotonic(), path, status))
            return connection.respond(status, "Busy, try again later.\n") if status != 101 else None
        file = WEB / PAGES.get(path.split("?")[0], path.split("?")[0].lstrip("/"))
        if not file.resolve().is_relative_to(WEB.resolve()) or not file.is_file():
            return connection.respond(http.HTTPStatus.NOT_FOUND, "Not found\n")
        kind = "text/javascript" if file.suffix == ".js" else mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        body = file.read_bytes()
        return Response(200, "OK", Headers([("Content-Type", kind), ("Content-Length", str(len(body))), ("Cache-Control", "no-store")]), body)

    async def _handler(self, ws):
        hello = json.loads(await ws.recv())
        self.hellos.append((time.monotonic(), ws.request.path, hello))
        await self.script(self, ws, hello)

    def stop(self):
        self.loop.call_soon_threadsafe(self.server.close)


@pytest.fixture
def fakes():
    started = []

    def start(script):
        fake = FakeRoomServer(script)
        started.append(fake)
        return fake

    yield start
    for fake in started:
        fake.stop()


@pytest.fixture
def browsers():
    opened = []

    def open_browser(**kwargs):
        driver = browser(**kwargs)
        opened.append(driver)
        return driver

    yield open_browser
    for driver in opened:
        driver.quit()


SETTINGS = {"speedPoints": True, "streakBonus": True, "timer": True, "questionSeconds": 20, "lateJoin": True,
            "narration": "devices", "readQuestions": False, "maxPlayers": 3000, "answerGrid": False}


def child_welcome(phase="question", token="resume-token", your_answer=None, reveal=None):
    at = now_ms()
    room = {"code": CODE, "title": "Pip's Day", "phase": phase, "paused": False, "locked": False, "settings": SETTINGS,
            "questionCount": 2, "playerCount": 1, "you": {"score": 0, "rank": 1, "streak": 0, "results": []}}
    if phase in ("question", "reveal"):
        room["question"] = {"index": 0, "count": 2, "text": "Who had the gear?", "options": ["A cat", "A mouse"],
                            "opensAt": at - 1000, "deadline": at + 120000, "timeLimitMs": 121000}
    if your_answer is not None:
        room["yourAnswer"] = your_answer
    if reveal:
        room["reveal"] = reveal
    return {"type": "welcome", "role": "child", "player": {"id": "p1", "nickname": "Ana"}, "token": token,
            "serverTime": at, "room": room}


def send(ws, message):
    return ws.send(json.dumps(message))


def open_child(driver, fake):
    # The code put in the field without an input event, not linked nor typed: a linked room, and a code
    # typed to its sixth digit, are first asked for their names (a class room's picker), and these scripts
    # play only the join with a nickname.
    driver.get(f"{fake.http}/")
    wait(driver, lambda d: visible(d, "#nickname"))
    driver.execute_script("document.getElementById('room-code').value = arguments[0]", CODE)
    driver.find_element(By.ID, "nickname").send_keys("Ana")
    driver.find_element(By.ID, "join-button").click()


def option(driver, label):
    return next((b for b in driver.find_elements(By.CSS_SELECTOR, "#options .option")
                 if b.find_element(By.CLASS_NAME, "label").get_attribute("textContent") == label), None)


NAMES_ANSWERS = {
    "form": {"type": "names", "room": CODE, "class": None, "children": []},
    "picker": {"type": "names", "room": CODE, "class": {"id": "cls_1", "name": "Class 1B"},
               "children": [{"id": "mem_1", "name": "Ada", "avatar": "owl", "taken": False}]},
    # A server without class rooms refuses the `names` hello: the typed join, as before.
    "refused": {"type": "error", "code": "unknown_type", "message": "Unknown message type."},
}


@pytest.mark.parametrize("answer", NAMES_ANSWERS)
def test_a_linked_join_screen_says_it_has_settled_only_once_the_room_has_answered_names(fakes, browsers, answer):
    """Opened from a room's link, the page asks for the names first and hides the nickname form meanwhile:
    `data-join` on #join stays `looking` until the answer (or its refusal) is handled, so a test, or anything
    else that waits on the page, never acts on a form about to go."""
    async def script(fake, ws, hello):
        assert hello == {"type": "names", "room": CODE}
        async for raw in ws:
            if json.loads(raw)["type"] == "test.answer":  # the test's signal that it has seen the page waiting
                await send(ws, NAMES_ANSWERS[answer])
                break
        await ws.wait_closed()

    fake = fakes(script)
    child = browsers(**PHONE)
    child.get(f"{fake.http}/?room={CODE}")
    wait(child, lambda d: len(fake.hellos) == 1, message="the names hello")
    assert child.find_element(By.ID, "join").get_attribute("data-join") == "looking"
    assert not visible(child, "#join-form"), "no form to type into while the room has not answered"
    child.execute_script("window.storycircle.connection.send({type: 'test.answer'})")
    expected = "picker" if answer == "picker" else "form"
    join_screen(child, expected)
    if expected == "form":
        wait(child, lambda d: d.switch_to.active_element.get_attribute("id") == "nickname", message="the nickname field, focused")
    else:
        assert "Ada" in text(child, "#picker-grid")


def test_an_answer_that_could_not_be_saved_is_offered_again_then_saved(fakes, browsers):
    async def script(fake, ws, hello):
        await send(ws, child_welcome())
        tries = 0
        async for raw in ws:
            message = json.loads(raw)
            if message["type"] != "answer":
                continue
            tries += 1
            if tries == 1:
                await send(ws, {"type": "error", "code": "storage_unavailable", "message": "Your answer could not be saved yet — tap again."})
            else:
                await send(ws, {"type": "answer.ack", "question": message["question"], "option": message["option"]})

    fake = fakes(script)
    child = browsers(**PHONE)
    open_child(child, fake)
    wait(child, lambda d: (b := option(d, "A mouse")) and b.is_enabled())
    option(child, "A mouse").click()
    wait(child, lambda d: text(d, "#answer-status") == "Your answer could not be saved yet — tap again.")
    assert option(child, "A mouse").is_enabled() and option(child, "A cat").is_enabled(), "the child can tap again"
    assert "chosen" not in option(child, "A mouse").get_attribute("class")
    screenshot(child, "phone-answer-not-saved-tap-again")
    axe(child, "phone-answer-not-saved")
    option(child, "A mouse").click()
    wait(child, lambda d: text(d, "#answer-status") == "Saved ✓ Waiting for the others…")
    # The page names its room in the WebSocket URL, so a proxy in front of several nodes can route by it.
    assert fake.upgrades[0][1] == f"/ws?room={CODE}"


def test_a_join_that_could_not_be_stored_is_tried_again_until_it_is(fakes, browsers):
    async def script(fake, ws, hello):
        assert hello == {"type": "join", "room": CODE, "nickname": "Ana"}
        if len(fake.hellos) <= 2:
            await send(ws, {"type": "error", "code": "storage_unavailable", "message": "We could not save your place yet."})
            await ws.close(1013, "storage_unavailable")
            return
        await send(ws, child_welcome(phase="lobby"))
        await ws.wait_closed()

    fake = fakes(script)
    child = browsers(**PHONE)
    open_child(child, fake)
    wait(child, lambda d: visible(d, "#connection-message") and "Trying again" in text(d, "#connection-text"))
    assert visible(child, "#connection-retry"), "the page offers Try again"
    screenshot(child, "phone-join-not-saved-trying-again")
    wait(child, lambda d: visible(d, "#lobby"), timeout=20, message="the third join gets in, by itself")
    assert not visible(child, "#connection-message")
    times = [t for t, _, _ in fake.hellos]
    assert len(times) == 3
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert all(gap >= 0.2 for gap in gaps), f"the page waits before trying again: {gaps}"


def test_refused_upgrades_and_restarts_are_retried_with_growing_pauses(fakes, browsers):
    async def script(fake, ws, hello):
        if hello["type"] == "join":
            await send(ws, child_welcome(phase="lobby"))
            # The server restarts: close 1012; the page comes back with its token.
            await ws.close(1012, "restart")
            return
        assert hello == {"type": "rejoin", "room": CODE, "token": "resume-token"}
        await send(ws, child_welcome(phase="lobby", token=None))
        await ws.wait_closed()

    fake = fakes(script)
    fake.refuse = [429, 429, 503]
    child = browsers(**PHONE)
    open_child(child, fake)
    wait(child, lambda d: visible(d, "#connection-message") and "Still connecting to your class" in text(d, "#connection-text"))
    wait(child, lambda d: len(fake.hellos) == 2 and visible(d, "#lobby"), timeout=30, message="in, after three refusals and a restart")
    wait(child, lambda d: not visible(d, "#connection-message"))
    refused = [t for t, _, status in fake.upgrades if status != 101]
    assert len(refused) == 3
    first_accepted = next(t for t, _, status in fake.upgrades if status == 101)
    gaps = [b - a for a, b in zip(refused + [first_accepted], (refused + [first_accepted])[1:])]
    assert gaps[-1] > gaps[0], f"the pauses grow: {gaps}"
    assert min(gaps) >= 0.2, f"no hammering: {gaps}"


def test_a_welcome_at_any_time_replaces_everything_and_an_unsaved_tap_goes_again(fakes, browsers):
    async def script(fake, ws, hello):
        await send(ws, child_welcome())
        async for raw in ws:
            message = json.loads(raw)
            if message["type"] != "answer":
                continue
            fake.answers = getattr(fake, "answers", 0) + 1
            if fake.answers == 1:
                # The store gave up on that answer and the room was rebuilt from it: a fresh welcome, no answer.
                await send(ws, child_welcome(token=None))
            else:
                await send(ws, {"type": "answer.ack", "question": 0, "option": message["option"]})
                await send(ws, child_welcome(phase="reveal", token=None, reveal={
                    "question": 0, "correctOption": 1, "distribution": [0, 1], "top": [],
                    "you": {"option": 1, "outcome": "correct", "points": 1000,
                            "standing": {"score": 1000, "rank": 1, "streak": 1, "results": ["correct"]}}}))

    fake = fakes(script)
    child = browsers(**PHONE)
    open_child(child, fake)
    wait(child, lambda d: (b := option(d, "A mouse")) and b.is_enabled())
    option(child, "A mouse").click()
    wait(child, lambda d: visible(d, "#reveal-result"), message="the second welcome (a reveal) replaced the question")
    assert getattr(fake, "answers", 0) == 2, "the tap was sent again after the rebuilt room's welcome"
    assert "✓ Your answer: right!" in option(child, "A mouse").text
    assert text(child, "#reveal-title") == "🎉 Yes! That’s right!"


def test_a_tap_still_unsent_when_its_question_closes_is_dropped(fakes, browsers):
    async def script(fake, ws, hello):
        fake.seen = []
        await send(ws, child_welcome())
        async for raw in ws:
            message = json.loads(raw)
            fake.seen.append(message)
            if message["type"] == "answer":
                # No ack: the store gives up, the room is rebuilt, and by then the question has been revealed.
                await send(ws, child_welcome(phase="reveal", token=None, reveal={
                    "question": 0, "correctOption": 1, "distribution": [0, 0], "top": [],
                    "you": {"option": None, "outcome": "missed", "points": 0,
                            "standing": {"score": 0, "rank": 1, "streak": 0, "results": ["missed"]}}}))

    fake = fakes(script)
    child = browsers(**PHONE)
    open_child(child, fake)
    wait(child, lambda d: (b := option(d, "A cat")) and b.is_enabled())
    option(child, "A cat").click()
    wait(child, lambda d: visible(d, "#reveal-result"))
    # A reveal the page learns of from a welcome cannot tell whether time ran out: the neutral words.
    assert text(child, "#reveal-title") == "Here is the answer: “A mouse”."
    # Messages on one socket arrive in order: once this ping is in, any answer sent before it would be too.
    child.execute_script("window.storycircle.connection.send({type: 'ping', id: 999})")
    wait(child, lambda d: any(m.get("id") == 999 for m in fake.seen))
    assert [m["type"] for m in fake.seen if m["type"] == "answer"] == ["answer"], "the closed question's tap is not sent again"
    assert text(child, "#answer-status") == ""
    assert child.execute_script("return JSON.parse(localStorage.getItem('storycircle.session')).pending") is None


def test_the_teacher_sees_a_banner_while_the_server_cannot_save(fakes, browsers):
    async def script(fake, ws, hello):
        assert hello["type"] == "control"
        at = now_ms()
        await send(ws, {"type": "welcome", "role": "teacher", "serverTime": at, "room": {
            "code": CODE, "title": "Pip's Day", "phase": "lobby", "paused": False, "locked": False, "settings": SETTINGS,
            "questionCount": 2, "playerCount": 1, "players": [{"id": "p1", "nickname": "Ana", "connected": True}], "scoreboard": []}})
        await send(ws, {"type": "storage", "ok": False, "code": "storage_unavailable", "reason": "read_only",
                        "message": "Answers cannot be saved right now (the disk is full). Children's answers wait."})
        async for raw in ws:
            if json.loads(raw).get("command") == "unlock":  # the test's signal that it has seen the banner
                await send(ws, {"type": "storage", "ok": True})

    fake = fakes(script)
    teacher = browsers(**TEACHER)
    teacher.get(f"{fake.http}/teacher#room={CODE}&token=teacher-token")
    banner = wait(teacher, lambda d: visible(d, "#storage-banner"))
    # Worded from the reason's code, never the server's English sentence.
    assert "read-only" in banner.text and "disk is full" not in banner.text, banner.text
    screenshot(teacher, "teacher-storage-banner")
    axe(teacher, "teacher-storage-banner")
    teacher.execute_script("window.storycircle.connection.send({type: 'command', command: 'unlock'})")
    wait(teacher, lambda d: text(d, "#storage-banner") == "Saving works again.")


def test_a_late_close_of_the_old_socket_leaves_the_new_sockets_clock_sync_running(fakes, browsers):
    """After "Try again", the old socket's close event can arrive after the new socket opened. It must stop
    only the old socket's pings: the new one keeps its clock in sync."""
    fake = fakes(lambda fake, ws, hello: ws.wait_closed())
    driver = browsers(**PHONE)
    driver.get(f"{fake.http}/results.html")
    driver.set_script_timeout(20)
    result = driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        import("/js/connection.js").then(({ RoomConnection }) => {
          class FakeSocket {
            static OPEN = 1;
            static all = [];
            constructor(url) { this.url = url; this.sent = []; this.readyState = 0; this.listeners = {}; FakeSocket.all.push(this); }
            addEventListener(type, listener) { (this.listeners[type] ||= []).push(listener); }
            send(data) { this.sent.push(JSON.parse(data)); }
            close() { this.readyState = 2; }  // the close event comes later, as with a real socket
            fire(type, event = {}) {
              if (type === "open") this.readyState = 1;
              if (type === "close") this.readyState = 3;
              for (const listener of this.listeners[type] || []) listener(event);
            }
            pings() { return this.sent.filter((m) => m.type === "ping").length; }
          }
          const connection = new RoomConnection({
            hello: () => ({ type: "watch", room: "123456", token: "t" }), room: () => "123456",
            onMessage: () => {}, clockSync: { burst: 0, intervalMs: 25 }, WebSocketClass: FakeSocket,
          });
          connection.start();
          const [old] = FakeSocket.all;
          old.fire("open");
          connection.retry();                       // "Try again"
          const fresh = FakeSocket.all[1];
          fresh.fire("open");
          old.fire("close", { code: 1000, reason: "" });   // late: after the new socket opened
          const before = fresh.pings();
          const started = Date.now();
          const check = () => {
            if (fresh.pings() >= before + 4) return done({ ok: true, url: fresh.url, pings: fresh.pings(), oldPings: old.pings() });
            if (Date.now() - started > 5000) return done({ ok: false, pings: fresh.pings() });
            setTimeout(check, 20);
          };
          check();
        }).catch((e) => done({ ok: false, error: String(e) }));
    """)
    assert result["ok"], f"the new socket stopped pinging after the old one closed: {result}"
    assert result["url"].endswith("/ws?room=123456")


def enabled_commands(driver):
    """In the buttons' order (the page moves the next step's button first)."""
    order = ["start", "pause", "resume", "replay", "retry", "skip", "reveal", "next", "lock", "unlock", "end"]
    enabled = driver.execute_script(
        "return [...document.querySelectorAll('#controls button[data-command]')].filter((b) => !b.disabled).map((b) => b.dataset.command)")
    return [command for command in order if command in enabled]


def test_the_teachers_controls_follow_the_servers_list_of_commands(fakes, browsers):
    """The page enables exactly what the server lists: in the error phase `start` as well as `retry`
    (the page used to have rules of its own, and disabled `start` there), and then the list of each
    `room` message. A message without a list (here a `preparing` the fake sends with no `room` after it)
    leaves the list as it was: the page never works one out itself."""
    error = ["start", "retry", "skip", "kick", "block", "lock", "end", "settings"]
    error_locked = ["start", "retry", "skip", "kick", "block", "unlock", "end", "settings"]
    preparing = ["skip", "kick", "block", "lock", "end"]

    async def script(fake, ws, hello):
        assert hello["type"] == "control"
        await send(ws, {"type": "welcome", "role": "teacher", "serverTime": now_ms(), "room": {
            "code": CODE, "title": "Pip's Day", "phase": "error", "paused": False, "locked": False, "settings": SETTINGS,
            "questionCount": 2, "playerCount": 1, "error": "The voice \"xx\" is not installed on this computer.",
            "errorReason": "voice_not_installed", "errorParams": {"voice": "xx"},
            "players": [{"id": "p1", "nickname": "Ana", "connected": True}], "scoreboard": [],
            "commands": error}})
        async for raw in ws:
            message = json.loads(raw)
            if message.get("command") == "lock":
                await send(ws, {"type": "room", "locked": True, "settings": SETTINGS, "commands": error_locked})
            elif message.get("command") == "start":
                await send(ws, {"type": "preparing", "ready": 0, "total": 4})
            elif message.get("command") == "unlock":
                await send(ws, {"type": "room", "locked": False, "settings": SETTINGS, "commands": preparing})

    fake = fakes(script)
    teacher = browsers(**TEACHER)
    teacher.get(f"{fake.http}/teacher#room={CODE}&token=teacher-token")
    wait(teacher, lambda d: enabled_commands(d) == ["start", "retry", "skip", "lock", "end"], message="the welcome's list")
    # The reason is worded from its code and the voice from its params (the server's English is not shown).
    detail = text(teacher, "#phase-detail")
    assert "does not have the voice" in detail and "xx" in detail and "is not installed" not in detail, detail
    assert teacher.find_element(By.CSS_SELECTOR, "#controls form input[name=speedPoints]").is_enabled(), "settings are listed"
    axe(teacher, "teacher-error-commands")
    teacher.find_element(By.CSS_SELECTOR, 'button[data-command="lock"]').click()
    wait(teacher, lambda d: enabled_commands(d) == ["start", "retry", "skip", "unlock", "end"], message="the room message's list")
    teacher.find_element(By.CSS_SELECTOR, 'button[data-command="start"]').click()
    wait(teacher, lambda d: d.execute_script("return window.storycircle.room.phase") == "preparing", message="preparing")
    assert teacher.execute_script("return window.storycircle.room.commands") == error_locked, "no list, no change"
    teacher.find_element(By.CSS_SELECTOR, 'button[data-command="unlock"]').click()
    wait(teacher, lambda d: enabled_commands(d) == ["skip", "lock", "end"], message="the next room message's list")
    assert not teacher.find_element(By.CSS_SELECTOR, "#controls form input[name=speedPoints]").is_enabled()
    assert teacher.find_element(By.CSS_SELECTOR, 'button[aria-label="Remove Ana"]').is_enabled()
