#!/usr/bin/env python3
"""StoryCircle's resident Piper worker: loads each voice once, then answers synthesis requests.

The server starts one per node (Sources/Speech/PiperWorker.swift) and talks to it over stdin/stdout:

  request  (one JSON line on stdin):  {"id": 7, "voice": "en_US-joe-medium", "text": "...", "lengthScale": 1.0}
  answer   (one JSON line on stdout): {"id": 7, "ok": true, "sampleRate": 22050, "bytes": N}
           followed by exactly N bytes of 16-bit little-endian mono PCM;
           or {"id": 7, "ok": false, "error": "..."} with no bytes after it.

Before the first request it prints {"ready": true, "voices": [...]} once every voice given with --voice
NAME=MODEL.onnx has loaded, or {"ready": false, "error": "..."} and exits 1. It lowers its own CPU
priority first (nice), so synthesis never delays the server's messages. It exits when stdin closes,
so it never outlives the server.
"""

import argparse
import json
import os
import sys


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--voice", action="append", default=[], metavar="NAME=MODEL.onnx")
    parser.add_argument("--nice", type=int, default=10, help="how much to lower this process's CPU priority")
    parser.add_argument("--threads", type=int, default=1, help="onnxruntime threads (one core is the budget)")
    options = parser.parse_args()
    out = sys.stdout.buffer

    def say(obj: dict, payload: bytes = b"") -> None:
        out.write(json.dumps(obj, separators=(",", ":")).encode() + b"\n")
        if payload:
            out.write(payload)
        out.flush()

    try:
        if options.nice:
            os.nice(options.nice)
        # Before onnxruntime is imported: it reads these when its thread pools start.
        os.environ.setdefault("OMP_NUM_THREADS", str(options.threads))
        import onnxruntime  # noqa: F401  (imported first so a missing runtime is named plainly)
        from piper import PiperVoice, SynthesisConfig
    except Exception as error:  # a missing or broken install: said once, then exit
        say({"ready": False, "error": f"piper-tts cannot be imported: {error}"})
        return 1

    voices = {}
    described = []
    for spec in options.voice:
        name, _, model = spec.partition("=")
        try:
            voice = PiperVoice.load(model, config_path=model + ".json")
        except Exception as error:
            say({"ready": False, "error": f"voice {name} did not load: {type(error).__name__}: {error}"})
            return 1
        voices[name] = voice
        described.append({"name": name, "sampleRate": voice.config.sample_rate})
    say({"ready": True, "voices": described, "pid": os.getpid()})

    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        request_id = None
        try:
            request = json.loads(line)
            request_id = request.get("id")
            voice = voices.get(request.get("voice"))
            if voice is None:
                say({"id": request_id, "ok": False, "error": "unknown voice"})
                continue
            config = SynthesisConfig(length_scale=float(request.get("lengthScale", 1.0)))
            pcm = bytearray()
            for chunk in voice.synthesize(str(request.get("text", "")), syn_config=config):
                pcm += chunk.audio_int16_bytes
            say({"id": request_id, "ok": True, "sampleRate": voice.config.sample_rate, "bytes": len(pcm)}, bytes(pcm))
        except Exception as error:
            say({"id": request_id, "ok": False, "error": f"{type(error).__name__}: {error}"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
