"""The teacher's controls against the real server, in headless Chromium: the buttons enabled are exactly
the commands the server lists (docs/protocol.md, "What the teacher may send now"), whether the room got
there by a command or by itself. After a failed narration `start` is offered as well as "Try again",
since the core accepts both."""
import shutil

from selenium.webdriver.common.by import By

from browser_support import PROJECTOR, TEACHER, axe, wait
from test_browser import browsers, press  # noqa: F401 (browsers is a fixture)


def enabled_commands(driver):
    return driver.execute_script(
        "return [...document.querySelectorAll('#controls button[data-command]')].filter((b) => !b.disabled).map((b) => b.dataset.command)")


def shown(commands):
    """The commands that have a button, in the page's order (kick, block and settings have none)."""
    order = ["start", "pause", "resume", "replay", "retry", "skip", "reveal", "next", "lock", "unlock", "end"]
    return [c for c in order if c in commands]


def test_the_teachers_buttons_are_the_servers_commands_after_a_failure_and_as_the_room_moves_on(server, browsers):
    # The audio cache's folder is a file: no clip can be stored, the narration fails, and the room waits
    # in the error phase.
    room = server.create_room()
    cache = server.data / "audio-cache"
    shutil.rmtree(cache)
    cache.write_text("not a folder")
    code = room["code"]
    teacher = browsers(**TEACHER)
    teacher.get(f"{server.http}/teacher#room={code}&token={room['teacherToken']}")
    projector = browsers(**PROJECTOR)
    projector.get(f"{server.http}/dashboard#room={code}&token={room['dashboardToken']}")
    wait(teacher, lambda d: enabled_commands(d) == ["start", "lock", "end"], message="the lobby's commands")

    assert server.command(room, "start")[0] == 200
    wait(teacher, lambda d: d.execute_script("return window.storycircle.room.phase") == "error", timeout=30, message="the narration failed")
    expected = ["start", "retry", "skip", "kick", "block", "lock", "end", "settings"]
    wait(teacher, lambda d: enabled_commands(d) == shown(expected), message="start and retry after a failure")
    assert teacher.execute_script("return window.storycircle.room.commands") == expected
    assert teacher.find_element(By.CSS_SELECTOR, "#controls form input[name=voice]").is_enabled(), "the voice can be fixed"
    axe(teacher, "teacher-error-start-or-retry")
    # A read-only screen is told no commands.
    assert projector.execute_script("return window.storycircle.room.commands") == []

    # Starting again from the error phase is accepted, and fails the same way.
    press(teacher, "start")
    wait(teacher, lambda d: d.execute_script("return window.storycircle.room.phase") == "error" and enabled_commands(d) == shown(expected),
         timeout=30, message="start accepted in the error phase")

    # Skipping to the quiz: the question opens by itself, and the server sends the teacher its new commands.
    press(teacher, "skip")
    wait(teacher, lambda d: enabled_commands(d) == ["pause", "skip", "reveal", "next", "lock", "end"], message="the question's commands")
    press(teacher, "lock")
    wait(teacher, lambda d: enabled_commands(d) == ["pause", "skip", "reveal", "next", "unlock", "end"], message="locked")
    press(teacher, "reveal")
    wait(teacher, lambda d: enabled_commands(d) == ["skip", "next", "unlock", "end"], message="the reveal's commands")
