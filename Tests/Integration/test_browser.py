"""The pages in real headless Chromium against the real server: a phone (390×844), a
tablet (820×1180), the teacher's laptop (1366×768) and the projector at 1920×1080 and 1280×720, with thirty
more children on plain WebSockets. Screenshots go to build/screenshots/, axe-core's counts per screen to
build/screenshots/axe-report.json."""
import json
import pathlib
import re
import shutil
import time

import pytest
from selenium.webdriver.common.by import By
from websockets.sync.client import connect as ws_connect

from browser_support import (join_screen, PHONE, browsers, PROJECTOR, SMALL_PROJECTOR, TABLET, TEACHER, assert_fits, axe, browser, colour, plain,
                             contrast_ratio, difference, emulate_vision, events, in_view, no_page_errors, nothing_ran, rect,
                             screenshot, silhouette, sounds, text, text_contrast, visible, wait)
from conftest import SHORT_STORY, STORIES, Server

CLASSROOM = STORIES / "classroom.json"
XSS = "<img src=x onerror=alert(1)>"  # a nickname that would run script if a page inserted it as HTML
# Thirty children more: long names (one of the longest allowed, 40 letters unbroken), a name that looks like
# HTML, names that must wrap between words.
CROWD = ["Maximilian Alexander", "Anne-Sophie Marguerite", XSS, "Zoë", "Oliver", "Amelia", "Noah", "Isla", "Leo",
         "Mia", "Arthur", "Freya", "Theo", "Ivy", "Finley", "Rosie", "Jack", "Lily", "Harry", "Evie", "Charlie",
         "Ella", "George", "Grace", "Oscar", "Ava", "Alfie", "Sofia", "Henry", "M" * 40]
# The colours the story's first question names, as the options draw them (options.js).
NAMED = {"Blue": (21, 101, 192), "Green": (46, 125, 50), "Yellow": (253, 216, 53), "Red": (211, 47, 47)}


class Crowd:
    """Children on plain WebSockets (Python's websockets: an independent client, not the pages' code)."""

    def __init__(self, server, code, names):
        self.code = code
        self.clients = []
        for name in names:
            ws = ws_connect(f"{server.ws_url}?room={code}", max_size=2**24, open_timeout=15)
            ws.send(json.dumps({"type": "join", "room": code, "nickname": name}))
            self.expect(ws, "welcome")
            self.clients.append(ws)

    @staticmethod
    def expect(ws, kind, timeout=60, where=lambda message: True):
        deadline = time.monotonic() + timeout
        while True:
            message = json.loads(ws.recv(timeout=max(0.01, deadline - time.monotonic())))
            if message["type"] == kind and where(message):
                return message

    def answer(self, index, option_for):
        """Every child answers question `index` with `option_for(i)` once it has opened."""
        opens_at = None
        for ws in self.clients:
            opens_at = self.expect(ws, "question", where=lambda m: m["index"] == index)["opensAt"]
        # The server announced when the question opens (same machine, same clock): wait for that instant.
        time.sleep(max(0.0, opens_at / 1000 - time.time() + 0.05))
        for i, ws in enumerate(self.clients):
            ws.send(json.dumps({"type": "answer", "question": index, "option": option_for(i)}))
        for ws in self.clients:
            self.expect(ws, "answer.ack")

    def leave_after_the_end(self):
        """Reads up to the room's last message (`finished`), then closes: a client that is not reading
        cannot complete a closing handshake (the sync client holds one message at a time)."""
        for ws in self.clients:
            self.expect(ws, "finished")
            ws.close()


def join(driver, server, code, nickname):
    driver.get(f"{server.http}/?room={code}")
    join_screen(driver).send_keys(nickname)
    driver.find_element(By.ID, "join-button").click()
    wait(driver, lambda d: visible(d, "#lobby") and d.find_element(By.ID, "lobby-story").text, message=f"{nickname} reached the lobby")


def option(driver, label):
    return next((b for b in driver.find_elements(By.CSS_SELECTOR, "#options .option")
                 if b.find_element(By.CLASS_NAME, "label").get_attribute("textContent") == label), None)


def choose(driver, label):
    button = wait(driver, lambda d: (b := option(d, label)) and b.is_displayed() and b.is_enabled() and b)
    button.click()
    # The last answer of a round brings the reveal at once, which replaces "Saved".
    wait(driver, lambda d: "Saved ✓" in text(d, "#answer-status") or visible(d, "#reveal"), message=f"{label} saved")


def press(teacher, command):
    button = wait(teacher, lambda d: (b := d.find_element(By.CSS_SELECTOR, f'button[data-command="{command}"]')).is_enabled() and b)
    button.click()


def confirm(driver, answer):
    dialog = wait(driver, lambda d: visible(d, "dialog.confirm"), message="a confirmation")
    title = text(dialog, "h2")
    dialog.find_element(By.CSS_SELECTOR, f'button[data-answer="{"yes" if answer else "no"}"]').click()
    wait(driver, lambda d: not d.find_elements(By.CSS_SELECTOR, "dialog.confirm"))
    return title


def click_labelled(driver, label):
    """Clicks the button with this accessible label (found and clicked in one go: the roster is redrawn live)."""
    assert driver.execute_script("""
        const plain = (s) => s.replace(/[\u2068\u2069]/g, "");
        const button = [...document.querySelectorAll("button[aria-label]")].find((b) => plain(b.getAttribute("aria-label")) === arguments[0]);
        if (button) button.click();
        return Boolean(button);
    """, label), label


def roster_cell(teacher, nickname, cell):
    """One cell of the teacher's roster, read in one go (the roster is redrawn as children answer)."""
    return teacher.execute_script("""
        for (const row of document.querySelectorAll("#roster tbody tr")) {
          const name = row.querySelector("td.name");
          if (name && name.textContent === arguments[0]) return row.querySelector("td." + arguments[1]).textContent;
        }
        return null;
    """, nickname, cell)


def open_options_named_colours_truly(driver):
    """Every option whose text names a colour is drawn without a hue (white, or pale grey once faded) or in
    that colour, never another; its swatch is its own colour."""
    buttons = driver.find_elements(By.CSS_SELECTOR, "#options .option")
    assert len(buttons) == 4
    for button in buttons:
        label = button.find_element(By.CLASS_NAME, "label").text
        fill = colour(driver, button)
        neutral = max(fill) - min(fill) <= 12  # white or a pale grey: no hue at all
        assert neutral or fill == NAMED[label], f"{label} is drawn in {fill}"
        swatch = button.find_element(By.CLASS_NAME, "swatch")
        assert colour(driver, swatch) == NAMED[label], f"{label}'s swatch is {colour(driver, swatch)}"


def test_a_class_plays_a_whole_room_on_every_screen(server, browsers, tmp_path):
    # A contest (`competitive`): the phones show their places and who is just ahead.
    room = server.create_room(story=CLASSROOM, settings={"competitive": True})
    code = room["code"]
    projector, small = browsers(**PROJECTOR), browsers(**SMALL_PROJECTOR)
    for driver in (projector, small):
        driver.get(f"{server.http}/dashboard#room={code}&token={room['dashboardToken']}")
        wait(driver, lambda d: d.find_element(By.ID, "join-code").text == code and visible(d, "#qr"), message="the code and the QR code")
    teacher = browsers(**TEACHER)
    teacher.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(tmp_path)})
    teacher.get(f"{server.http}/teacher#room={code}&token={room['teacherToken']}")
    wait(teacher, lambda d: "Waiting to start" in text(d, "#room-state"))

    # ---- The lobby: thirty children arrive, then Ana on a phone and Ben on a tablet ----
    crowd = Crowd(server, code, CROWD)
    phone = browsers(**PHONE)
    tablet = browsers(**TABLET, reduced_motion=True)
    join(phone, server, code, "Ana")
    join(tablet, server, code, "Ben")
    for driver in (projector, small):
        wait(driver, lambda d: d.find_element(By.ID, "lobby-count").text == "32", message="32 joined")
        chips = [li.text for li in driver.find_elements(By.CSS_SELECTOR, "#lobby-list li") if li.is_displayed()]
        assert "Ben" in chips and XSS in chips, chips
        assert driver.find_elements(By.CSS_SELECTOR, "#lobby-list li.pop"), "names that arrive pop in"
        assert_fits(driver, "the lobby with 32 children")
        assert nothing_ran(driver)
    assert "lobby" in sounds(projector) and "pop" in sounds(projector), "the projector plays its lobby loop and a pop"
    # The lobby, like a quiz game's title screen: the child's own name, the story, how many questions.
    assert text(phone, "#lobby-name") == "Ana"
    assert text(phone, "#lobby-story") == "Test: Pip and the Week of Colours"
    assert text(phone, "#lobby-questions") == "3 questions"
    wait(teacher, lambda d: d.find_element(By.ID, "roster-count").text == "32")
    screenshot(projector, "projector-1920-lobby")
    screenshot(small, "projector-1280-lobby")
    screenshot(phone, "phone-lobby")
    screenshot(tablet, "tablet-lobby")
    screenshot(teacher, "teacher-lobby")
    for driver, screen in ((projector, "projector-1920-lobby"), (phone, "phone-lobby"), (teacher, "teacher-lobby")):
        axe(driver, screen)

    # ---- The story: the teacher starts it; the code and the QR code shrink into the corner ----
    press(teacher, "start")
    for driver in (phone, tablet):
        wait(driver, lambda d: visible(d, "#story") and d.find_elements(By.CSS_SELECTOR, ".sentence.current"), timeout=40)
    wait(projector, lambda d: visible(d, "#story") and d.find_elements(By.CSS_SELECTOR, ".sentence.current"))
    wait(phone, lambda d: d.find_elements(By.CSS_SELECTOR, ".word.spoken"), message="the spoken word is highlighted")
    for driver in (projector, small):
        wait(driver, lambda d: "phase-lobby" not in d.find_element(By.TAG_NAME, "body").get_attribute("class"))
        qr = rect(driver, driver.find_element(By.ID, "qr"))
        width, height = driver.execute_script("return [innerWidth, innerHeight]")
        assert qr["w"] <= 0.12 * height and qr["x"] > 0.8 * width and qr["y"] < 0.1 * height, f"the QR code is in the corner: {qr}"
        assert_fits(driver, "the story")
    screenshot(phone, "phone-story")
    screenshot(projector, "projector-1920-story")
    axe(phone, "phone-story")
    axe(projector, "projector-1920-story")

    # ---- Question 1 names colours: no option is drawn in a colour its label contradicts ----
    for driver in (phone, tablet, projector):
        wait(driver, lambda d: visible(d, "#options .option") and "Question 1" in text(d, "#question-number"), timeout=60)
    for driver in (phone, tablet, projector):
        open_options_named_colours_truly(driver)
    screenshot(phone, "phone-question-colours")
    screenshot(projector, "projector-1920-question-colours")
    axe(phone, "phone-question")
    axe(tablet, "tablet-question")

    # Ana taps while her Wi-Fi is down: the tap is kept ("Sending…") and sent when the connection is back.
    wait(phone, lambda d: (b := option(d, "Green")) and b.is_displayed() and b.is_enabled())
    phone.execute_cdp_cmd("Network.enable", {})
    offline = {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
    phone.execute_cdp_cmd("Network.emulateNetworkConditions", offline)
    phone.execute_script("window.storycircle.connection.socket.close(4000)")
    wait(phone, lambda d: "We lost the connection" in text(d, "#connection-text"))
    option(phone, "Green").click()
    assert text(phone, "#answer-status").startswith("Sending…")
    assert "chosen" in option(phone, "Green").get_attribute("class")
    screenshot(phone, "phone-offline-tap-sending")
    assert roster_cell(teacher, "Ana", "answered") == "… not yet"
    phone.execute_cdp_cmd("Network.emulateNetworkConditions", {**offline, "offline": False})
    wait(phone, lambda d: "Saved ✓" in text(d, "#answer-status"), timeout=30, message="the kept tap is sent on reconnect")
    assert events(phone, "answer:0:saved")
    # The teacher's roster: who has answered, live.
    wait(teacher, lambda d: roster_cell(d, "Ana", "answered") == "✓ answered")
    assert roster_cell(teacher, "Ben", "answered") == "… not yet"
    crowd.answer(0, lambda i: 1 + i % 3)  # every one of them wrong
    wait(teacher, lambda d: text(d, "#room-answers") == "31 of 32 children answered")
    wait(projector, lambda d: text(d, "#answered") == "31 of 32 answered")
    screenshot(teacher, "teacher-question-roster")
    axe(teacher, "teacher-question")
    screenshot(projector, "projector-1920-question")
    axe(projector, "projector-1920-question")
    assert_fits(projector, "a question with 4 options")
    assert_fits(small, "a question with 4 options")
    choose(tablet, "Blue")

    # ---- The reveal: Ana's own (wrong) pick stays in view beside the result; the right answer says so ----
    for driver in (phone, tablet, projector, small):
        wait(driver, lambda d: visible(d, "#reveal-result") or visible(d, "#distribution"))
    mine = option(phone, "Green")
    assert "✗ Your answer" in mine.text
    assert "✓ Right answer" in option(phone, "Blue").text
    top_bar = phone.find_element(By.ID, "quiz-top")
    assert in_view(phone, mine, below=top_bar) and in_view(phone, phone.find_element(By.ID, "reveal-result"), below=top_bar)
    assert "Nice try! The answer was “Blue”" in text(phone, "#reveal-title")
    open_options_named_colours_truly(phone)
    # The faded options (disabled buttons: axe skips them) keep AA contrast, as do the marked ones.
    for label in ("Yellow", "Red", "Green", "Blue"):
        assert text_contrast(phone, option(phone, label)) >= 4.5, label
    for tag in phone.find_elements(By.CSS_SELECTOR, "#options .tag"):
        if tag.text:
            assert text_contrast(phone, tag) >= 4.5, tag.text
    assert "🎉 Yes!" in text(tablet, "#reveal-title")
    rows = projector.find_elements(By.CSS_SELECTOR, "#distribution li")
    assert [r.find_element(By.CLASS_NAME, "count").text.split()[0] for r in rows] == ["1", "11", "10", "10"]
    assert "✓ Right answer" in rows[0].text and "Blue" in rows[0].text and "▲" in rows[0].text
    for driver, what in ((projector, "the reveal"), (small, "the reveal")):
        assert_fits(driver, what)
    screenshot(phone, "phone-reveal-your-answer")
    screenshot(tablet, "tablet-reveal")
    screenshot(projector, "projector-1920-reveal-colours")
    screenshot(small, "projector-1280-reveal-colours")
    axe(phone, "phone-reveal")
    axe(tablet, "tablet-reveal")
    axe(projector, "projector-1920-reveal")
    # Kind by default: no answer grid on the projector, and it is not even sent the children's results.
    assert not visible(projector, "#grid-section")
    assert all(not e["results"] for e in projector.execute_script("return window.storycircle.room.scoreboard"))
    assert "chime" in sounds(projector) and sounds(phone) == [], "the projector chimes; phones are silent by default"
    # Ana turns her phone's sound on; the teacher mutes the small projector.
    phone.find_element(By.ID, "sound-toggle").click()
    assert phone.find_element(By.ID, "sound-toggle").get_attribute("aria-pressed") == "true"
    small.find_element(By.ID, "sound-toggle").click()
    assert "Sound off" in small.find_element(By.ID, "sound-toggle").text
    heard_by_small = len(sounds(small))

    # ---- Question 2: eight options, one with a long label; it all fits and wraps inside its box ----
    press(teacher, "next")
    for driver in (phone, tablet, projector, small):
        wait(driver, lambda d: "Question 2" in text(d, "#question-number") and len(d.find_elements(By.CSS_SELECTOR, "#options .option")) == 8)
    wait(projector, lambda d: events(d, "question:1:shown"))
    for driver in (projector, small):
        assert_fits(driver, "a question with 8 options")
        long = next(b for b in driver.find_elements(By.CSS_SELECTOR, "#options .option .label") if b.text.startswith("Every single"))
        assert long.size["height"] > 1.5 * driver.find_elements(By.CSS_SELECTOR, "#options .option .label")[0].size["height"], "the long label wraps"
    screenshot(projector, "projector-1920-question-8-options")
    screenshot(small, "projector-1280-question-8-options")
    axe(small, "projector-1280-question")
    # On the phone the countdown stays in view while the child scrolls down to the last option.
    wait(phone, lambda d: (b := option(d, "Every single day of the whole wonderful week")) and b.is_displayed() and b.is_enabled())
    phone.execute_script("arguments[0].scrollIntoView({block: 'end'})", option(phone, "Every single day of the whole wonderful week"))
    assert phone.execute_script("return window.scrollY") > 100
    assert in_view(phone, phone.find_element(By.ID, "countdown-text")) and re.match(r"\d+ s left", text(phone, "#countdown-text"))
    screenshot(phone, "phone-question-scrolled-countdown")
    # The teacher turns the answer grid on, mid-game.
    teacher.find_element(By.ID, "answer-grid").click()
    wait(projector, lambda d: visible(d, "#grid-section"), message="the grid appears when the teacher turns it on")
    crowd.answer(1, lambda i: i % 2)  # Monday or Tuesday: wrong
    choose(phone, "Wednesday")
    choose(tablet, "Wednesday")
    for driver in (phone, tablet, projector):
        wait(driver, lambda d: visible(d, "#reveal-result") or visible(d, "#distribution"))
    wait(tablet, lambda d: text(d, "#reveal-streak") == "🔥 2 in a row")
    assert re.fullmatch(r"2nd place, [\d,]+ points behind Ben", text(phone, "#reveal-place")), text(phone, "#reveal-place")
    assert "🏆 1st place!" == text(tablet, "#reveal-place")
    wait(projector, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#grid li .dot.wrong")) > 0)
    assert "The story begins" in text(projector, "#explanation")
    for driver in (projector, small):
        assert_fits(driver, "the reveal of 8 options with an explanation")
    screenshot(projector, "projector-1920-reveal-8-options-answer-grid")
    screenshot(small, "projector-1280-reveal-8-options")
    screenshot(phone, "phone-reveal-right")
    screenshot(tablet, "tablet-reveal-streak")
    axe(projector, "projector-1920-reveal-with-grid")
    assert "chime" in sounds(phone), "Ana turned her sound on"
    assert len(sounds(small)) == heard_by_small, "the muted projector stays silent"
    teacher.find_element(By.ID, "answer-grid").click()
    wait(projector, lambda d: not visible(d, "#grid-section"))

    # ---- Question 3: two options; the crowd does not answer, so the timer runs out (and ticks) ----
    press(teacher, "next")
    for driver in (phone, tablet, projector):
        wait(driver, lambda d: "Question 3" in text(d, "#question-number") and len(d.find_elements(By.CSS_SELECTOR, "#options .option")) == 2)
    for driver in (projector, small):
        assert_fits(driver, "a question with 2 options")
    screenshot(projector, "projector-1920-question-2-options")
    choose(phone, "Yes")
    choose(tablet, "Yes")
    wait(teacher, lambda d: text(d, "#room-answers") == "2 of 32 children answered")
    for driver in (phone, tablet, projector):
        wait(driver, lambda d: visible(d, "#reveal-result") or visible(d, "#distribution"), timeout=30)
    assert "tick" in sounds(projector), "the last five seconds tick"
    assert text(tablet, "#reveal-streak") == "🔥 3 in a row"
    for driver in (projector, small):
        assert_fits(driver, "the reveal of 2 options")
    screenshot(projector, "projector-1920-reveal-2-options")

    # ---- The end, after a confirmation; no stale counts ----
    press(teacher, "end")
    assert confirm(teacher, False) == "End the room for everyone?"
    assert text(teacher, "#room-state").startswith("The answer to question 3")
    press(teacher, "end")
    confirm(teacher, True)
    for driver in (phone, tablet, projector, small):
        wait(driver, lambda d: visible(d, "#finished"))
    # Nobody stands on the podium with 0 points: Ben and Ana only, though the thirty share third place.
    wait(projector, lambda d: events(d, "podium:1"), message="the podium is revealed")
    assert [e["event"] for e in projector.execute_script("return window.storycircle.events") if e["event"].startswith("podium")] == ["podium:2", "podium:1"]
    steps = projector.find_elements(By.CSS_SELECTOR, "#podium .step")
    assert sorted(plain(s.find_element(By.TAG_NAME, "strong").text) for s in steps) == ["Ana", "Ben"]
    # Long names wrap between words on the podium (a single word too long for its place still breaks).
    name = steps[0].find_element(By.CSS_SELECTOR, ".who")
    assert (name.value_of_css_property("overflow-wrap"), name.value_of_css_property("word-break")) == ("break-word", "normal")
    assert "fanfare" in sounds(projector)
    # What the child did well comes first.
    assert text(phone, "#finished-title") == "You got 2 of 3 right!"
    assert re.fullmatch(r"2nd place, [\d,]+ points behind Ben", text(phone, "#finished-place")), "numbers are written as English does (1,062)"
    assert text(tablet, "#finished-title") == "You got all 3 right! 🌟"
    assert "🔥 3 in a row" in text(tablet, "#finished-praise")
    # The tablet asked for less motion: the podium is there at once, with no animation.
    assert tablet.execute_script("return document.getAnimations().length") == 0
    assert all(s.value_of_css_property("opacity") == "1" for s in tablet.find_elements(By.CSS_SELECTOR, "#finished-podium .step"))
    wait(phone, lambda d: all(s.value_of_css_property("opacity") == "1" for s in d.find_elements(By.CSS_SELECTOR, "#finished-podium .step")))
    for driver in (projector, small):
        assert_fits(driver, "the podium")
    wait(teacher, lambda d: visible(d, "#end-results"))
    assert text(teacher, "#room-answers") == "", "no stale '2 of 32 answered' on a finished room"
    for driver in (teacher, phone, tablet):
        assert driver.execute_script("return document.documentElement.scrollWidth <= innerWidth"), "no sideways scrolling"
    screenshot(phone, "phone-podium")
    screenshot(tablet, "tablet-podium")
    screenshot(projector, "projector-1920-podium")
    screenshot(small, "projector-1280-podium")
    screenshot(teacher, "teacher-finished-results")
    for driver, screen in ((phone, "phone-podium"), (tablet, "tablet-podium"), (projector, "projector-1920-podium"), (teacher, "teacher-finished")):
        axe(driver, screen)

    # The results: downloaded as CSV, and opened as a page.
    teacher.find_element(By.ID, "download-results").click()
    csv_file = wait(teacher, lambda d: next((p for p in tmp_path.glob("*.csv")), None), message="the CSV is downloaded")
    assert csv_file.name.startswith("Test Pip and the Week of Colours 20"), "named after the story and the day"
    lines = wait(teacher, lambda d: csv_file.read_text().strip().splitlines() or None)
    assert lines[0].startswith("\ufeffchild,question,question_text") and len(lines) == 1 + 32 * 3
    teacher.find_element(By.ID, "open-results").click()
    wait(teacher, lambda d: len(d.window_handles) == 2)
    teacher.switch_to.window(teacher.window_handles[1])
    wait(teacher, lambda d: visible(d, "#results-table"))
    assert "Ben" in text(teacher, "#results-table") and "✓ Wednesday" in text(teacher, "#results-table")
    screenshot(teacher, "teacher-results-page")
    axe(teacher, "teacher-results-page")
    teacher.switch_to.window(teacher.window_handles[0])

    # Nothing by colour alone: the progress marks, as colour-blind eyes see them.
    check_marks_without_colour(phone)
    for driver in (projector, small, phone, tablet, teacher):
        assert nothing_ran(driver)
        no_page_errors(driver)
    crowd.leave_after_the_end()


def check_marks_without_colour(driver):
    """Every progress mark (right, not right, no answer, skipped, not yet) stays distinct when colour
    carries nothing: under deuteranopia and with no colour at all (achromatopsia). The same dots without
    their marks, in the old red and green, are the control: they do not stay distinct."""
    driver.execute_script("""
        return import("/js/dom.js").then((dom) => {
          const legend = dom.progressDots(["correct", "wrong", "missed", "skipped"], 5, "legend");
          legend.id = "legend";
          const control = dom.el("div", {id: "control"}, dom.el("span", {class: "dot", "data-old": "green"}), dom.el("span", {class: "dot", "data-old": "red"}));
          control.children[0].style.background = "#1e8e3e";
          control.children[1].style.background = "#c5221f";
          for (const dot of control.children) { dot.style.border = "2px solid #fff"; }
          document.querySelector("main").prepend(legend, control);
        });
    """)
    wait(driver, lambda d: visible(d, "#legend"))
    driver.execute_script("window.scrollTo(0, 0)")
    try:
        for kind in ("deuteranopia", "achromatopsia"):
            emulate_vision(driver, kind)
            dots = [silhouette(d.screenshot_as_png) for d in driver.find_elements(By.CSS_SELECTOR, "#legend .dot")]
            for i in range(len(dots)):
                for j in range(i + 1, len(dots)):
                    assert difference(dots[i], dots[j]) > 0.10, f"under {kind}, marks {i} and {j} look alike"
            old = [silhouette(d.screenshot_as_png) for d in driver.find_elements(By.CSS_SELECTOR, "#control .dot")]
            assert difference(old[0], old[1]) < 0.05, f"the control (colour only) should look alike under {kind}"
            screenshot(driver, f"phone-marks-{kind}")
    finally:
        emulate_vision(driver, "none")
        driver.execute_script("document.getElementById('legend').remove(); document.getElementById('control').remove();")


def test_the_teacher_removes_and_blocks_and_the_block_survives_a_restart(tmp_path, browsers):
    data = tmp_path / "data"
    server = Server(data).start()
    try:
        room = server.create_room()
        code = room["code"]
        teacher = browsers(**TEACHER)
        teacher.get(f"{server.http}/teacher#room={code}&token={room['teacherToken']}")
        zoe, max_ = browsers(**PHONE), browsers(**PHONE)
        join(zoe, server, code, "Zoë")
        join(max_, server, code, "Max")
        wait(teacher, lambda d: roster_cell(d, "Max", "name") == "Max" and roster_cell(d, "Zoë", "name") == "Zoë")
        # Only what can be pressed now is shown: no disabled command button in view.
        disabled = teacher.find_element(By.CSS_SELECTOR, 'button[data-command="next"]')
        assert not disabled.is_enabled() and not disabled.is_displayed()
        axe(teacher, "teacher-roster-lobby")

        # Remove: Zoë may come back, under the same name.
        click_labelled(teacher, "Remove Zoë")
        assert confirm(teacher, True) == "Remove Zoë?"
        # Said neutrally on the child's phone (a note, not an error): nothing red, nothing "removed".
        wait(zoe, lambda d: visible(d, "#join-note") and text(d, "#join-note") == "You are not in this room any more. Ask your teacher if you can join again.")
        assert not visible(zoe, "#join-error")
        zoe.find_element(By.ID, "join-button").click()
        wait(zoe, lambda d: visible(d, "#lobby"), message="a removed child can join again")

        # Remove and block: Max cannot come back, neither from this browser nor under his name.
        token = max_.execute_script("return JSON.parse(localStorage.getItem('storycircle.session')).token")
        click_labelled(teacher, "Remove and block Max")
        assert confirm(teacher, True) == "Remove and block Max?"
        wait(max_, lambda d: visible(d, "#join-note") and text(d, "#join-note") == "You are not in this room any more. Ask your teacher if you can join again.")
        screenshot(teacher, "teacher-roster-after-block")
        max_.find_element(By.ID, "nickname").clear()
        max_.find_element(By.ID, "nickname").send_keys("Maxi")
        max_.find_element(By.ID, "join-button").click()
        wait(max_, lambda d: visible(d, "#join-note") and text(d, "#join-note") == "You are not in this room any more. Ask your teacher if you can join again." and not visible(d, "#join-error"),
             message="the same browser is refused, whatever the name")
        other = browsers(**PHONE)
        other.get(f"{server.http}/?room={code}")
        join_screen(other).send_keys("MAX")
        other.find_element(By.ID, "join-button").click()
        wait(other, lambda d: visible(d, "#join-error") and "The name MAX can’t be used in this room" in text(d, "#join-error"), timeout=10,
             message="the name is refused too")
        screenshot(max_, "phone-blocked")
        axe(max_, "phone-blocked")
        wait(teacher, lambda d: teacher.find_element(By.ID, "roster-count").text == "1")
    finally:
        server.stop()

    # After a restart, the block still holds (it is stored).
    again = Server(data).start()
    try:
        import asyncio
        from conftest import Client

        async def knock():
            by_token = await Client.connect(again)
            await by_token.send({"type": "rejoin", "room": code, "token": token})
            by_name = await Client.connect(again)
            await by_name.send({"type": "join", "room": code, "nickname": "max"})
            return (await by_token.expect("error"))["code"], (await by_name.expect("error"))["code"]

        assert asyncio.run(knock()) == ("blocked", "blocked")
    finally:
        again.stop()


def test_children_never_see_technical_text_and_the_teacher_sees_the_reason(server, browsers):
    room = server.create_room()
    # A fault the teacher has to hear about: the audio cache's folder is now a file, so no clip is stored.
    # (An unknown voice no longer gets this far: the room is refused when it is created.)
    cache = server.data / "audio-cache"
    shutil.rmtree(cache)
    cache.write_text("not a folder")
    teacher = browsers(**TEACHER)
    teacher.get(f"{server.http}/teacher#room={room['code']}&token={room['teacherToken']}")
    child = browsers(**PHONE)
    join(child, server, room["code"], "Ana")
    press(teacher, "start")
    wait(child, lambda d: visible(d, "#problem"), timeout=30)
    page = child.find_element(By.TAG_NAME, "body").text
    assert "Your teacher is fixing it" in page
    assert "audio-cache" not in page and "could not prepare" not in page and "espeak" not in page
    wait(teacher, lambda d: "went wrong while the story was being prepared" in text(d, "#phase-detail"), message="the teacher reads the reason")
    screenshot(child, "phone-narration-problem")
    screenshot(teacher, "teacher-narration-problem")
    axe(child, "phone-problem")
    # Skip goes straight to the quiz (once the teacher says yes).
    press(teacher, "skip")
    confirm(teacher, True)
    wait(child, lambda d: visible(d, "#options .option"), timeout=20)


def test_a_wrong_room_code_is_a_friendly_sentence_with_a_way_forward(server, browsers):
    child = browsers(**PHONE)
    child.get(f"{server.http}/")
    axe(child, "phone-join")
    screenshot(child, "phone-join")
    child.find_element(By.ID, "room-code").send_keys("999999")
    # A whole code asks the room for its names, the form hidden until the answer (here: no such room).
    join_screen(child)
    child.find_element(By.ID, "random-name").click()
    assert child.find_element(By.ID, "nickname").get_attribute("value")
    child.find_element(By.ID, "join-button").click()
    error = wait(child, lambda d: visible(d, "#join-error"))
    assert "There is no room with the code 999999" in error.text
    assert child.find_element(By.ID, "join-button").is_enabled(), "the child can try again"
    child.find_element(By.ID, "room-code").clear()
    child.find_element(By.ID, "room-code").send_keys("12")
    child.find_element(By.ID, "join-button").click()
    wait(child, lambda d: "6 numbers" in d.find_element(By.ID, "join-error").text)


def test_the_child_page_reads_at_320_pixels_and_every_control_is_reachable_by_keyboard(server, browsers):
    room = server.create_room()
    child = browsers(width=320, height=640, mobile=True)
    child.get(f"{server.http}/?room={room['code']}")
    join_screen(child)
    assert child.execute_script("return window.innerWidth") == 320, child.execute_script("return [innerWidth, document.documentElement.scrollWidth]")
    width = child.execute_script("return document.documentElement.scrollWidth")
    assert width <= 320, f"no sideways scrolling at 320 px ({width})"
    focusable = []
    body = child.find_element(By.TAG_NAME, "body")
    for _ in range(8):
        body.send_keys("\t") if not focusable else child.switch_to.active_element.send_keys("\t")
        focusable.append(child.switch_to.active_element.get_attribute("id"))
    assert {"language-picker", "room-code", "nickname", "random-name", "join-button"} <= set(focusable)
    assert child.find_element(By.ID, "announcer").get_attribute("aria-live") == "polite"
    # The focus ring shows on the page and the cards (3:1 at least, for a part of a control); a white halo
    # fills the gap between the ring and a coloured button, so the ring never touches the button's colour.
    focused = child.switch_to.active_element
    ring = colour(child, focused, "outline-color")
    for surface in ("html", ".card"):
        assert contrast_ratio(ring, colour(child, child.find_element(By.CSS_SELECTOR, surface))) >= 3, surface
    assert int(focused.value_of_css_property("outline-offset").rstrip("px")) <= 2
    assert "rgb(255, 255, 255) 0px 0px 0px 2px" in focused.value_of_css_property("box-shadow")
