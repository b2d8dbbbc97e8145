"""Teachers' own accounts in real headless Chromium against the real server (docs/protocol.md, "Sessions" and
"Accounts"), at phone, laptop and projector sizes: on the administrators' screen a district administrator adds
a school and a teacher and hands over the one-time password link; the teacher sets a password on the setup
page (the code leaves the address at once), signs in with it on /sign-in (a password manager's form) and
reaches the story library, signed in, with the CSRF token echoed by the page. A wrong password is refused in
words that are read out; a stale change of an account is answered in words with the account as it is now;
"Sign out everywhere" ends the session in another browser. axe-core on every new screen."""
import json
import re

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from browser_support import PHONE, PROJECTOR, TEACHER, axe, browsers, no_page_errors, plain, screenshot, text, visible, wait  # noqa: F401
from conftest import ROOT

CATALOG = json.loads((ROOT / "web-static" / "i18n" / "en.json").read_text(encoding="utf-8"))
SIZES = {"phone": PHONE, "laptop": TEACHER, "projector": PROJECTOR}
PASSWORD = "a kite over the river at noon"
# Before the passkey routes land there is no passkeys module: the sign-in page looks for it and does without.
PASSKEYS = (ROOT / "web-static" / "js" / "passkeys.js").exists()


def call(server, method, path, body=None):
    status, _, answer = server.request(method, path, server.admin_token, body)
    return status, json.loads(answer) if answer else None


def listed(body, name):
    return body[name] if isinstance(body, dict) else body


def accounts_of(server, school_id):
    status, body = call(server, "GET", f"/api/accounts?school={school_id}")
    assert status == 200, body
    return listed(body, "accounts")


def no_errors_but_expected(driver):
    """No script error; the only failed loads are the ones these pages expect (a refused sign-in, no session
    yet, no passkeys module on this server)."""
    expected = ("/api/session", "/api/accounts/setup", "/js/passkeys.js" if not PASSKEYS else "\0")
    severe = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"
              and not any(path in entry["message"] and "Failed to load resource" in entry["message"] for path in expected)
              and "favicon" not in entry["message"]]
    assert not severe, severe


def admin_screen(driver, server):
    """The administrators' screen with the school's key (the admin token: a district administrator's authority)."""
    driver.get(f"{server.http}/admin#token={server.admin_token}")
    wait(driver, lambda d: d.execute_script("return window.storycircle?.admin?.ready === true"), message="the administrators' screen")
    assert server.admin_token not in driver.current_url


def account_item(driver, login):
    for node in driver.find_elements(By.CSS_SELECTOR, "#account-list .admin-item"):
        if f"Login: {login} " in plain(node.find_element(By.CSS_SELECTOR, ".facts").text):
            return node
    return None


def add_school(driver, name):
    field = driver.find_element(By.ID, "school-name")
    field.clear()
    field.send_keys(name)
    driver.find_element(By.ID, "school-add").click()
    wait(driver, lambda d: name in [plain(h.text) for h in d.find_elements(By.CSS_SELECTOR, "#school-list h3")], message=f"{name} is listed")


def add_account(driver, name, login, role="teacher", school=None):
    driver.find_element(By.ID, "account-name").send_keys(name)
    driver.find_element(By.ID, "account-login").send_keys(login)
    Select(driver.find_element(By.ID, "account-role")).select_by_value(role)
    if school:
        Select(driver.find_element(By.ID, "account-school")).select_by_visible_text(school)
    driver.find_element(By.ID, "account-add").click()


def setup_link(driver):
    """The one-time link the screen shows to hand over (the new account's, or a reset's)."""
    wait(driver, lambda d: visible(d, "#setup-link-box") and d.find_element(By.ID, "setup-link").get_attribute("value"), message="the setup link")
    return driver.find_element(By.ID, "setup-link").get_attribute("value")


def set_password(driver, link, server, password=PASSWORD):
    """The link is on the server's public address; the browser here opens its path on this computer's
    loopback address (Chromium keeps a Secure cookie over plain HTTP for localhost only)."""
    driver.get(server.http + link[link.index("/account-setup"):])
    wait(driver, lambda d: d.execute_script("return window.storycircle?.setup?.ready === true"), message="the setup page")
    code = link.split("#code=")[1]
    assert code not in driver.current_url and re.search(r"/account-setup/?$", driver.current_url), driver.current_url
    driver.find_element(By.ID, "setup-password").send_keys(password)
    driver.find_element(By.ID, "setup-repeat").send_keys(password)
    driver.find_element(By.ID, "setup-submit").click()
    wait(driver, lambda d: visible(d, "#setup-done"), message="the password is saved")


def sign_in(driver, server, login, password=PASSWORD, open_page=True):
    """Signs in on /sign-in (already open when `open_page` is False: a sign-in link with where to go next)."""
    if open_page:
        driver.get(f"{server.http}/sign-in")
    wait(driver, lambda d: d.execute_script("return window.storycircle?.signIn?.ready === true"), message="the sign-in form")
    driver.find_element(By.ID, "sign-in-login").send_keys(login)
    driver.find_element(By.ID, "sign-in-password").send_keys(password)
    driver.find_element(By.ID, "sign-in-submit").click()


@pytest.mark.parametrize("size", SIZES)
def test_an_administrator_adds_a_school_and_a_teacher_who_sets_a_password_signs_in_and_reaches_the_library(server, browsers, size):
    admin = browsers(**SIZES[size])
    admin_screen(admin, server)
    screenshot(admin, f"accounts-admin-{size}")
    axe(admin, f"accounts-admin-{size}")

    # A school, then a teacher of that school: the screen shows the link to hand over.
    school = f"Riverside Primary {size}"
    add_school(admin, school)
    assert text(admin, "#admin-message") == CATALOG["admin.schools.added"].replace("{name}", school)
    login = f"ana.{size}@riverside.example"
    add_account(admin, "Ana Lima", login, school=school)
    link = setup_link(admin)
    assert re.match(r"^https?://[^/]+:%d/account-setup#code=[\w-]{16,}$" % server.port, link), link
    assert admin.switch_to.active_element.get_attribute("id") == "setup-link-box", "the link is where the focus went"
    wait(admin, lambda d: account_item(d, login), message="the new account is listed")
    assert plain(account_item(admin, login).find_element(By.CSS_SELECTOR, ".account-state").text) == CATALOG["admin.accounts.state_enabled"]
    screenshot(admin, f"accounts-admin-setup-link-{size}")
    axe(admin, f"accounts-admin-setup-link-{size}")
    school_id = next(s["id"] for s in listed(call(server, "GET", "/api/schools")[1], "schools") if s["name"] == school)
    assert [a["login"] for a in accounts_of(server, school_id)] == [login]

    # The teacher's own browser: a password from the link, then the sign-in with it.
    teacher = browsers(**SIZES[size])
    set_password(teacher, link, server)
    screenshot(teacher, f"accounts-setup-done-{size}")
    axe(teacher, f"accounts-setup-done-{size}")
    teacher.find_element(By.ID, "setup-sign-in").click()
    wait(teacher, lambda d: d.execute_script("return window.storycircle?.signIn?.ready === true"), message="the sign-in form")
    assert visible(teacher, "#passkey-choice") if PASSKEYS else not visible(teacher, "#passkey-choice")
    screenshot(teacher, f"accounts-sign-in-{size}")
    axe(teacher, f"accounts-sign-in-{size}")
    sign_in(teacher, server, login)
    wait(teacher, lambda d: d.current_url.rstrip("/").endswith("/stories") and visible(d, "#account-bar"), message="the library, signed in")
    assert text(teacher, "#account-who") == "Signed in as Ana Lima (teacher)"
    # The link was for one use.
    again = browsers(**SIZES[size])
    again.get(link)
    wait(again, lambda d: d.execute_script("return window.storycircle?.setup?.ready === true"))
    again.find_element(By.ID, "setup-password").send_keys("another long password")
    again.find_element(By.ID, "setup-repeat").send_keys("another long password")
    again.find_element(By.ID, "setup-submit").click()
    wait(again, lambda d: text(d, "#setup-error") == CATALOG["setup.error.link_used"], message="a used link is refused in words")
    no_errors_but_expected(teacher)


def test_a_refused_password_is_said_in_words_read_out_and_the_form_is_a_password_managers(server, browsers):
    driver = browsers(**PHONE)
    sign_in(driver, server, "nobody@riverside.example", "not the password")
    wait(driver, lambda d: visible(d, "#sign-in-error"), message="the refusal")
    problem = driver.find_element(By.ID, "sign-in-error")
    assert plain(problem.text) == CATALOG["account.sign_in.failed"]
    assert problem.get_attribute("role") == "alert"
    assert driver.find_element(By.ID, "sign-in-login").get_attribute("autocomplete") == "username"
    assert driver.find_element(By.ID, "sign-in-password").get_attribute("autocomplete") == "current-password"
    assert driver.find_element(By.ID, "sign-in-password").get_attribute("aria-describedby") == "sign-in-error"
    assert driver.find_element(By.ID, "sign-in-password").get_attribute("value") == "", "a refused password is typed again"
    assert driver.switch_to.active_element.get_attribute("id") == "sign-in-password"
    screenshot(driver, "accounts-sign-in-refused-phone")
    axe(driver, "accounts-sign-in-refused-phone")
    # Nothing typed: said before anything is sent.
    driver.find_element(By.ID, "sign-in-login").clear()
    driver.find_element(By.ID, "sign-in-submit").click()
    wait(driver, lambda d: text(d, "#sign-in-error") == CATALOG["account.sign_in.login_needed"])
    no_errors_but_expected(driver)


def test_a_change_made_on_a_stale_account_is_answered_in_words_with_the_account_as_it_is_now(server, browsers):
    status, school = call(server, "POST", "/api/schools", {"name": "Hillside"})
    assert status == 201, school
    school = school.get("school", school)
    status, made = call(server, "POST", "/api/accounts", {"login": "bo", "displayName": "Bo Berg", "role": "teacher", "schoolID": school["id"]})
    assert status == 201, made
    first, second = browsers(**TEACHER), browsers(**TEACHER)
    for driver in (first, second):
        admin_screen(driver, server)
        wait(driver, lambda d: account_item(d, "bo"), message="Bo is listed")
    # The first administrator turns Bo off (after saying yes); the second still shows Bo as he was.
    account_item(first, "bo").find_element(By.CSS_SELECTOR, "[data-action=disable]").click()
    wait(first, lambda d: visible(d, "#admin-confirm-yes"), message="the question first")
    axe(first, "accounts-admin-confirm-laptop")
    first.find_element(By.ID, "admin-confirm-yes").click()
    wait(first, lambda d: account_item(d, "bo").find_elements(By.CSS_SELECTOR, "[data-action=enable]"), message="Bo is off")
    assert plain(account_item(first, "bo").find_element(By.CSS_SELECTOR, ".account-state").text) == CATALOG["admin.accounts.state_disabled"]
    account_item(second, "bo").find_element(By.CSS_SELECTOR, "[data-action=disable]").click()
    wait(second, lambda d: visible(d, "#admin-confirm-yes"))
    second.find_element(By.ID, "admin-confirm-yes").click()
    wait(second, lambda d: visible(d, "#admin-message"), message="the conflict")
    assert text(second, "#admin-message") == CATALOG["admin.error.conflict"].replace("{name}", "Bo Berg")
    assert second.find_element(By.ID, "admin-message").get_attribute("role") == "alert"
    assert plain(account_item(second, "bo").find_element(By.CSS_SELECTOR, ".account-state").text) == CATALOG["admin.accounts.state_disabled"]
    screenshot(second, "accounts-admin-conflict-laptop")
    axe(second, "accounts-admin-conflict-laptop")
    # Turned on again from the screen that now shows the account as it is.
    account_item(second, "bo").find_element(By.CSS_SELECTOR, "[data-action=enable]").click()
    wait(second, lambda d: account_item(d, "bo").find_elements(By.CSS_SELECTOR, "[data-action=disable]"), message="Bo is on again")
    assert not next(a for a in accounts_of(server, school["id"]) if a["login"] == "bo")["disabled"]


def test_sign_out_everywhere_ends_the_session_of_another_browser(server, browsers):
    status, school = call(server, "POST", "/api/schools", {"name": "Lakeside"})
    assert status == 201, school
    status, made = call(server, "POST", "/api/accounts", {"login": "dee", "displayName": "Dee Admin", "role": "district_admin", "schoolID": None, "password": PASSWORD})
    assert status == 201, made
    laptop, phone = browsers(**TEACHER), browsers(**PHONE)
    for driver in (laptop, phone):
        sign_in(driver, server, "dee")
        # An administrator goes on to the administrators' screen, where the session's CSRF token is echoed.
        wait(driver, lambda d: d.current_url.rstrip("/").endswith("/admin") and d.execute_script("return window.storycircle?.admin?.ready === true"), message="the administrators' screen")
    add_school(phone, "Seaside")
    phone.get(f"{server.http}/stories")
    wait(phone, lambda d: visible(d, "#account-sign-out-everywhere"), message="the signed-in header")
    screenshot(phone, "accounts-library-signed-in-phone")
    axe(phone, "accounts-library-signed-in-phone")
    phone.find_element(By.ID, "account-sign-out-everywhere").click()
    wait(phone, lambda d: "/sign-in" in d.current_url and text(d, "#sign-in-status") == CATALOG["account.signed_out_everywhere"], message="signed out")
    # The laptop's session has ended too: its next change is refused, and the page says so in words.
    laptop.find_element(By.ID, "school-name").send_keys("Too late")
    laptop.find_element(By.ID, "school-add").click()
    wait(laptop, lambda d: visible(d, "#admin-message") and text(d, "#admin-message") == CATALOG["account.error.signed_out"], message="the session ended")
    laptop.get(f"{server.http}/classes")
    wait(laptop, lambda d: visible(d, "#sign-in-link"), message="the class page asks for a sign-in")
    laptop.find_element(By.ID, "sign-in-link").click()
    sign_in(laptop, server, "dee", open_page=False)
    wait(laptop, lambda d: d.current_url.rstrip("/").endswith("/classes") and visible(d, "#account-bar"), message="back on the class page")
