"""The whole way of a school year's first day, click by click, in real headless Chromium against the real
server, with a screenshot per step (build/screenshots/walk-*.png) and axe-core on every new screen at phone,
laptop and projector sizes: a district administrator signs in with a password, adds a school and a teacher
and hands over the setup link; the teacher sets a password, adds a passkey, signs out and signs in with the
passkey (the DevTools protocol's virtual authenticator), imports a story, makes a class of four, starts a
room; four children join by tapping their names (two phones, two scripted devices) and three answer; the
class page lists every child, the one who never answered too. Then a parent's request: the teacher exports
one child's data (JSON and CSV) and erases the child, and the report no longer names them.

The relying party of the passkey is the server's public address, http://localhost:PORT (a secure context
for Chromium, as https is): every page is opened there. docs/operations.md, "A first day, click by click",
lists the same steps in words."""
import csv
import io
import json

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from browser_support import PHONE, PROJECTOR, TEACHER, axe, browsers, plain, rect, screenshot, text, visible, wait  # noqa: F401
from conftest import ROOT, SHORT_STORY
from test_browser import choose
from test_classes_browser import answer, expect, member_child, pick_buttons, picker_shows
from test_passkeys_browser import free_port

CATALOG = json.loads((ROOT / "web-static" / "i18n" / "en.json").read_text(encoding="utf-8"))
SIZES = {"phone": PHONE, "laptop": TEACHER, "projector": PROJECTOR}
DISTRICT_PASSWORD = "the district office keeps the keys"
TEACHER_PASSWORD = "a kite over the river at noon"
CHILDREN = ["Ada", "Bo", "Cy", "Dee"]


@pytest.fixture
def site(make_server):
    """A server whose public address is http://localhost:PORT and a district administrator's account with a
    password (made with the data folder's admin token: how `storycircle account add` makes the first one)."""
    port = free_port()
    server = make_server(config={"publicURL": f"http://localhost:{port}", "failedJoinBurst": 200}, args=("--port", str(port)))
    status, _, raw = server.request("POST", "/api/accounts", server.admin_token, {
        "login": "dana@district.example", "displayName": "Dana Diaz", "role": "district_admin", "password": DISTRICT_PASSWORD})
    assert status == 201, raw
    return dict(server=server, origin=f"http://localhost:{port}")


class Walk:
    """Numbered screenshots, and axe on each new screen at the three sizes (the same page in a browser of
    each size, opened by `reopen`)."""

    def __init__(self, browsers):
        self.browsers = browsers
        self.step = 0
        self.others = {}

    def shot(self, driver, name, readme=False):
        """walk-NN-name.png; with `readme`, also walk-name.png, the README's (`make screenshots`)."""
        self.step += 1
        screenshot(driver, f"walk-{self.step:02d}-{name}")
        if readme:
            screenshot(driver, f"walk-{name}")

    def check(self, driver, name, reopen=None):
        """axe on `driver` (its own size), and with `reopen(browser)` on a browser of each other size."""
        axe(driver, f"walk-{name}")
        if reopen is None:
            return
        own = driver.execute_script("return innerWidth")
        for size, dims in SIZES.items():
            if dims["width"] == own:
                continue
            other = self.others.get(size) or self.browsers(**dims)
            self.others[size] = other
            reopen(other)
            axe(other, f"walk-{name}-{size}")
            screenshot(other, f"walk-{self.step:02d}-{name}-{size}")


def ready(driver, what):
    wait(driver, lambda d: d.execute_script(f"return window.storycircle?.{what}?.ready === true"), message=what)


def signed_in_as(driver, name):
    wait(driver, lambda d: visible(d, "#account-who") and name in text(d, "#account-who"), message=f"signed in as {name}")


def copy_cookies(source, target, origin):
    """The same browser profile's session in another window of the same size class (selenium opens each
    browser with a profile of its own; a teacher's second window shares the first one's cookie)."""
    target.get(origin + "/sign-in")
    for cookie in source.get_cookies():
        target.add_cookie({k: cookie[k] for k in ("name", "value", "path", "secure", "httpOnly") if k in cookie})


def test_a_first_day_from_the_district_to_a_parents_request(site, browsers, tmp_path):
    server, origin = site["server"], site["origin"]
    walk = Walk(browsers)

    # 1. The district administrator signs in with a password: the administrators' screen.
    office = browsers(**TEACHER)
    office.get(origin + "/sign-in")
    ready(office, "signIn")
    walk.shot(office, "sign-in", readme=True)
    walk.check(office, "sign-in", lambda b: (b.get(origin + "/sign-in"), ready(b, "signIn")))
    office.find_element(By.ID, "sign-in-login").send_keys("dana@district.example")
    office.find_element(By.ID, "sign-in-password").send_keys(DISTRICT_PASSWORD)
    office.find_element(By.ID, "sign-in-submit").click()
    wait(office, lambda d: d.current_url.rstrip("/").endswith("/admin"), message="the administrators' screen")
    ready(office, "admin")
    signed_in_as(office, "Dana Diaz")
    assert text(office, "#account-who") == "Signed in as Dana Diaz (district administrator)"
    walk.shot(office, "admin")

    # The role list says roles in words, never the server's internal names.
    roles = [plain(o.text) for o in Select(office.find_element(By.ID, "account-role")).options]
    assert roles == [CATALOG["admin.accounts.role_option.teacher"], CATALOG["admin.accounts.role_option.school_admin"],
                     CATALOG["admin.accounts.role_option.district_admin"]], roles
    assert not any("_" in role for role in roles)

    # The library is the teachers' (the administrators' screen links none for the district): opened from a
    # bookmark, it says so, with the way back.
    assert not visible(office, "#admin-library") and not visible(office, "#account-admin")
    office.get(origin + "/stories")
    wait(office, lambda d: visible(d, "#library-admin-link") and text(d, "#library-status").startswith(CATALOG["account.error.district_admin"]),
         message="the library says whose it is")
    assert CATALOG["account.error.not_allowed"] not in text(office, "body")
    assert text(office, "#library-title") == CATALOG["library.heading_district"], "the schools' stories, not the district's own"
    walk.shot(office, "library-district")
    walk.check(office, "library-district")
    office.find_element(By.ID, "library-admin-link").click()
    ready(office, "admin")

    # 2. A school, then a teacher of it: the one-time link to hand over.
    office.find_element(By.ID, "school-name").send_keys("Riverside Primary")
    office.find_element(By.ID, "school-add").click()
    wait(office, lambda d: "Riverside Primary" in [plain(h.text) for h in d.find_elements(By.CSS_SELECTOR, "#school-list h3")], message="the school")
    office.find_element(By.ID, "account-name").send_keys("Ana Lima")
    office.find_element(By.ID, "account-login").send_keys("ana@riverside.example")
    Select(office.find_element(By.ID, "account-role")).select_by_value("teacher")
    Select(office.find_element(By.ID, "account-school")).select_by_visible_text("Riverside Primary")
    office.find_element(By.ID, "account-add").click()
    wait(office, lambda d: visible(d, "#setup-link-box") and d.find_element(By.ID, "setup-link").get_attribute("value"), message="the setup link")
    link = office.find_element(By.ID, "setup-link").get_attribute("value")
    assert link.startswith(origin + "/account-setup#code="), link
    walk.shot(office, "admin-setup-link")
    walk.check(office, "admin-setup-link")
    office.find_element(By.ID, "setup-link-done").click()
    wait(office, lambda d: not visible(d, "#setup-link-box"), message="the link put away")
    office.execute_script("document.getElementById('accounts-title').scrollIntoView()")
    wait(office, lambda d: "Login: ana@riverside.example" in text(d, "#account-list"), message="Ana is listed")
    walk.shot(office, "admin-accounts", readme=True)
    walk.check(office, "admin", lambda b: (copy_cookies(office, b, origin), b.get(origin + "/admin"), ready(b, "admin")))
    assert not visible(office, "#account-admin"), "no way to the screen the administrator is on"
    assert not visible(office, "#admin-library") and not visible(office, "#admin-classes"), "no teachers' pages for the district"

    # 3. The teacher's laptop: a password from the link; the code leaves the address at once.
    laptop = browsers(**TEACHER)
    laptop.get(link)
    ready(laptop, "setup")
    assert "code=" not in laptop.current_url
    walk.shot(laptop, "account-setup")
    laptop.find_element(By.ID, "setup-password").send_keys(TEACHER_PASSWORD)
    laptop.find_element(By.ID, "setup-repeat").send_keys(TEACHER_PASSWORD)
    laptop.find_element(By.ID, "setup-submit").click()
    wait(laptop, lambda d: visible(d, "#setup-done"), message="the password is saved")
    walk.shot(laptop, "account-setup-done")
    walk.check(laptop, "account-setup-done")
    laptop.find_element(By.ID, "setup-sign-in").click()
    ready(laptop, "signIn")
    laptop.find_element(By.ID, "sign-in-login").send_keys("ana@riverside.example")
    laptop.find_element(By.ID, "sign-in-password").send_keys(TEACHER_PASSWORD)
    laptop.find_element(By.ID, "sign-in-submit").click()
    wait(laptop, lambda d: d.current_url.rstrip("/").endswith("/stories"), message="the library")
    signed_in_as(laptop, "Ana Lima")
    assert text(laptop, "#account-who") == "Signed in as Ana Lima (teacher)"

    # 4. A passkey of this laptop (the browser's own fingerprint or PIN prompt: the virtual authenticator).
    laptop.execute_cdp_cmd("WebAuthn.enable", {})
    authenticator = laptop.execute_cdp_cmd("WebAuthn.addVirtualAuthenticator", {"options": {
        "protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
        "isUserVerified": True, "automaticPresenceSimulation": True}})["authenticatorId"]
    add = wait(laptop, lambda d: visible(d, "#account-add-passkey"), message="Add a passkey")
    add.click()
    wait(laptop, lambda d: text(d, "#account-bar-status") == CATALOG["account.passkey.added"], message="the passkey added")
    assert len(laptop.execute_cdp_cmd("WebAuthn.getCredentials", {"authenticatorId": authenticator})["credentials"]) == 1
    walk.shot(laptop, "passkey-added", readme=True)
    walk.check(laptop, "library-teacher", lambda b: (copy_cookies(laptop, b, origin), b.get(origin + "/stories"), signed_in_as(b, "Ana Lima")))

    # 5. Signed out, then in again with the passkey alone.
    laptop.find_element(By.ID, "account-sign-out").click()
    wait(laptop, lambda d: "/sign-in" in d.current_url and visible(d, "#passkey-sign-in"), message="signed out")
    assert CATALOG["account.signed_out"] in text(laptop, "body")
    walk.shot(laptop, "signed-out")
    walk.check(laptop, "signed-out")
    laptop.find_element(By.ID, "passkey-sign-in").click()
    wait(laptop, lambda d: d.current_url.rstrip("/").endswith("/stories"), message="the library, by passkey")
    signed_in_as(laptop, "Ana Lima")

    # 6. A story from a file, then a class of four.
    laptop.find_element(By.ID, "library-import").send_keys(str(SHORT_STORY))
    wait(laptop, lambda d: "Test: The Short Story" in text(d, "#library-list"), message="the story imported")
    walk.shot(laptop, "story-imported")
    laptop.find_element(By.ID, "library-classes").click()
    new = wait(laptop, lambda d: visible(d, "#class-new"), message="the class page")
    walk.shot(laptop, "classes-empty")
    walk.check(laptop, "classes-empty", lambda b: (copy_cookies(laptop, b, origin), b.get(origin + "/classes"), wait(b, lambda d: visible(d, "#class-new"))))
    new.click()
    wait(laptop, lambda d: visible(d, "#class-edit"))
    laptop.find_element(By.ID, "class-name").send_keys("Class 2B")
    for name in CHILDREN:
        laptop.find_element(By.ID, "class-add-child").click()
        laptop.switch_to.active_element.send_keys(name)
    walk.shot(laptop, "class-editor")
    walk.check(laptop, "class-editor")
    laptop.find_element(By.ID, "class-save").click()
    wait(laptop, lambda d: visible(d, "#class-view") and text(d, "#class-view-title") == "Class 2B", message="the class saved")
    class_id = laptop.execute_script("return window.storycircle.classes.current.id")

    # 7. A room of the class on the story: the teacher page in a tab of its own.
    wait(laptop, lambda d: d.find_element(By.ID, "class-start").is_enabled(), message="the story offered")
    Select(laptop.find_element(By.ID, "class-story")).select_by_visible_text("Test: The Short Story")
    laptop.find_element(By.ID, "class-start").click()
    wait(laptop, lambda d: visible(d, "#class-room-started"), message="the room started")
    started = text(laptop, "#class-room-started-text")
    code = next(word for word in started.replace(".", " ").replace(",", " ").split() if word.isdigit() and len(word) == 6)
    walk.shot(laptop, "class-room-started")
    class_page = laptop.current_window_handle
    laptop.find_element(By.ID, "class-room-teacher").click()
    wait(laptop, lambda d: len(d.window_handles) == 2, message="the teacher page's tab")
    laptop.switch_to.window(next(h for h in laptop.window_handles if h != class_page))
    wait(laptop, lambda d: d.execute_script("return window.storycircle?.room?.phase ?? null") == "lobby", message="the teacher page")
    assert "token" not in laptop.current_url

    # 8. Four children: two phones tap their names, two scripted devices pick theirs by member id.
    phones = {}
    for name in ("Ada", "Bo"):
        phone = browsers(**PHONE)
        phone.get(f"{origin}/?room={code}")
        picker_shows(phone, CHILDREN)
        if name == "Ada":
            walk.shot(phone, "child-picker")
        pick_buttons(phone)[name].click()
        wait(phone, lambda d: visible(d, "#lobby"), message=f"{name} in the lobby")
        phones[name] = phone
    status, _, raw = server.request("GET", f"/api/classes/{class_id}", server.admin_token)
    assert status == 200, raw
    members = {child["name"]: child["id"] for child in json.loads(raw)["children"]}
    devices = {name: member_child(server, code, members[name]) for name in ("Cy", "Dee")}
    wait(laptop, lambda d: len(d.execute_script("return window.storycircle.room.players ?? []")) == 4, message="four children")
    walk.shot(laptop, "teacher-lobby")
    walk.check(laptop, "teacher-lobby")

    # 9. The story is read; the teacher asks to skip the rest of it, and while the question is open the
    # teacher's phone (another device of the same teacher) skips it first: the question asked no longer
    # fits, and the laptop's dialog goes (a yes would have skipped the first question instead).
    elsewhere = {"code": code, "teacherToken": server.admin_token}
    press = lambda command: wait(laptop, lambda d: (b := d.find_element(By.CSS_SELECTOR, f'button[data-command="{command}"]')).is_enabled() and b,  # noqa: E731
                                 message=command).click()
    press("start")
    wait(laptop, lambda d: d.execute_script("return window.storycircle.room.phase") == "narrating", message="the story is read")
    assert server.command(elsewhere, "pause")[0] == 200
    wait(laptop, lambda d: d.execute_script("return window.storycircle.room.paused") is True, message="paused")
    press("skip")
    wait(laptop, lambda d: visible(d, "dialog.confirm"), message="skipping is confirmed first")
    assert plain(text(laptop, "dialog.confirm h2")) == CATALOG["controls.skip_story_title"]
    walk.shot(laptop, "teacher-skip-story")
    assert server.command(elsewhere, "skip")[0] == 200
    wait(laptop, lambda d: d.execute_script("return window.storycircle.room.phase") == "question", message="the first question")
    wait(laptop, lambda d: not d.find_elements(By.CSS_SELECTOR, "dialog.confirm"), message="the stale question goes")

    # The first question: Ada, Bo and Cy answer; Dee does not.
    choose(phones["Ada"], "A gear")
    choose(phones["Bo"], "A hat")
    walk.shot(phones["Bo"], "child-answered")
    answer(devices["Cy"], 0, 0)
    wait(laptop, lambda d: d.execute_script("return window.storycircle.room.phase") == "question")
    walk.shot(laptop, "teacher-question")
    # Dee has not answered: the teacher reveals the answer (points are given at the reveal), then ends.
    press("reveal")
    wait(laptop, lambda d: d.execute_script("return window.storycircle.room.phase") == "reveal", message="the reveal")
    walk.shot(laptop, "teacher-reveal")
    press("end")
    wait(laptop, lambda d: visible(d, "dialog.confirm"), message="ending is confirmed first")
    walk.shot(laptop, "teacher-end-confirm")
    laptop.find_element(By.CSS_SELECTOR, "dialog.confirm [data-answer=yes]").click()
    wait(laptop, lambda d: d.execute_script("return window.storycircle.room.phase") == "finished", message="the room finished")
    for ws in devices.values():
        expect(ws, "finished")
        ws.close()
    walk.shot(laptop, "teacher-finished")

    # 10. The class page's report: every child, Dee (who never answered) too.
    laptop.switch_to.window(class_page)
    laptop.refresh()
    wait(laptop, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#report-children tbody tr")) == 4, message="four children in the report")
    rows = {plain(r.find_element(By.CSS_SELECTOR, "th").text): plain(r.text) for r in laptop.find_elements(By.CSS_SELECTOR, "#report-children tbody tr")}
    assert set(rows) == set(CHILDREN), rows
    assert CATALOG["classes.child_no_rooms"] not in rows["Dee"], "Dee was in the room"
    assert "0 of 1 right" in rows["Dee"] and "1 question not answered" in rows["Dee"], rows["Dee"]
    assert "1,000 points, 1 of 1 right" in rows["Ada"], rows["Ada"]
    laptop.execute_script("document.getElementById('report-children-title').scrollIntoView()")
    walk.shot(laptop, "class-report")
    walk.check(laptop, "class-report", lambda b: (copy_cookies(laptop, b, origin), b.get(f"{origin}/classes#id={class_id}"),
                                                   wait(b, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#report-children tbody tr")) == 4),
                                                   b.execute_script("document.getElementById('report-children-title').scrollIntoView()")))

    # On a phone each child's buttons are in reach, not off to the side of a table scrolled sideways.
    phone = walk.others["phone"]
    width = phone.execute_script("return innerWidth")
    for button in phone.find_elements(By.CSS_SELECTOR, "#report-children [data-action]"):
        box = rect(phone, button)
        assert 0 <= box["x"] and box["x"] + box["w"] <= width, (button.get_attribute("data-action"), box)

    # 11. A parent asks for Bo's data: exported as JSON and as CSV, then erased.
    laptop.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(tmp_path)})
    bo = members["Bo"]
    laptop.find_element(By.CSS_SELECTOR, f'[data-action=export-json][data-member="{bo}"]').click()
    exported = wait(laptop, lambda d: next((p for p in tmp_path.glob("*.json") if p.stat().st_size), None), message="the JSON export")
    data = wait(laptop, lambda d: _json(exported), message="a whole JSON file")
    assert data["member"]["name"] == "Bo" and data["rooms"][0]["code"] == code
    assert [a["optionText"] for a in data["rooms"][0]["answers"]] == ["A hat"]
    laptop.find_element(By.CSS_SELECTOR, f'[data-action=export-csv][data-member="{bo}"]').click()
    exported_csv = wait(laptop, lambda d: next((p for p in tmp_path.glob("*.csv") if p.stat().st_size), None), message="the CSV export")
    records = wait(laptop, lambda d: _csv(exported_csv), message="a whole CSV file")
    assert {r["record"] for r in records} >= {"class_member", "joined", "answer"}
    assert all(r["nickname"] in ("", "Bo") for r in records)
    assert text(laptop, "#report-children-status") == CATALOG["classes.exported"].replace("{name}", "Bo")
    walk.shot(laptop, "child-exported")
    laptop.find_element(By.CSS_SELECTOR, f'[data-action=erase][data-member="{bo}"]').click()
    wait(laptop, lambda d: visible(d, "#classes-confirm"), message="the erasure is confirmed first")
    walk.shot(laptop, "erase-confirm")
    walk.check(laptop, "erase-confirm")
    laptop.find_element(By.ID, "classes-confirm-yes").click()
    wait(laptop, lambda d: not d.find_elements(By.CSS_SELECTOR, f'[data-child="{bo}"]'), message="Bo gone from the page")
    assert "Bo" not in [plain(r.find_element(By.CSS_SELECTOR, "th").text) for r in laptop.find_elements(By.CSS_SELECTOR, "#report-children tbody tr")]
    assert "Bo" not in plain(text(laptop, "#report-rooms")) and "Bo" not in plain(text(laptop, "#report-help"))
    walk.shot(laptop, "child-erased")
    walk.check(laptop, "child-erased")
    # What another program reads agrees: the export finds nothing, the class CSV names no Bo.
    status, _, raw = server.request("GET", f"/api/classes/{class_id}/members/{bo}/data", server.admin_token)
    assert status == 404, raw
    status, _, raw = server.request("GET", f"/api/classes/{class_id}/results.csv", server.admin_token)
    assert status == 200 and b"Bo" not in raw and b"Ada" in raw and b"Dee" in raw
    for phone in phones.values():
        assert "token" not in phone.current_url


def _json(path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return None


def _csv(path):
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig"))))
    return rows if rows and rows[-1].get("detail") is not None else None
