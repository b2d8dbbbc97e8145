"""The story library page (/stories) in headless Chromium: list, search, duplicate, delete with a
confirmation, import of both seed shapes, export, and "Start a room"; axe-core at phone, laptop and
projector sizes."""
import json
import socket
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from browser_support import PHONE, PROJECTOR, TEACHER, axe, browsers, no_page_errors, plain, screenshot, text, visible, wait  # noqa: F401
from conftest import Server


def stories(server):
    status, _, body = server.request("GET", "/api/stories", server.admin_token)
    assert status == 200
    return json.loads(body)["stories"]


def titles(driver):
    return [plain(node.text) for node in driver.find_elements(By.CSS_SELECTOR, ".library-story h2")]


def story_item(driver, title):
    for node in driver.find_elements(By.CSS_SELECTOR, ".library-story"):
        if plain(node.find_element(By.CSS_SELECTOR, "h2").text) == title:
            return node
    return None


def open_library(driver, server):
    driver.get(f"{server.http}/stories#token={server.admin_token}")
    wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".library-story")) >= 3, message="the sample stories are listed")


def test_the_library_lists_searches_duplicates_deletes_imports_and_exports(server, browsers, tmp_path):
    driver = browsers(**TEACHER)
    open_library(driver, server)
    assert set(titles(driver)) == {story["title"] for story in stories(server)}
    pip = story_item(driver, "Pip the Robot and the Lost Gear")
    facts = plain(pip.find_element(By.CSS_SELECTOR, ".facts").text)
    assert facts.startswith("English · 3 questions · changed ") and facts.endswith(" by sample"), facts
    screenshot(driver, "teacher-library")
    axe(driver, "library-laptop")

    # Search, as the teacher types.
    search = driver.find_element(By.ID, "library-search")
    search.send_keys("tortuga")
    wait(driver, lambda d: titles(d) == ["La tortuga que quería volar"], message="the search keeps the one story")
    assert "Español" in text(driver, ".library-story .facts")
    search.send_keys(Keys.CONTROL, "a", Keys.BACKSPACE)
    wait(driver, lambda d: len(titles(d)) == len(stories(server)), message="every story again")

    # Duplicate, then delete the copy after saying no once and yes once.
    story_item(driver, "Pip the Robot and the Lost Gear").find_element(By.CSS_SELECTOR, "[data-action=duplicate]").click()
    copy = "Pip the Robot and the Lost Gear (copy)"
    wait(driver, lambda d: copy in titles(d), message="the copy is listed")
    story_item(driver, copy).find_element(By.CSS_SELECTOR, "[data-action=delete]").click()
    dialog = wait(driver, lambda d: visible(d, "#library-confirm"))
    assert copy in plain(dialog.text)
    axe(driver, "library-delete-confirmation")
    assert driver.switch_to.active_element.get_attribute("id") == "library-confirm-no"
    driver.find_element(By.ID, "library-confirm-no").click()
    assert copy in titles(driver) and copy in {story["title"] for story in stories(server)}
    story_item(driver, copy).find_element(By.CSS_SELECTOR, "[data-action=delete]").click()
    wait(driver, lambda d: visible(d, "#library-confirm"))
    driver.find_element(By.ID, "library-confirm-yes").click()
    wait(driver, lambda d: copy not in titles(d), message="the copy is gone")
    assert copy not in {story["title"] for story in stories(server)}
    assert "was deleted" in text(driver, "#library-message")

    # Import: a single-question seed, a quiz-shaped seed, and a file that is not a story.
    single = tmp_path / "single.json"
    single.write_text(json.dumps({"title": "Imported single", "text": "One. Two.",
                                  "quiz": {"question": "How many?", "options": ["One", "Two"], "answer": "Two"}}))
    quiz = tmp_path / "quiz.json"
    quiz.write_text(json.dumps({"title": "Imported quiz", "text": ["One.", "Two."],
                                "quiz": {"title": "Q", "questions": [{"question": "A?", "options": ["Yes", "No"], "answer": "Yes", "time": 10}]}}))
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"title": "Broken", "text": "One.", "quiz": {"questions": [{"question": "A?", "options": ["Yes"], "answer": "Yes"}]}}))
    upload = driver.find_element(By.ID, "library-import")
    for path, title in [(single, "Imported single"), (quiz, "Imported quiz")]:
        upload.send_keys(str(path))
        wait(driver, lambda d: title in titles(d), message=f"{title} is imported")
    upload.send_keys(str(broken))
    wait(driver, lambda d: "problem" in text(d, "#library-message"), message="the broken file is refused")
    assert "quiz.questions[0].options" in text(driver, "#library-message .library-issues")
    # In the catalog's words, with the numbers filled in, not the server's English.
    assert "A question needs at least 2 answers to choose from; this one has 1." in text(driver, "#library-message .library-issues")
    assert "Broken" not in {story["title"] for story in stories(server)}
    axe(driver, "library-import-refused")

    # Export: the file the page makes is the story in the file format.
    # (The page's own CSP keeps a test from fetching the blob: the blob is read as it is made.)
    driver.execute_script("""
        window.exported = null;
        const make = URL.createObjectURL;
        URL.createObjectURL = (blob) => { blob.text().then(t => { window.exportedText = t; }); return make(blob); };
        const click = HTMLAnchorElement.prototype.click;
        HTMLAnchorElement.prototype.click = function () {
          if (this.download) { const name = this.download; const poll = () => window.exportedText ? (window.exported = {name, text: window.exportedText}) : setTimeout(poll, 20); poll(); return; }
          return click.call(this);
        };""")
    story_item(driver, "Imported quiz").find_element(By.CSS_SELECTOR, "[data-action=export]").click()
    exported = wait(driver, lambda d: d.execute_script("return window.exported"))
    assert exported["name"] == "imported-quiz.json"
    assert json.loads(exported["text"])["quiz"]["questions"][0]["question"] == "A?"
    # The one failed request is the refused import (Chromium logs every 4xx answer).
    severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE" and "favicon" not in e["message"]
              and not ("/api/stories" in e["message"] and "status of 422" in e["message"])]
    assert not severe, severe


def test_start_a_room_opens_the_teacher_page_with_the_projector_link_beside_it(server, browsers):
    driver = browsers(**TEACHER)
    open_library(driver, server)
    story_item(driver, "Pip the Robot and the Lost Gear").find_element(By.CSS_SELECTOR, "[data-action=start]").click()
    started = wait(driver, lambda d: visible(d, "#room-started"))
    code = plain(started.find_element(By.ID, "room-started-title").text)[-6:]
    assert code.isdigit()
    projector = driver.find_element(By.ID, "room-projector-link").get_attribute("href")
    assert f"/dashboard#room={code}&token=" in projector
    teacher = driver.find_element(By.ID, "room-teacher-link")
    assert driver.switch_to.active_element == teacher
    axe(driver, "library-room-started")
    library = driver.current_window_handle
    teacher.click()
    # The teacher page opens in a tab of its own; the library stays.
    wait(driver, lambda d: len(d.window_handles) == 2, message="the teacher page's tab")
    driver.switch_to.window(next(handle for handle in driver.window_handles if handle != library))
    # The teacher page takes its token out of the address at once (the tab's session keeps it).
    wait(driver, lambda d: "/teacher" in d.current_url and d.current_url.endswith(f"#room={code}"), message="the teacher page, its token out of the address")
    wait(driver, lambda d: "Waiting to start" in text(d, "#room-state"), message="the teacher page controls the room")
    # The teacher tab leads back to the library, which opens without the printed link (the tab holds the key).
    back = wait(driver, lambda d: visible(d, "#library-link"), message="the way back to the library")
    back.click()
    wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".library-story")) >= 3, message="the library, working, in the teacher's tab")
    assert "token=" not in driver.current_url
    driver.switch_to.window(library)
    # The story cannot be deleted while its room runs.
    pip = next(story for story in stories(server) if story["title"].startswith("Pip"))
    status, _, body = server.request("DELETE", f"/api/stories/{pip['id']}", server.admin_token)
    assert status == 409 and json.loads(body)["error"]["rooms"] == [code]


def test_the_teacher_and_projector_links_stay_on_the_librarys_own_address(tmp_path, browsers):
    """The server's links carry the address it prints for other devices (here its publicURL, localhost); a
    library opened at 127.0.0.1 opens the teacher page at 127.0.0.1, so that tab keeps the school's key
    and leads back to the library."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = Server(tmp_path / "data", config={"publicURL": f"http://localhost:{port}"}).start(port=port)
    try:
        driver = browsers(**TEACHER)
        open_library(driver, server)
        story_item(driver, "Pip the Robot and the Lost Gear").find_element(By.CSS_SELECTOR, "[data-action=start]").click()
        wait(driver, lambda d: visible(d, "#room-started"))
        code = plain(text(driver, "#room-started-title"))[-6:]
        teacher = driver.find_element(By.ID, "room-teacher-link")
        projector = driver.find_element(By.ID, "room-projector-link").get_attribute("href")
        # The server's own links name another origin (what it prints for other devices)…
        assert server.create_room()["teacherURL"].startswith(f"http://localhost:{port}/teacher#")
        # …the page's keep their path and fragment at this page's origin.
        assert teacher.get_attribute("href").startswith(f"{server.http}/teacher#room={code}&token="), teacher.get_attribute("href")
        assert projector.startswith(f"{server.http}/dashboard#room={code}&token="), projector
        library = driver.current_window_handle
        teacher.click()
        wait(driver, lambda d: len(d.window_handles) == 2, message="the teacher page's tab")
        driver.switch_to.window(next(handle for handle in driver.window_handles if handle != library))
        wait(driver, lambda d: "Waiting to start" in text(d, "#room-state"), message="the teacher page controls the room")
        assert driver.current_url.startswith(f"{server.http}/teacher"), driver.current_url
        back = wait(driver, lambda d: visible(d, "#library-link"), message="the way back to the library")
        back.click()
        wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".library-story")) >= 3, message="the library, working, in the teacher's tab")
        no_page_errors(driver)
    finally:
        server.stop()


@pytest.mark.parametrize("size", [PHONE, PROJECTOR], ids=["phone", "projector"])
def test_the_library_passes_axe_at_phone_and_projector_sizes(server, browsers, size):
    driver = browsers(**size)
    open_library(driver, server)
    name = "phone" if size is PHONE else "projector"
    screenshot(driver, f"{name}-library")
    axe(driver, f"library-{name}")
    # Nothing is wider than the screen.
    assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")


def test_a_tab_without_a_key_or_a_session_is_offered_the_sign_in_and_a_wrong_key_says_so(server, browsers):
    driver = browsers(**PHONE)
    driver.get(f"{server.http}/stories")
    wait(driver, lambda d: visible(d, "#sign-in-link"), message="the way to sign in")
    d = driver
    assert text(d, "#library-status .sign-in-needed") == CATALOGS["en"]["account.sign_in_needed"]
    assert text(d, "#sign-in-link") == CATALOGS["en"]["account.sign_in_link"]
    assert d.find_element(By.ID, "sign-in-link").get_attribute("href") == f"{server.http}/sign-in#next=%2Fstories"
    assert not visible(d, "#library-new"), "nothing is offered that would only be refused"
    driver.get(f"{server.http}/stories#token=wrong")
    driver.refresh()
    wait(driver, lambda d: "does not open the library" in text(d, "#library-status"))


CATALOGS = {lang: json.loads((Path(__file__).resolve().parents[2] / f"web-static/i18n/{lang}.json").read_text(encoding="utf-8"))
            for lang in ("en", "es", "fr", "de", "pt", "ar")}


def filled(words, **params):
    for name, value in params.items():
        words = words.replace("{" + name + "}", str(value))
    return words


@pytest.mark.parametrize("lang", ["es", "ar"])
def test_the_teacher_picks_the_library_s_language_and_the_editor_words_its_problems_in_it(server, browsers, lang):
    driver = browsers(**TEACHER)
    open_library(driver, server)
    picker = driver.find_element(By.ID, "language-picker")
    assert picker.get_attribute("value") == "", "it follows the browser until the teacher picks"
    Select(picker).select_by_value(lang)
    catalog = CATALOGS[lang]
    wait(driver, lambda d: d.execute_script("return document.documentElement.lang") == lang and
         # Opened with the school's key, the library holds every story on the server, and says so.
         plain(d.find_element(By.ID, "library-title").text) == catalog["library.heading_everything"], message="the page in the language picked")
    assert text(driver, "[data-action=start]") == catalog["library.start"], "the list is drawn again in it"
    assert driver.execute_script("return document.documentElement.dir") == ("rtl" if lang == "ar" else "ltr")
    axe(driver, f"library-{lang}")

    # Kept in this browser: the editor opens in it, and so does the library after a reload.
    driver.get(f"{server.http}/stories/edit#token={server.admin_token}")
    wait(driver, lambda d: d.execute_script("return window.storycircle && window.storycircle.ready === true"))
    assert driver.execute_script("return document.documentElement.lang") == lang
    assert driver.find_element(By.ID, "language-picker").get_attribute("value") == lang
    assert plain(driver.find_element(By.ID, "editor-heading").text) == catalog["library.editor.heading"]
    # A problem at its field, in the catalog's words with its numbers: two answers alike.
    driver.find_element(By.ID, "edit-title").send_keys("T")
    driver.find_element(By.ID, "edit-text").send_keys("One. Two.")
    driver.find_element(By.ID, "q-0-text").send_keys("Q?")
    driver.find_element(By.ID, "q-0-option-0").send_keys("Kim")
    driver.find_element(By.ID, "q-0-option-1").send_keys("kim", Keys.TAB)  # a problem shows once its field is left
    expected = filled(catalog["library.problem.option_duplicate"], option="kim", first=1)
    wait(driver, lambda d: text(d, "#q-0-option-1-problem") == expected, message="the problem in the language picked")
    problem = driver.find_element(By.ID, "q-0-option-1-problem")
    assert problem.get_attribute("lang") in (None, ""), "in the page's language, not marked English"
    screenshot(driver, f"teacher-editor-{lang}")
    axe(driver, f"editor-{lang}-problem")
    # Switching language on the editor words the same problem anew, and loses nothing typed.
    Select(driver.find_element(By.ID, "language-picker")).select_by_value("fr")
    wait(driver, lambda d: text(d, "#q-0-option-1-problem") == filled(CATALOGS["fr"]["library.problem.option_duplicate"], option="kim", first=1))
    assert driver.find_element(By.ID, "q-0-option-1").get_attribute("value") == "kim"
    driver.get(f"{server.http}/stories#token={server.admin_token}")
    wait(driver, lambda d: d.execute_script("return document.documentElement.lang") == "fr")
