"""Keeps a server's Piper worker reading for SECONDS: rooms on new 22-sentence stories (never cached),
each started as soon as it is created, one every 4 s. Used by bench/narration-alongside.sh.

usage: narration_load.py PORT ADMIN_TOKEN SECONDS"""
import itertools
import json
import sys
import time
import urllib.request

SUBJECTS = ["Pip", "Dot", "The little cloud", "A brave otter", "The old robot", "Lola the turtle", "A sleepy owl", "The teacher"]


def post(port, path, token, body):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(), method="POST",
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    return json.loads(urllib.request.urlopen(request, timeout=30).read())


def main():
    port, token, seconds = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    end = time.monotonic() + seconds
    for n in itertools.count():
        if time.monotonic() > end:
            return
        text = [f"{SUBJECTS[(i + n) % 8]} counted {i + 7 * n} shiny pebbles beside the quiet river on a windy morning." for i in range(22)]
        story = {"title": f"Load {n}", "text": text, "narration": {"voice": "piper:en_US-joe-medium", "rate": 150},
                 "quiz": {"question": "Q?", "options": ["A", "B"], "answer": "A"}}
        room = post(port, "/api/rooms", token, {"story": story, "settings": {}})
        post(port, f"/api/rooms/{room['code']}/commands", room["teacherToken"], {"command": "start"})
        time.sleep(4)


if __name__ == "__main__":
    main()
