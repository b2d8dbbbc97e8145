"""The podium of a tied class, in real headless Chromium against the real server: the server
names at most eight players and says how many more share the place ("… and 5 more"), so each child's
`finished` stays small however many tie. The pages keep the podium's kind rules: nobody with 0 points
stands on it, a child left out of the names reads "you" among the others, and names wrap between words."""
from selenium.webdriver.common.by import By

from browser_support import PHONE, PROJECTOR, assert_fits, axe, nothing_ran, no_page_errors, plain, screenshot, text, visible, wait
from test_browser import XSS, Crowd, browsers, choose, join  # noqa: F401 (browsers is a fixture)

# Twelve children who get it right (long names, one of 40 letters unbroken as the limit allows, a name that
# looks like HTML), three who do not.
RIGHT = ["Maximilian Alexander", "Anne-Sophie Marguerite", XSS, "Oliver", "Amelia", "Noah", "Isla", "Leo", "Mia",
         "Arthur", "Freya", "A" + "W" * 39]
WRONG = ["Ivy", "Finley", "Rosie"]
# Last on the board by name, so not among the eight named; as long as a name may be.
PHONE_CHILD = "Z" + "W" * 39


def test_a_tied_podium_names_eight_and_says_how_many_more(server, browsers):
    # A contest: the phones show the podium and their place too.
    room = server.create_room(settings={"speedPoints": False, "streakBonus": False, "competitive": True})
    code = room["code"]
    projector = browsers(**PROJECTOR)
    projector.get(f"{server.http}/dashboard#room={code}&token={room['dashboardToken']}")
    wait(projector, lambda d: d.find_element(By.ID, "join-code").text == code)
    crowd = Crowd(server, code, RIGHT + WRONG)
    phone = browsers(**PHONE)
    join(phone, server, code, PHONE_CHILD)

    assert server.command(room, "start")[0] == 200
    assert server.command(room, "skip")[0] == 200
    # "A gear" is option 0: twelve of the crowd and the phone get it right, three do not.
    choose(phone, "A gear")
    crowd.answer(0, lambda i: 0 if i < len(RIGHT) else 1)
    wait(projector, lambda d: visible(d, "#distribution"), message="the reveal")
    assert server.command(room, "end")[0] == 200
    for driver in (projector, phone):
        wait(driver, lambda d: visible(d, ".podium .step"), message="the podium")

    # Thirteen share first place: the first eight on the board are named, and "5 more".
    named = sorted(RIGHT + [PHONE_CHILD], key=str.lower)[:8]
    steps = projector.find_elements(By.CSS_SELECTOR, "#podium .step")
    assert len(steps) == 1, "nobody with 0 points stands on the podium: there is no second place"
    assert plain(steps[0].find_element(By.TAG_NAME, "strong").text) == ", ".join(named) + " and 5 more"
    label = plain(steps[0].get_attribute("aria-label"))
    assert label.startswith("1st place: ") and label.endswith("and 5 more, 1,000 points")
    # The phone's child is one of the five: they read "you" among them, and their own place.
    mine = wait(phone, lambda d: plain(d.find_element(By.CSS_SELECTOR, "#finished-podium .step strong").text))
    assert mine == ", ".join(named) + ", you and 4 more", mine
    assert text(phone, "#finished-place") == "🏆 1st place!"
    # Names wrap between words (a single word too long for its place still breaks), on every screen.
    for driver in (projector, phone):
        who = driver.find_element(By.CSS_SELECTOR, ".podium .who")
        assert (who.value_of_css_property("overflow-wrap"), who.value_of_css_property("word-break")) == ("break-word", "normal")
    wait(projector, lambda d: all(s.value_of_css_property("opacity") == "1" for s in d.find_elements(By.CSS_SELECTOR, "#podium .step")))
    assert_fits(projector, "a tied podium")
    assert phone.execute_script("return document.documentElement.scrollWidth <= innerWidth"), "no sideways scrolling"
    for driver in (projector, phone):
        assert nothing_ran(driver)
        no_page_errors(driver)
    screenshot(projector, "projector-1920-podium-tied")
    screenshot(phone, "phone-podium-tied")
    axe(projector, "projector-1920-podium-tied")
    axe(phone, "phone-podium-tied")
    crowd.leave_after_the_end()
