"""The pages in real headless Chromium against the real server (issue #5). Screenshots go to
build/screenshots/."""
import json
import pathlib
import time

import pytest
from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import ROOT

SCREENSHOTS = ROOT / "build" / "screenshots"
XSS = "<img src=x onerror=alert(1)>"  # the issue's own example


def browser(width=420, height=860):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--mute-audio",
                     "--autoplay-policy=no-user-gesture-required", f"--window-size={width},{height}"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(30)
    return driver


def wait(driver, condition, timeout=30, message=""):
    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: condition(d), message)


def visible(driver, selector):
    elements = driver.find_elements(By.CSS_SELECTOR, selector)
    return elements[0] if elements and elements[0].is_displayed() else None


def screenshot(driver, name):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SCREENSHOTS / f"{name}.png"))


def nothing_ran(driver):
    """No alert opened and no <img> came out of a nickname."""
    try:
        driver.switch_to.alert
        return False
    except NoAlertPresentException:
        pass
    return not driver.find_elements(By.CSS_SELECTOR, "#lobby-list img, #lobby-name img, .board img, .players-table img, #finished-podium img")


def events(driver, name):
    return [e["at"] for e in driver.execute_script("return window.storycircle.events") if e["event"] == name]


def join(driver, server, room, nickname):
    driver.get(f"{server.http}/?room={room['code']}")
    wait(driver, lambda d: visible(d, "#nickname"))
    driver.find_element(By.ID, "nickname").send_keys(nickname)
    driver.find_element(By.ID, "join-button").click()
    wait(driver, lambda d: visible(d, "#lobby"), message=f"{nickname} reached the lobby")


def choose(driver, option_text):
    button = wait(driver, lambda d: next((b for b in d.find_elements(By.CSS_SELECTOR, "#options .option")
                                           if b.is_displayed() and b.is_enabled() and b.find_element(By.CLASS_NAME, "label").text == option_text), None))
    button.click()
    # The last answer of a round brings the reveal at once, which replaces "saved".
    wait(driver, lambda d: "saved" in d.find_element(By.ID, "answer-status").text or visible(d, "#reveal"))


def background(driver, option_text):
    for button in driver.find_elements(By.CSS_SELECTOR, "#options .option"):
        if button.find_element(By.CLASS_NAME, "label").text == option_text:
            return button.get_attribute("class").split(), button.value_of_css_property("background-color")
    raise AssertionError(option_text)


GREEN = "rgba(30, 142, 62, 1)"
RED = "rgba(197, 34, 31, 1)"


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


def test_three_children_and_a_dashboard_play_a_whole_room(server, browsers):
    room = server.create_room()
    dashboard = browsers(width=1280, height=800)
    dashboard.get(room["dashboardURL"].replace(room["dashboardURL"].split("/dashboard")[0], server.http))
    wait(dashboard, lambda d: d.find_element(By.ID, "join-code").text == room["code"])
    wait(dashboard, lambda d: visible(d, "#qr"), message="the QR code is drawn")

    ana, ben, cat = browsers(), browsers(), browsers()
    join(ana, server, room, "Ana")
    join(ben, server, room, "Ben")
    join(cat, server, room, XSS)

    # The nickname shows literally, everywhere, and nothing in it ran.
    wait(dashboard, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#lobby-list li")) == 3)
    names = [li.text for li in dashboard.find_elements(By.CSS_SELECTOR, "#lobby-list li")]
    assert XSS in names
    assert cat.find_element(By.ID, "lobby-name").text == XSS
    for driver in (dashboard, ana, ben, cat):
        assert nothing_ran(driver)
    screenshot(dashboard, "dashboard-lobby")

    # The story is narrated: each child follows along.
    assert server.command(room, "start")[0] == 200
    for driver in (ana, ben, cat):
        wait(driver, lambda d: visible(d, "#story") and d.find_elements(By.CSS_SELECTOR, ".sentence.current"))
    wait(ana, lambda d: d.find_elements(By.CSS_SELECTOR, ".word.spoken"), message="the spoken word is highlighted")
    screenshot(ana, "child-story")
    screenshot(dashboard, "dashboard-story")

    # The quiz appears in every child page, at one instant.
    for driver in (ana, ben, cat):
        wait(driver, lambda d: visible(d, "#options .option"), timeout=40, message="the quiz appears")
    shown = [events(driver, "question:0:shown")[0] for driver in (ana, ben, cat)]
    spread = max(shown) - min(shown)
    print(f"quiz unlock spread across three browsers: {spread} ms")
    assert spread < 300
    screenshot(ana, "child-quiz")

    # Answers, then the reveal colours: green for the right option, red for a wrong pick.
    choose(ana, "A gear")
    choose(ben, "A hat")
    choose(cat, "A gear")
    for driver in (ana, ben, cat):
        wait(driver, lambda d: visible(d, "#reveal"))
    classes, colour = background(ana, "A gear")
    assert "correct" in classes and "chosen" in classes and colour == GREEN
    classes, colour = background(ben, "A hat")
    assert "wrong" in classes and colour == RED
    classes, colour = background(ben, "A gear")
    assert "correct" in classes and colour == GREEN
    assert "Not quite" in ben.find_element(By.ID, "reveal-title").text
    dots = [d.get_attribute("class") for d in ana.find_elements(By.CSS_SELECTOR, "#quiz-dots .dot")]
    assert dots == ["dot correct", "dot pending", "dot pending"]
    screenshot(ana, "child-reveal")
    screenshot(ben, "child-reveal-wrong")
    wait(dashboard, lambda d: visible(d, "#distribution"))
    screenshot(dashboard, "dashboard-reveal")

    # A reload in the middle of the next question rejoins as the same player, with the same score.
    assert server.command(room, "next")[0] == 200
    wait(ben, lambda d: visible(d, "#options .option") and "Question 2" in d.find_element(By.ID, "question-number").text)
    score_before = ben.find_element(By.ID, "quiz-score").text
    ben.refresh()
    wait(ben, lambda d: visible(d, "#options .option") and "Question 2" in d.find_element(By.ID, "question-number").text,
         message="after a reload the quiz comes back")
    assert ben.find_element(By.ID, "quiz-score").text == score_before
    status, _, body = server.request("GET", f"/api/rooms/{room['code']}", room["teacherToken"])
    assert json.loads(body)["players"] == 3, "the reload did not create a new player"
    choose(ben, "Blue")
    choose(ana, "Blue")
    choose(cat, "Red")
    wait(ben, lambda d: visible(d, "#reveal"))
    assert server.command(room, "next")[0] == 200
    for driver, option in ((ana, "Dot"), (ben, "Pip"), (cat, "Dot")):
        choose(driver, option)
    wait(ana, lambda d: visible(d, "#reveal"))
    assert "Dot said thank you." in ana.find_element(By.ID, "reveal-explanation").text
    assert server.command(room, "next")[0] == 200

    # The podium.
    for driver in (ana, ben, cat):
        wait(driver, lambda d: visible(d, "#finished"))
    assert "You came #1" in ana.find_element(By.ID, "finished-you").text
    podium_text = ana.find_element(By.ID, "finished-podium").text
    assert "Ana" in podium_text and XSS in podium_text
    wait(dashboard, lambda d: visible(d, "#finished"))
    screenshot(ana, "child-podium")
    screenshot(dashboard, "dashboard-podium")
    for driver in (dashboard, ana, ben, cat):
        assert nothing_ran(driver)
        severe = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE" and "favicon" not in entry["message"]]
        assert not severe, severe


def test_the_teacher_page_runs_the_room(server, browsers):
    room = server.create_room()
    teacher = browsers(width=1000, height=900)
    teacher.get(f"{server.http}/teacher#room={room['code']}&token={room['teacherToken']}")
    wait(teacher, lambda d: "Waiting to start" in d.find_element(By.ID, "room-state").text)
    child = browsers()
    join(child, server, room, "Zoë")
    wait(teacher, lambda d: "Zoë" in d.find_element(By.CSS_SELECTOR, ".players-table").text)

    def press(command):
        button = wait(teacher, lambda d: (b := d.find_element(By.CSS_SELECTOR, f'button[data-command="{command}"]')).is_enabled() and b)
        button.click()

    assert not teacher.find_element(By.CSS_SELECTOR, 'button[data-command="next"]').is_enabled()
    # Settings only before the story: switch the timer off.
    timer = teacher.find_element(By.CSS_SELECTOR, 'input[name="timer"]')
    timer.click()
    teacher.find_element(By.CSS_SELECTOR, ".settings-grid button[type=submit]").click()
    wait(teacher, lambda d: json.loads(server.request("GET", f"/api/rooms/{room['code']}", room["teacherToken"])[2])["settings"]["timer"] is False)
    press("start")
    wait(child, lambda d: visible(d, "#story"))
    press("skip")
    wait(child, lambda d: visible(d, "#options .option"), timeout=20)
    assert "No timer" in child.find_element(By.ID, "countdown-text").text
    press("reveal")
    wait(child, lambda d: visible(d, "#reveal"))
    assert "Time’s up" in child.find_element(By.ID, "reveal-title").text
    press("next")
    wait(child, lambda d: "Question 2" in d.find_element(By.ID, "question-number").text)
    screenshot(teacher, "teacher-controls")
    # Kick, with its confirmation dialog.
    teacher.find_element(By.CSS_SELECTOR, ".players-table button").click()
    teacher.switch_to.alert.accept()
    wait(child, lambda d: visible(d, "#join-error") and "removed" in d.find_element(By.ID, "join-error").text)


def test_a_wrong_room_code_is_a_friendly_sentence_with_a_way_forward(server, browsers):
    child = browsers()
    child.get(f"{server.http}/")
    child.find_element(By.ID, "room-code").send_keys("999999")
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
    child = browsers()
    # Chrome will not make a window narrower than 500 px; emulate a small phone instead.
    child.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 320, "height": 640, "deviceScaleFactor": 2, "mobile": True})
    child.get(f"{server.http}/?room={room['code']}")
    assert child.execute_script("return window.innerWidth") == 320
    width = child.execute_script("return document.documentElement.scrollWidth")
    assert width <= 320, f"no sideways scrolling at 320 px ({width})"
    focusable = []
    body = child.find_element(By.TAG_NAME, "body")
    for _ in range(6):
        body.send_keys("\t") if not focusable else child.switch_to.active_element.send_keys("\t")
        focusable.append(child.switch_to.active_element.get_attribute("id"))
    assert {"room-code", "nickname", "random-name", "join-button"} <= set(focusable)
    assert child.find_element(By.ID, "announcer").get_attribute("aria-live") == "polite"
