"""A picture story in real headless Chromium: on a phone (390×844) the picture of the sentence being read
above the text, and eight picture options that fit without scrolling, answered by a tap; on the projector
(1920×1080 and 1280×720) the picture beside the text and the picture options, the reveal marking the right
picture in words and shape, nothing scrolling; axe-core finds nothing serious on any of these screens."""
import json

from selenium.webdriver.common.by import By

from browser_support import PHONE, events, PROJECTOR, SMALL_PROJECTOR, assert_fits, axe, browsers, in_view, join_screen, rect, screenshot, text, visible, wait
from conftest import ROOT

PICTURES = ROOT / "config" / "stories" / "pictures"


def picture_story(server):
    """The sample story's pictures uploaded, and a story naming them by id: two pages, a question with eight
    picture options, one with a question picture."""
    ids = {}
    for name in ("owl", "moon", "wood", "mouse", "cat", "fish"):
        status, _, body = server.request("POST", "/api/pictures", server.admin_token, raw=(PICTURES / f"{name}.png").read_bytes())
        assert status == 201, body
        ids[name] = json.loads(body)["id"]

    def pic(name, alt=None):
        return {"id": ids[name], **({"alt": alt} if alt else {})}
    labels = [("An owl", "owl"), ("A cat", "cat"), ("A fish", "fish"), ("The moon", "moon"), ("A mouse", "mouse"),
              ("The wood", "wood"), ("A sleepy cat", "cat"), ("A little fish", "fish")]
    story = {
        "title": "Olive at night",
        "text": [
            {"text": "Olive the owl wakes up. She opens her eyes.", "picture": pic("owl", "A brown owl with big round eyes")},
            {"text": "The moon is round.", "picture": pic("moon", "A big yellow moon")},
        ],
        "narration": {"rate": 220},
        "quiz": {"questions": [
            {"question": "Which one is Olive?", "options": [{"label": label, "picture": pic(name)} for label, name in labels], "answer": "An owl"},
            {"question": "What lights up the sky?", "picture": pic("wood", "Tall trees at night"),
             "options": [{"label": "The moon", "picture": pic("moon")}, {"label": "A mouse", "picture": pic("mouse")}], "answer": "The moon"},
        ]},
    }
    return story, ids


def shown_picture(driver):
    figure = driver.find_elements(By.ID, "story-picture")
    return figure[0].get_attribute("data-picture") if figure and figure[0].is_displayed() else None


def current_sentence(driver):
    current = driver.find_elements(By.CSS_SELECTOR, "#story-text .sentence.current")
    return int(current[0].get_attribute("data-index")) if current else None


def loaded(driver, selector):
    return driver.execute_script(
        "const all = [...document.querySelectorAll(arguments[0])]; return all.length > 0 && all.every(i => i.complete && i.naturalWidth > 0)", selector)


def test_a_picture_story_on_a_phone_and_the_projector(server, browsers):
    story, ids = picture_story(server)
    room = server.create_room(story, settings={"timer": False})
    code = room["code"]
    projector, small = browsers(**PROJECTOR), browsers(**SMALL_PROJECTOR)
    for driver in (projector, small):
        driver.get(f"{server.http}/dashboard#room={code}&token={room['dashboardToken']}")
        wait(driver, lambda d: d.find_element(By.ID, "join-code").text == code)
    phone = browsers(**PHONE)
    phone.get(f"{server.http}/?room={code}")
    join_screen(phone).send_keys("Ana")
    phone.find_element(By.ID, "join-button").click()
    wait(phone, lambda d: visible(d, "#lobby"))

    # ---- The story: the picture of the sentence being read, on every screen, while it is read ----
    assert server.command(room, "start")[0] == 200
    page_of = {0: ids["owl"], 1: ids["owl"], 2: ids["moon"]}
    for driver in (phone, projector, small):
        wait(driver, lambda d: current_sentence(d) is not None and shown_picture(d) == page_of[current_sentence(d)]
             and loaded(d, "#story-picture img"), timeout=60, message="the first page's picture while it is read")
    image = phone.find_element(By.CSS_SELECTOR, "#story-picture img")
    assert image.get_attribute("alt") == "A brown owl with big round eyes"
    assert "size=phone" in image.get_attribute("src") and f"room={code}" in image.get_attribute("src")
    # Above the text on the phone, beside it on the projector.
    assert rect(phone, image)["y"] + rect(phone, image)["h"] <= rect(phone, phone.find_element(By.ID, "story-text"))["y"] + 1
    assert in_view(phone, image)
    for driver in (projector, small):
        figure, words = rect(driver, driver.find_element(By.ID, "story-picture")), rect(driver, driver.find_element(By.ID, "story-text"))
        assert figure["x"] + figure["w"] <= words["x"] + 1 and figure["h"] > 0.3 * driver.execute_script("return innerHeight")
        assert "size=phone" not in driver.find_element(By.CSS_SELECTOR, "#story-picture img").get_attribute("src")
        assert_fits(driver, "the picture story")
    screenshot(phone, "phone-picture-story")
    screenshot(projector, "projector-1920-picture-story")
    axe(phone, "phone-picture-story")
    axe(projector, "projector-1920-picture-story")
    # The second page: its own picture came with its sentence (the page's own record of what it showed).
    for driver in (phone, projector):
        wait(driver, lambda d: any(e["sentence"] == 2 for e in d.execute_script("return window.storycircle.pictures")), timeout=60,
             message="the moon's page was read")
        log = driver.execute_script("return window.storycircle.pictures")
        assert all(entry["picture"] == page_of[entry["sentence"]] for entry in log), log

    # ---- Eight picture options: all on the phone's screen at once, answered by a tap ----
    for driver in (phone, projector, small):
        wait(driver, lambda d: visible(d, "#options .option") and loaded(d, "#options .option-image"), timeout=90, message="the picture question")
    options = phone.find_elements(By.CSS_SELECTOR, "#options .option")
    assert len(options) == 8
    wait(phone, lambda d: all(b.is_enabled() for b in d.find_elements(By.CSS_SELECTOR, "#options .option")))
    for button in options:
        assert in_view(phone, button, phone.find_element(By.ID, "quiz-top")), f"{button.text} is off the screen"
        assert rect(phone, button)["h"] >= 48 and rect(phone, button)["w"] >= 140, "a big tap target"
    # Each option is named by its label (the picture in it is decorative).
    assert [b.find_element(By.CLASS_NAME, "label").text for b in options][:3] == ["An owl", "A cat", "A fish"]
    assert all(i.get_attribute("alt") == "" for i in phone.find_elements(By.CSS_SELECTOR, "#options .option-image"))
    for driver in (projector, small):
        assert_fits(driver, "a question with 8 picture options")
    screenshot(phone, "phone-picture-question")
    screenshot(projector, "projector-1920-picture-question")
    axe(phone, "phone-picture-question")
    axe(projector, "projector-1920-picture-question")
    owl = next(b for b in options if b.find_element(By.CLASS_NAME, "label").text == "An owl")
    owl.find_element(By.CLASS_NAME, "option-image").click()  # the tap lands on the picture
    wait(phone, lambda d: events(d, "answer:0:saved"), message="the tapped picture is the answer")

    # ---- The reveal (everyone has answered): the right picture in words and shape ----
    for driver in (projector, small):
        wait(driver, lambda d: visible(d, "#distribution"))
        right = driver.find_element(By.CSS_SELECTOR, "#distribution li.correct")
        assert right.find_element(By.CLASS_NAME, "right").text and right.find_elements(By.CLASS_NAME, "option-image")
        assert right.value_of_css_property("border-top-style") == "double"
        assert_fits(driver, "the reveal of 8 picture options")
    wait(phone, lambda d: "correct" in owl.get_attribute("class"))
    assert owl.find_element(By.CLASS_NAME, "tag").text
    assert phone.execute_script("return getComputedStyle(arguments[0], '::before').content", owl.find_element(By.CLASS_NAME, "label")) == '"✓ "'
    screenshot(projector, "projector-1920-picture-reveal")
    axe(phone, "phone-picture-reveal")
    axe(projector, "projector-1920-picture-reveal")

    # ---- A question with its own picture ----
    assert server.command(room, "next")[0] == 200
    for driver in (phone, projector, small):
        wait(driver, lambda d: visible(d, "#question-picture img") and loaded(d, "#question-picture img") and loaded(d, "#options .option-image"),
             timeout=30, message="the question's picture")
        assert driver.find_element(By.CSS_SELECTOR, "#question-picture img").get_attribute("alt") == "Tall trees at night"
    for driver in (projector, small):
        assert_fits(driver, "a question with a picture and 2 picture options")
    # Once it opens, the question, its picture and both options are on the phone's screen together.
    wait(phone, lambda d: all(in_view(d, e, d.find_element(By.ID, "quiz-top")) for e in
                              [d.find_element(By.ID, "question-picture"), *d.find_elements(By.CSS_SELECTOR, "#options .option")]),
         message="the question picture and its options in view")
    screenshot(phone, "phone-picture-question-picture")
    axe(phone, "phone-picture-question-picture")
