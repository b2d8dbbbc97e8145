"""Pictures through the real server: uploads checked by decoding (each bad picture refused with its reason,
nothing else lost), served immutable by content hash, rooms made only from stories whose pictures are
stored, and the CLI's `story validate` and `room create` with a picture story."""
import asyncio
import http.client
import json
import os
import pathlib
import re
import shutil
import subprocess

from conftest import BIN, ROOT, join, screen
from picture_files import SVG, TEXT, jpeg_many_scans, jpeg_with_gps, png, png_bomb

OWL = ROOT / "config" / "stories" / "olive-the-owl.json"


def upload(server, data, token=None):
    status, headers, body = server.request("POST", "/api/pictures", token or server.admin_token, raw=data)
    return status, json.loads(body)


def refused(server, data):
    status, body = upload(server, data)
    return status, body["error"]["code"], body["error"].get("reason"), body["error"]


def test_each_bad_picture_is_refused_with_its_reason_and_nothing_else_is_lost(server):
    good_status, good = upload(server, png())
    assert good_status == 201, good
    assert good["type"] == "image/png" and good["width"] == 64 and good["height"] == 48 and re.fullmatch(r"[0-9a-f]{64}", good["id"])

    whole = png(300, 200)
    assert refused(server, whole[: len(whole) // 2])[:3] == (422, "picture_refused", "picture_damaged")
    assert refused(server, TEXT)[:3] == (422, "picture_refused", "picture_unsupported_format")
    assert "looks like text" in refused(server, TEXT)[3]["message"]
    status, code, reason, error = refused(server, SVG)
    assert (status, code, reason) == (422, "picture_refused", "picture_unsupported_format") and "SVG" in error["message"]
    status, code, reason, error = refused(server, png_bomb())
    assert (status, code, reason) == (422, "picture_refused", "picture_too_many_pixels")
    assert error["params"]["width"] == "30000" and error["params"]["height"] == "30000"
    # Hundreds of scans in a small file: refused, not decoded for minutes.
    assert refused(server, jpeg_many_scans(600))[:3] == (422, "picture_refused", "picture_damaged")
    assert upload(server, jpeg_many_scans(20))[0] == 201

    # 50 MB: refused from its Content-Length, before a byte of it is read.
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=15)
    connection.putrequest("POST", "/api/pictures")
    connection.putheader("Authorization", f"Bearer {server.admin_token}")
    connection.putheader("Content-Length", str(50 * 1024 * 1024))
    connection.endheaders()
    response = connection.getresponse()
    assert response.status == 413
    assert json.loads(response.read())["error"]["code"] == "payload_too_large"
    connection.close()

    # Without the admin token the upload's authority fails from its head: 401 before any of the body is read
    # (test_authority.py has the rest).
    for authorization in (None, "Basic eDp5"):
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=15)
        connection.putrequest("POST", "/api/pictures")
        if authorization:
            connection.putheader("Authorization", authorization)
        connection.putheader("Content-Length", str(1024 * 1024))
        connection.endheaders()
        response = connection.getresponse()
        assert response.status == 401 and json.loads(response.read())["error"]["code"] == "unauthorized"
        connection.close()

    # A phone's photo with its location: stored, without the location.
    status, cleaned = upload(server, jpeg_with_gps())
    assert status == 201 and cleaned["type"] == "image/jpeg"
    status, _, stored = server.request("GET", f"/pictures/{cleaned['id']}")
    assert status == 200 and stored[:3] == b"\xff\xd8\xff"
    for trace in (b"Exif", b"GPS", b"xmpmeta", b"\xff\xe1"):
        assert trace not in stored, trace

    # Nothing else was lost: the good picture, the server's health, and a room made with it.
    status, _, body = server.request("GET", f"/pictures/{good['id']}")
    assert status == 200 and body[:8] == b"\x89PNG\r\n\x1a\n"
    assert server.request("GET", "/healthz")[0] == 200
    story = {"title": "One picture", "text": [{"text": "A red square.", "picture": {"id": good["id"], "alt": "A red square"}}],
             "quiz": {"question": "What colour?", "options": ["Red", "Blue"], "answer": "Red"}}
    assert server.create_room(story)["code"]


def test_pictures_are_served_immutable_by_their_hash_and_only_admins_upload(server):
    status, body = upload(server, png(), token="not-the-admin")
    assert status == 401 and body["error"]["code"] == "unauthorized"
    status, big = upload(server, png(2000, 1000))
    assert status == 201 and (big["width"], big["height"]) == (1600, 800) and big["phone"]["width"] == 800
    status, headers, body = server.request("GET", f"/pictures/{big['id']}?room=123456")
    assert status == 200 and headers["content-type"] == "image/png" and headers["x-content-type-options"] == "nosniff"
    assert headers["etag"] == f'"{big["id"]}"' and "immutable" in headers["cache-control"]
    assert len(body) == big["bytes"]
    status, phone_headers, phone = server.request("GET", f"/pictures/{big['id']}?size=phone")
    assert status == 200 and phone_headers["etag"] == f'"{big["id"]}-phone"' and len(phone) == big["phone"]["bytes"] < len(body)
    request = http.client.HTTPConnection("127.0.0.1", server.port, timeout=15)
    request.request("GET", f"/pictures/{big['id']}", headers={"If-None-Match": f'"{big["id"]}"'})
    answer = request.getresponse()
    assert answer.status == 304 and answer.read() == b""
    request.close()
    assert server.request("GET", "/pictures/" + "0" * 64)[0] == 404
    assert server.request("GET", "/pictures/../../etc/passwd")[0] == 404


def test_a_room_is_only_made_from_a_story_whose_pictures_are_stored(server):
    story = json.loads(OWL.read_text())
    status, _, body = server.request("POST", "/api/rooms", server.admin_token, {"story": story})
    error = json.loads(body)["error"]
    assert status == 422 and error["code"] == "invalid_story" and "pictures/owl.png was not uploaded" in error["message"]
    story["text"] = [{"text": "Hello.", "picture": {"id": "ab" * 32, "alt": "nothing"}}]
    status, _, body = server.request("POST", "/api/rooms", server.admin_token, {"story": story})
    assert status == 422 and "there is no stored picture" in json.loads(body)["error"]["message"]


def run(*args, env=None):
    return subprocess.run([BIN, *args], capture_output=True, text=True, cwd=ROOT, timeout=120, env=dict(os.environ, **(env or {})))


def test_story_validate_checks_every_picture_file_with_its_path(tmp_path):
    assert run("story", "validate", str(OWL)).stdout.strip().endswith("3 questions, 6 pictures")
    shutil.copytree(OWL.parent / "pictures", tmp_path / "pictures")
    story = json.loads(OWL.read_text())
    (tmp_path / "pictures" / "notes.png").write_bytes(TEXT)
    (tmp_path / "pictures" / "bomb.png").write_bytes(png_bomb())
    (tmp_path / "pictures" / "cut.png").write_bytes(png(300, 200)[:400])
    story["text"][1]["picture"]["file"] = "pictures/notes.png"
    story["quiz"]["questions"][0]["options"][1]["picture"]["file"] = "pictures/bomb.png"
    story["quiz"]["questions"][0]["options"][2]["picture"]["file"] = "pictures/missing.png"
    story["quiz"]["questions"][1]["picture"]["file"] = "pictures/cut.png"
    del story["text"][2]["picture"]["alt"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(story))
    result = run("story", "validate", str(bad))
    assert result.returncode == 1
    # The alt text is the format's error; the files are checked once the format is right.
    assert f"{bad}: text[2].picture.alt: the picture needs alt text" in result.stderr
    story["text"][2]["picture"]["alt"] = "Trees"
    bad.write_text(json.dumps(story))
    result = run("story", "validate", str(bad))
    assert result.returncode == 1
    assert f"{bad}: text[1].picture: pictures/notes.png: The file is not a PNG, JPEG or WebP picture (it looks like text)." in result.stderr
    assert f"{bad}: quiz.questions[0].options[1].picture: pictures/bomb.png: The picture is 30000 × 30000 pixels" in result.stderr
    assert f"{bad}: quiz.questions[0].options[2].picture: pictures/missing.png: there is no such file" in result.stderr
    assert f"{bad}: quiz.questions[1].picture: pictures/cut.png: The PNG picture is damaged or cut short" in result.stderr
    assert f"{bad}: invalid: 4 errors" in result.stdout


def test_picture_paths_may_not_lead_outside_the_story_files_folder(tmp_path):
    shutil.copytree(OWL.parent / "pictures", tmp_path / "stories" / "pictures")
    secret = tmp_path / "secret.png"
    shutil.copy(OWL.parent / "pictures" / "owl.png", secret)
    (tmp_path / "stories" / "pictures" / "link.png").symlink_to(secret)
    story = json.loads(OWL.read_text())
    story["text"][0]["picture"]["file"] = str(secret)
    story["text"][1]["picture"]["file"] = "../secret.png"
    story["text"][2]["picture"]["file"] = "pictures/link.png"
    bad = tmp_path / "stories" / "bad.json"
    bad.write_text(json.dumps(story))
    result = run("story", "validate", str(bad))
    assert result.returncode == 1
    assert f"{bad}: text[0].picture: {secret}: a picture's path must be relative to the story file's folder, not absolute" in result.stderr
    assert f"{bad}: text[1].picture: ../secret.png: the picture must be in the story file's folder" in result.stderr
    assert f"{bad}: text[2].picture: pictures/link.png: the picture must be in the story file's folder" in result.stderr
    assert f"{bad}: invalid: 3 errors" in result.stdout


def test_room_create_uploads_the_pictures_and_every_screen_is_sent_them(server, tmp_path):
    env = {"STORYCIRCLE_SERVER": server.http, "STORYCIRCLE_HOME": str(tmp_path / "home"), "STORYCIRCLE_ADMIN_TOKEN": server.admin_token}
    created = run("room", "create", str(OWL), "--no-timer", "--json", env=env)
    assert created.returncode == 0, created.stderr
    room = json.loads(created.stdout)
    status, _, body = server.request("GET", f"/api/rooms/{room['code']}", room["teacherToken"])
    assert status == 200

    async def play():
        child, _ = await join(server, room, "Ana")
        projector = await screen(server, room)
        assert server.command(room, "start")[0] == 200
        for client in (child, projector):
            plan = await client.expect("narration.plan", timeout=60)
            pictures = {p["sentence"]: p for p in plan["pictures"]}
            # Every sentence of a page has its page's picture; the owl's page is two sentences.
            assert sorted(pictures) == list(range(8)) and pictures[0]["id"] == pictures[1]["id"]
            assert pictures[0]["alt"].startswith("A brown owl")
        assert server.command(room, "skip")[0] == 200
        for client in (child, projector):
            question = await client.expect("question", timeout=60)
            assert [p["alt"] for p in question["optionPictures"]] == ["An owl", "A cat", "A fish"]
            assert question["options"] == ["An owl", "A cat", "A fish"] and "answer" not in question
            for picture in question["optionPictures"]:
                assert server.request("GET", f"/pictures/{picture['id']}?room={room['code']}&size=phone")[0] == 200
    asyncio.run(play())
