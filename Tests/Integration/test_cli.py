"""The `storycircle` executable, run as a teacher or a script would."""
import codecs
import csv
import io
import json
import os
import pathlib
import pty
import re
import select
import shutil
import signal
import subprocess
import time

import pytest

from conftest import BIN, ROOT, SHORT_STORY, STORIES

HELP = pathlib.Path(__file__).resolve().parent / "cli_help"
COMMANDS = [[], ["start"], ["serve"], ["room"], ["room", "create"], ["room", "status"], ["room", "list"],
            ["room", "start"], ["room", "next"], ["room", "reveal"], ["room", "pause"], ["room", "resume"],
            ["room", "end"], ["room", "kick"], ["results"], ["story"], ["story", "validate"], ["story", "list"], ["story", "push"],
            ["story", "pull"], ["class"], ["class", "create"], ["class", "list"], ["class", "show"], ["class", "add"],
            ["class", "remove"], ["class", "erase"], ["account"], ["account", "adopt"], ["account", "add"], ["account", "list"], ["account", "disable"], ["account", "enable"], ["account", "reset"],
            ["school"], ["school", "add"], ["school", "list"], ["roster"], ["roster", "import"], ["child"], ["child", "export"], ["child", "erase"], ["audit"], ["voices"], ["tls"], ["tls", "init"]]


def run(*args, env=None, cwd=ROOT, timeout=60):
    return subprocess.run([BIN, *args], capture_output=True, text=True, cwd=cwd, timeout=timeout,
                          env=dict(os.environ, **(env or {})))


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "storycircle")
def test_help_is_exactly_as_documented(command):
    expected = (HELP / ("_".join(["storycircle", *command]) + ".txt")).read_text()
    for flag in ("--help", "-h"):
        result = run(*command, flag)
        assert result.returncode == 0
        assert result.stdout == expected
        assert result.stderr == ""


def test_help_subcommand_and_version():
    assert run("help", "room").stdout == (HELP / "storycircle_room.txt").read_text()
    result = run("--version")
    assert result.returncode == 0 and re.fullmatch(r"\d+\.\d+\.\d+\n", result.stdout)


@pytest.mark.parametrize("arguments, message", [
    (["dance"], "Error: Unknown subcommand 'dance'."),
    (["room", "teleport", "123456"], "Error: Unknown subcommand 'teleport'."),
    (["start"], "Error: Missing expected argument '<story>'."),
    (["room", "kick", "123456"], "Error: Missing expected argument '<nickname>'."),
    (["start", "x.json", "--port", "seventy"], "Error: The value 'seventy' is invalid for '--port <port>': use a port number from 0 to 65535."),
    (["start", "x.json", "--colour", "blue"], "Error: Unknown option '--colour'."),
    (["start", "x.json", "--narrate"], "Error: Missing value for '--narrate <mode>'."),
    (["results", "123456", "--format", "xml"], "Error: The value 'xml' is invalid for '--format <format>': use table, csv or json."),
    (["story", "validate", "a.json", "--json"], "Error: Unknown option '--json'."),
    (["room", "status", "1", "2"], "Error: Unexpected argument '2'."),
])
def test_usage_errors_say_what_is_wrong_and_exit_64(arguments, message):
    result = run(*arguments)
    assert result.returncode == 64
    lines = result.stderr.splitlines()
    assert lines[0] == message
    assert lines[1].startswith("Usage: storycircle")
    assert result.stdout == ""


def test_a_bad_narrate_mode_is_a_usage_error():
    result = run("start", str(SHORT_STORY), "--narrate", "radio")
    assert result.returncode == 64
    assert "use devices, dashboard or off" in result.stderr


def test_story_validate_accepts_the_samples():
    samples = sorted(str(p) for p in (ROOT / "config" / "stories").glob("*.json"))
    assert len(samples) >= 3
    result = run("story", "validate", *samples)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count(": valid: ") == len(samples)
    assert '"Pip the Robot and the Lost Gear", 12 sentences, 3 questions' in result.stdout


def test_story_validate_lists_every_problem_with_its_path(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({
        "title": "Broken", "text": "One sentence.", "mood": "sunny",
        "quiz": {"questions": [
            {"question": "Colour?", "options": ["Red", "Green", "Blue"], "answer": "Purple"},
            {"question": "Twice?", "options": ["Yes", "yes"], "answer": "Yes", "time": 900},
        ]},
    }))
    good = SHORT_STORY
    result = run("story", "validate", str(good), str(bad))
    assert result.returncode == 1
    assert f"{bad}: quiz.questions[0].answer: \"Purple\" is not one of the options [\"Red\",\"Green\",\"Blue\"]" in result.stderr
    assert f"{bad}: quiz.questions[1].options[1]: \"yes\" is the same as option 1; options must be different" in result.stderr
    assert f"{bad}: quiz.questions[1].time: 900 seconds is outside the allowed 5 to 300 seconds" in result.stderr
    assert f"{bad}: warning: mood: unknown field is ignored" in result.stdout
    assert f"{bad}: invalid: 3 errors" in result.stdout
    assert f"{good}: valid" in result.stdout
    missing = run("story", "validate", str(tmp_path / "nowhere.json"))
    assert missing.returncode == 1
    assert "cannot open" in missing.stderr and "there is no such file" in missing.stderr
    broken = tmp_path / "broken.json"
    broken.write_text("{ not json")
    result = run("story", "validate", str(broken))
    assert result.returncode == 1 and "not valid JSON" in result.stderr


def test_room_commands_and_results_against_a_running_server(server, tmp_path):
    env = {"STORYCIRCLE_SERVER": server.http, "STORYCIRCLE_HOME": str(tmp_path / "home"), "STORYCIRCLE_ADMIN_TOKEN": server.admin_token}
    created = run("room", "create", str(SHORT_STORY), "--no-timer", env=env)
    assert created.returncode == 0, created.stderr
    code = re.search(r"Room (\d{6}) created: Test: The Short Story", created.stdout).group(1)
    assert f"Join:      {server.http.replace('127.0.0.1', '')}" not in created.stdout
    saved = json.loads((tmp_path / "home" / "rooms" / f"{code}.json").read_text())
    assert oct((tmp_path / "home" / "rooms" / f"{code}.json").stat().st_mode)[-3:] == "600"

    status = run("room", "status", code, env=env)
    assert status.returncode == 0, status.stderr
    assert f"Room {code} · Test: The Short Story" in status.stdout
    assert "State:    lobby" in status.stdout
    as_json = json.loads(run("room", "status", code, "--json", env=env).stdout)
    assert as_json["settings"]["timer"] is False

    listing = run("room", "list", env=env)
    assert code in listing.stdout and "lobby" in listing.stdout
    assert json.loads(run("room", "list", "--json", env=env).stdout)["rooms"][0]["code"] == code

    # Two children play through the server while the CLI drives the room.
    import asyncio
    from conftest import join, wait_until

    async def play():
        ana, _ = await join(server, {"code": code}, "Ana")
        ben, _ = await join(server, {"code": code}, "Ben, the 2nd")
        assert run("room", "start", code, env=env).returncode == 0
        await ana.expect("narration.plan")
        assert server.request("POST", f"/api/rooms/{code}/commands", saved["teacherToken"], {"command": "skip"})[0] == 200
        question = await ana.expect("question")
        await wait_until(question["opensAt"])
        await ana.send({"type": "answer", "question": 0, "option": 0})
        await ana.expect("answer.ack")
        paused = run("room", "pause", code, env=env)
        assert "pause: done" in paused.stdout
        assert "(paused)" in run("room", "status", code, env=env).stdout
        assert run("room", "resume", code, env=env).returncode == 0
        revealed = run("room", "reveal", code, env=env)
        assert revealed.returncode == 0 and "reveal" in revealed.stdout
        again = run("room", "reveal", code, env=env)
        assert again.returncode == 1 and "There is no open question to reveal. [invalid_command]" in again.stderr
        assert run("room", "kick", code, "Ben, the 2nd", env=env).returncode == 0
        # Remove-and-block: that name (in any case) and that browser's token stay refused.
        cat, cat_welcome = await join(server, {"code": code}, "Cat")
        blocked = run("room", "kick", code, "Cat", "--block", env=env)
        assert blocked.returncode == 0 and "block: done" in blocked.stdout, blocked.stderr
        assert (await cat.expect("kicked"))["blocked"] is True
        from conftest import Client
        again = await Client.connect(server)
        await again.send({"type": "join", "room": code, "nickname": "CAT"})
        assert (await again.expect("error"))["code"] == "blocked"
        back = await Client.connect(server)
        await back.send({"type": "rejoin", "room": code, "token": cat_welcome["token"]})
        assert (await back.expect("error"))["code"] == "blocked"
        assert run("room", "next", code, env=env).returncode == 0
        assert run("room", "end", code, env=env).returncode == 0

    asyncio.run(play())

    table = run("results", code, env=env)
    assert table.returncode == 0, table.stderr
    assert "Test: The Short Story · room" in table.stdout and "finished" in table.stdout
    assert re.search(r"1\s+Ana\s+1000\s+1/3\s+✓", table.stdout)
    result = run("results", code, "--format", "csv", env=env)
    # The same file as the results page downloads: a byte order mark (a spreadsheet reads it as UTF-8),
    # names and questions first, ids last.
    assert result.stdout.startswith("\ufeff")
    rows = list(csv.reader(io.StringIO(result.stdout.removeprefix("\ufeff"))))
    assert rows[0] == ["child", "question", "question_text", "answer", "result", "points", "total_points", "rank", "time_ms", "player_id"]
    assert len(rows) == 1 + 3, "one row per child per question (Ben and Cat were removed)"
    assert rows[1][:6] == ["Ana", "1", "What did Pip find?", "A gear", "right", "1000"]
    assert rows[1][-1] == "p1"
    as_json = json.loads(run("results", code, "--format", "json", env=env).stdout)
    assert as_json["players"][0]["score"] == 1000

    wrong = run("room", "status", code, "--token", "not-the-token", env=env)
    assert wrong.returncode == 1 and "A valid token for room" in wrong.stderr
    nobody = run("room", "status", "654321", env=dict(env, STORYCIRCLE_HOME=str(tmp_path / "empty")))
    assert nobody.returncode == 1 and "no teacher token for room 654321" in nobody.stderr


def test_an_unreachable_server_is_one_clear_line(tmp_path):
    result = run("room", "status", "123456", "--server", "http://127.0.0.1:9", "--token", "x")
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("Error: cannot reach the StoryCircle server at http://127.0.0.1:9 (connection refused).")
    assert "Traceback" not in result.stderr and "Fatal" not in result.stderr


class PtyReader:
    """Reads a pseudo-terminal. Each `expect` looks for its pattern after the previous match, in all that
    has arrived, so a line that came in the same chunk as an earlier one is not lost."""

    def __init__(self, fd):
        self.fd = fd
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.output = ""
        self.position = 0

    def expect(self, pattern, timeout=30):
        """Waits for `pattern`; returns what arrived from the previous match up to the end of this one."""
        deadline = time.monotonic() + timeout
        while True:
            match = re.search(pattern, self.output[self.position:])
            if match:
                start, self.position = self.position, self.position + match.end()
                return self.output[start:self.position]
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"did not see {pattern!r} in:\n{self.output[self.position:]}")
            ready, _, _ = select.select([self.fd], [], [], min(remaining, 0.2))
            if ready:
                try:
                    chunk = os.read(self.fd, 65536)
                except OSError:
                    chunk = b""
                if not chunk:
                    raise AssertionError(f"the program ended before {pattern!r}:\n{self.output[self.position:]}")
                self.output += self.decoder.decode(chunk)


def test_start_in_a_terminal_shows_code_qr_and_status_and_answers_keys(tmp_path):
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(ROOT)
        os.execve(BIN, [BIN, "start", str(SHORT_STORY), "--port", "0", "--data", str(tmp_path / "data")],
                  dict(os.environ, STORYCIRCLE_HOME=str(tmp_path / "home")))
    reader = PtyReader(fd)
    try:
        banner = reader.expect(r"● 0 children")
        code = re.search(r"Join code: (\d{6})", banner).group(1)
        qr_lines = [line for line in banner.splitlines() if "█" in line]
        assert len(qr_lines) >= 15, "a QR code block is drawn"
        assert len({len(line.strip()) for line in qr_lines}) == 1, "every QR row has the same width"
        assert re.search(r"Join link: +http://\S+/\?room=" + code, banner)
        # No key beside the QR code (a projector may mirror this screen): a one-time sign-in link instead.
        assert "token=" not in banner and "/teacher" not in banner and "/dashboard" not in banner
        assert re.search(r"not on the projector[^\n]*\n +https?://\S+/sign-in#code=[\w-]{22}\r?\n", banner)
        saved = json.loads((tmp_path / "home" / "rooms" / f"{code}.json").read_text())
        assert oct((tmp_path / "home" / "rooms" / f"{code}.json").stat().st_mode & 0o777) == "0o600"
        assert saved["teacherToken"] not in banner and saved["dashboardToken"] not in banner
        assert "k skip the story" in banner and "t new sign-in link" in banner
        # t prints a new one-time link.
        os.write(fd, b"t")
        again = reader.expect(r"sign-in#code=[\w-]{22}")
        assert re.findall(r"sign-in#code=([\w-]{22})", banner) != re.findall(r"sign-in#code=([\w-]{22})", again)
        reader.expect(r"press s to start")
        os.write(fd, b"n")
        reader.expect(r"Cannot next now: The room has not started yet")
        os.write(fd, b"s")
        reader.expect(r"→ start")
        reader.expect(r"telling the story · p to pause · k to skip to the quiz|question 1/3")
        # k skips the story (there is a key for what "n" says to do).
        os.write(fd, b"k")
        reader.expect(r"→ skip|the story is over")
        reader.expect(r"question 1/3 · 0/0 answered")
        # q asks first: n keeps the room going, y ends it for everyone.
        os.write(fd, b"q")
        reader.expect(r"End the room for everyone\? \(y/n\)")
        os.write(fd, b"n")
        reader.expect(r"The room goes on\.")
        os.write(fd, b"q")
        reader.expect(r"End the room for everyone\? \(y/n\)")
        os.write(fd, b"y")
        reader.expect(r"The room has ended\. Goodbye!")
        end = reader.expect(r"Results stay available: storycircle results " + code + r" \(")
        assert saved["teacherToken"] not in end
    except BaseException:
        os.kill(pid, signal.SIGKILL)
        raise
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0


def test_start_with_no_keys_shows_no_key_hints_and_prints_log_lines_above_the_status_line(tmp_path):
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(ROOT)
        os.execve(BIN, [BIN, "start", str(SHORT_STORY), "--port", "0", "--data", str(tmp_path / "data"),
                        "--no-keys"], dict(os.environ, STORYCIRCLE_HOME=str(tmp_path / "home")))
    reader = PtyReader(fd)
    try:
        banner = reader.expect(r"● 0 children")
        assert "Keys:" not in banner
        # The teacher's token comes from the one-time sign-in link, as the sign-in page gets it.
        base, sign_in = re.search(r"(https?://\S+)/sign-in#code=([\w-]{22})", banner).groups()
        code = re.search(r"Join code: (\d{6})", banner).group(1)
        import urllib.request
        exchange = urllib.request.Request(f"{base}/api/sign-in", data=json.dumps({"code": sign_in}).encode(), method="POST",
                                          headers={"Content-Type": "application/json"})
        granted = json.loads(urllib.request.urlopen(exchange, timeout=10).read())
        assert granted["room"] == code and granted["go"] == f"/teacher#room={code}"
        token = granted["teacherToken"]
        # Start from the API (there are no keys): the audio cache's folder is now a file, so no clip can be
        # stored, and the server logs a warning.
        cache = tmp_path / "data" / "audio-cache"
        shutil.rmtree(cache)
        cache.write_text("not a folder")
        import urllib.request
        request = urllib.request.Request(f"{base}/api/rooms/{code}/commands", data=b'{"command":"start"}', method="POST",
                                         headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        assert urllib.request.urlopen(request, timeout=10).status == 200
        output = banner + reader.expect(r"Narration could not be prepared[^\n]*\n[\s\S]*narration failed: Pip could not prepare the story")
        # Every status line drawn, and none of them has a key hint.
        statuses = [line for line in re.split(r"\r|\n|\x1b\[2K", output) if line.startswith("● ")]
        hints = ("· press ", "· s to ", "· k to ", "· p to ", "· r to ", "· n for ", "· q to ")
        assert statuses and not any(hint in line for line in statuses for hint in hints), statuses
        # The log line starts on a cleared line of its own, and the status line is drawn again after it.
        log_at = output.index("Narration could not be prepared")
        line_start = output.rindex("\n", 0, log_at) + 1 if "\n" in output[:log_at] else 0
        before_on_that_line = output[line_start:log_at]
        assert before_on_that_line.startswith("\r\x1b[2K") or "● " not in before_on_that_line, repr(before_on_that_line)
        assert "● " not in before_on_that_line.split("\x1b[2K")[-1], repr(before_on_that_line)
        after = output[log_at:]
        assert re.match(r"Narration could not be prepared[^\n]*\r?\n● ", after), repr(after[:300])
    finally:
        os.kill(pid, signal.SIGTERM)
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0


def test_start_with_keys_from_a_pipe_and_sigterm(tmp_path):
    process = subprocess.Popen([BIN, "start", str(SHORT_STORY), "--port", "0", "--data", str(tmp_path / "data")],
                               env=dict(os.environ, STORYCIRCLE_HOME=str(tmp_path / "home")), cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    for line in process.stdout:
        lines.append(line)
        if line.startswith("● "):
            break
    assert any(line.startswith("  Join code: ") for line in lines)
    process.stdin.write("s")
    process.stdin.flush()
    for line in process.stdout:
        if "→ start" in line:
            break
    process.send_signal(signal.SIGTERM)
    rest = process.communicate(timeout=10)[0]
    assert process.returncode == 0
    assert "Stopping the server" in rest
