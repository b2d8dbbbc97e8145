"""No key on a screen children can see: `storycircle start` prints the join code, link and QR code with no
token beside them, and a one-time sign-in link for the teacher's laptop. Opened in real headless Chromium,
the link ends on the room's teacher page, controlling the room, with no token in the address or in the tab's
history; a reload in the same tab keeps control; the same link a second time is refused with words from the
catalogs. Over real sockets against the real binary."""
import http.client
import json
import os
import re
import signal
import subprocess

import pytest
from selenium.webdriver.common.by import By

from browser_support import TEACHER, axe, browsers, no_page_errors, text, visible, wait  # noqa: F401 (browsers is a fixture)
from conftest import BIN, ROOT, SHORT_STORY

CATALOG = json.loads((ROOT / "web-static" / "i18n" / "en.json").read_text(encoding="utf-8"))


@pytest.fixture
def started(tmp_path):
    """`storycircle start` on a short story, its keys from a pipe; yields its banner, code and saved tokens."""
    home = tmp_path / "home"
    process = subprocess.Popen([BIN, "start", str(SHORT_STORY), "--port", "0", "--data", str(tmp_path / "data")],
                               env=dict(os.environ, STORYCIRCLE_HOME=str(home)), cwd=ROOT,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        lines = []
        for line in process.stdout:
            lines.append(line)
            if line.startswith("● "):
                break
        banner = "".join(lines)
        code = re.search(r"Join code: (\d{6})", banner).group(1)
        saved = json.loads((home / "rooms" / f"{code}.json").read_text())
        admin = (tmp_path / "data" / "admin-token").read_text().strip()
        yield dict(process=process, banner=banner, code=code, saved=saved, admin=admin)
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=20)


def history_urls(driver):
    """Every entry of the tab's history, as the browser keeps it (not only what the page can read)."""
    return [entry["url"] for entry in driver.execute_cdp_cmd("Page.getNavigationHistory", {})["entries"]]


def test_the_start_screen_holds_no_key_and_the_one_time_link_signs_the_teacher_in(started, browsers):
    banner, code, saved, admin = started["banner"], started["code"], started["saved"], started["admin"]
    keys = [saved["teacherToken"], saved["dashboardToken"], admin]
    # What the projector mirrors: the join code, link and QR code; no token, no teacher, projector or admin link.
    assert sum("█" in line for line in banner.splitlines()) >= 15, banner
    assert re.search(r"Join link: +http://\S+/\?room=" + code, banner)
    assert not any(key in banner for key in keys), banner
    assert "token=" not in banner and "/teacher" not in banner and "/dashboard" not in banner and "/stories" not in banner
    assert "open this on this laptop, not on the projector" in banner
    link = re.search(r"(https?://\S+/sign-in#code=([\w-]{22}))", banner)
    assert link, banner
    link, one_time = link.groups()
    base = link.split("/sign-in")[0]

    laptop = browsers(**TEACHER)
    laptop.get(link)
    teacher_page = re.compile(re.escape(base) + r"/teacher/?#room=" + code + "$")
    wait(laptop, lambda d: teacher_page.match(d.current_url), message="the teacher page of the room")
    wait(laptop, lambda d: d.execute_script("return window.storycircle?.room?.phase ?? null") == "lobby", message="the teacher's welcome")
    # The page holds the teacher's key (and the school's: the way to the library is offered).
    wait(laptop, lambda d: visible(d, "#library-item"), message="the way to the library")
    assert visible(laptop, "#dashboard-item")
    # Neither the address, nor any entry of the tab's history, nor the history state holds a key or the code.
    seen = [laptop.execute_script("return location.href"), *history_urls(laptop),
            json.dumps(laptop.execute_script("return history.state")), laptop.execute_script("return document.referrer")]
    assert not any(secret in place for place in seen for secret in [*keys, one_time]), seen
    assert laptop.execute_script("return history.length") == len(history_urls(laptop))
    axe(laptop, "sign-in-teacher-page")


    # A reload in the same tab keeps control: the key comes from the tab's session.
    laptop.refresh()
    wait(laptop, lambda d: d.execute_script("return window.storycircle?.room?.phase ?? null") == "lobby", message="the welcome after a reload")
    start = wait(laptop, lambda d: (b := d.find_element(By.CSS_SELECTOR, 'button[data-command="start"]')).is_enabled() and b)
    start.click()
    wait(laptop, lambda d: d.execute_script("return window.storycircle?.room?.phase ?? null") not in (None, "lobby"), message="the room started from the page")
    assert teacher_page.match(laptop.current_url), laptop.current_url
    assert not any(secret in url for url in history_urls(laptop) for secret in [*keys, one_time])
    no_page_errors(laptop)

    # The same link again, in another browser (a child who copied it): refused, in words, with no key.
    other = browsers(**TEACHER)
    other.get(link)
    wait(other, lambda d: text(d, "#sign-in-status") == CATALOG["signin.used"], message="the refusal")
    assert "/sign-in" in other.current_url and one_time not in other.current_url
    assert other.execute_script("return JSON.stringify(Object.entries(sessionStorage))") == "[]"
    axe(other, "sign-in-used")


def test_a_wrong_code_is_refused_in_the_pages_language_no_code_asks_for_an_account_and_a_tab_without_a_key_says_so(started, browsers):
    base = re.search(r"(https?://\S+)/sign-in#code=", started["banner"]).group(1)
    page = browsers(**TEACHER, language="de")
    german = json.loads((ROOT / "web-static" / "i18n" / "de.json").read_text(encoding="utf-8"))
    page.get(f"{base}/sign-in#code=AAAAAAAAAAAAAAAAAAAAAA")
    wait(page, lambda d: text(d, "#sign-in-status") == german["signin.used"], message="the refusal in German")
    # Without a code the page is the sign-in with an account, in the page's language (test_accounts_browser.py).
    page.get(f"{base}/sign-in")
    wait(page, lambda d: visible(d, "#password-form") and text(d, "#password-sign-in-title") == german["account.sign_in.heading"], message="no code: the password form")
    assert page.find_element(By.ID, "sign-in-login").get_attribute("autocomplete") == "username"
    assert page.find_element(By.ID, "sign-in-password").get_attribute("autocomplete") == "current-password"
    # A teacher page opened by hand in a tab that holds no key says how to get one.
    page.get(f"{base}/teacher#room={started['code']}")
    wait(page, lambda d: text(d, "#room-state") == german["connection.teacher_link_missing"], message="a teacher page in a tab with no key")


def test_the_link_signs_into_the_laptops_teacher_who_owns_what_was_there(started):
    """The link also signs the browser into the one account a fresh data folder gets: `teacher`, a school
    administrator of "This computer" (docs/operations.md, "Signing in"), who owns the room `start` opened and
    the sample stories, shared with the school. (Chromium keeps a Secure cookie over plain HTTP for
    localhost only: the server's side is checked here, over a socket from this computer.)"""
    link = re.search(r"https?://\S+/sign-in#code=([\w-]{22})", started["banner"])
    port = int(re.search(r":(\d+)/sign-in", link.group(0)).group(1))

    def call(method, path, body=None, cookie=None):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
        headers = {"Content-Type": "application/json"} if body is not None else {}
        if cookie:
            headers["Cookie"] = cookie
        connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
        response = connection.getresponse()
        answer = response.read()
        connection.close()
        return response.status, response.getheader("set-cookie"), json.loads(answer) if answer else None

    status, set_cookie, answer = call("POST", "/api/sign-in", {"code": link.group(1)})
    assert status == 200 and set_cookie, answer
    assert answer["account"]["login"] == "teacher" and answer["account"]["role"] == "school_admin" and answer["csrf"], answer
    cookie = set_cookie.split(";")[0]
    assert cookie.startswith("__Host-storycircle_session=") and "HttpOnly" in set_cookie and "SameSite=Strict" in set_cookie
    status, _, session = call("GET", "/api/session", cookie=cookie)
    assert status == 200 and session["account"]["id"] == answer["account"]["id"], session
    # With the cookie alone (no key): the room `start` opened and the sample stories are the teacher's.
    status, _, rooms = call("GET", "/api/rooms", cookie=cookie)
    assert status == 200 and started["code"] in [room["code"] for room in rooms["rooms"]], rooms
    status, _, stories = call("GET", "/api/stories", cookie=cookie)
    assert status == 200 and stories["stories"], stories
    assert all(story["owner"]["accountID"] == session["account"]["id"] and story["shared"] for story in stories["stories"]), stories
    # The code was used up: the same link again signs nobody in.
    assert call("POST", "/api/sign-in", {"code": link.group(1)})[0] == 401
