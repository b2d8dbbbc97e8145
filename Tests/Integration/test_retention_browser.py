"""A school's retention rules on the administrators' screen, in real headless Chromium against the real server
(docs/privacy.md, "Per school"), at phone, laptop and projector sizes: a school administrator signs in, sees
their school's rules (empty boxes: the server's settings, shown with the bounds beneath each), types an audit
period below its year and is told so next to the box, which takes the focus; then saves rules within bounds
and the server has them. The district's key picks another school and changes only that one. axe-core on the
form and on its refusal."""
import json

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from browser_support import PHONE, PROJECTOR, TEACHER, axe, browsers, plain, screenshot, text, visible, wait  # noqa: F401
from conftest import ROOT
from test_accounts_browser import admin_screen, call, no_errors_but_expected, sign_in

CATALOG = json.loads((ROOT / "web-static" / "i18n" / "en.json").read_text(encoding="utf-8"))
SIZES = {"phone": PHONE, "laptop": TEACHER, "projector": PROJECTOR}
PASSWORD = "a kite over the river at noon"


def words(key, **params):
    entry = CATALOG[key]
    if isinstance(entry, dict):
        entry = entry["one" if params.get("count") == 1 else "other"]
    for name, value in params.items():
        # The page writes numbers as its language does ("3,650").
        entry = entry.replace("{%s}" % name, f"{value:,}")
    return entry


def school(server, name):
    status, made = call(server, "POST", "/api/schools", {"name": name})
    assert status == 201, made
    return made["id"]


def rules(server, school_id):
    status, shown = call(server, "GET", f"/api/schools/{school_id}/retention")
    assert status == 200, shown
    return shown["retention"]


def retention_form(driver):
    wait(driver, lambda d: d.execute_script("return window.storycircle?.admin?.ready === true"), message="the administrators' screen")
    wait(driver, lambda d: visible(d, "#retention-form"), message="the retention form")


def type_into(driver, kind, value):
    field = driver.find_element(By.ID, f"retention-{kind}")
    field.clear()
    field.send_keys(value)


@pytest.mark.parametrize("size", SIZES)
def test_a_school_administrator_sees_the_defaults_is_told_the_bounds_and_saves_their_schools_rules(server, browsers, size):
    north = school(server, f"North Primary {size}")
    status, made = call(server, "POST", "/api/accounts", {"login": f"nora.{size}", "displayName": "Nora", "role": "school_admin", "schoolID": north, "password": PASSWORD})
    assert status == 201, made
    driver = browsers(**SIZES[size])
    sign_in(driver, server, f"nora.{size}")
    wait(driver, lambda d: visible(d, "#account-bar"), message="signed in")
    driver.get(f"{server.http}/admin")
    retention_form(driver)
    assert not visible(driver, "#retention-school-field"), "a school administrator has one school"
    assert driver.find_element(By.ID, "retention-rooms").get_attribute("value") == ""
    assert text(driver, "#retention-rooms-hint") == words("admin.retention.default_days", count=30) + " " + words("admin.retention.bounds", min=1, max=3650)
    assert text(driver, "#retention-classes-hint") == words("admin.retention.default_keep") + " " + words("admin.retention.bounds_keep", min=1, max=3650)
    driver.find_element(By.ID, "retention").location_once_scrolled_into_view
    screenshot(driver, f"retention-admin-{size}")
    axe(driver, f"retention-admin-{size}")

    # An audit period below a year: said next to its box, which takes the focus; nothing is sent.
    type_into(driver, "rooms", "14")
    type_into(driver, "audit", "30")
    driver.find_element(By.ID, "retention-save").click()
    wait(driver, lambda d: visible(d, "#retention-audit-problem"), message="the audit box's problem")
    assert text(driver, "#retention-audit-problem") == words("admin.retention.problem", min=365, max=3650)
    assert driver.switch_to.active_element.get_attribute("id") == "retention-audit"
    assert driver.find_element(By.ID, "retention-audit").get_attribute("aria-invalid") == "true"
    assert rules(server, north)["rooms"] is None
    screenshot(driver, f"retention-admin-refused-{size}")
    axe(driver, f"retention-admin-refused-{size}")

    type_into(driver, "audit", "730")
    driver.find_element(By.ID, "retention-save").click()
    wait(driver, lambda d: text(d, "#retention-status") == words("admin.retention.saved"), message="saved")
    assert not visible(driver, "#retention-audit-problem")
    assert rules(server, north) == {"rooms": 14, "removed_members": None, "classes": None, "stories": None, "pictures": None, "audit": 730}
    no_errors_but_expected(driver)


def test_the_district_picks_a_school_and_changes_only_its_rules(server, browsers):
    north, south = school(server, "North Primary"), school(server, "South Primary")
    driver = browsers(**TEACHER)
    admin_screen(driver, server)
    retention_form(driver)
    assert visible(driver, "#retention-school-field")
    Select(driver.find_element(By.ID, "retention-school")).select_by_visible_text("South Primary")
    wait(driver, lambda d: d.execute_script("return document.querySelector('#retention-status').textContent === ''"), message="South's rules")
    type_into(driver, "classes", "0")
    driver.find_element(By.ID, "retention-save").click()
    wait(driver, lambda d: text(d, "#retention-status") == words("admin.retention.saved"), message="saved")
    assert rules(server, south)["classes"] == 0
    assert rules(server, north)["classes"] is None
