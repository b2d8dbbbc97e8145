"""An espeak-ng voice this computer does not have is refused wherever it is named, with the voices it has
for that language (or every language when the language is unknown), never read by another voice: by
`story validate`, by the API when a room is created (the story's voice or the room's), when the teacher
types one into the room's settings (API and the teacher's page, which says so in words), and by
`storycircle start --voice`. ("klingon" is no example here: espeak-ng has a Klingon voice, piqd.)"""

import json
import re
import subprocess

from conftest import BIN, ROOT, SHORT_STORY

ENGLISH = ["en-gb", "en-us"]
OTHERS = ["fr-fr", "de", "es"]


def story_with(voice, tmp_path):
    story = json.loads(SHORT_STORY.read_text())
    story.setdefault("narration", {})["voice"] = voice
    path = tmp_path / "story.json"
    path.write_text(json.dumps(story))
    return story, path


def listed(text):
    """The voices a refusal lists (after 'Installed voices: ', or a list alone), as a set of names."""
    return set(re.findall(r"[A-Za-z0-9:_+-]+", text.split("Installed voices: ", 1)[-1].split(" (storycircle voices")[0]))


def test_story_validate_refuses_an_unknown_voice_listing_the_voices_of_its_language_or_all(tmp_path):
    _, path = story_with("en-xx", tmp_path)
    checked = subprocess.run([BIN, "story", "validate", str(path)], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert checked.returncode == 1
    assert 'narration.voice: espeak-ng has no voice "en-xx"' in checked.stderr
    voices = listed(checked.stderr)
    assert all(v in voices for v in ENGLISH) and not any(v in voices for v in OTHERS), voices
    assert '(those for "en")' in checked.stderr

    _, path = story_with("elvish", tmp_path)
    checked = subprocess.run([BIN, "story", "validate", str(path)], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert checked.returncode == 1
    voices = listed(checked.stderr)
    assert all(v in voices for v in ENGLISH + OTHERS), "a language nobody speaks: every voice"

    # espeak-ng reads a variant it lacks in the plain voice, silently: refused, with the variants it has.
    _, path = story_with("en+xx", tmp_path)
    checked = subprocess.run([BIN, "story", "validate", str(path)], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert checked.returncode == 1
    assert 'espeak-ng has no variant "xx" (after + in "en+xx")' in checked.stderr and "m3" in listed(checked.stderr)

    for voice in ("en-gb", "en+m3", "en-us+f2"):
        _, path = story_with(voice, tmp_path)
        assert subprocess.run([BIN, "story", "validate", str(path)], capture_output=True, text=True, cwd=ROOT, timeout=60).returncode == 0, voice


def test_the_api_refuses_a_room_whose_voice_is_unknown_and_stores_nothing(server):
    story, _ = json.loads(SHORT_STORY.read_text()), None
    before = json.loads(server.request("GET", "/api/rooms", server.admin_token)[2])["rooms"]
    for body in ({"story": {**story, "narration": {**story.get("narration", {}), "voice": "fr-xx"}}},
                 {"story": story, "settings": {"voice": "xx-nowhere"}}):
        status, _, answer = server.request("POST", "/api/rooms", server.admin_token, body)
        assert status == 422, answer
        error = json.loads(answer)["error"]
        assert error["code"] == "voice_not_installed"
        voice = error["params"]["voice"]
        assert voice in ("fr-xx", "xx-nowhere") and f'espeak-ng has no voice "{voice}"' in error["message"]
        voices = listed(error["params"]["voices"])
        if voice == "fr-xx":
            assert "fr-fr" in voices and "en-gb" not in voices
        else:
            assert all(v in voices for v in ENGLISH + OTHERS)
    assert json.loads(server.request("GET", "/api/rooms", server.admin_token)[2])["rooms"] == before


def test_the_teacher_typing_an_unknown_voice_is_refused_and_the_room_keeps_its_voice(server):
    room = server.create_room(settings={"voice": "en-gb"})
    status, answer = server.command(room, "settings", settings={"voice": "es-xx"})
    assert status == 422
    assert answer["error"]["code"] == "voice_not_installed" and answer["error"]["params"]["voice"] == "es-xx"
    voices = listed(answer["error"]["params"]["voices"])
    assert "es" in voices and "es-419" in voices and "en-gb" not in voices
    status, report = server.command(room, "settings", settings={"questionSeconds": 25})
    assert status == 200 and report["settings"]["voice"] == "en-gb", "the refused voice changed nothing"
    status, report = server.command(room, "settings", settings={"voice": "es"})
    assert status == 200 and report["settings"]["voice"] == "es"
    status, report = server.command(room, "settings", settings={"voice": ""})
    assert status == 200 and report["settings"].get("voice") is None, "empty: back to the story's voice"


def test_start_refuses_an_unknown_voice_before_the_room_exists(tmp_path):
    started = subprocess.run([BIN, "start", str(SHORT_STORY), "--port", "0", "--data", str(tmp_path / "data"), "--no-keys", "--voice", "xx-nowhere"],
                             capture_output=True, text=True, cwd=ROOT, timeout=60, stdin=subprocess.DEVNULL)
    assert started.returncode != 0
    assert 'espeak-ng has no voice "xx-nowhere"' in started.stdout + started.stderr


def test_the_teachers_page_says_in_words_that_a_typed_voice_is_not_here_and_keeps_the_rooms(server):
    from selenium.webdriver.common.by import By
    from browser_support import TEACHER, browser, wait

    room = server.create_room(settings={"voice": "en-gb"})
    teacher = browser(**TEACHER)
    try:
        teacher.get(f"{server.http}/teacher#room={room['code']}&token={room['teacherToken']}")
        field = wait(teacher, lambda d: (f := d.find_element(By.CSS_SELECTOR, "#controls form input[name=voice]")).get_attribute("value") == "en-gb" and f,
                     message="the settings show the room's voice")
        teacher.execute_script("arguments[0].value = 'xx-nowhere'; arguments[0].form.requestSubmit()", field)
        wait(teacher, lambda d: "does not have that voice" in d.find_element(By.TAG_NAME, "body").text, message="the refusal in words")
    finally:
        teacher.quit()
    status, _, body = server.request("GET", f"/api/rooms/{room['code']}", room["teacherToken"])
    assert status == 200 and json.loads(body)["settings"]["voice"] == "en-gb"
