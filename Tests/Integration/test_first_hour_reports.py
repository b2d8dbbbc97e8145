"""A teacher's first hour, the reports (issue #48; docs/protocol.md "Results" and "Classes"), in real
headless Chromium against the real server over real sockets: a class of four plays a room, one child
never answers. The results page, the class page's report, the report API and both CSVs say "2 of 4 right ·
1 did not answer" and name the silent child among those who need help; the results table uses the width
of a 1366 × 768 laptop and scrolls on its own on a phone; the CSVs put names and questions first and ids
last, start with a byte order mark and are named after the story or class and the day. The class editor:
Enter goes to the next child and never saves; the pictures are picked by keyboard from the pictures
themselves; "1 room played"; speed points off by default in a class and its rooms. axe-core on the class
page and the results page at phone and laptop sizes."""
import csv
import datetime
import io
import json
import os
import re
import signal
import subprocess
import urllib.parse
import urllib.request

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from browser_support import PHONE, TEACHER, axe, no_page_errors, plain, screenshot, text, visible, wait
from conftest import BIN, ROOT, SHORT_STORY
from test_browser import browsers  # noqa: F401 (a fixture)
from test_classes_browser import answer, expect, member_child

STORY = json.loads(SHORT_STORY.read_text())
# "What did Pip find?": "A gear" (0) is right.
CHILDREN = [{"name": "Ada", "avatar": "owl"}, {"name": "Bo", "avatar": "fox"}, {"name": "Cy", "avatar": "bee"}, {"name": "Di", "avatar": "emoji:🦄"}]
FILE_TITLE = "Test The Short Story"  # the title without the colon a file name cannot have


def api(server, method, path, body=None, token=None):
    status, headers, raw = server.request(method, path, token or server.admin_token, body)
    parsed = json.loads(raw) if raw and headers.get("content-type", "").startswith("application/json") else raw
    return status, headers, parsed


def make_class(server, name="Class 1B", children=CHILDREN, **extra):
    status, _, body = api(server, "POST", "/api/classes", {"name": name, "children": children, **extra})
    assert status == 201, body
    status, _, read = api(server, "GET", f"/api/classes/{body['id']}")
    assert status == 200, read
    return read


def start_room(server, class_id, settings=None):
    body = {"story": STORY, "classId": class_id}
    if settings is not None:
        body["settings"] = settings
    status, _, room = api(server, "POST", "/api/rooms", body)
    assert status == 201, room
    return room


def room_settings(server, room):
    status, _, report = api(server, "GET", f"/api/rooms/{room['code']}", token=room["teacherToken"])
    assert status == 200, report
    return report["settings"]


def play_with_a_silent_child(server, schoolclass):
    """Four children pick their names; on question 1 Ada and Bo are right and Cy chooses "A key", on question
    2 Ada and Cy are right and Bo chooses "Red"; Di never answers. The teacher reveals each and ends the
    room before question 3."""
    room = start_room(server, schoolclass["id"])
    ids = {child["name"]: child["id"] for child in schoolclass["children"]}
    phones = {name: member_child(server, room["code"], ids[name]) for name in ("Ada", "Bo", "Cy", "Di")}
    assert server.command(room, "start")[0] == 200
    assert server.command(room, "skip")[0] == 200
    for index, choices in enumerate(({"Ada": 0, "Bo": 0, "Cy": 2}, {"Ada": 1, "Bo": 0, "Cy": 1})):
        for name, option in choices.items():
            answer(phones[name], index, option)
        assert server.command(room, "reveal")[0] == 200
        for ws in phones.values():
            expect(ws, "reveal", where=lambda m, i=index: m["question"] == i)
        if index == 0:
            assert server.command(room, "next")[0] == 200
    assert server.command(room, "end")[0] == 200
    for ws in phones.values():
        expect(ws, "finished")
        ws.close()
    return room, ids


def csv_rows(raw):
    assert raw[:3] == b"\xef\xbb\xbf", "a byte order mark: a spreadsheet reads the accents as UTF-8"
    return list(csv.reader(io.StringIO(raw[3:].decode("utf-8"))))


def disposition_name(value):
    encoded = value.split("filename*=UTF-8''", 1)[1]
    return urllib.parse.unquote(encoded)


def test_the_report_api_counts_the_silent_child_among_the_four_there(server):
    schoolclass = make_class(server)
    room, ids = play_with_a_silent_child(server, schoolclass)

    # The class report: the share over the four children there, and Di among those who need help.
    status, _, report = api(server, "GET", f"/api/classes/{schoolclass['id']}/report")
    assert status == 200
    line = report["rooms"][0]["questions"][0]
    assert line["shareRight"] == 0.5, "2 right of the 4 there, not of the 3 who answered"
    helped = {h["name"]: h for h in report["needsHelp"]}
    assert set(helped) == {"Bo", "Cy", "Di"}, report["needsHelp"]
    assert report["needsHelp"][0]["name"] == "Di", "the child who never answered needs help most"
    assert (line["present"], line["right"], line["unanswered"]) == (4, 2, 1)
    assert (helped["Di"]["wrong"], helped["Di"]["unanswered"], helped["Di"]["notYetRight"]) == (0, 2, 2)

    # The room's results: the same counts, per question and per child.
    status, _, results = api(server, "GET", f"/api/rooms/{room['code']}/results", token=room["teacherToken"])
    assert status == 200
    first = results["questions"][0]
    assert (first["present"], first["answered"], first["right"], first["unanswered"], first["shareRight"]) == (4, 3, 2, 1, 0.5)
    assert first["mostChosenWrong"] == {"option": 2, "text": "A key", "count": 1}
    second = results["questions"][1]
    assert (second["present"], second["right"], second["unanswered"]) == (4, 2, 1)
    assert second["mostChosenWrong"] == {"option": 0, "text": "Red", "count": 1}
    assert results["questions"][2]["present"] == 0, "a question never asked has nobody there for it"
    di = next(p for p in results["players"] if p["nickname"] == "Di")
    assert di["answers"][0]["present"] and di["answers"][0]["unanswered"]


def test_both_csvs_put_names_and_questions_first_and_are_named_after_the_story_or_class_and_the_day(server):
    schoolclass = make_class(server)
    room, ids = play_with_a_silent_child(server, schoolclass)
    today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")

    # The room's CSV: named after the story and the day; names and questions first, ids last.
    status, headers, raw = server.request("GET", f"/api/rooms/{room['code']}/results?format=csv", room["teacherToken"])
    assert status == 200 and headers["content-type"].startswith("text/csv")
    assert headers["content-disposition"] == (f'attachment; filename="{FILE_TITLE} {today}.csv"; '
                                              f"filename*=UTF-8''{urllib.parse.quote(f'{FILE_TITLE} {today}.csv')}")
    rows = csv_rows(raw)
    assert rows[0] == ["child", "question", "question_text", "answer", "result", "points", "total_points", "rank", "time_ms", "member", "player_id"]
    question_one = {row[0]: row for row in rows[1:] if row[1] == "1"}
    assert set(question_one) == {"Ada", "Bo", "Cy", "Di"}
    assert [question_one[n][4] for n in ("Ada", "Bo", "Cy", "Di")] == ["right", "right", "not right", "did not answer"]
    assert question_one["Di"][-2] == ids["Di"] and question_one["Di"][-1].startswith("p")

    # The class CSV: the same, with the story and the day; named after the class and the day.
    status, headers, raw = server.request("GET", f"/api/classes/{schoolclass['id']}/results.csv", server.admin_token)
    assert status == 200
    assert f'filename="Class 1B {today}.csv"' in headers["content-disposition"], headers["content-disposition"]
    assert disposition_name(headers["content-disposition"]) == f"Class 1B {today}.csv"
    rows = csv_rows(raw)
    assert rows[0] == ["child", "story_title", "room_started", "question", "question_text", "answer", "result", "points", "room_points", "member", "room"]
    question_one = {row[0]: row[6] for row in rows[1:] if row[3] == "1"}
    assert question_one == {"Ada": "right", "Bo": "right", "Cy": "not right", "Di": "did not answer"}
    status, headers, _ = server.request("GET", f"/api/classes/{schoolclass['id']}/results.csv?room={room['code']}", server.admin_token)
    assert disposition_name(headers["content-disposition"]) == f"Class 1B {FILE_TITLE} {today}.csv"
    # A title with accents: the plain name for old clients, the real one in filename*.
    accented = dict(STORY, title="L’élève et le dragon")
    status, _, other = api(server, "POST", "/api/rooms", {"story": accented})
    assert status == 201, other
    status, headers, _ = server.request("GET", f"/api/rooms/{other['code']}/results?format=csv", other["teacherToken"])
    assert f'filename="L_eleve et le dragon {today}.csv"' in headers["content-disposition"], headers["content-disposition"]
    assert disposition_name(headers["content-disposition"]) == f"L’élève et le dragon {today}.csv"


def test_the_results_page_uses_the_laptops_width_and_says_2_of_4_right_and_who_did_not_answer(server, browsers):
    schoolclass = make_class(server)
    room, _ = play_with_a_silent_child(server, schoolclass)
    laptop = browsers(**TEACHER)
    results_link = f"{server.http}/results.html#room={room['code']}&token={room['teacherToken']}"
    laptop.get(results_link)
    wait(laptop, lambda d: visible(d, "#results-box"), message="the results table")
    table, window = laptop.execute_script("return [document.getElementById('results-table').getBoundingClientRect().width, window.innerWidth]")
    assert table >= 0.9 * window, f"the table is {table} px wide in a {window} px window"
    heading = laptop.find_element(By.CSS_SELECTOR, '#results-table th[data-question="0"]')
    assert "2 of 4 right · 1 did not answer" in plain(heading.text), heading.text
    assert "Most chosen wrong answer: A key (1 child)" in plain(heading.text), heading.text
    di_row = next(r for r in laptop.find_elements(By.CSS_SELECTOR, "#results-table tbody tr") if plain(r.find_element(By.TAG_NAME, "th").text) == "Di")
    assert plain(di_row.text).count("Did not answer") == 2, di_row.text
    screenshot(laptop, "first-hour-results")
    axe(laptop, "first-hour-results-laptop")
    no_page_errors(laptop)

    # At phone width the table scrolls on its own (a named region), never the page.
    phone = browsers(**PHONE)
    phone.get(results_link)
    wait(phone, lambda d: visible(d, "#results-box"))
    page, window = phone.execute_script("return [document.scrollingElement.scrollWidth, window.innerWidth]")
    assert page <= window, f"the page scrolls sideways on a phone ({page} > {window})"
    axe(phone, "first-hour-results-phone")
    no_page_errors(phone)


def test_the_class_page_names_the_silent_child_under_who_needs_help_and_says_1_room_played(server, browsers):
    schoolclass = make_class(server)
    room, ids = play_with_a_silent_child(server, schoolclass)
    laptop = browsers(**TEACHER)
    laptop.get(f"{server.http}/classes#token={server.admin_token}&id={schoolclass['id']}")
    wait(laptop, lambda d: d.find_elements(By.CSS_SELECTOR, f'[data-room="{room["code"]}"] [data-question="0"]'), message="the report")
    di_help = laptop.find_elements(By.CSS_SELECTOR, f'#report-help [data-help="{ids["Di"]}"]')
    assert di_help, "the child who never answered is under who needs help"
    assert "2 of 2 not right yet, in 1 room · 2 questions not answered" in plain(di_help[0].text), di_help[0].text
    row = laptop.find_element(By.CSS_SELECTOR, f'[data-room="{room["code"]}"] [data-question="0"]')
    assert "50% · 2 of 4 right · 1 did not answer" in plain(row.text), row.text
    di_rooms = plain(laptop.find_element(By.CSS_SELECTOR, f'[data-child="{ids["Di"]}"] .child-rooms').text)
    # "of" the two questions Di was there for, as for the children who answered them.
    assert "0 points, 0 of 2 right · 2 questions not answered" in di_rooms, di_rooms
    ada_rooms = plain(laptop.find_element(By.CSS_SELECTOR, f'[data-child="{ids["Ada"]}"] .child-rooms').text)
    assert "2 of 2 right" in ada_rooms and "not answered" not in ada_rooms, ada_rooms
    assert "1 room played" in text(laptop, "#class-view-facts"), text(laptop, "#class-view-facts")
    # Speed points off: faster answers earn no more, but a streak bonus still does: no "the same points".
    assert "Faster answers do not earn more points" in text(laptop, "#class-view-facts")
    assert "same points" not in plain(laptop.find_element(By.TAG_NAME, "body").get_attribute("textContent"))
    laptop.execute_script("document.getElementById('report-help-title').scrollIntoView()")
    screenshot(laptop, "first-hour-class-report")
    axe(laptop, "first-hour-class-report-laptop")
    no_page_errors(laptop)
    phone = browsers(**PHONE)
    phone.get(f"{server.http}/classes#token={server.admin_token}&id={schoolclass['id']}")
    wait(phone, lambda d: d.find_elements(By.CSS_SELECTOR, f'#report-help [data-help="{ids["Di"]}"]'))
    page, window = phone.execute_script("return [document.scrollingElement.scrollWidth, window.innerWidth]")
    assert page <= window, f"the class page scrolls sideways on a phone ({page} > {window})"
    axe(phone, "first-hour-class-report-phone")


def test_speed_points_are_off_in_a_class_and_its_rooms_unless_the_teacher_turns_them_on(server):
    plain_class = make_class(server, "2A", [{"name": "Ada"}])
    assert room_settings(server, start_room(server, plain_class["id"]))["speedPoints"] is False, "a class room: no speed points"
    assert plain_class["speedPoints"] is False, "a new class: faster answers earn no more points"
    asked = start_room(server, plain_class["id"], settings={"speedPoints": True})
    assert room_settings(server, asked)["speedPoints"] is True, "a room asked for speed points has them"

    racing = make_class(server, "2B", [{"name": "Bo"}], speedPoints=True)
    assert racing["speedPoints"] is True
    assert room_settings(server, start_room(server, racing["id"]))["speedPoints"] is True
    # A change that does not mention it keeps it; one that does changes it.
    status, _, body = api(server, "PUT", f"/api/classes/{racing['id']}", {"version": racing["version"], "name": "2B", "children": racing["children"]})
    assert status == 200, body
    status, _, kept = api(server, "GET", f"/api/classes/{racing['id']}")
    assert kept["speedPoints"] is True
    status, _, body = api(server, "PUT", f"/api/classes/{racing['id']}", {"version": kept["version"], "name": "2B", "children": kept["children"], "speedPoints": False})
    assert status == 200, body
    assert room_settings(server, start_room(server, racing["id"]))["speedPoints"] is False
    status, _, body = api(server, "POST", "/api/classes", {"name": "2C", "children": [], "speedPoints": "yes"})
    assert status == 400 and body["error"]["code"] == "invalid_message", body


def test_start_with_a_class_takes_the_classs_speed_points(make_server, tmp_path):
    data = tmp_path / "data"
    server = make_server(data=data)
    make_class(server, "5E", [{"name": "Ada"}], speedPoints=True)
    make_class(server, "5F", [{"name": "Bo"}])
    server.stop()
    for name, expected in (("5e", True), ("5f", False)):
        process = subprocess.Popen([BIN, "start", str(SHORT_STORY), "--class", name, "--port", "0", "--data", str(data), "--no-keys"],
                                   env=dict(os.environ, STORYCIRCLE_HOME=str(tmp_path / "home")), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            lines = []
            for line in process.stdout:
                lines.append(line)
                if line.startswith("● "):
                    break
            banner = "".join(lines)
            port, code = re.search(r"Join link: +http://[^:/]+:(\d+)/\?room=(\d{6})", banner).groups()
            # The teacher's token, as the sign-in page gets it: the one-time link is all the screen shows.
            sign_in = re.search(r"/sign-in#code=([\w-]{22})", banner).group(1)
            exchange = urllib.request.Request(f"http://127.0.0.1:{port}/api/sign-in", data=json.dumps({"code": sign_in}).encode(),
                                              method="POST", headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(exchange, timeout=15) as response:
                token = json.loads(response.read())["teacherToken"]
            request = urllib.request.Request(f"http://127.0.0.1:{port}/api/rooms/{code}", headers={"Authorization": f"Bearer {token}"})
            with urllib.request.urlopen(request, timeout=15) as response:
                assert json.loads(response.read())["settings"]["speedPoints"] is expected, banner
        finally:
            process.send_signal(signal.SIGINT)
            process.wait(timeout=20)


def new_class_editor(browsers, server, size=TEACHER):
    driver = browsers(**size)
    driver.get(f"{server.http}/classes#token={server.admin_token}")
    wait(driver, lambda d: visible(d, "#class-new"))
    driver.find_element(By.ID, "class-new").click()
    wait(driver, lambda d: visible(d, "#class-edit"))
    return driver


def name_fields(driver):
    return driver.find_elements(By.CSS_SELECTOR, "#class-children li input[type=text]")


def test_enter_in_the_class_editor_goes_on_to_the_next_child_and_never_saves(server, browsers):
    laptop = new_class_editor(browsers, server)
    # Enter in the class's name and in each child's name goes on to the next child; nothing is saved.
    laptop.find_element(By.ID, "class-name").send_keys("Class 3A", Keys.ENTER)
    wait(laptop, lambda d: len(name_fields(d)) == 1, timeout=5, message="Enter in the class name starts the list")
    for name in ("Noor", "Sami"):
        laptop.switch_to.active_element.send_keys(name, Keys.ENTER)
    wait(laptop, lambda d: len(name_fields(d)) == 3, timeout=5, message="Enter adds a row")
    assert laptop.switch_to.active_element == name_fields(laptop)[2], "the new row's name has the focus"
    assert visible(laptop, "#class-edit")
    assert api(server, "GET", "/api/classes")[2]["classes"] == [], "Enter never saves the class"
    # Enter in the middle of the list moves to the next name rather than adding one; on an empty last
    # row it stays.
    name_fields(laptop)[0].send_keys(Keys.ENTER)
    assert laptop.switch_to.active_element == name_fields(laptop)[1]
    name_fields(laptop)[2].send_keys(Keys.ENTER)
    assert len(name_fields(laptop)) == 3
    # A row of spaces is as blank as an empty one.
    laptop.find_element(By.ID, "class-add-child").click()
    laptop.switch_to.active_element.send_keys("   ")
    # Enter on the speed points checkbox does not save either; the Save button does.
    box = laptop.find_element(By.ID, "class-speed-points")
    assert not box.is_selected(), "speed points off for a new class"
    box.send_keys(Keys.ENTER)
    assert api(server, "GET", "/api/classes")[2]["classes"] == []
    # Save with the two blank rows Enter and "Add a child" left: they are left out, and the class saves.
    laptop.find_element(By.ID, "class-save").click()
    wait(laptop, lambda d: visible(d, "#class-view") and text(d, "#class-view-title") == "Class 3A", message="saved and shown")
    classes = api(server, "GET", "/api/classes")[2]["classes"]
    assert [(c["name"], c["children"]) for c in classes] == [("Class 3A", 2)]
    saved = api(server, "GET", f"/api/classes/{classes[0]['id']}")[2]["children"]
    assert [c["name"] for c in saved] == ["Noor", "Sami"]
    no_page_errors(laptop)


def test_a_childs_picture_is_picked_from_the_pictures_by_keyboard(server, browsers):
    laptop = new_class_editor(browsers, server)
    laptop.find_element(By.ID, "class-name").send_keys("Class 3B")
    laptop.find_element(By.ID, "class-add-child").click()
    laptop.switch_to.active_element.send_keys("Noor")
    assert not laptop.find_elements(By.CSS_SELECTOR, "#class-children select"), "no drop-down of words"
    # Tab to the picker, open it, an arrow to the next picture, Enter to close: keyboard only.
    laptop.switch_to.active_element.send_keys(Keys.TAB)
    row = laptop.find_element(By.CSS_SELECTOR, '#class-children [data-row="0"]')
    summary = row.find_element(By.CSS_SELECTOR, ".picture-picker summary")
    assert laptop.switch_to.active_element == summary
    before = plain(summary.text)
    assert before == "Owl" and summary.accessible_name == "Picture Owl", (before, summary.accessible_name)
    summary.send_keys(Keys.ENTER)
    picker = row.find_element(By.CSS_SELECTOR, ".picture-picker")
    wait(laptop, lambda d: picker.get_attribute("open") is not None, timeout=5, message="the pictures open")
    choices = row.find_elements(By.CSS_SELECTOR, ".picture-choice")
    assert len(choices) >= 16 + 8, "the sixteen animals and emoji"
    assert sum(1 for c in choices if c.find_elements(By.CSS_SELECTOR, "img[src^='/avatars/']")) == 16, "the animals are shown as their pictures"
    names = [c.find_element(By.TAG_NAME, "input").accessible_name for c in choices]
    assert all(names) and len(set(names)) == len(names) and names[:2] == ["Owl", "Fox"], names
    focused = laptop.switch_to.active_element
    assert focused.get_attribute("type") == "radio" and focused.is_selected(), "the chosen picture has the focus"
    focused.send_keys(Keys.ARROW_RIGHT)
    chosen = laptop.switch_to.active_element
    assert chosen.is_selected() and chosen.get_attribute("value") == "fox"
    screenshot(laptop, "first-hour-class-editor-pictures")
    axe(laptop, "first-hour-class-editor-pictures-laptop")
    chosen.send_keys(Keys.ENTER)
    wait(laptop, lambda d: picker.get_attribute("open") is None, timeout=5, message="Enter closes the pictures")
    assert laptop.switch_to.active_element == summary and plain(summary.text) == "Fox"
    assert api(server, "GET", "/api/classes")[2]["classes"] == [], "Enter on a picture does not save the class"
    # Escape closes it too, leaving the choice as it was.
    summary.send_keys(Keys.ENTER)
    wait(laptop, lambda d: picker.get_attribute("open") is not None, timeout=5)
    laptop.switch_to.active_element.send_keys(Keys.ESCAPE)
    wait(laptop, lambda d: picker.get_attribute("open") is None, timeout=5, message="Escape closes the pictures")
    laptop.find_element(By.ID, "class-save").click()
    wait(laptop, lambda d: visible(d, "#class-view"), message="saved")
    class_id = api(server, "GET", "/api/classes")[2]["classes"][0]["id"]
    assert [(c["name"], c["avatar"]) for c in api(server, "GET", f"/api/classes/{class_id}")[2]["children"]] == [("Noor", "fox")]
    phone = new_class_editor(browsers, server, PHONE)
    phone.find_element(By.ID, "class-add-child").click()
    phone.find_element(By.CSS_SELECTOR, ".picture-picker summary").click()
    page, window = phone.execute_script("return [document.scrollingElement.scrollWidth, window.innerWidth]")
    assert page <= window, f"the open pictures make the page scroll sideways ({page} > {window})"
    axe(phone, "first-hour-class-editor-pictures-phone")
    no_page_errors(laptop)


def test_a_class_saved_with_speed_points_says_so_and_its_rooms_teacher_page_opens_in_a_new_tab(server, browsers):
    laptop = new_class_editor(browsers, server)
    laptop.find_element(By.ID, "class-name").send_keys("Class 3C")
    laptop.find_element(By.ID, "class-add-child").click()
    laptop.switch_to.active_element.send_keys("Noor")
    laptop.find_element(By.ID, "class-speed-points").click()
    laptop.find_element(By.ID, "class-save").click()
    wait(laptop, lambda d: visible(d, "#class-view") and text(d, "#class-view-title") == "Class 3C", message="saved and shown")
    class_id = api(server, "GET", "/api/classes")[2]["classes"][0]["id"]
    assert api(server, "GET", f"/api/classes/{class_id}")[2]["speedPoints"] is True
    facts = text(laptop, "#class-view-facts")
    assert "1 child · 0 rooms played · Faster answers earn more points" == facts, facts
    assert text(laptop, "#report-help") == "No room has been played yet.", "no answers yet, so none was right"

    # A room started here opens its teacher page in a tab of its own: the class page stays.
    status, _, _ = api(server, "POST", "/api/stories", {"story": STORY})
    assert status in (200, 201)
    laptop.get(f"{server.http}/classes#token={server.admin_token}&id={class_id}")
    wait(laptop, lambda d: d.find_elements(By.CSS_SELECTOR, "#class-story option") and d.find_element(By.ID, "class-start").is_enabled(),
         message="a story to start")
    laptop.find_element(By.ID, "class-start").click()
    link = wait(laptop, lambda d: visible(d, "#class-room-started") and d.find_element(By.ID, "class-room-teacher"), message="the room started")
    assert link.get_attribute("target") == "_blank"
    tabs = len(laptop.window_handles)
    class_page = laptop.current_window_handle
    link.click()
    wait(laptop, lambda d: len(d.window_handles) == tabs + 1, message="the teacher page in a new tab")
    assert "/classes" in laptop.current_url and visible(laptop, "#class-view"), "the class page is still there"
    no_page_errors(laptop)
    # The teacher's tab leads back to this class, which opens there without the printed link.
    laptop.switch_to.window(next(handle for handle in laptop.window_handles if handle != class_page))
    back = wait(laptop, lambda d: visible(d, "#class-link"), message="the way back to the class")
    assert visible(laptop, "#library-link")
    back.click()
    wait(laptop, lambda d: visible(d, "#class-view") and text(d, "#class-view-title") == "Class 3C", message="the class, in the teacher's tab")
    no_page_errors(laptop)


def test_an_emoji_picture_shows_once_and_is_named_in_the_class_editor(server, browsers):
    schoolclass = make_class(server)
    laptop = browsers(**TEACHER)
    laptop.get(f"{server.http}/classes#token={server.admin_token}&id={schoolclass['id']}&edit=1")
    wait(laptop, lambda d: visible(d, "#class-edit") and len(name_fields(d)) == 4, message="the editor")
    summary = laptop.find_element(By.CSS_SELECTOR, '#class-children [data-row="3"] .picture-picker summary')
    shown = laptop.execute_script("""
        return [...arguments[0].querySelectorAll('*')].filter((node) => node.children.length === 0 && node.textContent.includes('🦄'))
          .filter((node) => { const box = node.getBoundingClientRect(); return box.width > 2 && box.height > 2; }).length""", summary)
    assert shown == 1, f"the emoji shows {shown} times"
    assert summary.accessible_name == "Picture 🦄", summary.accessible_name
    owl = laptop.find_element(By.CSS_SELECTOR, '#class-children [data-row="0"] .picture-picker summary')
    assert plain(owl.text) == "Owl" and owl.accessible_name == "Picture Owl"
    laptop.execute_script("arguments[0].scrollIntoView()", summary)
    screenshot(laptop, "first-hour-class-editor-emoji")
    axe(laptop, "first-hour-class-editor-emoji-laptop")
    no_page_errors(laptop)


def test_the_class_pages_room_links_stay_on_its_own_origin(make_server, browsers):
    # The server prints another address than the one this browser opened: another origin, whose tab
    # would not have the school's key.
    server = make_server(config={"publicURL": "http://192.0.2.2:9"})
    schoolclass = make_class(server, "Class 4D", [{"name": "Ada"}])
    status, _, _ = api(server, "POST", "/api/stories", {"story": STORY})
    assert status in (200, 201)
    laptop = browsers(**TEACHER)
    laptop.get(f"{server.http}/classes#token={server.admin_token}&id={schoolclass['id']}")
    wait(laptop, lambda d: d.find_elements(By.CSS_SELECTOR, "#class-story option") and d.find_element(By.ID, "class-start").is_enabled(),
         message="a story to start")
    laptop.find_element(By.ID, "class-start").click()
    teacher = wait(laptop, lambda d: visible(d, "#class-room-started") and d.find_element(By.ID, "class-room-teacher"), message="the room started")
    code = api(server, "GET", "/api/rooms")[2]["rooms"][0]["code"]
    assert teacher.get_attribute("href").startswith(f"{server.http}/teacher#room={code}&token="), teacher.get_attribute("href")
    projector = laptop.find_element(By.ID, "class-room-projector").get_attribute("href")
    assert projector.startswith(f"{server.http}/dashboard#room={code}&token="), projector
    class_page = laptop.current_window_handle
    teacher.click()
    wait(laptop, lambda d: len(d.window_handles) == 2, message="the teacher page in a new tab")
    laptop.switch_to.window(next(handle for handle in laptop.window_handles if handle != class_page))
    wait(laptop, lambda d: visible(d, "#class-link"), message="the teacher's tab has the way back to the class")
    assert laptop.current_url.startswith(f"{server.http}/teacher"), laptop.current_url
    no_page_errors(laptop)


def test_a_right_answer_given_before_the_teacher_ends_the_room_keeps_its_points(server):
    """The teacher ends the room while the first question is still open: Ada had answered it right. The
    report must not read "0 points, 1 of 1 right"."""
    schoolclass = make_class(server, name="Class 1C")
    room = start_room(server, schoolclass["id"])
    ids = {child["name"]: child["id"] for child in schoolclass["children"]}
    phones = {name: member_child(server, room["code"], ids[name]) for name in ("Ada", "Bo")}
    assert server.command(room, "start")[0] == 200
    assert server.command(room, "skip")[0] == 200
    answer(phones["Ada"], 0, 0)
    assert server.command(room, "end")[0] == 200
    ada_finished = expect(phones["Ada"], "finished")
    assert ada_finished["you"]["score"] > 0 and ada_finished["you"]["results"] == ["correct"]
    for ws in phones.values():
        ws.close()

    status, _, report = api(server, "GET", f"/api/classes/{schoolclass['id']}/report")
    assert status == 200, report
    played = {child["name"]: child["rooms"][0] for child in report["children"] if child["rooms"]}
    assert played["Ada"]["right"] == 1 and played["Ada"]["points"] > 0, played["Ada"]
    assert played["Bo"]["points"] == 0 and played["Bo"]["unanswered"] == 1, played["Bo"]
    status, _, results = api(server, "GET", f"/api/rooms/{room['code']}/results", token=room["teacherToken"])
    ada = next(p for p in results["players"] if p["nickname"] == "Ada")
    assert ada["score"] == ada["answers"][0]["points"] > 0 and ada["correct"] == 1
