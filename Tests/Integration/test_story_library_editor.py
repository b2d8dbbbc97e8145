"""The story editor (/stories/edit) in headless Chromium, driven with the keyboard only: a teacher writes a
three-question story from nothing, sees a validation problem at its field, fixes it, listens to a
sentence (the page gets an MP3 that plays), has the draft survive a reload (and a closed tab), saves, reloads, meets the
conflict screen on a stale save, starts a room from the library (the teacher page opens in a tab of its own), and a
child joins and hears that story.
axe-core on the editor at phone, laptop and projector sizes."""
import asyncio
import json
import urllib.request

import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from browser_support import PHONE, PROJECTOR, TEACHER, axe, browsers, plain, screenshot, text, visible, wait  # noqa: F401
from conftest import join, screen


def tab_until(driver, reached, what, limit=300):
    """Presses Tab until the element with the focus is one `reached` accepts, as a teacher without a mouse
    would, and returns it."""
    for _ in range(limit):
        try:
            active = driver.switch_to.active_element
            if reached(active):
                return active
        except StaleElementReferenceException:
            # The element that had the focus was drawn anew (the sentences after a validation): ask again.
            continue
        # The key goes to the page, to whatever has the focus, as a keyboard's does. Sent to an element, it
        # would first be checked as one that can be typed into (a focused one WebDriver did not count as
        # interactable failed the test on a loaded machine), and on the import button's file field keys
        # would name a file.
        ActionChains(driver).send_keys(Keys.TAB).perform()
    raise AssertionError(f"Tab never reached {what}")


def tab_to(driver, target, limit=300):
    """Presses Tab until the element with the id `target` has the focus."""
    return tab_until(driver, lambda active: active.get_attribute("id") == target, f"#{target}", limit)


def typed(driver, target, words):
    field = tab_to(driver, target)
    field.send_keys(words)
    return field


def stored(server, story_id):
    status, _, body = server.request("GET", f"/api/stories/{story_id}", server.admin_token)
    assert status == 200
    return json.loads(body)


def ready(driver):
    wait(driver, lambda d: d.execute_script("return window.storycircle && window.storycircle.ready === true"), message="the editor is ready")


def test_a_teacher_writes_a_story_with_the_keyboard_listens_saves_and_a_child_hears_it(server, browsers):
    driver = browsers(**TEACHER)
    driver.get(f"{server.http}/stories#token={server.admin_token}")
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, ".library-story"))
    tab_to(driver, "library-new").send_keys(Keys.ENTER)
    wait(driver, lambda d: "/stories/edit" in d.current_url)
    ready(driver)

    typed(driver, "edit-title", "The Brave Little Kite")
    typed(driver, "edit-text", "Kim had a red kite. The wind took it up high! Kim ran after it.")
    sentences = ["Kim had a red kite.", "The wind took it up high!", "Kim ran after it."]
    wait(driver, lambda d: [plain(n.text) for n in d.find_elements(By.CSS_SELECTOR, "#edit-sentences li span[dir]")] == sentences,
         message="three sentences to be narrated")
    assert len(driver.find_elements(By.CSS_SELECTOR, "#edit-sentences [data-sentence]")) == 3

    typed(driver, "q-0-text", "What colour was the kite?")
    typed(driver, "q-0-option-0", "Red")
    typed(driver, "q-0-option-1", "Blue")
    # A new question has no right answer until the teacher chooses one: Red, with the space bar.
    assert not driver.find_element(By.ID, "q-0-correct-0").is_selected() and not driver.find_element(By.ID, "q-0-correct-1").is_selected()
    tab_to(driver, "q-0-correct-0").send_keys(Keys.SPACE)
    wait(driver, lambda d: d.find_element(By.ID, "q-0-correct-0").is_selected())
    tab_to(driver, "edit-add-question").send_keys(Keys.ENTER)
    wait(driver, lambda d: d.switch_to.active_element.get_attribute("id") == "q-1-text")
    driver.switch_to.active_element.send_keys("Who ran after the kite?")
    typed(driver, "q-1-option-0", "The wind")
    typed(driver, "q-1-option-1", "Kim")
    # Kim is the right one: the radio of the second answer, chosen with the arrow key.
    tab_to(driver, "q-1-correct-0").send_keys(Keys.ARROW_DOWN)
    wait(driver, lambda d: d.find_element(By.ID, "q-1-correct-1").is_selected())
    # Reordering keeps the right answer: "Kim" moves up to be the first answer and stays the right one.
    tab_to(driver, "q-1-option-up-1").send_keys(Keys.ENTER)
    wait(driver, lambda d: d.find_element(By.ID, "q-1-option-0").get_attribute("value") == "Kim")
    assert driver.find_element(By.ID, "q-1-correct-0").is_selected()

    typed(driver, "q-1-explanation", "Kim ran after it.")
    tab_to(driver, "edit-add-question").send_keys(Keys.ENTER)
    wait(driver, lambda d: d.switch_to.active_element.get_attribute("id") == "q-2-text")
    driver.switch_to.active_element.send_keys("Where did the wind take the kite?")
    typed(driver, "q-2-option-0", "Up high")
    typed(driver, "q-2-option-1", "Into a box")
    tab_to(driver, "q-2-correct-0").send_keys(Keys.SPACE)
    wait(driver, lambda d: d.find_element(By.ID, "q-2-correct-0").is_selected())
    tab_to(driver, "q-2-add-option").send_keys(Keys.ENTER)
    wait(driver, lambda d: d.switch_to.active_element.get_attribute("id") == "q-2-option-2")
    field = driver.switch_to.active_element
    field.send_keys("up high")

    # The validator's problem appears at its field once the teacher leaves it.
    ActionChains(driver).send_keys(Keys.TAB).perform()
    problem = wait(driver, lambda d: "same as answer 1" in text(d, "#q-2-option-2-problem") and visible(d, "#q-2-option-2-problem"),
                   message="the duplicate option is pointed out")
    assert driver.find_element(By.ID, "q-2-option-2").get_attribute("aria-invalid") == "true"
    screenshot(driver, "teacher-editor-problem")
    axe(driver, "editor-laptop-problem")
    field.click()
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys("Far away")
    wait(driver, lambda d: not visible(d, "#q-2-option-2-problem"), message="the problem goes once fixed")
    assert driver.find_element(By.ID, "q-2-option-2").get_attribute("aria-invalid") is None

    # Listen: the server reads the sentence through its audio cache; the page plays the MP3.
    tab_to(driver, "edit-title")
    listen = driver.find_element(By.CSS_SELECTOR, "#edit-sentences [data-sentence='1']")
    tab_until(driver, lambda active: active == listen, "the sentence's listen button", limit=200)
    listen.send_keys(Keys.ENTER)
    heard = wait(driver, lambda d: d.execute_script("return window.storycircle.listened[0]"), message="the sentence is read")
    assert heard["sentence"] == "The wind took it up high!" and heard["audio"].endswith(".mp3")
    wait(driver, lambda d: d.execute_script("return window.storycircle.playing") == heard["audio"], message="the MP3 plays")
    with urllib.request.urlopen(server.http + heard["audio"], timeout=15) as response:
        assert response.headers["content-type"] == "audio/mpeg"
        head = response.read(3)
        assert head == b"ID3" or head[0] == 0xFF

    # The draft survives a reload before it is saved.
    driver.refresh()
    ready(driver)
    assert driver.find_element(By.ID, "edit-title").get_attribute("value") == "The Brave Little Kite"
    assert driver.find_element(By.ID, "q-2-option-2").get_attribute("value") == "Far away"
    assert "brought back" in text(driver, "#editor-message")

    tab_to(driver, "edit-save").send_keys(Keys.ENTER)
    wait(driver, lambda d: "Saved (version 1)" in text(d, "#editor-message"), message="saved")
    story_id = driver.execute_script("return window.storycircle.editor.id")
    assert f"id={story_id}" in driver.current_url
    saved = stored(server, story_id)
    assert saved["title"] == "The Brave Little Kite" and saved["questions"] == 3 and saved["sentences"] == 3
    assert saved["story"]["quiz"]["questions"][1]["answer"] == "Kim"
    assert saved["story"]["quiz"]["questions"][1]["options"] == ["Kim", "The wind"]
    assert saved["story"]["quiz"]["questions"][2]["options"] == ["Up high", "Into a box", "Far away"]

    # Reloaded, it comes from the server (no draft left).
    driver.refresh()
    ready(driver)
    assert text(driver, "#editor-heading") == "Editing “The Brave Little Kite”"
    assert visible(driver, "#editor-message") is None

    # Back to the library, "Start a room" on the new story, the teacher page (the projector link beside
    # it); a child joins, the teacher starts the story there, and the child hears that story.
    tab_to(driver, "editor-back").send_keys(Keys.ENTER)
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, f".library-story[data-story='{story_id}']"), message="the library lists it")
    start = driver.find_element(By.CSS_SELECTOR, f".library-story[data-story='{story_id}'] [data-action=start]")
    tab_until(driver, lambda active: active == start, "the story's start button")
    start.send_keys(Keys.ENTER)
    started = wait(driver, lambda d: visible(d, "#room-started"), message="the room is ready")
    code = plain(started.find_element(By.ID, "room-started-title").text)[-6:]
    assert code.isdigit() and "The Brave Little Kite" in plain(started.text)
    assert f"/dashboard#room={code}&token=" in driver.find_element(By.ID, "room-projector-link").get_attribute("href")
    assert driver.switch_to.active_element.get_attribute("id") == "room-teacher-link"
    library = driver.current_window_handle
    driver.switch_to.active_element.send_keys(Keys.ENTER)
    # The teacher page opens in a tab of its own; the library stays.
    wait(driver, lambda d: len(d.window_handles) == 2, message="the teacher page's tab")
    driver.switch_to.window(next(handle for handle in driver.window_handles if handle != library))
    # The teacher page takes its token out of the address at once (the tab's session keeps it).
    wait(driver, lambda d: "/teacher" in d.current_url and d.current_url.endswith(f"#room={code}"), message="the teacher page, its token out of the address")

    async def hear():
        child, welcome = await join(server, {"code": code}, "Ana")
        # The teacher starts the story on the teacher page, with the keyboard.
        button = wait(driver, lambda d: (b := d.find_element(By.CSS_SELECTOR, 'button[data-command="start"]')).is_enabled() and b,
                      message="Start story can be pressed")
        button.send_keys(Keys.ENTER)
        plan = await child.expect("narration.plan", timeout=60)
        # Read by the natural voice (a new story's default when it is installed), the plan holds the
        # sentences ready so far and the rest follow one by one.
        sentences = list(plan["sentences"])
        while len(sentences) < plan.get("total", len(sentences)):
            sentences.append((await child.expect("narration.sentence", timeout=60))["sentence"])
        return welcome, plan, sentences
    welcome, plan, sentences = asyncio.run(hear())
    assert [sentence["text"] for sentence in sentences] == ["Kim had a red kite.", "The wind took it up high!", "Kim ran after it."]
    assert plan["playsAudio"] and all(".mp3" in sentence.get("audio", "") for sentence in sentences), sentences


def test_a_stale_save_gets_the_conflict_screen_with_both_versions(server, browsers):
    document = {"title": "Shared story", "text": "One. Two.",
                "quiz": {"questions": [{"question": "How many?", "options": ["One", "Two"], "answer": "Two"}]}}
    status, _, body = server.request("POST", "/api/stories", server.admin_token, {"story": document})
    story_id = json.loads(body)["id"]
    driver = browsers(**TEACHER)
    driver.get(f"{server.http}/stories/edit#id={story_id}&token={server.admin_token}")
    ready(driver)
    # Meanwhile another teacher saves version 2.
    other = dict(document, title="Shared story, by the other teacher")
    assert server.request("PUT", f"/api/stories/{story_id}", server.admin_token, {"story": other, "version": 1, "by": "Mr Chen"})[0] == 200

    field = typed(driver, "edit-title", Keys.END + ", mine")
    tab_to(driver, "edit-save").send_keys(Keys.ENTER)
    conflict = wait(driver, lambda d: visible(d, "#editor-conflict"), message="the conflict screen")
    assert "Shared story, by the other teacher" in plain(conflict.find_element(By.ID, "conflict-theirs").text)
    assert "Shared story, mine" in plain(conflict.find_element(By.ID, "conflict-yours").text)
    assert "Mr Chen" in text(driver, "#conflict-text")
    assert stored(server, story_id)["title"] == "Shared story, by the other teacher", "nothing was overwritten"
    axe(driver, "editor-conflict")
    assert driver.switch_to.active_element.get_attribute("id") == "conflict-keep-mine"
    driver.switch_to.active_element.send_keys(Keys.ENTER)
    wait(driver, lambda d: "Saved (version 3)" in text(d, "#editor-message"))
    assert stored(server, story_id)["title"] == "Shared story, mine"
    assert field is not None


@pytest.mark.parametrize("size", [PHONE, TEACHER, PROJECTOR], ids=["phone", "laptop", "projector"])
def test_the_editor_passes_axe_at_every_size(server, browsers, size):
    status, _, body = server.request("GET", "/api/stories", server.admin_token)
    pip = next(story for story in json.loads(body)["stories"] if story["title"].startswith("Pip"))
    driver = browsers(**size)
    driver.get(f"{server.http}/stories/edit#id={pip['id']}&token={server.admin_token}")
    ready(driver)
    name = {id(PHONE): "phone", id(TEACHER): "laptop", id(PROJECTOR): "projector"}[id(size)]
    if size is TEACHER:
        screenshot(driver, "teacher-editor")
    axe(driver, f"editor-{name}")
    assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")
    # Every answer's field keeps room to read and type in, beside its radio, its "✓ right" and its three
    # buttons: at least half of its question's answers box (the page itself is at most 64rem wide).
    widths = driver.execute_script("""
        return [...document.querySelectorAll('.option-row input[type=text]')].map(i =>
          [i.getBoundingClientRect().width, i.closest('.edit-options').getBoundingClientRect().width])""")
    assert widths and all(width >= 0.5 * box for width, box in widths), widths


def pictures_of(story):
    """Every picture a stored story names, by where: the pages', the questions' and the options'."""
    found = {}
    for index, page in enumerate(story["text"]):
        if isinstance(page, dict) and page.get("picture"):
            found[f"text[{index}]"] = page["picture"]["id"]
    for qi, question in enumerate(story["quiz"]["questions"]):
        if question.get("picture"):
            found[f"q{qi}"] = question["picture"]["id"]
        for option in question["options"]:
            if isinstance(option, dict):
                found[f"q{qi}:{option['label']}"] = option["picture"]["id"]
    return found


def picture_bytes(server, ids):
    result = {}
    for picture in sorted(set(ids)):
        status, _, body = server.request("GET", f"/pictures/{picture}", None)
        assert status == 200, picture
        result[picture] = body
    return result


def test_a_picture_story_is_edited_with_the_keyboard_and_keeps_every_picture(server, browsers):
    # The seeded "Olive the Owl" (config/stories/olive-the-owl.json): pages as {text, picture}, options as
    # {label, picture}, a question with a picture.
    status, _, body = server.request("GET", "/api/stories", server.admin_token)
    olive = next(story for story in json.loads(body)["stories"] if story["title"] == "Olive the Owl")
    before = stored(server, olive["id"])
    pictures = pictures_of(before["story"])
    assert len(pictures) >= 10, "the seed has pictures on its pages, a question and its options"
    bytes_before = picture_bytes(server, pictures.values())
    driver = browsers(**TEACHER)
    driver.get(f"{server.http}/stories/edit#id={olive['id']}&token={server.admin_token}")
    ready(driver)
    assert visible(driver, "#editor-message") is None, "no read-only notice"
    assert not visible(driver, "#edit-text"), "a picture story is edited page by page"
    first_page = driver.find_element(By.ID, "edit-page-0")
    assert first_page.get_attribute("value") == "Olive the owl wakes up when the sun goes down."
    assert "[object Object]" not in driver.find_element(By.ID, "edit-pages").text
    assert "A brown owl" in text(driver, "#edit-page-0-picture")
    assert driver.find_element(By.ID, "q-0-option-1").get_attribute("value") == "A cat"
    assert not driver.find_element(By.ID, "q-0-add-option").is_enabled(), "no answer without a picture among picture answers"

    # Keyboard only: a page's words, a question's words, and a picture answer moved down with its picture.
    page = tab_to(driver, "edit-page-1")
    page.send_keys(Keys.END, " She blinks.")
    question = tab_to(driver, "q-0-text")
    question.send_keys(Keys.CONTROL, "a")
    question.send_keys("Who wakes up at night?")
    tab_to(driver, "q-0-option-down-0").send_keys(Keys.ENTER)
    wait(driver, lambda d: d.find_element(By.ID, "q-0-option-1").get_attribute("value") == "An owl")
    assert driver.find_element(By.ID, "q-0-correct-1").is_selected(), "the right answer moved with its option"
    assert driver.switch_to.active_element.get_attribute("id") == "q-0-option-down-1", "the focus follows the moved answer"
    # A picture answer's words emptied: the problem (at `…options[2].label`) is shown at that answer once
    # the teacher leaves it.
    label = tab_to(driver, "q-0-option-2")
    label.send_keys(Keys.CONTROL, "a", Keys.BACKSPACE)
    ActionChains(driver).send_keys(Keys.TAB).perform()
    wait(driver, lambda d: visible(d, "#q-0-option-2-problem") and text(d, "#q-0-option-2-problem") == "This is empty: write something here.",
         message="the empty label is pointed out at its answer")
    label.click()
    label.send_keys("A fish")
    wait(driver, lambda d: not visible(d, "#q-0-option-2-problem"))
    tab_to(driver, "edit-save").send_keys(Keys.ENTER)
    wait(driver, lambda d: f"Saved (version {before['version'] + 1})" in text(d, "#editor-message"), message="saved")

    after = stored(server, olive["id"])
    questions = after["story"]["quiz"]["questions"]
    assert questions[0]["question"] == "Who wakes up at night?"
    assert [option["label"] for option in questions[0]["options"]] == ["A cat", "An owl", "A fish"]
    assert questions[0]["answer"] == "An owl"
    # The page now reads as two sentences, both with the page's picture; every other picture where it was.
    pages_before = [(page["text"], page["picture"]["id"]) for page in before["story"]["text"]]
    pages_after = [(page["text"], page["picture"]["id"]) for page in after["story"]["text"]]
    assert pages_after == pages_before[:2] + [("She blinks.", pages_before[1][1])] + pages_before[2:]
    others = lambda found: {key: value for key, value in found.items() if not key.startswith("text[")}  # noqa: E731
    assert others(pictures_of(after["story"])) == others(pictures), "each question and answer keeps its own picture"
    assert picture_bytes(server, pictures_of(after["story"]).values()) == bytes_before, "the same pictures, byte for byte"

    # The room shows them: the plan names the pages' pictures, the question its picture and its answers'.
    status, _, body = server.request("POST", "/api/rooms", server.admin_token, {"storyId": olive["id"]})
    assert status == 201
    room = json.loads(body)

    async def run():
        child, _ = await join(server, room, "Ana")
        teacher = await screen(server, room, kind="control", token_key="teacherToken")
        await teacher.send({"type": "command", "command": "start"})
        return await child.expect("narration.plan", timeout=60)
    plan = asyncio.run(run())
    assert [(entry["sentence"], entry["id"]) for entry in plan["pictures"]] == [(index, picture) for index, (_, picture) in enumerate(pages_after)]
    axe(driver, "editor-picture-story")


def test_a_draft_survives_a_closed_tab(server, browsers):
    driver = browsers(**TEACHER)
    first = driver.current_window_handle
    driver.switch_to.new_window("tab")
    driver.get(f"{server.http}/stories/edit#token={server.admin_token}")
    ready(driver)
    typed(driver, "edit-title", "Written before the tab closed")
    wait(driver, lambda d: "kept in this browser" in text(d, "#edit-status"), message="the draft is kept")
    driver.close()
    driver.switch_to.window(first)
    driver.switch_to.new_window("tab")
    driver.get(f"{server.http}/stories/edit#token={server.admin_token}")
    ready(driver)
    assert driver.find_element(By.ID, "edit-title").get_attribute("value") == "Written before the tab closed"
    assert "brought back" in text(driver, "#editor-message")
