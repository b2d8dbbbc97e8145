"""The child's name field and coming back after a removal (told neutrally), in headless Chromium at phone size: a long
name is never cut (the page counts the letters and says the limit), and a child the teacher removed by
mistake who joins again from the same phone is the same child, points and all."""
import json

from selenium.webdriver.common.by import By

from browser_support import PHONE, axe, browsers, join_screen, screenshot, text, visible, wait  # noqa: F401 (browsers is a fixture)
from test_browser import choose

LONG = "Maximiliana Theodora Anneliese von Rosenberg"  # 44 letters


def test_a_long_name_is_counted_not_cut_and_a_removed_child_comes_back_as_themselves(server, browsers):
    room = server.create_room()
    code = room["code"]
    phone = browsers(**PHONE)
    phone.get(f"{server.http}/?room={code}")
    field = join_screen(phone)
    wait(phone, lambda d: text(d, "#nickname-count") == "Letters: 0 of 40", message="the count under the field")
    field.send_keys(LONG)
    assert field.get_attribute("value") == LONG, "nothing is cut"
    wait(phone, lambda d: text(d, "#nickname-count") == "Nearly! A nickname can have up to 40 letters, and this one has 44. Try a shorter one.")
    assert field.get_attribute("aria-describedby") == "nickname-count"
    axe(phone, "phone-join-name-too-long")
    screenshot(phone, "phone-join-name-too-long")
    phone.find_element(By.ID, "join-button").click()
    wait(phone, lambda d: visible(d, "#join-error") and text(d, "#join-error") == "That nickname is a bit long: please use at most 40 letters.")
    status, _, body = server.request("GET", f"/api/rooms/{code}", room["teacherToken"])
    assert status == 200 and json.loads(body)["players"] == 0, body

    # A shorter name; emoji count one each, as the server counts them.
    field.clear()
    field.send_keys("Ana 🦊")
    wait(phone, lambda d: text(d, "#nickname-count") == "Letters: 5 of 40")
    phone.find_element(By.ID, "join-button").click()
    wait(phone, lambda d: visible(d, "#lobby"), message="Ana 🦊 reached the lobby")

    # The quiz: Ana answers the first question right.
    assert server.command(room, "start")[0] == 200
    assert server.command(room, "skip")[0] == 200
    choose(phone, "A gear")  # the only child: her answer brings the reveal
    wait(phone, lambda d: visible(d, "#reveal"))
    score = phone.execute_script("return window.storycircle.room.you.score")
    assert score > 0

    # Removed by mistake; she taps "Join!" again on the same phone and is herself again.
    assert server.command(room, "kick", player="Ana 🦊")[0] == 200
    # Said neutrally, not as an error: nothing red, nothing "removed" on a child's phone.
    wait(phone, lambda d: visible(d, "#join-note") and text(d, "#join-note") == "You are not in this room any more. Ask your teacher if you can join again.")
    assert not visible(phone, "#join-error") and "error" not in phone.find_element(By.ID, "join-note").get_attribute("class")
    phone.find_element(By.ID, "join-button").click()
    wait(phone, lambda d: visible(d, "#reveal") and phone.execute_script("return window.storycircle.session.playerId") == "p1",
         message="the same child at the reveal")
    assert phone.execute_script("return window.storycircle.room.you.score") == score
    status, _, body = server.request("GET", f"/api/rooms/{code}/results", room["teacherToken"])
    players = json.loads(body)["players"]
    assert [(p["id"], p["nickname"], p["score"]) for p in players] == [("p1", "Ana 🦊", score)], players
