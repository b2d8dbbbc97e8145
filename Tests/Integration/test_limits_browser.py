"""Longer room codes for a server with many rooms (`roomCodeDigits`), in the child's page: headless Chromium."""
import json

from selenium.webdriver.common.by import By

from browser_support import PHONE, join_screen, visible, wait
from test_browser import browsers  # noqa: F401 (a fixture)
from test_classes_browser import class_room, make_class


def test_a_server_with_nine_digit_codes_is_joined_by_link_and_by_a_code_typed_by_hand(make_server, browsers):
    server = make_server(config={"roomCodeDigits": 9})
    status, _, body = server.request("GET", "/api/join")
    assert (status, json.loads(body)) == (200, {"roomCodeDigits": 9})
    room = server.create_room()
    assert len(room["code"]) == 9 and room["code"].isdigit()

    # By the link (the QR code): the whole code, whatever its length.
    linked = browsers(**PHONE)
    linked.get(f"{server.http}/?room={room['code']}")
    join_screen(linked).send_keys("Ana")
    linked.find_element(By.ID, "join-button").click()
    wait(linked, lambda d: visible(d, "#lobby"), message="Ana in the lobby")

    # Typed by hand: six digits are not yet a code here (no look-up, which would spend a wrong code); nine are.
    typed = browsers(**PHONE)
    typed.get(f"{server.http}/")
    wait(typed, lambda d: d.find_element(By.ID, "room-code").get_attribute("maxlength") == "9", message="the page knows the codes' length")
    typed.find_element(By.ID, "room-code").send_keys(room["code"][:6])
    typed.find_element(By.ID, "nickname").send_keys("Bea")
    typed.find_element(By.ID, "join-button").click()
    wait(typed, lambda d: "9 numbers" in d.find_element(By.ID, "join-error").text)
    typed.find_element(By.ID, "room-code").send_keys(room["code"][6:])
    nickname = join_screen(typed)
    nickname.clear()
    nickname.send_keys("Bea")
    typed.find_element(By.ID, "join-button").click()
    wait(typed, lambda d: visible(d, "#lobby"), message="Bea in the lobby")

    # A class room's names come up once the ninth digit is typed.
    class_id, _ = make_class(server)
    names_room = class_room(server, class_id)
    phone = browsers(**PHONE)
    phone.get(f"{server.http}/")
    wait(phone, lambda d: d.find_element(By.ID, "room-code").get_attribute("maxlength") == "9")
    phone.find_element(By.ID, "room-code").send_keys(names_room["code"])
    join_screen(phone, expected="picker")
