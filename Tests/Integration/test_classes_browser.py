"""Classes in real headless Chromium against the real server (docs/protocol.md, "Class rooms" and
"Classes"): at phone size a class room is joined by tapping a name, with no text field on the page; a
taken name is greyed out, says so in words, and tapping it says why; the teacher releases it and a second
phone picks it again as the same child with the same points. The class page after two rooms shows each
question's share right, the most chosen wrong answer and the child who needs help, and erasing a child
there removes them from the report and the CSV. axe-core on the picker, the teacher's class roster and the
class page at phone, laptop and projector sizes."""
import csv
import io
import json
import time

from selenium.webdriver.common.by import By
from websockets.sync.client import connect as ws_connect

from browser_support import PHONE, PROJECTOR, TEACHER, axe, join_screen, no_page_errors, plain, screenshot, text, visible, wait
from conftest import SHORT_STORY
from test_browser import browsers, choose  # noqa: F401 (browsers is a fixture)

STORY = json.loads(SHORT_STORY.read_text())
CHILDREN = [{"name": "Ada", "avatar": "owl"}, {"name": "Bo", "avatar": "fox"}, {"name": "Cy", "avatar": "emoji:🐢"}]


def make_class(server, name="Class 1B", children=CHILDREN):
    status, _, body = server.request("POST", "/api/classes", server.admin_token, {"name": name, "children": children})
    assert status == 201, body
    class_id = json.loads(body)["id"]
    status, _, body = server.request("GET", f"/api/classes/{class_id}", server.admin_token)
    assert status == 200, body
    return class_id, {child["name"]: child["id"] for child in json.loads(body)["children"]}


def class_room(server, class_id):
    status, _, body = server.request("POST", "/api/rooms", server.admin_token,
                                     {"story": STORY, "classId": class_id, "settings": {"speedPoints": False, "streakBonus": False}})
    assert status == 201, body
    return json.loads(body)


def expect(ws, kind, timeout=40, where=lambda m: True):
    deadline = time.monotonic() + timeout
    while True:
        message = json.loads(ws.recv(timeout=max(0.01, deadline - time.monotonic())))
        if message["type"] == kind and where(message):
            return message


def member_child(server, code, member):
    """A class child on a scripted device: picks their name by its member id."""
    ws = ws_connect(f"{server.ws_url}?room={code}", open_timeout=15)
    ws.send(json.dumps({"type": "join", "room": code, "member": member}))
    expect(ws, "welcome")
    return ws


def answer(ws, index, option):
    question = expect(ws, "question", where=lambda m: m["index"] == index)
    # The server refuses an answer before the question opens (the same instant on every screen).
    wait_for = question["opensAt"] / 1000 - time.time()
    deadline = time.monotonic() + max(0.0, wait_for) + 0.05
    while time.monotonic() < deadline:
        try:
            ws.recv(timeout=max(0.01, deadline - time.monotonic()))
        except TimeoutError:
            break
    ws.send(json.dumps({"type": "answer", "question": index, "option": option}))
    expect(ws, "answer.ack")


def pick_buttons(driver):
    return {plain(b.find_element(By.CLASS_NAME, "pick-name").text): b for b in driver.find_elements(By.CSS_SELECTOR, "#picker-grid .name-pick")}


def picker_shows(driver, names):
    wait(driver, lambda d: set(pick_buttons(d)) == set(names), message=f"the picker shows {names}")


def typing_fields(driver):
    """Fields that would bring up a keyboard, shown on the page."""
    return [node for node in driver.find_elements(By.CSS_SELECTOR, "input:not([type=checkbox]):not([type=radio]), textarea, [contenteditable]")
            if node.is_displayed()]


def free(driver, name):
    return (button := pick_buttons(driver).get(name)) is not None and button.get_attribute("aria-disabled") == "false"


def test_a_class_room_is_joined_by_tapping_a_name_and_a_released_name_comes_back_with_its_points(server, browsers):
    class_id, members = make_class(server)
    room = class_room(server, class_id)
    code = room["code"]

    # The child's phone, opened from the room's link: the class's names, nothing to type.
    phone = browsers(**PHONE)
    phone.get(f"{server.http}/?room={code}")
    join_screen(phone, "picker")
    picker_shows(phone, ["Ada", "Bo", "Cy"])
    assert typing_fields(phone) == [], "no text field on a class room's join screen"
    assert phone.switch_to.active_element.tag_name != "input"
    assert text(phone, "#join-title") == "Tap your name"
    assert "Class 1B" in text(phone, "#picker-class")
    for button in pick_buttons(phone).values():
        size = button.size
        assert size["height"] >= 44 and size["width"] >= 44, size
    screenshot(phone, "phone-name-picker")
    axe(phone, "class-picker-phone")
    for size, name in ((TEACHER, "laptop"), (PROJECTOR, "projector")):
        wide = browsers(**size)
        wide.get(f"{server.http}/?room={code}")
        join_screen(wide, "picker")
        picker_shows(wide, ["Ada", "Bo", "Cy"])
        axe(wide, f"class-picker-{name}")

    pick_buttons(phone)["Ada"].click()
    wait(phone, lambda d: visible(d, "#lobby"), message="Ada in the lobby")
    ada_id = phone.execute_script("return window.storycircle.session.playerId")

    # A second phone sees Ada taken: greyed, marked in words, disabled for assistive technology; a tap says why.
    second = browsers(**PHONE)
    second.get(f"{server.http}/?room={code}")
    join_screen(second, "picker")
    picker_shows(second, ["Ada", "Bo", "Cy"])
    wait(second, lambda d: not free(d, "Ada"), message="Ada taken")
    ada = pick_buttons(second)["Ada"]
    assert "taken" in plain(ada.text), "taken is said in words, not colour alone"
    assert "taken" in ada.get_attribute("class")
    assert ada.value_of_css_property("background-color") != pick_buttons(second)["Bo"].value_of_css_property("background-color")
    ada.click()
    wait(second, lambda d: "Ada is already in the room" in plain(text(d, "#picker-error")), message="why Ada cannot be picked")
    wait(second, lambda d: "Ada is already in the room" in plain(d.find_element(By.ID, "announcer").get_attribute("textContent")))
    assert visible(second, "#picker") and not visible(second, "#lobby")
    screenshot(second, "phone-name-picker-taken")

    # The teacher sees the whole class: Ada here, the others not yet.
    teacher = browsers(**TEACHER)
    teacher.get(f"{server.http}/teacher#room={code}&token={room['teacherToken']}")
    row = lambda d, member: d.find_element(By.CSS_SELECTOR, f'[data-member-row="{member}"]')  # noqa: E731
    wait(teacher, lambda d: visible(d, "#class-roster") and "Here" in row(d, members["Ada"]).text, message="Ada here")
    assert "Not here yet" in row(teacher, members["Bo"]).text
    assert not teacher.find_elements(By.CSS_SELECTOR, "#class-roster button"), "a name is fixed from the roster's row, not here"
    axe(teacher, "class-teacher-roster-laptop")

    # Ada earns points on the first phone.
    assert server.command(room, "start")[0] == 200
    assert server.command(room, "skip")[0] == 200
    # Ada is the only child in the room: her answer brings the reveal.
    choose(phone, "A gear")
    wait(phone, lambda d: (d.execute_script("return window.storycircle.room.you && window.storycircle.room.you.score") or 0) > 0,
         message="Ada's points")
    points = phone.execute_script("return window.storycircle.room.you.score")

    # Released ("Fix name" in the roster): the first phone is back at the names with a kind word, and the name is free again.
    wait(teacher, lambda d: (b := d.find_element(By.CSS_SELECTOR, f'#roster tr[data-player="{ada_id}"] [data-action=fix-name]')).is_enabled() and b).click()
    dialog = wait(teacher, lambda d: visible(d, "dialog.confirm"), message="the release is confirmed first")
    assert "Ada" in plain(dialog.text)
    dialog.find_element(By.CSS_SELECTOR, '[data-answer="yes"]').click()
    wait(phone, lambda d: visible(d, "#picker") and "gave this name back" in plain(text(d, "#picker-note")), message="the first phone is told")
    wait(second, lambda d: free(d, "Ada"), message="Ada free again, live")
    pick_buttons(second)["Ada"].click()
    wait(second, lambda d: d.execute_script("return window.storycircle.session.welcomed"), message="Ada on the second phone")
    assert second.execute_script("return window.storycircle.session.playerId") == ada_id
    wait(second, lambda d: d.execute_script("return window.storycircle.room.you && window.storycircle.room.you.score") == points,
         message="the same points")
    wait(teacher, lambda d: "Here" in row(d, members["Ada"]).text)
    for driver in (phone, second, teacher):
        no_page_errors(driver)


def play(server, class_id, members, choices):
    """One class room of the short story: each child answers question 0 with their option, then it ends."""
    room = class_room(server, class_id)
    children = {name: member_child(server, room["code"], members[name]) for name in choices}
    assert server.command(room, "start")[0] == 200
    assert server.command(room, "skip")[0] == 200
    for name, option in choices.items():
        answer(children[name], 0, option)
    assert server.command(room, "end")[0] == 200
    for ws in children.values():
        expect(ws, "finished")
        ws.close()
    return room


def report(server, class_id):
    status, _, body = server.request("GET", f"/api/classes/{class_id}/report", server.admin_token)
    assert status == 200, body
    return json.loads(body)


def test_the_class_page_after_two_rooms_says_what_to_teach_again_and_erases_a_child(server, browsers, tmp_path):
    class_id, members = make_class(server)
    # "A gear" (0) is right. Room 1: Bo and Cy say "A hat" (1). Room 2: Bo says "A key" (2), Cy is right.
    first = play(server, class_id, members, {"Ada": 0, "Bo": 1, "Cy": 1})
    second = play(server, class_id, members, {"Ada": 0, "Bo": 2, "Cy": 0})

    laptop = browsers(**TEACHER)
    laptop.get(f"{server.http}/classes#token={server.admin_token}")
    wait(laptop, lambda d: "Class 1B" in text(d, "#class-list-items"), message="the class is listed")
    axe(laptop, "class-list-laptop")
    laptop.find_element(By.LINK_TEXT, "Class 1B").click()
    wait(laptop, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#report-rooms .report-room")) == 2, message="both rooms")

    rooms = laptop.find_elements(By.CSS_SELECTOR, "#report-rooms .report-room")
    assert [r.get_attribute("data-room") for r in rooms] == [second["code"], first["code"]], "newest first"
    newest = rooms[0].find_element(By.CSS_SELECTOR, '[data-question="0"]')
    oldest = rooms[1].find_element(By.CSS_SELECTOR, '[data-question="0"]')
    assert "67% · 2 of 3 right" in plain(newest.text), newest.text
    assert "A key" in plain(newest.find_element(By.CLASS_NAME, "wrong-cell").text)
    assert "33% · 1 of 3 right" in plain(oldest.text), oldest.text
    wrong = plain(oldest.find_element(By.CLASS_NAME, "wrong-cell").text)
    assert "A hat" in wrong and "(2 children)" in wrong, wrong
    # The child who needs help most: Bo, wrong twice.
    help_rows = laptop.find_elements(By.CSS_SELECTOR, "#report-help [data-help]")
    assert help_rows[0].get_attribute("data-help") == members["Bo"]
    assert "2 of 2 not right yet, in 2 rooms" in plain(help_rows[0].text)
    assert members["Ada"] not in [r.get_attribute("data-help") for r in help_rows], "a child with every answer right needs no help"
    # Each child's rooms over time.
    ada = laptop.find_element(By.CSS_SELECTOR, f'[data-child="{members["Ada"]}"]')
    assert len(ada.find_elements(By.CSS_SELECTOR, ".child-rooms li")) == 2
    laptop.execute_script("document.getElementById('report-help-title').scrollIntoView()")
    screenshot(laptop, "teacher-class-page")
    axe(laptop, "class-page-laptop")
    for size, name in ((PHONE, "phone"), (PROJECTOR, "projector")):
        other = browsers(**size)
        other.get(f"{server.http}/classes#token={server.admin_token}&id={class_id}")
        wait(other, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#report-rooms .report-room")) == 2)
        axe(other, f"class-page-{name}")

    # Beside each room, that room's CSV: the older room's button downloads its three rows only.
    laptop.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(tmp_path)})
    button = laptop.find_element(By.CSS_SELECTOR, f'[data-room="{first["code"]}"] [data-action=room-csv]')
    assert plain(button.text) == f"Download the results of room {first['code']} (CSV)"
    button.click()
    downloaded = wait(laptop, lambda d: next(iter(tmp_path.glob("Class 1B Test The Short Story *.csv")), None), message="the room's CSV is downloaded")
    rows = wait(laptop, lambda d: (r := list(csv.DictReader(io.StringIO(downloaded.read_text(encoding="utf-8-sig"))))) and len(r) == 9 and r,
                message="the CSV's rows: three children, three questions")
    assert {r["room"] for r in rows} == {first["code"]} and {r["child"] for r in rows} == {"Ada", "Bo", "Cy"}

    # Bo's data, erased from the page after a confirmation: gone from the report, the page and the CSV.
    laptop.find_element(By.CSS_SELECTOR, f'[data-action=erase][data-member="{members["Bo"]}"]').click()
    dialog = wait(laptop, lambda d: visible(d, "#classes-confirm"), message="the erasure is confirmed first")
    assert "Bo" in plain(dialog.text)
    axe(laptop, "class-page-erase-confirmation")
    laptop.find_element(By.ID, "classes-confirm-no").click()
    assert members["Bo"] in {c["member"] for c in report(server, class_id)["children"]}, "saying no keeps everything"
    laptop.find_element(By.CSS_SELECTOR, f'[data-action=erase][data-member="{members["Bo"]}"]').click()
    wait(laptop, lambda d: visible(d, "#classes-confirm"))
    laptop.find_element(By.ID, "classes-confirm-yes").click()
    wait(laptop, lambda d: not d.find_elements(By.CSS_SELECTOR, f'[data-child="{members["Bo"]}"]'), message="Bo gone from the page")
    assert not laptop.find_elements(By.CSS_SELECTOR, f'#report-help [data-help="{members["Bo"]}"]')
    assert "deleted everywhere" in plain(text(laptop, "#classes-message"))
    after = report(server, class_id)
    assert members["Bo"] not in {c["member"] for c in after["children"]} | {c["member"] for c in after["needsHelp"]}
    status, _, exported = server.request("GET", f"/api/classes/{class_id}/results.csv", server.admin_token)
    assert status == 200 and b"Bo" not in exported and b"Ada" in exported
    newest = laptop.find_element(By.CSS_SELECTOR, f'[data-room="{second["code"]}"] [data-question="0"]')
    assert "100% · 2 of 2 right" in plain(newest.text), newest.text
    no_page_errors(laptop)


def test_a_class_is_made_and_edited_from_the_page_and_two_editors_see_the_conflict(server, browsers):
    laptop = browsers(**TEACHER)
    laptop.get(f"{server.http}/classes#token={server.admin_token}")
    wait(laptop, lambda d: visible(d, "#class-new"))
    laptop.find_element(By.ID, "class-new").click()
    wait(laptop, lambda d: visible(d, "#class-edit"))
    laptop.find_element(By.ID, "class-name").send_keys("Class 2C")
    for name in ("Noor", "N00r"):
        laptop.find_element(By.ID, "class-add-child").click()
        # The new row's name field has the focus: keyboard only.
        laptop.switch_to.active_element.send_keys(name)
    laptop.find_element(By.ID, "class-save").click()
    # A look-alike of Noor is refused beside its field, and nothing is stored.
    problem = wait(laptop, lambda d: (p := d.find_elements(By.CSS_SELECTOR, '#class-children [data-row="1"] .field-problem')) and p[0].is_displayed() and p[0])
    assert "looks the same as" in plain(problem.text) and "Noor" in plain(problem.text), problem.text
    status, _, body = server.request("GET", "/api/classes", server.admin_token)
    assert "Class 2C" not in body.decode()
    axe(laptop, "class-editor-problem")
    field = laptop.find_element(By.CSS_SELECTOR, '#class-children [data-row="1"] input')
    assert field.get_attribute("aria-invalid") == "true"
    field.clear()
    field.send_keys("Sami")
    laptop.find_element(By.ID, "class-save").click()
    wait(laptop, lambda d: visible(d, "#class-view") and text(d, "#class-view-title") == "Class 2C", message="saved and shown")
    classes = json.loads(server.request("GET", "/api/classes", server.admin_token)[2])["classes"]
    class_id = next(c["id"] for c in classes if c["name"] == "Class 2C")

    # Two teachers: the page edits version 1 while someone else saves version 2.
    laptop.find_element(By.ID, "class-edit-button").click()
    wait(laptop, lambda d: visible(d, "#class-edit"))
    current = json.loads(server.request("GET", f"/api/classes/{class_id}", server.admin_token)[2])
    status, _, body = server.request("PUT", f"/api/classes/{class_id}", server.admin_token,
                                     {"version": current["version"], "name": "Class 2C", "children": current["children"] + [{"name": "Lea", "avatar": "bee"}]})
    assert status == 200, body
    laptop.find_element(By.ID, "class-add-child").click()
    laptop.switch_to.active_element.send_keys("Omar")
    laptop.find_element(By.ID, "class-save").click()
    wait(laptop, lambda d: visible(d, "#class-conflict"), message="the conflict screen")
    assert "Lea" in plain(text(laptop, "#class-conflict-theirs")) and "Omar" in plain(text(laptop, "#class-conflict-yours"))
    axe(laptop, "class-editor-conflict")
    laptop.find_element(By.ID, "class-conflict-keep").click()
    wait(laptop, lambda d: visible(d, "#class-view"), message="kept and saved")
    saved = json.loads(server.request("GET", f"/api/classes/{class_id}", server.admin_token)[2])
    assert [c["name"] for c in saved["children"]] == ["Noor", "Sami", "Omar"]
    # The refusals the page showed (400 for the look-alike, 409 for the conflict) are the only failures.
    refused = [e for e in laptop.get_log("browser") if e["level"] == "SEVERE" and "favicon" not in e["message"]]
    assert all("/api/classes" in e["message"] and ("400" in e["message"] or "409" in e["message"]) for e in refused), refused


def test_a_code_typed_by_hand_brings_a_class_rooms_names_and_a_room_without_a_class_keeps_typing(server, browsers):
    class_id, _ = make_class(server)
    room = class_room(server, class_id)
    phone = browsers(**PHONE)
    # The code typed by hand (no link): the class's names come up as the sixth digit is typed, with no
    # nickname field (nor any other) left to type in.
    phone.get(f"{server.http}/")
    wait(phone, lambda d: visible(d, "#room-code") and visible(d, "#nickname"))
    phone.find_element(By.ID, "room-code").send_keys(room["code"])
    picker_shows(phone, ["Ada", "Bo", "Cy"])
    assert not visible(phone, "#nickname")
    assert typing_fields(phone) == []
    assert phone.switch_to.active_element.get_attribute("data-member") is not None, "the first free name has the focus"
    axe(phone, "class-picker-typed-code-phone")
    pick_buttons(phone)["Ada"].click()
    wait(phone, lambda d: visible(d, "#lobby"), message="Ada in the lobby")

    # A code the browser filled in without an input event (a restored form), then a typed name: the
    # server refuses it kindly and the class's names come up.
    late = browsers(**PHONE)
    late.get(f"{server.http}/")
    wait(late, lambda d: visible(d, "#room-code"))
    late.execute_script("document.getElementById('room-code').value = arguments[0]", room["code"])
    late.find_element(By.ID, "nickname").send_keys("Bo")
    late.find_element(By.ID, "join-button").click()
    picker_shows(late, ["Ada", "Bo", "Cy"])
    assert "This room is for Class 1B: tap your own name." in plain(text(late, "#picker-error"))
    assert typing_fields(late) == []

    # A child who typed the wrong room's code (a class room) asks for another code, and types the right
    # one: a room without a class, so the nickname field, focused once the room answered.
    plain_room = server.create_room()
    typed = browsers(**PHONE)
    typed.get(f"{server.http}/")
    wait(typed, lambda d: visible(d, "#room-code"))
    typed.find_element(By.ID, "room-code").send_keys(room["code"])
    picker_shows(typed, ["Ada", "Bo", "Cy"])
    typed.find_element(By.ID, "picker-other-code").click()
    wait(typed, lambda d: visible(d, "#room-code") and d.switch_to.active_element.get_attribute("id") == "room-code",
         message="the code field again, focused")
    assert not visible(typed, "#picker")
    typed.switch_to.active_element.send_keys(plain_room["code"])
    wait(typed, lambda d: visible(d, "#nickname") and d.switch_to.active_element.get_attribute("id") == "nickname",
         message="the nickname field, focused")
    assert not visible(typed, "#picker")
    assert typed.find_element(By.ID, "room-code").get_attribute("value") == plain_room["code"]
    typed.switch_to.active_element.send_keys("Dee")
    typed.find_element(By.ID, "join-button").click()
    wait(typed, lambda d: visible(d, "#lobby"), message="Dee in the lobby")

    # The same room from its link: the nickname field as ever.
    other = browsers(**PHONE)
    other.get(f"{server.http}/?room={plain_room['code']}")
    join_screen(other)
    wait(other, lambda d: d.switch_to.active_element.get_attribute("id") == "nickname",
         message="the nickname field, focused")
    assert not visible(other, "#picker")
    for driver in (phone, late, typed, other):
        no_page_errors(driver)


COUNT_SOCKETS = """
window.__sockets = [];
const Native = window.WebSocket;
window.WebSocket = class extends Native {
  constructor(...args) { super(...args); window.__sockets.push(this); this.addEventListener("message", (e) => { this.__types = (this.__types || []).concat(JSON.parse(e.data).type); }); }
};
"""


def test_a_child_joining_from_a_link_opens_one_connection_with_one_hello(server, browsers):
    # A room without a class: the page asks the names, then sends the typed join on that same connection.
    # (Two connections per child would be two hellos against the per-address burst, which a class of 30
    # behind one school address can meet.)
    plain_room = server.create_room()
    phone = browsers(**PHONE)
    phone.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": COUNT_SOCKETS})
    phone.get(f"{server.http}/?room={plain_room['code']}")
    field = join_screen(phone)
    field.send_keys("Dee")
    phone.find_element(By.ID, "join-button").click()
    wait(phone, lambda d: visible(d, "#lobby"), message="Dee in the lobby")
    assert phone.execute_script("return window.__sockets.length") == 1
    assert phone.execute_script("return window.__sockets[0].readyState") == 1, "the one connection is the child's"
    assert phone.execute_script("return window.__sockets[0].__types.filter((t) => t !== 'pong')")[:2] == ["names", "welcome"]

    # A refused join (the name is taken) and the next try: a new connection, as after any refusal.
    second = browsers(**PHONE)
    second.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": COUNT_SOCKETS})
    second.get(f"{server.http}/?room={plain_room['code']}")
    join_screen(second).send_keys("Dee")
    second.find_element(By.ID, "join-button").click()
    wait(second, lambda d: visible(d, "#join-error"), message="the name is taken")
    field = second.find_element(By.ID, "nickname")
    field.clear()
    field.send_keys("Eve")
    second.find_element(By.ID, "join-button").click()
    wait(second, lambda d: visible(d, "#lobby"), message="Eve in the lobby")
    assert second.execute_script("return window.__sockets.length") == 2
    for driver in (phone, second):
        no_page_errors(driver)
