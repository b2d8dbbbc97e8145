"""Helpers for the pages in real headless Chromium: browsers at exact screen sizes, waits on conditions,
screenshots, axe-core, layout checks and colour-blindness emulation. Nothing here sleeps to synchronise:
every wait is a condition with a timeout."""
import importlib.util
import io
import json
import os
import pathlib
import shutil
import subprocess

import pytest
from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import ROOT

SCREENSHOTS = ROOT / "build" / "screenshots"
AXE_REPORT = SCREENSHOTS / "axe-report.json"

# The screens a classroom uses: a phone, a tablet, the teacher's laptop and two projectors.
PHONE = dict(width=390, height=844, mobile=True)
TABLET = dict(width=820, height=1180, mobile=True)
TEACHER = dict(width=1366, height=768)
PROJECTOR = dict(width=1920, height=1080)
SMALL_PROJECTOR = dict(width=1280, height=720)


def trusting_home(ca, home):
    """A home folder whose NSS database (~/.pki/nssdb, where Chromium on Linux reads the certificates its user
    trusts) trusts `ca` to name websites, as a school's managed device trusts the school's CA: Chromium
    started with HOME there accepts the server's certificate as a real one, with no flag that turns checks off."""
    home = pathlib.Path(home)
    nssdb = home / ".pki" / "nssdb"
    nssdb.mkdir(parents=True, exist_ok=True)
    certutil = shutil.which("certutil")
    if certutil is None:
        pytest.skip("certutil is not installed (scripts/install-deps.sh --test installs libnss3-tools)")
    if not (nssdb / "cert9.db").exists():
        subprocess.run([certutil, "-d", f"sql:{nssdb}", "-N", "--empty-password"], check=True, capture_output=True)
    subprocess.run([certutil, "-d", f"sql:{nssdb}", "-A", "-t", "C,,", "-n", "storycircle-test", "-i", str(ca)], check=True, capture_output=True)
    return home


def browser(width=420, height=860, mobile=False, reduced_motion=False, language=None, home=None):
    """Headless Chromium whose viewport is exactly width×height (emulated: a window cannot be narrower
    than 500 px), with audio allowed to start without a gesture (the projector's sounds); `language`
    ("es") is the browser's own language (navigator.languages), as a phone set to Spanish has. `home`: the
    user's home folder for Chromium (`trusting_home` makes one whose user trusts a test CA)."""
    options = webdriver.ChromeOptions()
    if language:
        options.add_argument(f"--lang={language}")
        options.add_experimental_option("prefs", {"intl.accept_languages": language})
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--mute-audio",
                     "--autoplay-policy=no-user-gesture-required", f"--window-size={max(width, 500)},{height + 200}"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    env = dict(os.environ, HOME=str(home)) if home else None
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver", env=env), options=options)
    driver.set_page_load_timeout(30)
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})
    if reduced_motion:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                               {"features": [{"name": "prefers-reduced-motion", "value": "reduce"}]})
    return driver


@pytest.fixture
def browsers():
    """Opens browsers as `browser(...)` does, and quits every one of them after the test."""
    opened = []

    def open_browser(**kwargs):
        driver = browser(**kwargs)
        opened.append(driver)
        return driver

    yield open_browser
    for driver in opened:
        driver.quit()


def wait(driver, condition, timeout=30, message=""):
    # The pages draw a screen's elements anew when the room changes (the lobby's count on every join): an
    # element found a moment ago may be gone when it is read, and the condition is then simply asked again.
    return WebDriverWait(driver, timeout, poll_frequency=0.05, ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda d: condition(d), message)


def visible(driver, selector):
    elements = driver.find_elements(By.CSS_SELECTOR, selector)
    return elements[0] if elements and elements[0].is_displayed() else None


def record_texts(driver, selector):
    """From now on keeps every text the element at `selector` shows ("" while hidden), each message's
    drawing in turn: a line shown for less than a poll (progress that completes quickly) is still seen.
    `shown_texts` reads them."""
    driver.execute_script("""
        const [selector] = arguments;
        const element = document.querySelector(selector);
        const now = () => element.hidden ? "" : element.textContent;
        const shown = ((window.__shownTexts ??= {})[selector] = [now()]);
        new MutationObserver(() => shown.push(now())).observe(element,
            { childList: true, characterData: true, subtree: true, attributes: true, attributeFilter: ["hidden"] });
    """, selector)


def shown_texts(driver, selector):
    return driver.execute_script("return (window.__shownTexts ?? {})[arguments[0]] ?? null", selector)


def join_screen(driver, expected="form", timeout=30):
    """Waits until the child page opened from a room's link has settled its join screen, and checks it is
    `expected` ("form": the nickname field; "picker": a class's names). The page first asks the room for its
    names and hides the form meanwhile: a test that typed at once could type into a form about to go."""
    def settled(d):
        state = d.find_element(By.ID, "join").get_attribute("data-join")
        return state if state in ("form", "picker") else None
    state = wait(driver, settled, timeout, message="the join screen settled")
    assert state == expected, f"the join screen is the {state}, not the {expected}"
    shown, hidden = ("#nickname", "#picker") if state == "form" else ("#picker", "#join-form")
    assert visible(driver, shown) and not visible(driver, hidden), f"the {state} is what the page shows"
    return driver.find_element(By.ID, "nickname") if state == "form" else driver.find_element(By.ID, "picker")


def plain(words):
    """Text without the invisible marks that isolate a name inside a sentence (U+2068 … U+2069)."""
    return words.replace("\u2068", "").replace("\u2069", "")


def text(driver, selector):
    return plain(driver.find_element(By.CSS_SELECTOR, selector).text)


def screenshot(driver, name):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SCREENSHOTS / f"{name}.png"))


def nothing_ran(driver):
    """No alert opened and no <img> came out of a nickname."""
    try:
        driver.switch_to.alert
        return False
    except NoAlertPresentException:
        pass
    return not driver.find_elements(By.CSS_SELECTOR, "#lobby-list img, #lobby-name img, .board img, .players-table img, .podium img")


def events(driver, name):
    return [e["at"] for e in driver.execute_script("return window.storycircle.events") if e["event"] == name]


def sounds(driver):
    return [s["name"] for s in driver.execute_script("return (window.storycircle && window.storycircle.sounds) || []")]


def no_page_errors(driver):
    severe = [entry for entry in driver.get_log("browser")
              if entry["level"] == "SEVERE" and "favicon" not in entry["message"] and "/ws" not in entry["message"]
              and "net::ERR_INTERNET_DISCONNECTED" not in entry["message"]]
    assert not severe, severe


# ---- axe-core ----

_AXE_SOURCE = None


def _axe_source():
    global _AXE_SOURCE
    if _AXE_SOURCE is None:
        spec = importlib.util.find_spec("axe_playwright_python")
        assert spec and spec.origin, "axe-playwright-python is not installed (Tests/Integration/requirements.txt)"
        _AXE_SOURCE = (pathlib.Path(spec.origin).parent / "axe.min.js").read_text(encoding="utf-8")
    return _AXE_SOURCE


def axe(driver, screen):
    """Runs axe-core (WCAG 2.0/2.1/2.2 A and AA rules) on the page as it is now, records the counts per
    impact in build/screenshots/axe-report.json, and fails on any serious or critical violation."""
    if not driver.execute_script("return typeof window.axe === 'object'"):
        driver.execute_script(_axe_source())
    driver.set_script_timeout(60)
    result = driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]},
                           resultTypes: ["violations"]})
           .then(r => done({violations: r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                                                               nodes: v.nodes.map(n => n.target.join(" ") + " :: " + n.failureSummary)}))}))
           .catch(e => done({error: String(e)}));
    """)
    assert "error" not in result, result
    counts = {"critical": 0, "serious": 0, "moderate": 0, "minor": 0}
    for violation in result["violations"]:
        counts[violation["impact"] or "minor"] += len(violation["nodes"])
    report = json.loads(AXE_REPORT.read_text()) if AXE_REPORT.exists() else {}
    report[screen] = {**counts, "rules": sorted({v["id"] for v in result["violations"]})}
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    AXE_REPORT.write_text(json.dumps(report, indent=2, sort_keys=True))
    severe = [v for v in result["violations"] if v["impact"] in ("serious", "critical")]
    assert not severe, f"axe on {screen}: " + json.dumps(severe, indent=1)
    return counts


# ---- Layout ----

FITS = """
const vw = window.innerWidth, vh = window.innerHeight, doc = document.documentElement;
const problems = [];
if (doc.scrollHeight > vh + 1) problems.push(`page is ${doc.scrollHeight}px tall in a ${vh}px screen`);
if (doc.scrollWidth > vw + 1) problems.push(`page is ${doc.scrollWidth}px wide in a ${vw}px screen`);
const shown = (e) => e.offsetParent !== null || getComputedStyle(e).position === "fixed";
for (const e of document.querySelectorAll(arguments[0])) {
  if (!shown(e)) continue;
  const r = e.getBoundingClientRect();
  const name = (e.id ? "#" + e.id : e.className) + " «" + (e.textContent || "").trim().slice(0, 30) + "»";
  if (r.top < -1 || r.left < -1 || r.bottom > vh + 1 || r.right > vw + 1)
    problems.push(`${name} is outside the screen: ${Math.round(r.left)},${Math.round(r.top)} to ${Math.round(r.right)},${Math.round(r.bottom)}`);
}
for (const e of document.querySelectorAll(arguments[1])) {
  if (!shown(e)) continue;
  const name = (e.className || e.tagName) + " «" + (e.textContent || "").trim().slice(0, 30) + "»";
  if (e.scrollWidth > e.clientWidth + 1) problems.push(`${name} overflows sideways (${e.scrollWidth} > ${e.clientWidth})`);
  if (e.scrollHeight > e.clientHeight + 1) problems.push(`${name} overflows downwards (${e.scrollHeight} > ${e.clientHeight})`);
  const box = e.closest(".option, .distribution li, .chips li, .step");
  if (box && box !== e) {
    const r = e.getBoundingClientRect(), b = box.getBoundingClientRect();
    if (r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1 || r.bottom > b.bottom + 1)
      problems.push(`${name} spills out of its box`);
  }
}
return problems;
"""

PROJECTOR_PARTS = ("#join-code, #qr, .dash-title, #phase, #sound-toggle, #question-text, #question-number, #countdown-text, "
                   ".option, .distribution li, #explanation, #answered, .chips li, .podium, .board li, .grid-list li, "
                   "#lobby-title, #story-text")
PROJECTOR_TEXTS = ".option .label, .option, .distribution .text, .distribution li, .chips li, .podium .who, #question-text, #explanation"


def assert_fits(driver, what):
    """The page needs no scrolling, every part is on screen, and no label spills out of its box."""
    problems = driver.execute_script(FITS, PROJECTOR_PARTS, PROJECTOR_TEXTS)
    size = driver.execute_script("return [innerWidth, innerHeight]")
    assert not problems, f"{what} at {size[0]}×{size[1]}:\n" + "\n".join(problems)


def in_view(driver, element, below=None):
    """Whether `element` is wholly on screen (and, with `below`, not under that sticky element)."""
    return driver.execute_script("""
        const r = arguments[0].getBoundingClientRect();
        const top = arguments[1] ? arguments[1].getBoundingClientRect().bottom : 0;
        return r.top >= top - 1 && r.bottom <= innerHeight + 1 && r.left >= -1 && r.right <= innerWidth + 1;
    """, element, below)


def rect(driver, element):
    return driver.execute_script("const r = arguments[0].getBoundingClientRect(); return {x: r.left, y: r.top, w: r.width, h: r.height};", element)


def colour(driver, element, prop="background-color"):
    """A computed colour as (r, g, b)."""
    value = driver.execute_script("return getComputedStyle(arguments[0]).getPropertyValue(arguments[1])", element, prop)
    numbers = [int(float(n)) for n in value[value.index("(") + 1:value.index(")")].split(",")[:3]]
    return tuple(numbers)


def contrast_ratio(a, b):
    """WCAG 2 contrast ratio of two (r, g, b) colours."""
    def luminance(rgb):
        channels = [c / 255 for c in rgb]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def text_contrast(driver, element):
    """The contrast of an element's text on its own (opaque) background. axe skips disabled controls, so
    faded options and disabled buttons are checked with this."""
    opacity = driver.execute_script("""
        let o = 1; for (let e = arguments[0]; e; e = e.parentElement) o *= Number(getComputedStyle(e).opacity); return o;""", element)
    assert opacity == 1, "a see-through control: its contrast depends on what is behind it"
    return contrast_ratio(colour(driver, element, "color"), colour(driver, element))


# ---- What colour-blind eyes see ----

def emulate_vision(driver, kind):
    """'deuteranopia', 'achromatopsia', … or 'none' (Chromium's rendering emulation)."""
    driver.execute_cdp_cmd("Emulation.setEmulatedVisionDeficiency", {"type": kind})


def silhouette(png, size=24):
    """An element's picture as black and white dots (darker or lighter than its own average): what is
    left of it when colour carries nothing."""
    from PIL import Image
    image = Image.open(io.BytesIO(png)).convert("L").resize((size, size))
    pixels = list(image.getdata())
    mean = sum(pixels) / len(pixels)
    return [p < mean for p in pixels]


def difference(a, b):
    """The share of dots where two silhouettes differ."""
    return sum(x != y for x, y in zip(a, b)) / len(a)
