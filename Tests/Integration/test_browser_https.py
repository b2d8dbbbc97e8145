"""A class over HTTPS and WSS in headless Chromium, with the server's certificate issued by a local CA that the
browsers trust as a school's managed devices would (an NSS database in the browser's home folder; no flag that
turns certificate checks off): every page is a secure context, every socket is wss, and nothing in the
browsers' logs speaks of mixed content or a certificate. Screenshots at a phone's size go to the test's own
folder."""
import json
import ssl
import urllib.request

from selenium.webdriver.common.by import By

from browser_support import PHONE, TEACHER, browsers, join_screen, text, trusting_home, visible, wait
from conftest import SHORT_STORY
from test_browser import choose, confirm, press
from tls_support import tls_ca  # noqa: F401 (the fixture)


def https_request(base, ca, method, path, token=None, body=None):
    request = urllib.request.Request(base + path, data=json.dumps(body).encode() if body is not None else None, method=method)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    if body is not None:
        request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=15, context=ssl.create_default_context(cafile=str(ca))) as response:
        return response.status, json.loads(response.read())


def secure(driver):
    """The page is a secure context, loaded over https, and its room socket (if it has one) is wss."""
    state = driver.execute_script("""
        const socket = window.storycircle && window.storycircle.connection && window.storycircle.connection.socket;
        return {secure: window.isSecureContext, protocol: location.protocol, socket: socket ? socket.url : null};
    """)
    assert state["secure"] is True and state["protocol"] == "https:", state
    assert state["socket"] is None or state["socket"].startswith("wss://"), state
    return state


def no_certificate_or_mixed_content_trouble(driver):
    """Nothing in the browser's log about mixed content or a certificate, and no error at all."""
    entries = driver.get_log("browser")
    troubled = [e for e in entries if any(word in e["message"] for word in ("Mixed Content", "mixed content", "ERR_CERT", "certificate", "ERR_SSL"))]
    assert not troubled, troubled
    severe = [e for e in entries if e["level"] == "SEVERE" and "favicon" not in e["message"]]
    assert not severe, severe


def test_a_class_over_https_and_wss_with_the_local_ca_trusted(make_server, browsers, tls_ca, tmp_path):
    certificate, key = tls_ca.issue()
    ca = tls_ca.certificate
    server = make_server(args=["--tls-certificate", str(certificate), "--tls-key", str(key)])
    base = f"https://127.0.0.1:{server.port}"
    status, room = https_request(base, ca, "POST", "/api/rooms", server.admin_token, {"story": json.loads(SHORT_STORY.read_text()), "settings": {}})
    assert status == 201, room
    code = room["code"]
    home = trusting_home(ca, tmp_path / "home")

    teacher = browsers(**TEACHER, home=home)
    teacher.get(f"{base}/teacher#room={code}&token={room['teacherToken']}")
    wait(teacher, lambda d: "Waiting to start" in text(d, "#room-state"), message="the teacher's page over https")
    phones = {name: browsers(**PHONE, home=home) for name in ("Ana", "Ben")}
    for name, phone in phones.items():
        phone.get(f"{base}/?room={code}")
        join_screen(phone).send_keys(name)
        phone.find_element(By.ID, "join-button").click()
        wait(phone, lambda d: visible(d, "#lobby") and d.find_element(By.ID, "lobby-story").text, message=f"{name} reached the lobby over wss")
        phone.save_screenshot(str(tmp_path / f"https-phone-lobby-{name}.png"))
    wait(teacher, lambda d: d.find_element(By.ID, "roster-count").text == "2", message="both children on the teacher's roster")

    # The story is skipped (narration is not what this is about), the first question answered on both phones.
    press(teacher, "start")
    press(teacher, "skip")
    confirm(teacher, True)
    choose(phones["Ana"], "A gear")
    choose(phones["Ben"], "A hat")
    for name, phone in phones.items():
        wait(phone, lambda d: visible(d, "#reveal-title"), message=f"{name}'s reveal")
        phone.save_screenshot(str(tmp_path / f"https-phone-reveal-{name}.png"))
    press(teacher, "end")
    confirm(teacher, True)
    for phone in phones.values():
        wait(phone, lambda d: visible(d, "#finished-title"), message="the end")
    phones["Ana"].save_screenshot(str(tmp_path / "https-phone-finished.png"))

    # The report, opened from the teacher's page, over https too.
    wait(teacher, lambda d: visible(d, "#end-results"), message="the results on the teacher's page")
    secure(teacher)
    teacher.find_element(By.ID, "open-results").click()
    wait(teacher, lambda d: len(d.window_handles) == 2)
    teacher.switch_to.window(teacher.window_handles[1])
    wait(teacher, lambda d: visible(d, "#results-table"), message="the results page")
    assert "Ana" in text(teacher, "#results-table") and "Ben" in text(teacher, "#results-table")
    secure(teacher)
    teacher.switch_to.window(teacher.window_handles[0])

    for phone in phones.values():
        assert secure(phone)["socket"], "the child's page holds its room socket, over wss"
    for driver in (teacher, *phones.values()):
        no_certificate_or_mixed_content_trouble(driver)
