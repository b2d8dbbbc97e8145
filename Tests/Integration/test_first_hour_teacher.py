"""A teacher's first hour, on the teacher page, in real headless Chromium against the real server: the page
opens the room's own projector (followed, the projector shows the room) and leads back to the class and the
library; in every phase exactly one control is the filled "press me" button, and it is the one the room
expects; skipping and ending stand apart and ask first, by keyboard too; the settings speak plain words and
the narration menu's words fit; a command sent is not written under the buttons."""
import json

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from browser_support import PHONE, PROJECTOR, TABLET, TEACHER, axe, no_page_errors, plain, screenshot, text, visible, wait
from conftest import STORIES
from test_browser import CROWD, Crowd, browsers, choose, join, press  # noqa: F401 (browsers is a fixture)
from test_classes_browser import class_room, make_class

CLASSROOM = STORIES / "classroom.json"


def teacher_page(browsers, server, room, size=TEACHER):
    driver = browsers(**size)
    driver.get(f"{server.http}/teacher#room={room['code']}&token={room['teacherToken']}")
    wait(driver, lambda d: d.execute_script("return window.storycircle.room.phase") is not None, message="the teacher's welcome")
    return driver


def phase(driver):
    return driver.execute_script("return window.storycircle.room.phase")


# The visible buttons of the controls drawn filled in the accent colour: what reads as "press this".
FILLED = """
  const probe = document.body.appendChild(Object.assign(document.createElement("span"), { style: "background: var(--accent)" }));
  const accent = getComputedStyle(probe).backgroundColor;
  probe.remove();
  return [...document.querySelectorAll("#controls button")]
    .filter((b) => b.getClientRects().length > 0 && getComputedStyle(b).backgroundColor === accent)
    .map((b) => b.dataset.command ?? b.id);
"""


def filled(driver):
    return driver.execute_script(FILLED)


def expect_one_step(driver, command, what):
    wait(driver, lambda d: filled(d) == [command] and text(d, "#next-step"), message=f"{what}: only {command} is filled (now {filled(driver)})")
    return text(driver, "#next-step")


def test_the_teacher_page_opens_its_own_projector_and_leads_back_to_the_library_and_the_class(server, browsers):
    room = server.create_room()
    teacher = teacher_page(browsers, server, room)
    link = wait(teacher, lambda d: visible(d, "#dashboard-link") and d.find_element(By.ID, "dashboard-link"), message="the projector link")
    assert link.text == "Open the projector page"
    href = link.get_attribute("href")
    assert href.startswith(f"{server.http}/dashboard#"), href
    assert room["teacherToken"] not in href, "the teacher's key never goes to the projector"
    assert href == room["dashboardURL"].replace(room["dashboardURL"].split("/dashboard")[0], server.http), (href, room["dashboardURL"])
    # Followed, it is a working projector page: the room's code and title, and a child who joins.
    projector = browsers(**PROJECTOR)
    projector.get(href)
    wait(projector, lambda d: d.find_element(By.ID, "join-code").text == room["code"], message="the projector shows the room")
    crowd = Crowd(server, room["code"], ["Dina"])
    wait(projector, lambda d: "Dina" in d.find_element(By.TAG_NAME, "body").text, message="the projector sees who joined")
    assert projector.execute_script("return window.storycircle.room.role") == "dashboard", "read-only, not the teacher's"
    # Opened from the printed link, this tab holds no school key: no link that would only ask for one
    # (test_story_library_browser and test_first_hour_reports follow them from the library and the class).
    assert not visible(teacher, "#library-link") and not visible(teacher, "#class-link")
    # Given the key in this tab (as a page opened from the library is), the way back to the library.
    teacher.execute_script("sessionStorage.setItem('storycircle.schoolKey', arguments[0])", server.admin_token)
    teacher.refresh()
    library = wait(teacher, lambda d: visible(d, "#library-link"), message="the library link")
    assert library.get_attribute("href") == f"{server.http}/stories"
    assert library.text == "The story library"
    assert not visible(teacher, "#class-link"), "no class link for a room without a class"
    no_page_errors(teacher)
    no_page_errors(projector)
    for ws in crowd.clients:
        ws.close()

    # A class room's page leads back to that class.
    class_id, _ = make_class(server)
    room = class_room(server, class_id)
    teacher.get(f"{server.http}/teacher#room={room['code']}&token={room['teacherToken']}")
    teacher.refresh()
    back = wait(teacher, lambda d: visible(d, "#class-link") and d.find_element(By.ID, "class-link"), message="the class link")
    assert back.text == "Back to the class"
    assert back.get_attribute("href") == f"{server.http}/classes#id={class_id}"
    assert visible(teacher, "#dashboard-link")


def test_in_every_phase_one_button_is_the_next_step_and_skipping_and_ending_ask_first(server, browsers):
    room = server.create_room(story=CLASSROOM)
    code = room["code"]
    teacher = teacher_page(browsers, server, room)
    crowd = Crowd(server, code, ["Ana", "Ben", "Dina"])
    lines = {"lobby": expect_one_step(teacher, "start", "the lobby")}
    assert "start" in lines["lobby"].lower()
    # Nothing but what can be pressed now is offered; the destructive ones stand apart.
    assert [b.get_attribute("data-command") for b in teacher.find_elements(By.CSS_SELECTOR, "#controls-apart button") if b.is_displayed()] == ["end"]

    press(teacher, "start")
    wait(teacher, lambda d: phase(d) == "narrating", timeout=60, message="the story is read")
    assert server.command(room, "pause")[0] == 200
    lines["paused story"] = expect_one_step(teacher, "resume", "the story paused")
    assert "Sent:" not in text(teacher, "#controls"), "a command sent is not written under the buttons"
    assert server.command(room, "resume")[0] == 200
    wait(teacher, lambda d: not d.execute_script("return window.storycircle.room.paused"))
    if phase(teacher) == "narrating":
        assert filled(teacher) in (["pause"], []), filled(teacher)

    # Skipping the story asks first; Escape keeps the story going.
    press(teacher, "skip")
    dialog = wait(teacher, lambda d: visible(d, "dialog.confirm") and d.find_element(By.CSS_SELECTOR, "dialog.confirm"), message="skipping asks")
    assert text(dialog, "h2") == "Skip the rest of the story?"
    assert teacher.switch_to.active_element.get_attribute("data-answer") == "no", "the safe answer has the focus"
    teacher.switch_to.active_element.send_keys(Keys.ESCAPE)
    wait(teacher, lambda d: not d.find_elements(By.CSS_SELECTOR, "dialog.confirm"))
    assert phase(teacher) in ("narrating", "question"), "nothing skipped"
    if phase(teacher) == "narrating":
        press(teacher, "skip")
        wait(teacher, lambda d: visible(d, "dialog.confirm"))
        # By keyboard: from "Keep going" to "Skip to the quiz", then Enter.
        teacher.switch_to.active_element.send_keys(Keys.TAB)
        assert teacher.switch_to.active_element.get_attribute("data-answer") == "yes"
        teacher.switch_to.active_element.send_keys(Keys.ENTER)
    wait(teacher, lambda d: phase(d) == "question", timeout=30, message="the quiz")

    lines["question"] = expect_one_step(teacher, "reveal", "a question open")
    assert not visible(teacher, 'button[data-command="next"]'), "no second button that reveals"
    tablet = teacher_page(browsers, server, room, TABLET)
    wait(tablet, lambda d: phase(d) == "question")
    expect_one_step(tablet, "reveal", "a question open on a tablet")
    axe(teacher, "first-hour-teacher-question-1366")
    axe(tablet, "first-hour-teacher-question-820")
    screenshot(teacher, "first-hour-teacher")
    screenshot(tablet, "first-hour-teacher-tablet")

    assert server.command(room, "pause")[0] == 200
    lines["paused question"] = expect_one_step(teacher, "resume", "a question paused")
    assert server.command(room, "resume")[0] == 200
    expect_one_step(teacher, "reveal", "a question again")
    press(teacher, "reveal")
    lines["reveal"] = expect_one_step(teacher, "next", "the reveal")
    assert not visible(teacher, 'button[data-command="skip"]'), "no second button that goes on"

    # Skipping a question asks, and a confirmed skip moves on.
    press(teacher, "next")
    wait(teacher, lambda d: phase(d) == "question" and d.execute_script("return window.storycircle.room.question.index") == 1)
    press(teacher, "skip")
    assert wait(teacher, lambda d: visible(d, "dialog.confirm") and text(d, "dialog.confirm h2")) == "Skip this question?"
    teacher.find_element(By.CSS_SELECTOR, 'dialog.confirm button[data-answer="yes"]').click()
    wait(teacher, lambda d: d.execute_script("return window.storycircle.room.question?.index") == 2, message="the next question")

    # Ending asks first, by keyboard as well.
    press(teacher, "end")
    assert wait(teacher, lambda d: visible(d, "dialog.confirm") and text(d, "dialog.confirm h2")) == "End the room for everyone?"
    teacher.switch_to.active_element.send_keys(Keys.ESCAPE)
    wait(teacher, lambda d: not d.find_elements(By.CSS_SELECTOR, "dialog.confirm"))
    assert phase(teacher) == "question"
    press(teacher, "end")
    wait(teacher, lambda d: visible(d, "dialog.confirm"))
    teacher.switch_to.active_element.send_keys(Keys.TAB)
    teacher.switch_to.active_element.send_keys(Keys.ENTER)
    wait(teacher, lambda d: phase(d) == "finished", message="the end")
    lines["finished"] = expect_one_step(teacher, "download-results", "the end")
    assert len(set(lines.values())) == len(lines), f"each phase says what to do: {lines}"
    assert "Sent:" not in text(teacher, "#controls")
    no_page_errors(teacher)
    for ws in crowd.clients:
        ws.close()


# Where the one filled button is (`FILLED`'s), against the window, the answer chart and the roster's card.
STEP_PLACE = """
  const probe = document.body.appendChild(Object.assign(document.createElement("span"), { style: "background: var(--accent)" }));
  const accent = getComputedStyle(probe).backgroundColor;
  probe.remove();
  const filled = [...document.querySelectorAll("#controls button")]
    .filter((b) => b.getClientRects().length > 0 && getComputedStyle(b).backgroundColor === accent);
  if (filled.length !== 1) return null;
  const button = filled[0];
  if (arguments[0]) window.scrollTo(0, 0); else button.scrollIntoView({ block: "center" });
  const r = button.getBoundingClientRect();
  const top = (selector) => { const node = document.querySelector(selector); return node && node.getClientRects().length ? node.getBoundingClientRect().top : null; };
  const hit = document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2);
  return { command: button.dataset.command ?? button.id, top: r.top, bottom: r.bottom, left: r.left, right: r.right,
           width: innerWidth, height: innerHeight, scrollY, chart: top("#teacher-chart"), roster: top("#roster-card"),
           pressable: Boolean(hit && button.contains(hit)) };
"""


def step_place(driver, command, from_top):
    """Where the filled `command` button is: with the page at its top (`from_top`), or scrolled to it."""
    return wait(driver, lambda d: (place := d.execute_script(STEP_PLACE, from_top)) and place["command"] == command and place,
                message=f"{command} is the one filled button")


def test_the_one_next_step_is_in_view_at_1366x768_in_every_phase_and_comes_first_on_a_tablet_and_a_phone(server, browsers):
    room = server.create_room(story=CLASSROOM)
    code = room["code"]
    crowd = Crowd(server, code, CROWD[:8])
    laptop = teacher_page(browsers, server, room)
    smaller = {"tablet": teacher_page(browsers, server, room, TABLET), "phone": teacher_page(browsers, server, room, PHONE)}
    wait(laptop, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#roster tbody tr[data-player]")) == 8, message="8 children")

    def check(phase_name, command):
        place = step_place(laptop, command, True)
        # In the window of a 1366×768 laptop, the page not scrolled, and nothing over it.
        assert place["scrollY"] == 0 and place["pressable"], place
        assert 0 <= place["top"] and place["bottom"] <= place["height"] and 0 <= place["left"] and place["right"] <= place["width"], \
            f"{phase_name}: {command} is out of view at 1366×768 ({place})"
        if place["chart"] is not None:
            assert place["bottom"] <= place["chart"], f"{phase_name}: the next step comes before the chart ({place})"
        screenshot(laptop, f"teacher-next-step-{phase_name}")
        for size, driver in smaller.items():
            # Reachable: scrolled to, it can be pressed; it comes before the chart and the list of children.
            place = step_place(driver, command, False)
            assert place["pressable"] and 0 <= place["top"] and place["bottom"] <= place["height"], (size, phase_name, place)
            for below in ("chart", "roster"):
                assert place[below] is None or place["bottom"] <= place[below], f"{size}, {phase_name}: {command} before the {below} ({place})"
            if phase_name == "reveal":
                screenshot(driver, f"teacher-next-step-reveal-{size}")

    check("lobby", "start")
    assert server.command(room, "start")[0] == 200
    wait(laptop, lambda d: phase(d) == "narrating", timeout=60, message="the story is read")
    assert server.command(room, "pause")[0] == 200
    check("story", "resume")
    assert server.command(room, "resume")[0] == 200
    assert server.command(room, "skip")[0] == 200
    wait(laptop, lambda d: phase(d) == "question", timeout=30, message="the first question")
    check("question", "reveal")
    crowd.answer(0, lambda i: i % 4)
    assert server.command(room, "next")[0] == 200
    # Eight options, eight answers: the tallest chart.
    crowd.answer(1, lambda i: i)
    wait(laptop, lambda d: phase(d) == "reveal" and d.execute_script("return window.storycircle.room.reveal.question") == 1, message="the reveal of 8")
    assert len(laptop.find_elements(By.CSS_SELECTOR, "#teacher-distribution li")) == 8
    check("reveal", "next")
    axe(laptop, "teacher-next-step-reveal-1366")
    axe(smaller["phone"], "teacher-next-step-reveal-phone")
    assert server.command(room, "end")[0] == 200
    wait(laptop, lambda d: phase(d) == "finished", message="the end")
    check("end", "download-results")
    for driver in (laptop, *smaller.values()):
        no_page_errors(driver)
    crowd.leave_after_the_end()


# Each option of the narration menu, against the room the closed menu gives its words.
MENU_FITS = """
  const select = document.querySelector('#controls select[name="narration"]');
  const style = getComputedStyle(select);
  const context = document.createElement("canvas").getContext("2d");
  context.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
  const before = select.value;
  const result = [...select.options].map((option) => {
    select.value = option.value;
    // The closed menu's box holds the text, its padding and the arrow (about 1.2em).
    const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 1.2 * parseFloat(style.fontSize);
    return { text: option.text, width: Math.round(context.measureText(option.text).width), room: Math.round(room),
             fits: select.scrollWidth <= select.clientWidth && context.measureText(option.text).width <= room };
  });
  select.value = before;
  return result;
"""


def test_the_settings_speak_plain_words_and_the_narration_menu_fits(server, browsers):
    room = server.create_room()
    for size, name in ((TEACHER, "1366"), (PHONE, "phone")):
        teacher = teacher_page(browsers, server, room, size)
        wait(teacher, lambda d: d.find_elements(By.CSS_SELECTOR, '#controls select[name="narration"]'))
        for language in ("en", "es", "fr", "de", "pt", "ar"):
            assert server.command(room, "settings", settings={"language": language})[0] == 200
            wait(teacher, lambda d: d.execute_script("return document.documentElement.lang") == language, message=language)
            words = plain(teacher.find_element(By.ID, "controls").get_attribute("textContent")).lower()
            for engine in ("espeak", "piper", "engine", "tts"):
                assert engine not in words, f"{engine} in the {language} settings"
            cut = [option for option in teacher.execute_script(MENU_FITS) if not option["fits"]]
            assert not cut, f"{name} {language}: the narration menu cuts {cut}"
        assert server.command(room, "settings", settings={"language": ""})[0] == 200
        wait(teacher, lambda d: d.execute_script("return document.documentElement.lang") == "en")
        labels = [plain(words.text) for words in teacher.find_elements(By.CSS_SELECTOR, "#controls form label > span")]
        assert "Faster right answers earn more points" in labels and "Where the story is read aloud" in labels, labels
        contest = teacher.find_element(By.CSS_SELECTOR, 'label[for="competitive"]').text
        assert contest == "A contest: show each child their place and who is just ahead"
        assert not teacher.find_element(By.ID, "competitive").is_selected(), "no contest unless the teacher chooses it"
        if name == "phone":
            assert teacher.execute_script("return document.documentElement.scrollWidth <= innerWidth"), "no sideways scrolling"
            screenshot(teacher, "first-hour-teacher-phone-settings")


def play_to_the_end(server, room, phone):
    """Two questions, without speed points: Dina gets both right, the phone's Ana the first only, Ben none.
    Dina ends with 2,000 points, Ana with 1,000, Ben with 0."""
    code = room["code"]
    crowd = Crowd(server, code, ["Dina", "Ben"])
    join(phone, server, code, "Ana")
    assert server.command(room, "start")[0] == 200
    assert server.command(room, "skip")[0] == 200
    crowd.answer(0, lambda i: 0 if i == 0 else 1)
    choose(phone, "A gear")
    wait(phone, lambda d: visible(d, "#reveal"), message="the first reveal")
    assert server.command(room, "next")[0] == 200
    crowd.answer(1, lambda i: 1 if i == 0 else 0)
    choose(phone, "Red")
    wait(phone, lambda d: visible(d, "#reveal") and d.execute_script("return window.storycircle.room.reveal?.question") == 1,
         message="the second reveal")
    return crowd


def test_a_childs_phone_names_no_classmate_unless_the_teacher_chooses_a_contest(server, browsers):
    room = server.create_room(settings={"speedPoints": False, "streakBonus": False})
    phone = browsers(**PHONE)
    crowd = play_to_the_end(server, room, phone)
    reveal = plain(phone.find_element(By.ID, "quiz").text)
    assert "Dina" not in reveal and "Ben" not in reveal and "behind" not in reveal, reveal
    assert not visible(phone, "#reveal-top") and text(phone, "#reveal-place") == ""
    assert server.command(room, "end")[0] == 200
    wait(phone, lambda d: visible(d, "#finished"), message="the end")
    end = plain(phone.find_element(By.ID, "finished").text)
    assert "You got 1 of 2 right!" in end, end
    for word in ("Dina", "Ben", "behind", "place", "podium"):
        assert word.lower() not in end.lower(), f"{word!r} on the phone at the end: {end}"
    assert text(phone, "#finished-place").startswith("⭐"), "their own points"
    assert not visible(phone, "#finished-podium")
    # The projector still celebrates the class.
    projector = browsers(**PROJECTOR)
    projector.get(room["dashboardURL"].replace(room["dashboardURL"].split("/dashboard")[0], server.http))
    wait(projector, lambda d: visible(d, "#podium .step"), message="the projector's podium")
    screenshot(phone, "first-hour-phone-end")
    axe(phone, "first-hour-phone-end")
    no_page_errors(phone)
    for ws in crowd.clients:
        ws.close()

    # With the contest on, the same game shows the place and who is just ahead.
    room = server.create_room(settings={"speedPoints": False, "streakBonus": False, "competitive": True})
    phone = browsers(**PHONE)
    crowd = play_to_the_end(server, room, phone)
    assert text(phone, "#reveal-place").startswith("2nd place"), text(phone, "#reveal-place")
    assert server.command(room, "end")[0] == 200
    wait(phone, lambda d: visible(d, "#finished-podium .step"), message="the podium on the phone")
    place = text(phone, "#finished-place")
    assert place == "2nd place, 1,000 points behind Dina", place
    screenshot(phone, "first-hour-phone-end-contest")
    for ws in crowd.clients:
        ws.close()


def test_the_contest_is_turned_on_from_the_teacher_page_at_any_time(server, browsers):
    room = server.create_room()
    teacher = teacher_page(browsers, server, room)
    toggle = wait(teacher, lambda d: d.find_element(By.ID, "competitive"))
    assert server.command(room, "start")[0] == 200
    assert server.command(room, "skip")[0] == 200
    wait(teacher, lambda d: phase(d) == "question")
    toggle.click()
    wait(teacher, lambda d: d.execute_script("return window.storycircle.room.settings.competitive") is True, message="the contest is on")
    status, _, body = server.request("GET", f"/api/rooms/{room['code']}", room["teacherToken"])
    assert status == 200 and json.loads(body)["settings"]["competitive"] is True, body
