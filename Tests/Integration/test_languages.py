"""Every screen in the class's language. The catalogs (web-static/i18n/LANG.json) against the pages' code
and the server's codes; then real rooms in headless Chromium: a whole Spanish room (child, projector,
teacher) whose every screen shows no word of the English catalog that the Spanish one lacks; the same room
in Arabic, right to left, at phone and projector sizes (screenshots, the projector never scrolled); axe-core
in each language; a child who picks their own language while the projector keeps the room's."""
import json
import re
import time

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select
from websockets.sync.client import connect as ws_connect

from browser_support import PHONE, PROJECTOR, SMALL_PROJECTOR, TEACHER, assert_fits, axe, join_screen, no_page_errors, screenshot, visible, wait
from conftest import ROOT, STORIES
from test_browser import browsers, press  # noqa: F401 (browsers is a fixture)

WEB = ROOT / "web-static"
CATALOGS = {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in sorted((WEB / "i18n").glob("*.json"))}
SPANISH = STORIES / "corto-es.json"
ARABIC = STORIES / "qasira-ar.json"
# Message types look like catalog keys ("answer.ack"); they are the protocol's, not words.
MESSAGE_TYPES = {"narration.plan", "narration.sentence", "narration.complete", "narration.error", "quiz.unlock", "answer.ack",
                 "narration.notice"}
# Codes only HTTP answers carry (the pages meet them as a failed request or a refused upgrade, and say
# their own words for that); every other code a page can be sent has words of its own.
HTTP_ONLY = {"unauthorized", "not_found", "method_not_allowed", "payload_too_large", "invalid_story", "server_shutting_down",
             "origin_not_allowed", "too_many_connections", "server_full",
             # The story library's refusals: its page words them from its own catalog keys (library.error.*).
             "story_not_found", "story_conflict", "story_in_use",
             "picture_refused",
             # Refusals of a child's export and erasure, and of a room's early deletion: API and CLI only.
             "room_in_use",
             # The accounts' refusals: the administrators' screens word them from their own catalog keys.
             "invalid_account", "account_not_found", "https_needed", "school_not_found", "login_taken", "school_name_taken", "conflict",
             "last_district_admin", "setup_link_invalid",
             # The account bar words a passkey's refusals from its own keys (account.passkey.*).
             "recent_sign_in_needed",
             # A roster's refusal: the administrator's page words each problem from its own keys (roster.problem.*).
             "invalid_roster"}


def sources():
    return {path: path.read_text(encoding="utf-8") for path in [*WEB.rglob("*.js"), *WEB.glob("*.html")]}


def flat(value):
    """The texts of a catalog entry: a string, plural forms, or a list of names."""
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, list):
        return value
    return [value]


def words(text):
    """The words of a text, lower-cased: runs of letters, apostrophes inside ("child’s", "l’histoire");
    placeholders left out."""
    text = re.sub(r"\{\w+\}", "Ω", text)  # a letter, so "{name}’s" stays one word
    return set(re.findall(r"[^\W\d_]+(?:['’][^\W\d_]+)*", text.lower()))


def catalog_words(lang):
    return set().union(*(words(text) for value in CATALOGS[lang].values() for text in flat(value)))


# ---- The catalogs ----

def test_every_catalog_has_every_key_and_only_those():
    english = set(CATALOGS["en"])
    assert set(CATALOGS) == {"en", "es", "fr", "de", "pt", "ar"}
    for lang, catalog in CATALOGS.items():
        assert set(catalog) == english, f"{lang}: missing {sorted(english - set(catalog))}, extra {sorted(set(catalog) - english)}"
        for key, value in catalog.items():
            kind = type(CATALOGS["en"][key])
            assert isinstance(value, kind), f"{lang}: {key} is a {type(value).__name__}, English has a {kind.__name__}"
            for text in flat(value):
                assert isinstance(text, str) and text.strip(), f"{lang}: {key} is empty"
                placeholders = set(re.findall(r"\{(\w+)\}", text))
                allowed = set().union(*(set(re.findall(r"\{(\w+)\}", t)) for t in flat(CATALOGS["en"][key])))
                assert placeholders <= allowed, f"{lang}: {key} names {placeholders - allowed}, which nobody fills in"
    assert len(set(CATALOGS["es"]["names.list"])) == len(CATALOGS["es"]["names.list"]) == 16


def test_every_key_is_used_and_every_key_used_exists():
    code = "\n".join(text for path, text in sources().items())
    unused = [key for key in CATALOGS["en"] if f'"{key}"' not in code]
    assert not unused, f"keys no page uses: {unused}"
    namespaces = {key.split(".")[0] for key in CATALOGS["en"]}
    used = {literal for literal in re.findall(r'"([a-z_]+(?:\.[a-z_]+)+)"', code) if literal.split(".")[0] in namespaces}
    missing = sorted(used - set(CATALOGS["en"]) - MESSAGE_TYPES)
    assert not missing, f"keys the pages use that no catalog has: {missing}"


def test_no_words_in_the_markup_outside_the_catalogs():
    for path in WEB.glob("*.html"):
        html = path.read_text(encoding="utf-8")
        body = re.sub(r"<(script|style)\b.*?</\1>", "", html, flags=re.S)
        body = re.sub(r"<title[^>]*data-i18n[^>]*>[^<]*</title>", "", body)
        texts = [t.strip() for t in re.findall(r">([^<]+)<", body) if re.search(r"[^\W\d_]", t)]
        assert not texts, f"{path.name} has words of its own: {texts}"
        for attribute in ("aria-label", "title", "alt", "placeholder"):
            for value in re.findall(rf'\s{attribute}="([^"]*)"', body):
                assert not re.search(r"[^\W\d_]", value), f"{path.name}: {attribute}=\"{value}\" is not in a catalog"


_STRING = r"""("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`)"""
# Where the pages' code puts text on screen or into an accessible name: a literal with letters there is a
# word outside the catalogs.
VISIBLE_SINKS = [
    r"\btext\s*:\s*" + _STRING,
    r"\.(?:textContent|innerText|innerHTML|title|placeholder|alt|ariaLabel|label)\s*=\s*" + _STRING,
    r"createTextNode\(\s*" + _STRING,
    r"setAttribute\(\s*[\"'](?:aria-label|aria-description|aria-valuetext|aria-roledescription|title|alt|placeholder)[\"']\s*,\s*" + _STRING,
    r"[\"'](?:aria-label|aria-description|aria-valuetext|aria-roledescription|title|alt|placeholder)[\"']\s*:\s*" + _STRING,
    r"\bannounce\(\s*" + _STRING,
]


def visible_literals(code):
    """String literals with words in them that the code shows (comments left out)."""
    code = re.sub(r"/\*.*?\*/", "", code, flags=re.S)
    code = re.sub(r"(^|[^:\"'\\])//.*$", r"\1", code, flags=re.M)
    found = []
    for sink in VISIBLE_SINKS:
        for match in re.finditer(sink, code):
            literal = re.sub(r"\$\{[^}]*\}", "", match.group(1)[1:-1])
            if re.search(r"[^\W\d_]{2,}", literal):
                found.append(match.group(0))
    return found


def test_no_words_in_the_pages_code_outside_the_catalogs():
    assert visible_literals('node.textContent = "Saving works again.";'), "the check finds a literal"
    assert visible_literals('el("span", { class: "x", text: `Time: ${n} s` })')
    assert not visible_literals('el("span", { text: t("storage.back") }); // textContent = "Words"')
    for path, code in sources().items():
        if path.suffix == ".js":
            assert not visible_literals(code), f"{path.name} shows words of its own: {visible_literals(code)}"


def test_the_catalogs_are_the_servers_languages_and_word_every_code_a_page_can_be_sent():
    swift = (ROOT / "Sources/StoryCircleCore/Room/RoomLanguage.swift").read_text()
    available = re.search(r"available = \[([^\]]*)\]", swift).group(1)
    assert sorted(re.findall(r'"(\w+)"', available)) == sorted(CATALOGS)
    i18n = (WEB / "js/i18n.js").read_text()
    assert sorted(re.findall(r"^  (\w\w): \{ name:", i18n, flags=re.M)) == sorted(CATALOGS)
    codes = re.findall(r'case \w+ = "(\w+)"', (ROOT / "Sources/StoryCircleCore/Protocol/ErrorCode.swift").read_text())
    pages = (WEB / "js/error-codes.js").read_text()
    worded = set(re.findall(r"(\w+): \"(?:error|join)\.", pages)) | {"nickname_invalid", "blocked"}
    assert set(codes) - HTTP_ONLY <= worded, f"codes without words: {sorted(set(codes) - HTTP_ONLY - worded)}"


def swift_cases(path):
    """The raw values of a Swift string enum's cases (`case x = "raw"`, or `case x` for itself)."""
    found = []
    for name, raw in re.findall(r'^\s*case (\w+)(?: = "(\w+)")?\s*$', (ROOT / path).read_text(), flags=re.M):
        found.append(raw or name)
    return found


def test_every_reason_the_server_gives_has_words_in_every_catalog():
    """The reasons of a narration failure and of a storage failure, and the problems of a refused command
    or setting, each worded by its own key (in every catalog: the first test checks they agree)."""
    reasons = {
        "narration.reason.": swift_cases("Sources/StoryCircleCore/Protocol/NarrationProblem.swift"),
        "storage.reason.": swift_cases("Sources/StoryCircleCore/Persistence/StoreProblem.swift"),
        "error.invalid_command.": swift_cases("Sources/StoryCircleCore/Protocol/CommandRefusal.swift"),
    }
    for prefix, cases in reasons.items():
        assert len(cases) >= 5, f"{prefix}: the Swift enum was not read ({cases})"
        missing = [case for case in cases if prefix + case not in CATALOGS["en"]]
        assert not missing, f"{prefix}: no words for {missing}"
    settings = set(re.findall(r'"setting": "(\w+)"', (ROOT / "Sources/StoryCircleCore/Room/RoomSettings.swift").read_text()))
    pages = (WEB / "js/error-codes.js").read_text()
    worded = dict(re.findall(r'(\w+): "(error\.invalid_settings\.\w+)"', pages))
    assert settings and settings <= set(worded), f"settings refused without words: {sorted(settings - set(worded))}"


def test_plural_forms_are_the_ones_the_browser_picks(browsers):
    """Each plural entry has every form Intl.PluralRules can pick in its language (Arabic has six)."""
    driver = browsers(**PHONE)
    driver.get("about:blank")
    for lang, catalog in CATALOGS.items():
        categories = set(driver.execute_script("return new Intl.PluralRules(arguments[0]).resolvedOptions().pluralCategories", lang))
        ordinals = set(driver.execute_script("return new Intl.PluralRules(arguments[0], {type: 'ordinal'}).resolvedOptions().pluralCategories", lang))
        for key, value in catalog.items():
            if not isinstance(value, dict):
                continue
            wanted = ordinals if key == "number.ordinal" else categories
            assert wanted <= set(value), f"{lang}: {key} lacks {sorted(wanted - set(value))}"


# ---- Rooms in a language ----

def page_text(driver):
    """What the screen shows in words: the rendered text, the title, and the labels a screen reader reads."""
    text = driver.execute_script("""
        const labels = [...document.querySelectorAll("[aria-label], [title], [placeholder], img[alt]")]
          .filter((e) => e.getClientRects().length > 0)
          .map((e) => [e.getAttribute("aria-label"), e.getAttribute("title"), e.getAttribute("placeholder"), e.getAttribute("alt")].filter(Boolean).join(" "));
        return [document.title, document.body.innerText, ...labels].join("\\n");
    """).replace("\u2068", "").replace("\u2069", "")
    # Addresses are not words (the teacher's join link).
    return re.sub(r"https?://\S+", " ", text)


class Screens:
    """Checks every screen shown against the English catalog's words that the room's language lacks."""

    def __init__(self, lang, story_path, names):
        story = json.loads(story_path.read_text(encoding="utf-8"))
        written = [story["title"], *story["text"], *names]
        for q in story["quiz"]["questions"]:
            written += [q["question"], *q["options"], q.get("explanation", "")]
        self.lang = lang
        self.own = set().union(*(words(t) for t in written))
        self.foreign = catalog_words("en") - catalog_words(lang) - self.own
        self.checked = []

    def check(self, driver, screen):
        assert driver.execute_script("return document.documentElement.lang") == self.lang, screen
        # What the browser's Intl writes in this language (the projector's "10 s") is the language's own.
        intl = driver.execute_script(
            "return new Intl.NumberFormat(arguments[0], {style: 'unit', unit: 'second', unitDisplay: 'short'}).format(10)", self.lang)
        found = sorted(words(page_text(driver)) & self.foreign - words(intl))
        assert not found, f"{screen} shows English: {found}\n{page_text(driver)}"
        self.checked.append(screen)


def podium_shown(driver):
    """Every place of the podium has appeared (they come one by one)."""
    wait(driver, lambda d: (steps := d.find_elements(By.CSS_SELECTOR, ".podium .step")) and all(
        st.value_of_css_property("opacity") == "1" for st in steps), message="the podium")


def wait_phase(driver, phase, timeout=40):
    wait(driver, lambda d: d.execute_script("return window.storycircle.room && window.storycircle.room.phase") == phase,
         timeout=timeout, message=f"phase {phase}")


def child_joins(driver, server, code, nickname):
    driver.get(f"{server.http}/?room={code}")
    join_screen(driver).send_keys(nickname)
    driver.find_element(By.ID, "join-button").click()
    wait(driver, lambda d: visible(d, "#lobby") and d.find_element(By.ID, "lobby-story").text, message=f"{nickname} in the lobby")


def ws_child(server, code, nickname):
    ws = ws_connect(f"{server.ws_url}?room={code}", open_timeout=15)
    ws.send(json.dumps({"type": "join", "room": code, "nickname": nickname}))
    expect(ws, "welcome")
    return ws


def expect(ws, kind, timeout=40, where=lambda m: True):
    deadline = time.monotonic() + timeout
    while True:
        message = json.loads(ws.recv(timeout=max(0.01, deadline - time.monotonic())))
        if message["type"] == kind and where(message):
            return message


def answer_when_open(ws, index, option):
    question = expect(ws, "question", where=lambda m: m["index"] == index)
    time.sleep(max(0.0, question["opensAt"] / 1000 - time.time() + 0.05))
    ws.send(json.dumps({"type": "answer", "question": index, "option": option}))
    expect(ws, "answer.ack")


def tap(driver, label):
    button = wait(driver, lambda d: next((b for b in d.find_elements(By.CSS_SELECTOR, "#options .option")
                                          if b.find_element(By.CLASS_NAME, "label").get_attribute("textContent") == label
                                          and b.is_displayed() and b.is_enabled()), None), message=f"option {label}")
    button.click()


def test_a_whole_spanish_room_shows_no_english(server, browsers):
    # A contest, so the phones' places and podium are read in Spanish too.
    room = server.create_room(story=SPANISH, settings={"competitive": True})
    code = room["code"]
    screens = Screens("es", SPANISH, ["Lucía", "Mateo"])
    # A Spanish class: the children's phones are in Spanish, so even the join screen is.
    phone = browsers(**PHONE, language="es")
    projector = browsers(**PROJECTOR)
    teacher = browsers(**TEACHER)
    projector.get(f"{server.http}/dashboard#room={code}&token={room['dashboardToken']}")
    teacher.get(f"{server.http}/teacher#room={code}&token={room['teacherToken']}")
    phone.get(f"{server.http}/?room={code}")
    join_screen(phone)
    screens.check(phone, "child: join")
    phone.find_element(By.ID, "join-button").click()
    wait(phone, lambda d: visible(d, "#join-error"))
    screens.check(phone, "child: join, a nickname missing")
    child_joins(phone, server, code, "Lucía")
    mateo = ws_child(server, code, "Mateo")
    wait(projector, lambda d: "Mateo" in d.find_element(By.ID, "lobby-list").text)
    screens.check(phone, "child: lobby")
    screens.check(projector, "projector: lobby")
    wait(teacher, lambda d: "Mateo" in d.find_element(By.ID, "roster").text)
    screens.check(teacher, "teacher: lobby")
    for driver, name in ((phone, "child-lobby"), (projector, "projector-lobby"), (teacher, "teacher-lobby")):
        axe(driver, f"es-{name}")
    screenshot(phone, "es-phone-lobby")

    press(teacher, "start")
    wait_phase(phone, "narrating")
    wait(phone, lambda d: d.find_elements(By.CSS_SELECTOR, "#story-text .sentence"))
    screens.check(phone, "child: story")
    wait_phase(projector, "narrating")
    screens.check(projector, "projector: story")
    screens.check(teacher, "teacher: story")

    wait_phase(phone, "question", timeout=60)
    tap(phone, "El cielo")
    wait(phone, lambda d: "✓" in d.find_element(By.ID, "answer-status").text)
    screens.check(phone, "child: answered")
    screenshot(phone, "es-phone-question")
    axe(phone, "es-child-question")
    screens.check(projector, "projector: question")
    screens.check(teacher, "teacher: question")
    axe(projector, "es-projector-question")
    answer_when_open(mateo, 0, 1)
    wait_phase(phone, "reveal")
    wait(phone, lambda d: visible(d, "#reveal-result"))
    screens.check(phone, "child: reveal (right)")
    wait_phase(projector, "reveal")
    screens.check(projector, "projector: reveal")
    screens.check(teacher, "teacher: reveal")
    axe(phone, "es-child-reveal")

    press(teacher, "next")
    wait_phase(phone, "question")
    tap(phone, "Rojo")
    answer_when_open(mateo, 1, 1)
    wait_phase(phone, "reveal")
    wait(phone, lambda d: visible(d, "#reveal-result"))
    screens.check(phone, "child: reveal (not right)")
    screenshot(phone, "es-phone-reveal")
    press(teacher, "next")
    wait_phase(phone, "finished")
    wait_phase(projector, "finished")
    podium_shown(phone)
    podium_shown(projector)
    screens.check(phone, "child: the end")
    screens.check(projector, "projector: podium")
    wait(teacher, lambda d: visible(d, "#end-results"))
    screens.check(teacher, "teacher: results")
    axe(phone, "es-child-finished")
    axe(projector, "es-projector-finished")
    axe(teacher, "es-teacher-finished")
    screenshot(phone, "es-phone-podium")
    no_page_errors(phone)
    no_page_errors(projector)
    no_page_errors(teacher)
    mateo.close()
    assert len(screens.checked) >= 18, screens.checked


def rtl_layout(driver):
    """The page reads right to left: <html dir>, an option's shape at its right, numbers still left to right."""
    return driver.execute_script("""
        const html = document.documentElement;
        const option = document.querySelector("#options .option");
        let shapeAtRight = null;
        if (option && option.getClientRects().length) {
          const o = option.getBoundingClientRect(), s = option.querySelector(".shape").getBoundingClientRect();
          shapeAtRight = s.left > o.left + o.width / 2;
        }
        const num = document.querySelector(".num");
        // A rank ("1.") still reads left to right: its digit is left of its dot.
        let rankLeftToRight = null;
        const rank = [...document.querySelectorAll(".board .rank")].find((e) => e.getClientRects().length);
        if (rank) {
          const r = document.createRange(), text = rank.firstChild;
          r.setStart(text, 0); r.setEnd(text, 1); const digit = r.getBoundingClientRect().left;
          r.setStart(text, text.length - 1); r.setEnd(text, text.length); rankLeftToRight = digit < r.getBoundingClientRect().left;
        }
        return {dir: html.dir, lang: html.lang, shapeAtRight, rankLeftToRight, numberDirection: num ? getComputedStyle(num).direction : null};
    """)


def test_an_arabic_room_reads_right_to_left_on_phones_and_projectors(server, browsers):
    # The room's language set by the teacher (the story is read in Arabic; the setting is explicit here).
    room = server.create_room(story=ARABIC, settings={"language": "ar", "competitive": True})
    code = room["code"]
    screens = Screens("ar", ARABIC, ["سارة", "小明", "Noor"])
    phone = browsers(**PHONE)
    projector = browsers(**PROJECTOR)
    small = browsers(**SMALL_PROJECTOR)
    teacher = browsers(**TEACHER)
    for driver in (projector, small):
        driver.get(f"{server.http}/dashboard#room={code}&token={room['dashboardToken']}")
    teacher.get(f"{server.http}/teacher#room={code}&token={room['teacherToken']}")
    child_joins(phone, server, code, "سارة")
    others = [ws_child(server, code, name) for name in ("小明", "Noor")]
    for driver, size in ((projector, "1920"), (small, "1280")):
        wait(driver, lambda d: "Noor" in d.find_element(By.ID, "lobby-list").text)
        assert rtl_layout(driver)["dir"] == "rtl"
        screens.check(driver, f"projector {size}: lobby")
        assert_fits(driver, f"the Arabic lobby at {size}")
        screenshot(driver, f"ar-projector-{size}-lobby")
    # The Chinese name is drawn in a font that has it: not as boxes (its width is that of two CJK glyphs).
    width = projector.execute_script("""
        const chip = [...document.querySelectorAll("#lobby-list li")].find((li) => li.textContent.includes("小明"));
        const range = document.createRange(); range.selectNodeContents(chip.querySelector("bdi"));
        return range.getBoundingClientRect().width / parseFloat(getComputedStyle(chip).fontSize);""")
    assert 1.6 <= width <= 2.4, f"小明 is {width:.2f} em wide"
    screens.check(phone, "phone: lobby")
    assert rtl_layout(phone)["dir"] == "rtl" and rtl_layout(phone)["numberDirection"] == "ltr"
    screenshot(phone, "ar-phone-lobby")
    axe(phone, "ar-child-lobby")
    axe(projector, "ar-projector-lobby")
    screens.check(teacher, "teacher: lobby")
    axe(teacher, "ar-teacher-lobby")

    press(teacher, "start")
    press(teacher, "skip")
    # Skipping the story asks first (in Arabic too).
    wait(teacher, lambda d: visible(d, "dialog.confirm"))
    teacher.find_element(By.CSS_SELECTOR, 'dialog.confirm button[data-answer="yes"]').click()
    wait_phase(phone, "question", timeout=60)
    wait(phone, lambda d: d.find_element(By.ID, "options").is_displayed())
    layout = rtl_layout(phone)
    assert layout["shapeAtRight"], f"the option's shape leads on the right: {layout}"
    screens.check(phone, "phone: question")
    screenshot(phone, "ar-phone-question")
    axe(phone, "ar-child-question")
    for driver, size in ((projector, "1920"), (small, "1280")):
        wait_phase(driver, "question")
        assert rtl_layout(driver)["shapeAtRight"]
        screens.check(driver, f"projector {size}: question")
        assert_fits(driver, f"the Arabic question at {size}")
        screenshot(driver, f"ar-projector-{size}-question")
    axe(projector, "ar-projector-question")
    tap(phone, "السماء")
    for ws, option in zip(others, (0, 2)):
        answer_when_open(ws, 0, option)
    wait_phase(phone, "reveal")
    wait(phone, lambda d: visible(d, "#reveal-result"))
    screens.check(phone, "phone: reveal")
    assert rtl_layout(phone)["rankLeftToRight"] is True, rtl_layout(phone)
    screenshot(phone, "ar-phone-reveal")
    for driver, size in ((projector, "1920"), (small, "1280")):
        wait_phase(driver, "reveal")
        screens.check(driver, f"projector {size}: reveal")
        assert_fits(driver, f"the Arabic reveal at {size}")
        screenshot(driver, f"ar-projector-{size}-reveal")
    axe(projector, "ar-projector-reveal")
    axe(phone, "ar-child-reveal")

    press(teacher, "end")
    wait(teacher, lambda d: visible(d, "dialog.confirm"))
    screens.check(teacher, "teacher: ending, asked first")
    teacher.find_element(By.CSS_SELECTOR, 'dialog.confirm button[data-answer="yes"]').click()
    wait_phase(phone, "finished")
    podium_shown(phone)
    screens.check(phone, "phone: the end")
    screenshot(phone, "ar-phone-podium")
    for driver, size in ((projector, "1920"), (small, "1280")):
        wait_phase(driver, "finished")
        podium_shown(driver)
        screens.check(driver, f"projector {size}: podium")
        assert_fits(driver, f"the Arabic podium at {size}")
        screenshot(driver, f"ar-projector-{size}-podium")
    axe(projector, "ar-projector-podium")
    axe(phone, "ar-child-finished")
    wait(teacher, lambda d: visible(d, "#end-results"))
    screens.check(teacher, "teacher: results")
    for driver in (phone, projector, small, teacher):
        no_page_errors(driver)
    for ws in others:
        ws.close()


RECORD_SENT = """
window.__sent = [];
const send = WebSocket.prototype.send;
WebSocket.prototype.send = function (data) { window.__sent.push(String(data)); return send.call(this, data); };
"""


def test_a_child_picks_their_own_language_and_the_projector_keeps_the_rooms(server, browsers):
    room = server.create_room(story=ARABIC, settings={"language": "ar"})
    code = room["code"]
    phone = browsers(**PHONE)
    phone.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD_SENT})
    projector = browsers(**PROJECTOR)
    projector.get(f"{server.http}/dashboard#room={code}&token={room['dashboardToken']}")
    child_joins(phone, server, code, "Lina")
    assert phone.execute_script("return document.documentElement.lang") == "ar"
    lobby = phone.find_element(By.ID, "lobby-title").text

    Select(phone.find_element(By.ID, "language-picker")).select_by_value("es")
    wait(phone, lambda d: d.execute_script("return [document.documentElement.lang, document.documentElement.dir]") == ["es", "ltr"])
    assert phone.find_element(By.ID, "lobby-title").text == "¡Hola, Lina!" != lobby
    Screens("es", ARABIC, ["Lina"]).check(phone, "child: lobby in Spanish, in an Arabic room")
    axe(phone, "es-child-lobby-in-an-arabic-room")
    assert projector.execute_script("return [document.documentElement.lang, document.documentElement.dir]") == ["ar", "rtl"]

    # The choice stays in this browser: after a reload the page is Spanish again, and the saved token
    # brings the same child back (not a join under no name).
    player = phone.execute_script("return window.storycircle.session.playerId")
    phone.refresh()
    wait(phone, lambda d: visible(d, "#lobby") and d.find_element(By.ID, "lobby-story").text)
    assert phone.execute_script("return document.documentElement.lang") == "es"
    assert phone.execute_script("return window.storycircle.session.playerId") == player
    assert phone.find_element(By.ID, "lobby-title").text == "¡Hola, Lina!"
    # The question comes in Spanish words around the story's Arabic; the projector stays Arabic.
    assert server.command(room, "start")[0] == 200
    assert server.command(room, "skip")[0] == 200
    wait_phase(phone, "question", timeout=60)
    wait(phone, lambda d: d.find_element(By.ID, "question-number").text.startswith("Pregunta 1 de 2"))
    Screens("es", ARABIC, ["Lina"]).check(phone, "child: question in Spanish")
    wait_phase(projector, "question")
    assert projector.find_element(By.ID, "question-number").text.startswith("السؤال")
    # Back to the class's language, in the middle of the question.
    Select(phone.find_element(By.ID, "language-picker")).select_by_value("")
    wait(phone, lambda d: d.execute_script("return document.documentElement.lang") == "ar")
    assert phone.find_element(By.ID, "question-number").text.startswith("السؤال")
    sent = phone.execute_script("return window.__sent")
    assert sent and not any("language" in frame or '"es"' in frame for frame in sent), f"the choice went to the server: {sent}"
    no_page_errors(phone)
    no_page_errors(projector)


@pytest.mark.parametrize("lang", ["fr", "de", "pt"])
def test_the_other_catalogs_on_the_join_screen_and_the_teachers_page(server, browsers, lang):
    """French, German and Portuguese rooms (English is every other browser test's): a child's join and lobby, the teacher's page, in words of the
    catalog, lang and dir set, axe clean, no key missing (a missing key is logged, and fails no_page_errors)."""
    room = server.create_room(settings={"language": lang})
    code = room["code"]
    phone = browsers(**PHONE, language=lang)
    phone.get(f"{server.http}/?room={code}")
    join_screen(phone)
    wait(phone, lambda d: d.execute_script("return document.documentElement.lang") == lang)
    axe(phone, f"{lang}-child-join")
    child_joins(phone, server, code, "Kim")
    assert phone.execute_script("return [document.documentElement.lang, document.documentElement.dir]") == [lang, "ltr"]
    screens = Screens(lang, ROOT / "Tests/Integration/stories/short.json", ["Kim"])
    screens.check(phone, f"{lang}: child lobby")
    # A refusal with a parameter, worded by the page: the name someone in the room already has.
    second = browsers(**PHONE, language=lang)
    second.get(f"{server.http}/?room={code}")
    join_screen(second).send_keys("kim")
    second.find_element(By.ID, "join-button").click()
    error = wait(second, lambda d: visible(d, "#join-error"), message="nickname_taken")
    expected = CATALOGS[lang]["error.nickname_taken"].replace("{nickname}", "kim")
    assert error.text.replace("\u2068", "").replace("\u2069", "") == expected
    screens.check(second, f"{lang}: a name already taken")
    teacher = browsers(**TEACHER)
    teacher.get(f"{server.http}/teacher#room={code}&token={room['teacherToken']}")
    wait(teacher, lambda d: "Kim" in d.find_element(By.ID, "roster").text and d.execute_script("return document.documentElement.lang") == lang)
    screens.check(teacher, f"{lang}: teacher lobby")
    axe(teacher, f"{lang}-teacher-lobby")
    no_page_errors(phone)
    no_page_errors(teacher)


def test_the_cli_sets_the_rooms_language_and_refuses_one_without_a_catalog(server, tmp_path):
    from test_cli import run
    env = {"STORYCIRCLE_SERVER": server.http, "STORYCIRCLE_HOME": str(tmp_path / "home"), "STORYCIRCLE_ADMIN_TOKEN": server.admin_token}
    created = run("room", "create", str(STORIES / "short.json"), "--language", "ar", env=env)
    assert created.returncode == 0, created.stderr
    code = re.search(r"Room (\d{6}) created", created.stdout).group(1)
    status = json.loads(run("room", "status", code, "--json", env=env).stdout)
    assert status["settings"]["language"] == "ar"
    refused = run("room", "create", str(STORIES / "short.json"), "--language", "sw", env=env)
    assert refused.returncode == 64 and "--language" in refused.stderr and "en, es, fr, de, pt, ar" in refused.stderr, refused


def test_the_teachers_choice_of_language_survives_a_restart(tmp_path, browsers):
    """Chosen on the teacher page in the lobby, stored; after a restart the projector speaks it again."""
    from conftest import Server
    data = tmp_path / "data"
    server = Server(data).start()
    try:
        room = server.create_room(story=SPANISH)
        code = room["code"]
        teacher = browsers(**TEACHER)
        teacher.get(f"{server.http}/teacher#room={code}&token={room['teacherToken']}")
        wait(teacher, lambda d: d.execute_script("return document.documentElement.lang") == "es", message="the story's language")
        Select(teacher.find_element(By.ID, "room-language")).select_by_value("de")
        wait(teacher, lambda d: d.execute_script("return document.documentElement.lang") == "de", message="the teacher's choice")
        assert teacher.find_element(By.ID, "room-language").get_attribute("value") == "de"
    finally:
        server.stop()
    again = Server(data).start()
    try:
        projector = browsers(**PROJECTOR)
        projector.get(f"{again.http}/dashboard#room={code}&token={room['dashboardToken']}")
        wait(projector, lambda d: d.execute_script("return window.storycircle.room && window.storycircle.room.language") == "de")
        assert projector.execute_script("return [document.documentElement.lang, document.documentElement.dir]") == ["de", "ltr"]
        assert projector.find_element(By.ID, "lobby-title").text == "0 sind da"
        no_page_errors(projector)
    finally:
        again.stop()


def test_the_join_link_and_qr_code_carry_the_rooms_language(server, browsers):
    """A Spanish room's join link (from the API, the teacher page and the projector's QR code) names its
    language: a child on an English phone opening it sees the join screen in Spanish before joining."""
    from urllib.parse import urlsplit
    room = server.create_room(SPANISH)
    code = room["code"]
    link = urlsplit(room["joinURL"])
    assert link.query == f"room={code}&lang=es", room["joinURL"]
    phone = browsers(**PHONE, language="en")
    phone.get(f"{server.http}{link.path}?{link.query}")
    join_screen(phone)
    wait(phone, lambda d: d.execute_script("return document.documentElement.lang") == "es",
         message="the first screen speaks the room's language")
    Screens("es", SPANISH, []).check(phone, "child: join screen from the link")
    teacher = browsers(**TEACHER, language="en")
    teacher.get(f"{server.http}/teacher#room={code}&token={room['teacherToken']}")
    wait(teacher, lambda d: "lang=es" in (d.find_element(By.ID, "join-link").get_attribute("href") or ""), message="the teacher's join link")
    # The projector's QR code (whose link the API test checks) is fetched again when the language changes.
    projector = browsers(**PROJECTOR, language="en")
    projector.get(f"{server.http}/dashboard#room={code}&token={room['dashboardToken']}")
    fetched = "return performance.getEntriesByType('resource').filter((e) => e.name.includes('/qr.svg')).length"
    wait(projector, lambda d: visible(d, "#qr") and d.execute_script(fetched) == 1, message="the QR code")
    assert server.command(room, "settings", settings={"language": "fr"})[0] == 200
    wait(teacher, lambda d: "lang=fr" in (d.find_element(By.ID, "join-link").get_attribute("href") or ""), message="the link follows")
    wait(projector, lambda d: d.execute_script(fetched) == 2 and d.execute_script("return document.documentElement.lang") == "fr",
         message="the projector fetched the QR code of the French link")
    no_page_errors(phone)
    no_page_errors(projector)


def test_two_quick_language_switches_leave_the_later_one(server, browsers):
    """setLanguage("es") whose catalog is slow, then setLanguage("fr") at once: French stays, even when
    Spanish arrives last (the page used to apply whichever catalog came in last)."""
    phone = browsers(**PHONE, language="en")
    phone.get(f"{server.http}/?lang=en")
    wait(phone, lambda d: visible(d, "#nickname") and d.execute_script("return document.documentElement.lang") == "en")
    result = phone.execute_async_script("""
      const done = arguments[arguments.length - 1];
      (async () => {
        const i18n = await import("/js/i18n.js");
        const realFetch = window.fetch;
        let release;
        const gate = new Promise((resolve) => { release = resolve; });
        // Spanish's catalog waits until French has been applied; nothing else is held.
        window.fetch = async (url, ...rest) => {
          if (String(url).endsWith("/i18n/es.json")) await gate;
          return realFetch(url, ...rest);
        };
        const slow = i18n.setLanguage("es");
        const quick = await i18n.setLanguage("fr");
        const afterQuick = document.documentElement.lang;
        release();
        const late = await slow;
        window.fetch = realFetch;
        const node = document.querySelector("#join-title");
        done({ quick, late, afterQuick, lang: document.documentElement.lang, current: i18n.currentLanguage(),
               key: node.dataset.i18n, text: node.textContent });
      })().catch((error) => done({ error: String(error) }));
    """)
    assert "error" not in result, result
    assert result["afterQuick"] == "fr"
    assert result["lang"] == "fr" and result["current"] == "fr", result
    assert result["late"] == "fr", "the superseded call says which language the page speaks"
    assert result["key"] == "join.title" and result["text"] == CATALOGS["fr"]["join.title"] != CATALOGS["es"]["join.title"], result
    no_page_errors(phone)


# Masculine singular imperatives (and "you did" written with its masculine vowel): the Arabic catalog
# asks with "يُرجى" and a verbal noun, invites with "هيّا" and "we", and names buttons with verbal nouns,
# so that no child (and no teacher) is addressed as a boy only. Diacritics are left out before comparing.
MASCULINE_ONLY = {
    "ادخل", "انظر", "حاول", "اختر", "اكتب", "انتظر", "استمع", "استعد", "المس", "اضغط", "انقر", "ابق", "أعد", "اطلب",
    "استعمل", "راجع", "خذ", "أخرج", "احظر", "ابدأ", "أظهر", "أقفل", "افتح", "أنه", "تابع", "نزل", "احفظ", "اقرأ", "شغل",
    "أطفئ", "توقف", "تخط", "انتقل", "أعط", "اسأل", "جرب",
}
TASHKEEL = re.compile("[\u064B-\u0652\u0670]")


def test_the_arabic_catalog_addresses_nobody_as_a_boy_only():
    found = []
    for key, value in CATALOGS["ar"].items():
        for text in flat(value):
            if re.search("\u062A\u064E(?![\u0600-\u06FF])", text):  # "…تَ": "you (a boy) did"
                found.append((key, text))
            bare = TASHKEEL.sub("", text)
            if set(re.findall(r"[\u0621-\u064A]+", bare)) & MASCULINE_ONLY:
                found.append((key, text))
    assert not found, "masculine-only forms:\n" + "\n".join(f"{k}: {t}" for k, t in found)


def test_refusals_and_failures_are_worded_from_their_codes_and_params_in_every_language(server, browsers):
    """What the teacher's page says for a refused command, a refused setting, a missing room, a failed
    narration and a failing store: each the catalog's own words for its code (not the generic sentence,
    never the server's English), in every language."""
    phone = browsers(**PHONE, language="en")
    phone.get(f"{server.http}/?lang=en")
    wait(phone, lambda d: visible(d, "#nickname"))
    worded = phone.execute_async_script("""
      const done = arguments[arguments.length - 1];
      (async () => {
        const i18n = await import("/js/i18n.js");
        const { errorText } = await import("/js/error-codes.js");
        const { phaseDetail } = await import("/js/phase.js");
        const out = {};
        for (const lang of Object.keys(i18n.LANGUAGES)) {
          await i18n.setLanguage(lang);
          out[lang] = {
            paused: errorText({ code: "invalid_command", message: "The room is already paused.", params: { problem: "already_paused", command: "pause" } }),
            unknown_problem: errorText({ code: "invalid_command", message: "x", params: { problem: "something_new" } }),
            seconds: errorText({ code: "invalid_settings", message: "x", params: { setting: "questionSeconds", min: "5", max: "300" } }),
            missing: errorText({ code: "room_not_found", message: "x", params: { code: "424242" } }),
            missing_any: errorText({ code: "room_not_found", message: "x" }),
            voice: phaseDetail({ role: "teacher", phase: "error", error: { reason: "voice_not_installed", params: { voice: "xx-nowhere" } } }),
            restart: phaseDetail({ role: "teacher", phase: "error", error: { reason: "not_ready_after_restart", params: {} } }),
          };
        }
        done(out);
      })().catch((error) => done({ error: String(error) }));
    """)
    assert "error" not in worded, worded
    for lang, said in worded.items():
        catalog = CATALOGS[lang]
        assert said["paused"] == catalog["error.invalid_command.already_paused"], (lang, said)
        assert said["unknown_problem"] == catalog["error.invalid_command"], (lang, said)
        assert said["seconds"].startswith(catalog["error.invalid_settings.question_seconds"].split("{")[0]), (lang, said)
        assert "{" not in said["seconds"] and said["seconds"] != catalog["error.invalid_settings"], (lang, said)
        assert "424242" in said["missing"] and said["missing_any"] == catalog["error.room_not_found_any"], (lang, said)
        assert "xx-nowhere" in said["voice"] and said["voice"].startswith(catalog["narration.reason.voice_not_installed"].split("{")[0]), (lang, said)
        assert said["restart"] == catalog["narration.reason.not_ready_after_restart"], (lang, said)
    no_page_errors(phone)
