"""The teacher's page on the laptop (1366×768) with a class of 32: the roster shows 25 and more children
without the page being scrolled (compact rows, scrolling inside its card under a header that stays), a
long unbroken name is cut short with the whole name on hover (title) and for screen readers, every row's
buttons are in view, and the teacher page has the projector's answer chart at the reveal. Remove and Block
are quiet beside Fix name and go when the room has finished. Children on plain WebSockets; the teacher in
headless Chromium; axe-core 0 serious/critical."""
import pytest
from selenium.webdriver.common.by import By

from browser_support import TEACHER, axe, browsers, no_page_errors, screenshot, text_contrast, visible, wait  # noqa: F401 (browsers is a fixture)
from test_browser import CLASSROOM, CROWD, Crowd, confirm
from test_classes_browser import class_room, expect, make_class, member_child

# The nickname limit is 40 characters (Nickname.maximumLength): the whole 34-letter word joins, and the
# longest the roster can meet is 40 of the widest letter.
LONG = "Supercalifragilisticexpialidocious"
WIDE = "W" * 40
CLASS = [LONG, WIDE, *CROWD]

# What the teacher sees of the roster now: rows wholly on screen (inside the roster's scrolling box and
# the window), where each row's buttons are, and whether the page itself has been scrolled.
ROSTER = """
const box = document.querySelector("#roster-scroll").getBoundingClientRect();
const head = document.querySelector("#roster thead th").getBoundingClientRect();
const within = (r, outer) => r.top >= outer.top - 1 && r.bottom <= outer.bottom + 1 && r.left >= outer.left - 1 && r.right <= outer.right + 1;
const screen = { top: 0, left: 0, bottom: innerHeight, right: innerWidth };
const rows = [...document.querySelectorAll("#roster tbody tr[data-player]")].map((row) => {
  const r = row.getBoundingClientRect();
  const buttons = [...row.querySelectorAll("button")].map((b) => b.getBoundingClientRect());
  const name = row.querySelector(".name-text");
  return {
    name: name.textContent, title: name.title,
    shown: within(r, box) && within(r, screen) && r.top >= head.bottom - 1,
    buttonsAcross: buttons.length === 2 && buttons.every((b) => b.left >= box.left - 1 && b.right <= box.right + 1 && b.right <= innerWidth + 1),
    buttonsShown: buttons.every((b) => within(b, box) && within(b, screen) && b.top >= head.bottom - 1),
    cut: name.scrollWidth > name.clientWidth + 1,
    height: r.height,
  };
});
return { rows, scrollY: scrollY, headTop: head.top, boxTop: box.top, sideways: document.querySelector("#roster-scroll").scrollWidth > document.querySelector("#roster-scroll").clientWidth + 1 };
"""


def roster(driver):
    return driver.execute_script(ROSTER)


# German has the longest column headings and buttons, Arabic reads right to left.
@pytest.mark.parametrize("lang", ["en", "de", "ar"])
def test_the_roster_shows_25_children_at_1366x768_and_every_button(server, browsers, lang):
    room = server.create_room(CLASSROOM, settings={"language": lang})
    code = room["code"]
    crowd = Crowd(server, code, CLASS)
    teacher = browsers(**TEACHER)
    teacher.get(f"{server.http}/teacher#room={code}&token={room['teacherToken']}")
    wait(teacher, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#roster tbody tr[data-player]")) == 32
         and d.execute_script("return document.documentElement.lang") == lang, message="32 children in the roster")

    # The room's title and code head the page in every language (the page's own language loading after
    # the first render once put the placeholder "Room" back in a room of the browser's language).
    wait(teacher, lambda d: code in d.find_element(By.ID, "room-title").text, message="the room's title")
    assert "Pip" in teacher.find_element(By.ID, "room-title").text

    seen = roster(teacher)
    shown = [row for row in seen["rows"] if row["shown"]]
    assert seen["scrollY"] == 0
    assert len(shown) >= 25, f"{len(shown)} of 32 rows on screen at 1366×768: {[round(r['height']) for r in seen['rows'][:3]]} px each"
    assert all(row["buttonsShown"] for row in shown), [row["name"] for row in shown if not row["buttonsShown"]]
    assert all(row["buttonsAcross"] for row in seen["rows"]), [row["name"] for row in seen["rows"] if not row["buttonsAcross"]]
    assert not seen["sideways"], "the roster scrolls sideways"
    screenshot(teacher, "teacher-roster-32" if lang == "en" else f"{lang}-teacher-roster-32")

    # The long names: whole in the title (hover) and in the text a screen reader reads; one wider than its
    # column is cut short on screen (40 W's are wider than the name column in any language here).
    for name in (LONG, WIDE):
        row = next(r for r in seen["rows"] if r["name"] == name)
        assert row["title"] == name and row["buttonsAcross"], row
    assert next(r for r in seen["rows"] if r["name"] == WIDE)["cut"], "the widest name is cut short"
    long_row = teacher.find_element(By.XPATH, f'//tr[@data-player][.//span[@class="name-text" and @title="{WIDE}"]]')
    block = long_row.find_element(By.CSS_SELECTOR, 'button[data-action="block"]')
    assert WIDE in block.get_attribute("aria-label"), "the Block button names the child in full"
    # With focus the name shows whole (it wraps), and the row's buttons stay in view.
    name = long_row.find_element(By.CSS_SELECTOR, ".name-text")
    teacher.execute_script("arguments[0].focus()", name)
    assert teacher.execute_script("return arguments[0].scrollWidth <= arguments[0].clientWidth + 1 && document.activeElement === arguments[0]", name)
    focused = next(r for r in roster(teacher)["rows"] if r["name"] == WIDE)
    assert focused["buttonsAcross"], focused
    axe(teacher, f"{lang}-teacher-roster-32")
    teacher.execute_script("arguments[0].blur()", name)

    # The last children: the roster scrolls inside its card, its header stays, the page does not move.
    teacher.execute_script("const s = document.querySelector('#roster-scroll'); s.scrollTop = s.scrollHeight;")
    wait(teacher, lambda d: roster(d)["rows"][-1]["shown"], message="the last child after scrolling the roster")
    after = roster(teacher)
    assert after["scrollY"] == 0, "the page did not scroll"
    assert abs(after["headTop"] - after["boxTop"]) <= 1, "the header stays at the top of the roster"
    assert all(row["buttonsShown"] for row in after["rows"] if row["shown"])
    assert sum(row["shown"] for row in after["rows"]) >= 25
    no_page_errors(teacher)
    for ws in crowd.clients:
        ws.close()


def test_the_teacher_page_has_the_projectors_answer_chart(server, browsers):
    room = server.create_room(CLASSROOM)
    code = room["code"]
    crowd = Crowd(server, code, CROWD[:8])
    teacher = browsers(**TEACHER)
    teacher.get(f"{server.http}/teacher#room={code}&token={room['teacherToken']}")
    wait(teacher, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#roster tbody tr[data-player]")) == 8)
    assert not visible(teacher, "#teacher-chart"), "no chart before a reveal"
    assert server.command(room, "start")[0] == 200
    assert server.command(room, "skip")[0] == 200
    crowd.answer(0, lambda i: [0, 0, 0, 1, 1, 2, 3, 3][i])  # everyone has answered: the reveal comes by itself
    chart = wait(teacher, lambda d: visible(d, "#teacher-chart") and d.find_element(By.ID, "teacher-chart"), message="the chart at the reveal")
    bars = chart.find_elements(By.CSS_SELECTOR, "#teacher-distribution li")
    counts = [int(bar.find_element(By.CSS_SELECTOR, ".count").text.split()[0]) for bar in bars]
    assert counts[:4] == [3, 2, 1, 2] and sum(counts) == 8, counts
    right = [bar for bar in bars if "correct" in bar.get_attribute("class")]
    assert len(right) == 1 and right[0].find_elements(By.CSS_SELECTOR, ".right"), "the right answer is said in words"
    # The projector's own code draws it (js/answer-chart.js): the same rows, shapes and classes.
    assert teacher.execute_script("return document.querySelector('#teacher-distribution').classList.contains('distribution')")
    screenshot(teacher, "teacher-reveal-chart")
    axe(teacher, "teacher-reveal-chart")
    assert server.command(room, "next")[0] == 200
    wait(teacher, lambda d: not visible(d, "#teacher-chart"), message="the chart goes with the next question")
    no_page_errors(teacher)
    assert server.command(room, "end")[0] == 200
    crowd.leave_after_the_end()


# Each button of a child's row in the roster: what it does, whether it is filled (its background not the
# card's white), its edge's width and colour, and its text's contrast on its own background.
ROW_BUTTONS = """
const probe = document.body.appendChild(Object.assign(document.createElement("span"), { style: "color: var(--accent)" }));
const accent = getComputedStyle(probe).color;
probe.remove();
return [...arguments[0].querySelectorAll("button")].map((b) => {
  const style = getComputedStyle(b);
  return { action: b.dataset.action, background: style.backgroundColor, edge: parseFloat(style.borderTopWidth),
           accentEdge: style.borderTopColor === accent };
});
"""


def test_remove_and_block_are_quiet_beside_fix_name_and_go_when_the_room_has_finished(server, browsers):
    class_id, members = make_class(server)
    room = class_room(server, class_id)
    code = room["code"]
    phones = [member_child(server, code, members[name]) for name in ("Ada", "Bo", "Cy")]
    teacher = browsers(**TEACHER)
    teacher.get(f"{server.http}/teacher#room={code}&token={room['teacherToken']}")
    wait(teacher, lambda d: len(d.find_elements(By.CSS_SELECTOR, '#roster button[data-action="fix-name"]')) == 3, message="Fix name on every row")
    white = teacher.execute_script("return getComputedStyle(document.querySelector('#roster-card')).backgroundColor")
    for row in teacher.find_elements(By.CSS_SELECTOR, "#roster tbody tr[data-player]"):
        buttons = {b["action"]: b for b in teacher.execute_script(ROW_BUTTONS, row)}
        assert set(buttons) == {"fix-name", "kick", "block"}, buttons
        # Nothing filled in a row: Remove and Block are plain (not the loudest things on the page) …
        assert all(b["background"] == white for b in buttons.values()), buttons
        # … and quieter than Fix name, the action a class room needs: a thinner edge, not the accent's.
        fix = buttons["fix-name"]
        assert fix["accentEdge"], fix
        for action in ("kick", "block"):
            assert buttons[action]["edge"] < fix["edge"] and not buttons[action]["accentEdge"], (action, buttons[action], fix)
            button = row.find_element(By.CSS_SELECTOR, f'button[data-action="{action}"]')
            assert text_contrast(teacher, button) >= 4.5, action
    assert visible(teacher, "#roster-note"), "what Remove and Block do is said while they are offered"
    screenshot(teacher, "teacher-roster-quiet-removals")
    axe(teacher, "teacher-roster-quiet-removals")
    # Blocking still asks first; "no" keeps the child.
    bo = teacher.find_element(By.XPATH, '//tr[@data-player][.//span[@title="Bo"]]')
    bo.find_element(By.CSS_SELECTOR, 'button[data-action="block"]').click()
    assert "Bo" in confirm(teacher, False)
    assert len(teacher.find_elements(By.CSS_SELECTOR, "#roster tbody tr[data-player]")) == 3

    # The room has finished: nothing left to fix or remove, and no words about it.
    assert server.command(room, "end")[0] == 200
    wait(teacher, lambda d: d.execute_script("return window.storycircle.room.phase") == "finished", message="the end")
    wait(teacher, lambda d: not visible(d, "#roster button") and not visible(d, "#roster-note"),
         message="no Fix name, Remove or Block after the end")
    assert len(teacher.find_elements(By.CSS_SELECTOR, "#roster tbody tr[data-player]")) == 3, "every child still listed"
    assert not visible(teacher, "#roster thead th:nth-child(6)"), "no column for them"
    screenshot(teacher, "teacher-roster-finished")
    no_page_errors(teacher)
    for ws in phones:
        expect(ws, "finished")  # read to the room's last message, so that the close is answered
        ws.close()
