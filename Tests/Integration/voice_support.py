"""What the voice tests share: reading a WAV, counting an MP3's frames, and finding where speech starts
after a silence (an implementation of its own, not the server's, so the two can disagree)."""

import json
import pathlib
import struct
import subprocess
import wave

REPO = pathlib.Path(__file__).resolve().parents[2]
JOE = "piper:en_US-joe-medium"


def read_wav(path):
    with wave.open(str(path)) as w:
        assert w.getsampwidth() == 2 and w.getnchannels() == 1
        rate = w.getframerate()
        frames = w.readframes(w.getnframes())
    return list(struct.unpack("<%dh" % (len(frames) // 2), frames)), rate


def mp3_duration_ms(path):
    """Walks the MPEG audio frame headers (Layer III), as a player would, and adds up their samples."""
    data = pathlib.Path(path).read_bytes()
    index, samples, rate = 0, 0, None
    mpeg1_rates = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
    mpeg2_rates = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
    while index + 4 <= len(data):
        b1, b2, b3 = data[index + 1], data[index + 2], data[index + 3]
        assert data[index] == 0xFF and b1 & 0xE0 == 0xE0, f"no frame header at byte {index}"
        version = (b1 >> 3) & 3
        mpeg1 = version == 3
        base = [44100, 48000, 32000][(b2 >> 2) & 3]
        rate = base if mpeg1 else base // (2 if version == 2 else 4)
        bitrate = (mpeg1_rates if mpeg1 else mpeg2_rates)[b2 >> 4] * 1000
        per_frame = 1152 if mpeg1 else 576
        index += per_frame // 8 * bitrate // rate + ((b2 >> 1) & 1)
        samples += per_frame
    assert index == len(data)
    return samples * 1000 // rate


def frame_levels(samples, rate, frame_ms=10):
    size = rate * frame_ms // 1000
    return [(sum(s * s for s in samples[i:i + size]) / max(1, len(samples[i:i + size]))) ** 0.5
            for i in range(0, len(samples), size)]


def onsets_ms(samples, rate, silence_ms=80, ratio=0.06, frame_ms=10):
    """Frames whose loudness rises above `ratio` of the loudest frame after at least `silence_ms` below it."""
    levels = frame_levels(samples, rate, frame_ms)
    threshold = max(max(levels) * ratio, 30)
    needed = silence_ms // frame_ms
    quiet, found = needed, []
    for i, level in enumerate(levels):
        if level >= threshold:
            if quiet >= needed:
                found.append(i * frame_ms)
            quiet = 0
        else:
            quiet += 1
    return found


def say(binary, voice, lines, out, env=None, timeout=300):
    """`storycircle voices --say`: one WAV, MP3 and JSON per line in `out`; answers the parsed JSONs."""
    result = subprocess.run([binary, "voices", "--voice", voice, "--out", str(out), "--say", "\n".join(lines)],
                            capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO)
    assert result.returncode == 0, result.stderr + result.stdout
    clips = []
    for n in range(1, len(lines) + 1):
        meta = json.loads((out / f"{n:03d}.json").read_text())
        meta["wav"], meta["mp3"] = out / f"{n:03d}.wav", out / f"{n:03d}.mp3"
        clips.append(meta)
    return clips, result.stdout


def onset_errors(clip, unanchored=False):
    """For each onset after a silence, the distance to the nearest estimated word start (WAV timeline).
    The first onset (where speech starts) is an anchor of the estimate by construction and never counted;
    with `unanchored`, neither is any onset within 20 ms of another anchor (a pause both readings made)."""
    samples, rate = read_wav(clip["wav"])
    starts = [w["at"] - clip["leadingDelayMs"] for w in clip["words"]]
    onsets = onsets_ms(samples, rate)[1:]
    if unanchored:
        onsets = [o for o in onsets if all(abs(o - a) > 20 for a in clip.get("anchorsMs", []))]
    return [min(abs(s - onset) for s in starts) for onset in onsets]
