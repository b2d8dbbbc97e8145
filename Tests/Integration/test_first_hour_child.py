"""A teacher's first hour, the children's side (issue 48), in real headless Chromium against the real server:
a child who tapped the wrong name undoes it with "That's not me" before their first answer, and the name is
free at once for the right child; the teacher's one "Fix name" in the roster sends a wrong phone back to the
names with a kind word, nothing red and nothing "removed"; the projector's answers are readable from the back
of the room (48px at 1920×1080) and still fit 8 to a screen at 1280×720. axe-core on the phone and the
projector at their sizes."""
import asyncio
import json
import re

from selenium.webdriver.common.by import By

from browser_support import (PHONE, PROJECTOR, SMALL_PROJECTOR, TEACHER, assert_fits, axe, colour, events, join_screen,
                             no_page_errors, plain, screenshot, text, text_contrast, visible, wait)
from test_browser import CLASSROOM, browsers, choose, confirm, join  # noqa: F401 (browsers is a fixture)
from conftest import Client, wait_until
from test_classes import CONFIG, member_ids, pick, picker
from test_classes import class_room as scripted_class_room
from test_classes import make_class as scripted_class
from test_classes_browser import class_room, free, make_class, pick_buttons, picker_shows

RED = {(179, 38, 30), (253, 231, 229)}  # the error box's border and fill (--bad, --bad-soft)


def shown_words(driver):
    """Every word the phone shows now."""
    return plain(driver.find_element(By.TAG_NAME, "body").text)


def assert_kind(driver, selector, words):
    """The note says `words`, as a status (not an alert), in no error colour, with nothing about removal."""
    wait(driver, lambda d: visible(d, selector) and text(d, selector) == words, message=f"{selector} says {words!r}")
    note = driver.find_element(By.CSS_SELECTOR, selector)
    classes = note.get_attribute("class").split()
    assert "kind" in classes and "error" not in classes, classes
    assert note.get_attribute("role") == "status"
    assert colour(driver, note) not in RED and colour(driver, note, "border-top-color") not in RED
    assert colour(driver, note, "color") not in RED
    assert text_contrast(driver, note) >= 4.5
    assert not visible(driver, "#picker-error") and not visible(driver, "#join-error"), "no error box beside it"
    assert "remove" not in shown_words(driver).lower()


def tap(driver, name):
    wait(driver, lambda d: free(d, name), message=f"{name} free")
    pick_buttons(driver)[name].click()
    wait(driver, lambda d: visible(d, "#lobby") and d.execute_script("return window.storycircle.session.welcomed"), message=f"in as {name}")


def roster_button(teacher, nickname, action):
    for row in teacher.find_elements(By.CSS_SELECTOR, "#roster tbody tr[data-player]"):
        if plain(row.find_element(By.CSS_SELECTOR, "td.name").text) == nickname:
            found = row.find_elements(By.CSS_SELECTOR, f'button[data-action="{action}"]')
            return found[0] if found else None
    return None


def test_a_wrong_tap_is_undone_by_the_child_and_fixed_by_the_teacher(server, browsers):
    class_id, members = make_class(server)
    room = class_room(server, class_id)
    code = room["code"]
    teacher = browsers(**TEACHER)
    teacher.get(f"{server.http}/teacher#room={code}&token={room['teacherToken']}")

    # Bo taps Ada by mistake, and sees "That's not me" in the lobby.
    bo = browsers(**PHONE)
    bo.get(f"{server.http}/?room={code}")
    join_screen(bo, "picker")
    picker_shows(bo, ["Ada", "Bo", "Cy"])
    tap(bo, "Ada")
    wait(bo, lambda d: visible(d, "#not-me"), message="That's not me, before the first answer")
    button = bo.find_element(By.ID, "not-me-button")
    assert plain(button.text) == "That’s not me"
    assert plain(button.get_attribute("aria-label")) == "That’s not me: I am not Ada"
    assert button.size["height"] >= 44
    screenshot(bo, "first-hour-phone-lobby-not-me")
    axe(bo, "first-hour-phone-lobby-not-me")
    wrong_token = bo.execute_script("return window.storycircle.session.token")
    button.click()

    # Back at the names at once, kindly; Ada is free for Ada, live on another phone and on the teacher's roster.
    wait(bo, lambda d: visible(d, "#picker") and not visible(d, "#lobby"), message="back at the picker")
    assert_kind(bo, "#picker-note", "Thank you! Now tap your own name.")
    wait(bo, lambda d: free(d, "Ada") and free(d, "Bo"), message="every name free again")
    assert bo.execute_script("return window.storycircle.session.token") is None, "the page forgot the given-back name"
    assert not visible(bo, "#not-me")
    screenshot(bo, "first-hour-phone-not-me")
    axe(bo, "first-hour-phone-not-me")
    wait(teacher, lambda d: roster_button(d, "Ada", "fix-name") is None and not d.find_elements(By.CSS_SELECTOR, "#roster tbody tr[data-player]"),
         message="nobody holds Ada on the teacher's roster")
    ada = browsers(**PHONE)
    ada.get(f"{server.http}/?room={code}")
    join_screen(ada, "picker")
    tap(ada, "Ada")
    assert plain(text(ada, "#lobby-title")).startswith("Hi"), text(ada, "#lobby-title")
    assert "Ada" in text(ada, "#lobby-title")
    tap(bo, "Bo")
    assert "Bo" in text(bo, "#lobby-title")
    # The given-back token no longer opens the room (the server's refusal, read by an independent client).
    status, _, _ = server.request("GET", f"/api/rooms/{code}", room["teacherToken"])
    assert status == 200
    assert wrong_token and wrong_token != bo.execute_script("return window.storycircle.session.token")

    # Cy's name tapped on a phone that is not Cy's: the teacher's one "Fix name" (Remove and Block set apart).
    stray = browsers(**PHONE)
    stray.get(f"{server.http}/?room={code}")
    join_screen(stray, "picker")
    tap(stray, "Cy")
    fix = wait(teacher, lambda d: (b := roster_button(d, "Cy", "fix-name")) and b.is_enabled() and b, message="Fix name beside Cy")
    assert plain(fix.text) == "Fix name" and plain(fix.get_attribute("aria-label")) == "Fix name Cy"
    for nickname in ("Ada", "Bo", "Cy"):
        row_fix = roster_button(teacher, nickname, "fix-name")
        removal = roster_button(teacher, nickname, "kick")
        assert row_fix is not None and removal is not None
        assert removal.find_element(By.XPATH, "..").get_attribute("class") == "removals", "Remove and Block sit apart"
        assert teacher.execute_script("return arguments[0].compareDocumentPosition(arguments[1]) & 4", row_fix, removal), "the fix comes first"
    assert not teacher.find_elements(By.CSS_SELECTOR, '#class-roster button'), "one action for a name, in the roster"
    assert plain(teacher.find_element(By.CSS_SELECTOR, "#roster thead th:last-child").get_attribute("textContent")) == "Fix name, or remove"
    screenshot(teacher, "first-hour-teacher-roster-fix-name")
    axe(teacher, "first-hour-teacher-roster-fix-name")
    fix.click()
    assert "Cy" in plain(confirm(teacher, True))
    wait(stray, lambda d: visible(d, "#picker"), message="the wrong phone is back at the names")
    assert_kind(stray, "#picker-note", "Your teacher gave this name back. Tap your own name.")
    wait(stray, lambda d: free(d, "Cy"), message="Cy free again")
    screenshot(stray, "first-hour-phone-name-given-back")
    axe(stray, "first-hour-phone-name-given-back")

    # Once Ada has answered, the name is hers: the button goes.
    assert server.command(room, "start")[0] == 200
    assert server.command(room, "skip")[0] == 200
    wait(ada, lambda d: visible(d, "#quiz") and visible(d, "#not-me"), message="still offered before the first answer")
    choose(ada, "A gear")
    wait(ada, lambda d: not visible(d, "#not-me"), message="no give-back after an answer")
    for driver in (bo, ada, stray, teacher):
        no_page_errors(driver)


def test_times_up_only_when_the_time_ran_out_and_a_child_who_never_answered_is_thanked_for_listening(server, browsers):
    """The teacher reveals question 1 early: the silent phone reads the answer, not "Time's up!"; question 2
    runs out: now it is. At the end the child who never answered is told what they did (listened), the
    child who answered without a right answer that they had a go."""
    room = server.create_room(settings={"questionSeconds": 6})
    code = room["code"]
    quiet, tries = browsers(**PHONE), browsers(**PHONE)
    join(quiet, server, code, "Quiet")
    join(tries, server, code, "Tries")
    assert server.command(room, "start")[0] == 200
    assert server.command(room, "skip")[0] == 200
    choose(tries, "A hat")
    wait(quiet, lambda d: visible(d, "#options") and d.find_elements(By.CSS_SELECTOR, "#options .option:enabled"), message="question 1 open")
    assert server.command(room, "reveal")[0] == 200
    wait(quiet, lambda d: visible(d, "#reveal-title"), message="the early reveal")
    assert text(quiet, "#reveal-title") == "Here is the answer: “A gear”.", text(quiet, "#reveal-title")
    assert "Time" not in shown_words(quiet)
    screenshot(quiet, "first-hour-phone-early-reveal")
    # Question 2: nobody answers and the time runs out.
    assert server.command(room, "next")[0] == 200
    wait(quiet, lambda d: visible(d, "#reveal-title") and "Blue" in text(d, "#reveal-title"), timeout=20, message="question 2 ran out")
    assert text(quiet, "#reveal-title") == "⏰ Time’s up! The answer was “Blue”."
    assert server.command(room, "end")[0] == 200
    for driver in (quiet, tries):
        wait(driver, lambda d: visible(d, "#finished-title"), message="the end")
    assert text(quiet, "#finished-title") == "Thanks for listening!"
    assert text(quiet, "#finished-praise") == "You listened to the whole story. Next time, try the questions too!"
    assert "had a go" not in shown_words(quiet)
    assert text(tries, "#finished-title") == "Thanks for playing!"
    assert "had a go" in text(tries, "#finished-praise")
    screenshot(quiet, "first-hour-phone-end-never-answered")
    axe(quiet, "first-hour-phone-end-never-answered")
    for driver in (quiet, tries):
        no_page_errors(driver)


def test_a_child_removed_from_a_typed_nickname_room_reads_a_neutral_word(server, browsers):
    room = server.create_room()
    phone = browsers(**PHONE)
    phone.get(f"{server.http}/?room={room['code']}")
    join_screen(phone).send_keys("Kim")
    phone.find_element(By.ID, "join-button").click()
    wait(phone, lambda d: visible(d, "#lobby"), message="Kim in the lobby")
    assert not visible(phone, "#not-me"), "a typed name is nobody else's: nothing to give back"
    assert server.command(room, "kick", player="Kim")[0] == 200
    assert_kind(phone, "#join-note", "You are not in this room any more. Ask your teacher if you can join again.")
    axe(phone, "first-hour-phone-removed-neutral")
    assert server.command(room, "block", player="Kim")[0] == 200
    phone.refresh()
    join_screen(phone)
    assert not re.search(r"remov", shown_words(phone), re.I)


def option_sizes(driver):
    return driver.execute_script("""
        return [...document.querySelectorAll("#options .option")].map((o) => ({
          label: o.querySelector(".label").textContent, size: parseFloat(getComputedStyle(o.querySelector(".label")).fontSize),
          shape: o.querySelector(".shape").textContent }));
    """)


def test_the_projectors_answers_read_from_the_back_of_the_room(server, browsers):
    room = server.create_room(story=CLASSROOM)
    big = browsers(**PROJECTOR)
    small = browsers(**SMALL_PROJECTOR)
    for driver in (big, small):
        driver.get(f"{server.http}/dashboard#room={room['code']}&token={room['dashboardToken']}")
        wait(driver, lambda d: visible(d, "#lobby"), message="the projector's lobby")
    assert server.command(room, "start")[0] == 200
    assert server.command(room, "skip")[0] == 200
    for driver in (big, small):
        wait(driver, lambda d: events(d, "question:0:shown") and len(d.find_elements(By.CSS_SELECTOR, "#options .option")) == 4)

    # Four short answers: 48px or more at 1080p, each with its shape, each AA against its box.
    sizes = option_sizes(big)
    assert [o["label"] for o in sizes] == ["Blue", "Green", "Yellow", "Red"]
    assert all(o["size"] >= 48 for o in sizes), sizes
    assert all(o["shape"].strip() for o in sizes), "every answer keeps its shape"
    for option in big.find_elements(By.CSS_SELECTOR, "#options .option"):
        assert text_contrast(big, option) >= 4.5
    for driver in (big, small):
        assert_fits(driver, "a question with 4 options")
    screenshot(big, "first-hour-projector-question")
    axe(big, "first-hour-projector-question-1920")
    axe(small, "first-hour-projector-question-1280")

    # Eight answers, one long: the short ones stay 48px at 1080p, the long one alone steps down to fit, and
    # nothing scrolls at 1280×720.
    assert server.command(room, "reveal")[0] == 200
    assert server.command(room, "next")[0] == 200
    for driver in (big, small):
        wait(driver, lambda d: events(d, "question:1:shown") and len(d.find_elements(By.CSS_SELECTOR, "#options .option")) == 8)
    sizes = option_sizes(big)
    short = [o for o in sizes if not o["label"].startswith("Every single")]
    long = next(o for o in sizes if o["label"].startswith("Every single"))
    assert len(short) == 7 and all(o["size"] >= 48 for o in short), sizes
    assert long["size"] >= 24, long
    for driver in (big, small):
        assert_fits(driver, "a question with 8 options")
        assert driver.execute_script("return document.scrollingElement.scrollHeight <= innerHeight")
    small_sizes = option_sizes(small)
    assert all(o["size"] >= 30 for o in small_sizes if not o["label"].startswith("Every single")), small_sizes
    screenshot(big, "first-hour-projector-question-8")
    screenshot(small, "first-hour-projector-1280-question-8")
    axe(small, "first-hour-projector-1280-question-8")

    # The longest answer a story may have (120 letters) among seven short ones: that one alone is scaled down.
    story = json.loads(CLASSROOM.read_text())
    longest = ("Every single day of the whole wonderful week, from the first sunny Monday morning to the very last sleepy "
               "Sunday night")[:120]
    story["quiz"]["questions"][1]["options"][7] = longest
    second = server.create_room(story=story)
    for driver in (big, small):
        driver.get(f"{server.http}/dashboard#room={second['code']}&token={second['dashboardToken']}")
        wait(driver, lambda d: visible(d, "#lobby"), message="the second room's lobby")
    for command in ("start", "skip", "reveal", "next"):
        assert server.command(second, command)[0] == 200, command
    for driver, base in ((big, 48), (small, 32)):
        wait(driver, lambda d: events(d, "question:1:shown") and len(d.find_elements(By.CSS_SELECTOR, "#options .option")) == 8)
        sizes = option_sizes(driver)
        assert all(o["size"] >= base for o in sizes[:7]), sizes
        assert sizes[7]["label"] == longest and sizes[7]["size"] < base, sizes[7]
        assert_fits(driver, "a question with the longest answer a story may have")
    screenshot(small, "first-hour-projector-1280-longest-answer")
    for driver in (big, small):
        no_page_errors(driver)


def test_not_me_over_real_sockets_is_stored_before_it_is_acknowledged(make_server, tmp_path):
    """An independent client: `notMe` frees the name (the connection gets `names`, and picks again on it),
    is refused once the child has answered, and the given-back token is still refused after kill -9."""
    server = make_server(config=CONFIG, data=tmp_path / "data")
    schoolclass = scripted_class(server, "Class 1B", [{"name": "Ada", "avatar": "owl"}, {"name": "Bo", "avatar": "emoji:🦊"}])
    ids = member_ids(schoolclass)
    room = scripted_class_room(server, schoolclass)
    kept = {}

    async def scenario():
        watching, _ = await picker(server, room)
        phone, welcome = await pick(server, room, ids["Ada"])
        kept["wrong"] = welcome["token"]
        await watching.expect("names")
        await phone.send({"type": "notMe"})
        names = await phone.expect("names")
        assert [c["taken"] for c in names["children"]] == [False, False], "Ada is free at once"
        assert [c["taken"] for c in (await watching.expect("names"))["children"]] == [False, False]
        await phone.send({"type": "join", "room": room["code"], "member": ids["Bo"]})
        bo = await phone.expect("welcome")
        assert bo["player"]["nickname"] == "Bo" and bo["token"] != kept["wrong"], "a new token for the child's own name"
        await watching.send({"type": "join", "room": room["code"], "member": ids["Ada"]})
        assert (await watching.expect("welcome"))["player"]["nickname"] == "Ada"
        # Bo answers; his name is his now.
        assert server.command(room, "start")[0] == 200
        assert server.command(room, "skip")[0] == 200
        question = await phone.expect("question")
        await wait_until(question["opensAt"])
        await phone.send({"type": "answer", "question": 0, "option": 1})
        await phone.expect("answer.ack")
        await phone.send({"type": "notMe"})
        refused = await phone.expect("error")
        assert refused["code"] == "not_me_after_answer", refused

    asyncio.run(scenario())
    server.kill()
    restarted = make_server(config=CONFIG, data=tmp_path / "data")

    async def after_restart():
        stale = await Client.connect(restarted)
        await stale.send({"type": "rejoin", "room": room["code"], "token": kept["wrong"]})
        assert (await stale.expect("error"))["code"] == "released", "the give-back was stored before it was acknowledged"

    asyncio.run(after_restart())
