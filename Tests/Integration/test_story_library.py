"""The story library over real sockets: the HTTP API (docs/protocol.md, "Story library") and the CLI's
`story list|push|pull` and `start --story-id`, judged by an independent client."""
import json
import os
import pty
import re
import signal
import subprocess
import threading
import urllib.error
import urllib.request

from conftest import BIN, ROOT, SHORT_STORY

SAMPLES = sorted((ROOT / "config/stories").glob("*.json"))


def api(server, method, path, body=None, token=None, raw=None):
    status, headers, data = server.request(method, path, token or server.admin_token, body, raw=raw)
    return status, (json.loads(data) if data else None)


def short_story(title="Test: The Short Story"):
    document = json.loads(SHORT_STORY.read_text())
    document["title"] = title
    return document


def test_the_sample_stories_are_in_the_library_once_and_a_deleted_one_stays_deleted(make_server, tmp_path):
    data = tmp_path / "data"
    server = make_server(data=data)
    # `serve`'s stdout here is a pipe (as under systemd or Docker, where it is the log): the library page's
    # link without the token, and where the token is kept.
    server.wait_for_output("Story library: ")
    line = next(line for line in server.output if line.startswith("Story library: "))
    assert re.match(r"Story library: http://\S+/stories \(open it as \S+/stories#token=<the admin token in \S+/admin-token>\)$", line.strip()), line
    assert server.admin_token not in "".join(server.output), "the token stays out of the log"
    status, listed = api(server, "GET", "/api/stories")
    assert status == 200
    titles = {json.loads(path.read_text())["title"] for path in SAMPLES}
    assert {story["title"] for story in listed["stories"]} == titles
    for story in listed["stories"]:
        assert story["version"] == 1 and story["updatedBy"] == "sample" and story["questions"] >= 1
        assert story["updatedAt"] > 0 and story["language"] in ("en", "es")
    # The picture sample holds its pictures by stored id, so it starts a room.
    olive = next(story for story in listed["stories"] if story["title"] == "Olive the Owl")
    status, room = api(server, "POST", "/api/rooms", {"storyId": olive["id"]})
    assert status == 201, room
    pip = next(story for story in listed["stories"] if story["title"].startswith("Pip"))
    assert api(server, "DELETE", f"/api/stories/{pip['id']}")[0] == 200
    server.stop()

    again = make_server(data=data)
    status, listed = api(again, "GET", "/api/stories")
    assert {story["title"] for story in listed["stories"]} == titles - {pip["title"]}


def test_create_read_update_and_a_stale_update_gets_409_with_the_current_story(server):
    status, created = api(server, "POST", "/api/stories", {"story": short_story("Mine"), "by": "Ms Rivera"})
    assert status == 201, created
    assert created["version"] == 1 and created["title"] == "Mine" and created["updatedBy"] == "Ms Rivera"
    story_id = created["id"]

    status, read = api(server, "GET", f"/api/stories/{story_id}")
    assert status == 200 and read["story"]["title"] == "Mine" and read["questions"] == 3 and read["sentences"] == 2

    first = short_story("Mine, by the first editor")
    status, saved = api(server, "PUT", f"/api/stories/{story_id}", {"story": first, "version": 1, "by": "first"})
    assert status == 200 and saved["version"] == 2

    second = short_story("Mine, by the second editor")
    status, refused = api(server, "PUT", f"/api/stories/{story_id}", {"story": second, "version": 1, "by": "second"})
    assert status == 409
    assert refused["error"]["code"] == "story_conflict"
    assert refused["error"]["params"] == {"version": "2"}
    assert refused["error"]["current"]["version"] == 2
    assert refused["error"]["current"]["story"]["title"] == "Mine, by the first editor"
    # Nothing was overwritten; the second editor can save on the current version.
    assert api(server, "GET", f"/api/stories/{story_id}")[1]["title"] == "Mine, by the first editor"
    status, saved = api(server, "PUT", f"/api/stories/{story_id}", {"story": second, "version": 2, "by": "second"})
    assert status == 200 and saved["version"] == 3

    status, listed = api(server, "GET", "/api/stories?q=MINE")
    assert [story["id"] for story in listed["stories"]] == [story_id]


def test_two_editors_saving_the_same_version_at_once_one_wins_and_one_gets_the_conflict(server):
    story_id = api(server, "POST", "/api/stories", short_story("Race"))[1]["id"]
    outcomes = []

    def save(editor):
        outcomes.append(api(server, "PUT", f"/api/stories/{story_id}", {"story": short_story(f"Race {editor}"), "version": 1}))

    threads = [threading.Thread(target=save, args=(editor,)) for editor in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    statuses = sorted(status for status, _ in outcomes)
    assert statuses == [200, 409, 409, 409, 409, 409]
    winner = next(body for status, body in outcomes if status == 200)
    assert api(server, "GET", f"/api/stories/{story_id}")[1]["title"] == winner["title"]


def test_the_library_needs_the_admin_token_and_a_teacher_token_gets_403(server):
    room = server.create_room()
    for method, path in [("GET", "/api/stories"), ("POST", "/api/stories"), ("POST", "/api/stories/validate")]:
        status, body = api(server, method, path, short_story(), token=room["teacherToken"])
        assert status == 403 and body["error"]["code"] == "wrong_role", body
        assert "admin token" in body["error"]["message"]
    status, _, data = server.request("GET", "/api/stories")
    assert status == 401 and json.loads(data)["error"]["code"] == "unauthorized"


def test_bad_input_gets_a_clear_error_and_nothing_is_stored(server):
    before = len(api(server, "GET", "/api/stories")[1]["stories"])
    status, body = api(server, "POST", "/api/stories", raw=b'{"title": "broken",')
    assert status == 400 and body["error"]["code"] == "invalid_json"

    wrong = short_story()
    wrong["quiz"]["questions"][1]["answer"] = "blue"
    wrong["quiz"]["questions"][0]["options"] = ["Only one"]
    wrong["narration"]["rate"] = 9000
    status, body = api(server, "POST", "/api/stories", wrong)
    assert status == 422 and body["error"]["code"] == "invalid_story"
    paths = {issue["path"] for issue in body["error"]["issues"]}
    assert {"quiz.questions[0].options", "quiz.questions[1].answer", "narration.rate"} <= paths
    # Each problem with its code and the values its words need, for the pages to word in any language.
    coded = {issue["path"]: (issue["code"], issue["params"]) for issue in body["error"]["issues"]}
    assert coded["quiz.questions[0].options"] == ("too_few_options", {"count": "1", "min": "2"})
    assert coded["narration.rate"] == ("out_of_range", {"value": "9000", "min": "80", "max": "450"})
    assert coded["quiz.questions[1].answer"][0] in {"answer_not_an_option", "answer_not_an_option_case"}

    unknown = short_story()
    unknown["narration"]["voice"] = "xx-nobody"
    status, body = api(server, "POST", "/api/stories", unknown)
    assert status == 422 and [issue["path"] for issue in body["error"]["issues"]] == ["narration.voice"]
    assert body["error"]["issues"][0]["code"] == "voice_not_installed" and body["error"]["issues"][0]["params"] == {"voice": "xx-nobody"}

    huge = short_story()
    huge["text"] = ["Word " * 60_000]
    status, body = api(server, "POST", "/api/stories", huge)
    assert status == 413 and body["error"]["code"] == "payload_too_large"

    status, body = api(server, "PUT", "/api/stories/nothing-here", {"story": short_story(), "version": 1})
    assert status == 404 and body["error"]["code"] == "story_not_found"
    status, body = api(server, "PUT", "/api/stories/nothing-here", {"story": short_story()})
    assert status == 400 and body["error"]["code"] == "invalid_message"
    assert len(api(server, "GET", "/api/stories")[1]["stories"]) == before


def test_validate_gives_the_same_problems_and_words_as_story_validate(server, tmp_path):
    wrong = short_story()
    wrong["quiz"]["questions"][1]["answer"] = "blue"
    wrong["quiz"]["questions"][2]["time"] = 3
    wrong["titel"] = "typo"
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps(wrong))
    cli = subprocess.run([BIN, "story", "validate", str(path)], capture_output=True, text=True, cwd=ROOT)
    cli_lines = {line.removeprefix(f"{path}: ").removeprefix("warning: ") for line in (cli.stdout + cli.stderr).splitlines() if "invalid:" not in line}

    status, body = api(server, "POST", "/api/stories/validate", wrong)
    assert status == 200 and body["valid"] is False
    api_lines = {f"{issue['path']}: {issue['message']}" for issue in body["issues"]}
    assert api_lines == cli_lines
    assert any(issue["severity"] == "warning" and issue["path"] == "titel" for issue in body["issues"])
    codes = {issue["path"]: (issue["code"], issue["params"]) for issue in body["issues"]}
    assert codes["titel"] == ("unknown_field_typo", {"field": "titel", "suggestion": "title"})
    assert codes["quiz.questions[2].time"] == ("out_of_range", {"value": "3", "min": "5", "max": "300"})

    status, body = api(server, "POST", "/api/stories/validate", raw=b"{nope")
    assert status == 200 and body["valid"] is False and body["issues"][0]["message"].startswith("not valid JSON")
    assert body["issues"][0]["code"] == "invalid_json"

    status, body = api(server, "POST", "/api/stories/validate", {"story": short_story()})
    assert body["valid"] is True and body["sentences"] == ["Pip found a blue gear.", "Dot said thank you."] and body["questions"] == 3


def test_every_code_the_validator_can_give_has_words_in_every_catalog():
    """The codes come from the Swift enum every problem is made with (`ValidationCode`: a problem cannot be
    made without one), each mapped to its key by the pages and worded in all six catalogs."""
    swift = (ROOT / "Sources/StoryCircleCore/Model/ValidationCode.swift").read_text()
    codes = re.findall(r'^\s*case \w+ = "(\w+)"\s*$', swift, flags=re.M)
    assert len(codes) >= 40 and "option_duplicate" in codes, f"the Swift enum was not read ({codes})"
    pages = (ROOT / "web-static/js/stories/problems.js").read_text()
    mapped = dict(re.findall(r'^  (\w+): "(library\.problem\.\w+)",$', pages, flags=re.M))
    assert set(mapped) == set(codes), f"codes without words on the pages: {sorted(set(codes) - set(mapped))}"
    for path in sorted((ROOT / "web-static/i18n").glob("*.json")):
        catalog = json.loads(path.read_text(encoding="utf-8"))
        missing = [code for code in codes if not str(catalog.get(mapped[code], "")).strip()]
        assert not missing, f"{path.name}: no words for {missing}"
        assert str(catalog.get("library.problem.unknown", "")).strip(), f"{path.name}: no words for an unknown problem"


def test_both_seed_shapes_are_taken_as_stories(server):
    single = {"title": "One question", "text": "A short tale. It ends.",
              "quiz": {"question": "Did it end?", "options": ["Yes", "No"], "answer": "Yes"}}
    status, created = api(server, "POST", "/api/stories", single)
    assert status == 201 and created["questions"] == 1
    assert created["story"]["quiz"]["questions"][0]["question"] == "Did it end?"
    titled = {"title": "Quiz shape", "text": ["One.", "Two."],
              "quiz": {"title": "The quiz", "questions": [{"question": "How many?", "options": ["1", "2", "3"], "answer": "2", "time": 15}]}}
    status, created = api(server, "POST", "/api/stories", titled)
    assert status == 201 and created["story"]["quiz"]["title"] == "The quiz"


def test_a_room_started_from_a_library_story_keeps_it_from_being_deleted_until_it_ends(server):
    story_id = api(server, "POST", "/api/stories", short_story("For a room"))[1]["id"]
    status, room = api(server, "POST", "/api/rooms", {"storyId": story_id, "settings": {"speedPoints": False}})
    assert status == 201 and room["title"] == "For a room"
    status, body = api(server, "DELETE", f"/api/stories/{story_id}")
    assert status == 409 and body["error"]["code"] == "story_in_use" and body["error"]["rooms"] == [room["code"]]
    assert api(server, "GET", f"/api/stories/{story_id}")[0] == 200

    status, _ = server.command(room, "end")
    assert status == 200
    assert api(server, "DELETE", f"/api/stories/{story_id}")[0] == 200
    status, body = api(server, "GET", f"/api/stories/{story_id}")
    assert status == 404 and body["error"]["code"] == "story_not_found"
    status, body = api(server, "POST", "/api/rooms", {"storyId": story_id})
    assert status == 404 and body["error"]["code"] == "story_not_found"


def test_the_list_comes_in_pages(server):
    for index in range(5):
        api(server, "POST", "/api/stories", short_story(f"Paged {index}"))
    seen = []
    after = ""
    for _ in range(10):
        status, page = api(server, "GET", f"/api/stories?q=Paged&limit=2&after={after}")
        assert status == 200 and len(page["stories"]) <= 2
        seen += [story["title"] for story in page["stories"]]
        if not page.get("next"):
            break
        after = page["next"]
    # Most recently changed first; stories saved in the same millisecond come in id order.
    assert sorted(seen) == [f"Paged {index}" for index in range(5)]
    assert api(server, "GET", "/api/stories?after=junk")[0] == 400


# ---- The command line ----

def cli(server, *args, timeout=60):
    env = dict(os.environ, STORYCIRCLE_SERVER=server.http, STORYCIRCLE_ADMIN_TOKEN=server.admin_token)
    return subprocess.run([BIN, *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=timeout)


def test_story_push_list_pull_and_push_back_on_a_version(server, tmp_path):
    listed = cli(server, "story", "list")
    assert listed.returncode == 0, listed.stderr
    assert "Pip the Robot" in listed.stdout and listed.stdout.splitlines()[0].split() == ["ID", "VERSION", "QUESTIONS", "VOICE", "CHANGED", "BY", "TITLE"]

    mine = tmp_path / "mine.json"
    mine.write_text(json.dumps(short_story("From the terminal")))
    pushed = cli(server, "story", "push", str(mine))
    assert pushed.returncode == 0, pushed.stderr
    story_id = re.search(r"saved as story (\S+), version 1", pushed.stdout).group(1)
    assert story_id in cli(server, "story", "list", "--search", "terminal").stdout
    assert json.loads(cli(server, "story", "list", "--json").stdout)["stories"][0]["id"] == story_id

    pulled_file = tmp_path / "pulled.json"
    pulled = cli(server, "story", "pull", story_id, "--out", str(pulled_file))
    assert pulled.returncode == 0 and f"--id {story_id} --based-on 1" in pulled.stdout
    document = json.loads(pulled_file.read_text())
    assert document["title"] == "From the terminal" and len(document["quiz"]["questions"]) == 3
    assert json.loads(cli(server, "story", "pull", story_id).stdout) == document

    document["title"] = "From the terminal, edited"
    pulled_file.write_text(json.dumps(document))
    again = cli(server, "story", "push", str(pulled_file), "--id", story_id, "--based-on", "1")
    assert again.returncode == 0 and "version 2" in again.stdout
    # Pushing the same file again on version 1 is stale: refused, and nothing is overwritten.
    document["title"] = "Stale"
    pulled_file.write_text(json.dumps(document))
    stale = cli(server, "story", "push", str(pulled_file), "--id", story_id, "--based-on", "1")
    assert stale.returncode == 1 and "changed since (now version 2" in stale.stderr and "--based-on 2" in stale.stderr
    assert api(server, "GET", f"/api/stories/{story_id}")[1]["title"] == "From the terminal, edited"


def test_story_push_uploads_the_pictures_first_and_the_api_refuses_picture_files(server):
    owl = ROOT / "config/stories/olive-the-owl.json"
    pushed = cli(server, "story", "push", str(owl))
    assert pushed.returncode == 0, pushed.stderr
    story_id = re.search(r"saved as story (\S+), version 1", pushed.stdout).group(1)
    stored = api(server, "GET", f"/api/stories/{story_id}")[1]["story"]
    first = stored["text"][0]["picture"]
    assert "file" not in first and re.fullmatch(r"[0-9a-f]{64}", first["id"])
    status, room = api(server, "POST", "/api/rooms", {"storyId": story_id})
    assert status == 201, room

    status, body = api(server, "POST", "/api/stories", json.loads(owl.read_text()))
    assert status == 422 and body["error"]["code"] == "invalid_story"
    assert body["error"]["issues"][0]["path"] == "text[0].picture.file"
    assert "story push" in body["error"]["issues"][0]["message"]


def test_story_push_of_a_bad_story_prints_every_problem_and_saves_nothing(server, tmp_path):
    before = len(api(server, "GET", "/api/stories")[1]["stories"])
    wrong = short_story()
    wrong["quiz"]["questions"][1]["answer"] = "blue"
    wrong["narration"]["voice"] = "xx-nobody"
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps(wrong))
    result = cli(server, "story", "push", str(path))
    assert result.returncode == 1
    assert 'quiz.questions[1].answer: "blue" is not one of the options' in result.stderr
    assert "Error: the story is not valid" in result.stderr
    path.write_text('{"title": ')
    result = cli(server, "story", "push", str(path))
    assert result.returncode == 1 and "not valid JSON" in result.stderr
    assert cli(server, "story", "pull", "nothing-here").returncode == 1
    assert len(api(server, "GET", "/api/stories")[1]["stories"]) == before


def test_start_with_a_story_id_runs_a_room_on_the_library_story(make_server, tmp_path):
    data = tmp_path / "data"
    server = make_server(data=data)
    story_id = api(server, "POST", "/api/stories", short_story("Started by id"))[1]["id"]
    server.stop()

    process = subprocess.Popen([BIN, "start", "--story-id", story_id, "--port", "0", "--data", str(data), "--no-keys"],
                               env=dict(os.environ, STORYCIRCLE_HOME=str(tmp_path / "home")), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        lines = []
        for line in process.stdout:
            lines.append(line)
            if line.startswith("● "):
                break
        banner = "".join(lines)
        assert "· Started by id" in banner, banner
        # No key beside the QR code: the one-time sign-in link leads to the teacher page with the school's key.
        assert "token=" not in banner and re.search(r"http://\S+/sign-in#code=[\w-]{22}", banner), banner
        base, code = re.search(r"Join link: +(http://\S+)/\?room=(\d{6})", banner).groups()
        token = (data / "admin-token").read_text().strip()
        request = urllib.request.Request(f"{base}/api/stories/{story_id}", method="DELETE", headers={"Authorization": f"Bearer {token}"})
        try:
            urllib.request.urlopen(request, timeout=10)
            raise AssertionError("a story in use was deleted")
        except urllib.error.HTTPError as error:
            assert error.code == 409 and json.loads(error.read())["error"]["rooms"] == [code]
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=20)

    missing = subprocess.run([BIN, "start", "--story-id", "nothing-here", "--port", "0", "--data", str(data), "--no-keys"],
                             cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert missing.returncode == 1 and "Error: there is no story nothing-here in the library" in missing.stderr
    both = subprocess.run([BIN, "start", str(SHORT_STORY), "--story-id", story_id], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert both.returncode == 64 and "Give a story file or --story-id, not both." in both.stderr


def test_listen_reads_one_sentence_through_the_audio_cache_and_voices_lists_the_nodes_voices(server):
    status, body = api(server, "POST", "/api/stories/listen", {"text": "Kim had a red kite.", "voice": "en", "rate": 160, "pitch": 40})
    assert status == 200 and body["audio"].startswith("/audio/") and body["durationMs"] > 0
    status, headers, audio = server.request("GET", body["audio"])
    assert status == 200 and headers["content-type"] == "audio/mpeg" and len(audio) > 1000
    # The same sentence again is the same clip (the cache), not a second synthesis.
    assert api(server, "POST", "/api/stories/listen", {"text": "Kim had a red kite.", "voice": "en", "rate": 160, "pitch": 40})[1]["audio"] == body["audio"]
    status, refused = api(server, "POST", "/api/stories/listen", {"text": "Hello.", "voice": "xx-nobody"})
    assert status == 422 and refused["error"]["code"] == "voice_not_installed"
    # The params the pages word the refusal with: the voice asked for and the ones there are.
    assert refused["error"]["params"]["voice"] == "xx-nobody" and "en" in refused["error"]["params"]["voices"], refused
    status, refused = api(server, "POST", "/api/stories/listen", {"text": "x" * 700})
    assert status == 400 and refused["error"]["code"] == "invalid_message"

    status, voices = api(server, "GET", "/api/stories/voices")
    assert status == 200
    names = {voice["name"]: voice.get("language") for voice in voices["voices"]}
    assert names["es"] == "es" and names["en-gb"] == "en"


def test_validate_gives_the_sentences_even_while_the_quiz_has_problems(server):
    story = short_story()
    story["quiz"]["questions"][0]["answer"] = "nope"
    status, body = api(server, "POST", "/api/stories/validate", story)
    assert body["valid"] is False and body["sentences"] == ["Pip found a blue gear.", "Dot said thank you."]


def test_a_saved_story_survives_a_kill_9_at_once(make_server, tmp_path):
    """Saved means durable: the answer to the save is only sent once the story is committed."""
    data = tmp_path / "data"
    server = make_server(data=data)
    status, created = api(server, "POST", "/api/stories", short_story("Kept through a crash"))
    assert status == 201
    status, updated = api(server, "PUT", f"/api/stories/{created['id']}", {"story": short_story("Kept, version 2"), "version": 1})
    assert status == 200
    server.kill()
    again = make_server(data=data)
    status, read = api(again, "GET", f"/api/stories/{created['id']}")
    assert status == 200 and read["version"] == 2 and read["title"] == "Kept, version 2"


def test_serve_on_a_terminal_prints_the_library_link_with_the_token(tmp_path):
    # A person reading a terminal gets the link that opens the page; a pipe (the test above) does not.
    primary, secondary = pty.openpty()
    data = tmp_path / "data"
    process = subprocess.Popen([BIN, "serve", "--port", "0", "--data", str(data)], cwd=ROOT,
                               stdin=subprocess.DEVNULL, stdout=secondary, stderr=subprocess.DEVNULL)
    os.close(secondary)
    try:
        seen = b""
        while b"Press Ctrl-C" not in seen:
            try:
                chunk = os.read(primary, 4096)
            except OSError:  # EIO: the server closed the terminal (it exited)
                chunk = b""
            assert chunk, seen
            seen += chunk
        token = (data / "admin-token").read_text().strip()
        assert re.search(rf"Story library: http://\S+/stories#token={token}\r?\n".encode(), seen), seen
    finally:
        # The terminal stays open until the server has stopped: it writes "Stopping…" to it.
        process.send_signal(signal.SIGINT)
        process.wait(timeout=20)
        os.close(primary)
