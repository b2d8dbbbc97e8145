"""The teacher's controls against the real server, in headless Chromium: the buttons enabled are exactly
the commands the server lists (docs/protocol.md, "What the teacher may send now"), whether the room got
there by a command or by itself, and only those are shown, less the twin of another (during a question
"Next" reveals, as "Reveal answer" does; at a reveal "Skip" goes on, as "Next" does). After a failed
narration `start` is offered as well as "Try again", since the core accepts both; "Try again" is the
next step."""
import shutil

from selenium.webdriver.common.by import By

from browser_support import PROJECTOR, TEACHER, axe, wait
from test_browser import browsers, confirm, press  # noqa: F401 (browsers is a fixture)


def enabled_commands(driver):
    """The commands whose buttons are enabled, in the order of `shown` (the next step's button is moved first)."""
    return shown(driver.execute_script(
        "return [...document.querySelectorAll('#controls button[data-command]')].filter((b) => !b.disabled).map((b) => b.dataset.command)"))


def displayed_commands(driver):
    return driver.execute_script(
        "return [...document.querySelectorAll('#controls button[data-command]')].filter((b) => b.getClientRects().length > 0).map((b) => b.dataset.command)")


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
    assert displayed_commands(teacher)[0] == "retry", "trying again is the next step, first"
    assert sorted(displayed_commands(teacher)) == sorted(shown(expected))
    axe(teacher, "teacher-error-start-or-retry")
    # A read-only screen is told no commands.
    assert projector.execute_script("return window.storycircle.room.commands") == []

    # Starting again from the error phase is accepted, and fails the same way.
    press(teacher, "start")
    wait(teacher, lambda d: d.execute_script("return window.storycircle.room.phase") == "error" and enabled_commands(d) == shown(expected),
         timeout=30, message="start accepted in the error phase")

    # Skipping to the quiz (once the teacher says yes): the question opens by itself, and the server sends
    # the teacher its new commands.
    press(teacher, "skip")
    assert confirm(teacher, True) == "Skip the rest of the story?"
    wait(teacher, lambda d: enabled_commands(d) == ["pause", "skip", "reveal", "next", "lock", "end"], message="the question's commands")
    assert sorted(displayed_commands(teacher)) == sorted(["pause", "skip", "reveal", "lock", "end"]), "one button reveals"
    press(teacher, "lock")
    wait(teacher, lambda d: enabled_commands(d) == ["pause", "skip", "reveal", "next", "unlock", "end"], message="locked")
    press(teacher, "reveal")
    wait(teacher, lambda d: enabled_commands(d) == ["skip", "next", "unlock", "end"], message="the reveal's commands")
    assert sorted(displayed_commands(teacher)) == sorted(["next", "unlock", "end"]), "one button goes on"
