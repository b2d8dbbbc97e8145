"""The pages when the server cannot save, in real headless Chromium against a real
server whose data folder is a small tmpfs that fills up for real: the child is asked to tap again and
loses nothing by it, the teacher sees why, and both carry on when space comes back."""
from selenium.webdriver.common.by import By

from browser_support import PHONE, TEACHER, axe, browsers, join_screen, screenshot, text, visible, wait  # noqa: F401 (browsers is a fixture)
from conftest import Server
from test_faults import FAST, fill, results_of, small_fs  # noqa: F401 (small_fs is a fixture)


def open_option(driver, index):
    """The option button `index` once the question has opened and it can be tapped."""
    return wait(driver, lambda d: (b := d.find_elements(By.CSS_SELECTOR, f'#options .option[data-index="{index}"]'))
                and b[0].is_displayed() and b[0].is_enabled() and b[0], message=f"option {index} can be tapped")


def test_a_full_disk_asks_the_child_to_tap_again_and_tells_the_teacher_why(small_fs, browsers):
    server = Server(small_fs / "data", config=FAST).start()
    filler = None
    try:
        room = server.create_room()
        code = room["code"]
        teacher = browsers(**TEACHER)
        teacher.get(f"{server.http}/teacher#room={code}&token={room['teacherToken']}")
        wait(teacher, lambda d: "Waiting to start" in text(d, "#room-state"))
        phone = browsers(**PHONE)
        phone.get(f"{server.http}/?room={code}")
        join_screen(phone).send_keys("Ana")
        phone.find_element(By.ID, "join-button").click()
        wait(phone, lambda d: visible(d, "#lobby"), message="Ana reached the lobby")
        assert server.command(room, "start")[0] == 200
        assert server.command(room, "skip")[0] == 200
        assert not visible(teacher, "#storage-banner"), "no banner while saving works"

        filler = fill(small_fs)
        open_option(phone, 0).click()
        # The answer could not be stored: the child is asked to tap again (not told they failed), the
        # options can be tapped again, and nothing says it was saved.
        wait(phone, lambda d: "tap again" in text(d, "#answer-status"), message="the child is asked to tap again")
        assert "Saved" not in text(phone, "#answer-status")
        open_option(phone, 0)
        banner = wait(teacher, lambda d: visible(d, "#storage-banner"), message="the teacher's banner")
        assert "full" in banner.text, banner.text
        # A real full disk reaches the page as its code (SQLite's words read as disk_full), worded here.
        assert banner.find_element(By.CSS_SELECTOR, ".detail").get_attribute("data-reason") == "disk_full"
        assert banner.get_attribute("role") == "alert"
        screenshot(phone, "phone-storage-tap-again")
        screenshot(teacher, "teacher-storage-banner")
        axe(phone, "phone-storage-tap-again")
        axe(teacher, "teacher-storage-banner")

        # Space comes back: the teacher is told, the child taps again and it is saved.
        filler.unlink()
        filler = None
        wait(teacher, lambda d: "Saving works again" in text(d, "#storage-banner"), message="the all-clear")
        open_option(phone, 1).click()
        wait(phone, lambda d: "Saved ✓" in text(d, "#answer-status") or visible(d, "#reveal"), message="saved")
        status, _, body = server.request("GET", "/healthz")
        assert status == 200, body
    finally:
        if filler:
            filler.unlink()
        server.stop()

    again = Server(small_fs / "data", config=FAST).start()
    try:
        assert results_of(again, room) == {("Ana", 0): 1}, "the answer saved after the retry, and only it"
    finally:
        again.stop()
