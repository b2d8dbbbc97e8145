"""The roster import on the administrators' screen in real headless Chromium against the real server, at
phone, laptop and projector sizes: an administrator chooses the files of a OneRoster export, checks it (the
counts in words, nothing imported), imports it (the classes and teachers are there), and a damaged export is
answered with each problem at its file, line and column, in the catalog's words. axe-core on each state."""
import json
import shutil

import pytest
from selenium.webdriver.common.by import By

from browser_support import PHONE, PROJECTOR, TEACHER, axe, browsers, plain, screenshot, text, visible, wait  # noqa: F401
from conftest import ROOT
from test_roster import FIXTURES

CATALOG = json.loads((ROOT / "web-static" / "i18n" / "en.json").read_text(encoding="utf-8"))
SIZES = {"phone": PHONE, "laptop": TEACHER, "projector": PROJECTOR}


def words(key, **params):
    value = CATALOG[key]
    if isinstance(value, dict):
        value = value["one" if params.get("count") == 1 else "other"]
    for name, filled in params.items():
        value = value.replace("{%s}" % name, str(filled))
    return value


def admin_screen(driver, server):
    driver.get(f"{server.http}/admin#token={server.admin_token}")
    wait(driver, lambda d: d.execute_script("return window.storycircle?.admin?.ready === true"), message="the administrators' screen")
    wait(driver, lambda d: visible(d, "#roster"), message="the roster section")


def choose(driver, folder):
    field = driver.find_element(By.ID, "roster-files")
    field.send_keys("\n".join(str(path) for path in sorted(folder.glob("*.csv"))))


@pytest.mark.parametrize("size", SIZES)
def test_an_administrator_checks_and_imports_a_roster_and_sees_a_damaged_one_row_by_row(server, browsers, size, tmp_path):
    admin = browsers(**SIZES[size])
    admin_screen(admin, server)
    screenshot(admin, f"roster-admin-{size}")
    axe(admin, f"roster-admin-{size}")

    choose(admin, FIXTURES / "sample")
    admin.find_element(By.ID, "roster-check").click()
    wait(admin, lambda d: plain(text(d, "#roster-summary")) == words("admin.roster.checked"), message="the check's answer")
    counts = [plain(item.text) for item in admin.find_elements(By.CSS_SELECTOR, "#roster-counts li")]
    assert counts == [words("admin.roster.count.schools_created", count=2), words("admin.roster.count.teachers_created", count=3),
                      words("admin.roster.count.classes_created", count=3), words("admin.roster.count.children_added", count=10),
                      words("admin.roster.count.other_teachers", count=1)], counts
    assert admin.switch_to.active_element.get_attribute("id") == "roster-outcome", "the answer is where the focus went"
    status, _, listed = server.request("GET", "/api/classes", server.admin_token)
    assert json.loads(listed)["classes"] == [], "a check imports nothing"
    screenshot(admin, f"roster-checked-{size}")
    axe(admin, f"roster-checked-{size}")

    admin.find_element(By.ID, "roster-import").click()
    wait(admin, lambda d: plain(text(d, "#roster-summary")).startswith(words("admin.roster.imported")), message="the import's answer")
    assert words("admin.roster.new_teachers") in plain(text(admin, "#roster-summary"))
    status, _, listed = server.request("GET", "/api/classes", server.admin_token)
    assert sorted(c["name"] for c in json.loads(listed)["classes"]) == ["1B Reading", "2A Stories", "Kindergarten Circle"]
    wait(admin, lambda d: "ana.lima" in plain(text(d, "#account-list")), message="the new teachers are listed")
    screenshot(admin, f"roster-imported-{size}")
    axe(admin, f"roster-imported-{size}")

    damaged = tmp_path / "damaged"
    shutil.copytree(FIXTURES / "changed", damaged)
    users = (damaged / "users.csv").read_text(encoding="utf-8").replace("usr-s-sam,,,true,sam.obi,,Sam,Obi", "usr-s-sam,,,maybe,sam.obi,,,Obi")
    (damaged / "users.csv").write_text(users, encoding="utf-8")
    (damaged / "notes.txt").write_text("not a roster file", encoding="utf-8")
    admin.find_element(By.ID, "roster-files").clear()
    field = admin.find_element(By.ID, "roster-files")
    field.send_keys("\n".join(str(path) for path in sorted(damaged.iterdir())))
    admin.find_element(By.ID, "roster-import").click()
    wait(admin, lambda d: plain(text(d, "#roster-summary")) == words("admin.roster.refused", count=2), message="the refusal")
    problems = [plain(item.text) for item in admin.find_elements(By.CSS_SELECTOR, "#roster-problems li")]
    assert problems == [
        words("admin.roster.place_field", file="users.csv", line=11, field="enabledUser") + " " + words("admin.roster.problem.value_invalid", value="maybe", allowed="false, true"),
        words("admin.roster.place_field", file="users.csv", line=11, field="givenName") + " " + words("admin.roster.problem.value_missing"),
    ], problems
    assert plain(text(admin, "#roster-left")) == words("admin.roster.left_out", names="notes.txt")
    status, _, listed = server.request("GET", "/api/classes", server.admin_token)
    assert "1B Reading" in [c["name"] for c in json.loads(listed)["classes"]], "nothing of the damaged export was imported"
    screenshot(admin, f"roster-problems-{size}")
    axe(admin, f"roster-problems-{size}")
    # The refusal's 422 is the one failed load the page expects.
    severe = [entry for entry in admin.get_log("browser") if entry["level"] == "SEVERE" and "favicon" not in entry["message"]
              and not ("/api/roster/import" in entry["message"] and "422" in entry["message"])]
    assert not severe, severe
