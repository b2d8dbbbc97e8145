#!/usr/bin/env python3
"""StoryCircle's resident Piper worker: loads each voice once, then answers synthesis requests.

The server starts one per node (Sources/Speech/PiperWorker.swift) and talks to it over stdin/stdout:

  request  (one JSON line on stdin):  {"id": 7, "voice": "en_US-joe-medium", "text": "...", "lengthScale": 1.0}
  answer   (one JSON line on stdout): {"id": 7, "ok": true, "sampleRate": 22050, "bytes": N}
           followed by exactly N bytes of 16-bit little-endian mono PCM;
           or {"id": 7, "ok": false, "error": "..."} with no bytes after it.

Before the first request it prints {"ready": true, "voices": [...]} once every voice given with --voice
NAME=MODEL.onnx has loaded and read a short warm-up text, or {"ready": false, "error": "..."} and
exits 1. It lowers its own CPU priority first (nice), so synthesis never delays the server's messages.
It exits when stdin closes, so it never outlives the server.
"""

import argparse
import json
import os
import sys


# A short text read once per voice as it loads (its audio is thrown away).
WARM_UP_TEXT = "Hello."


def load_voice(model: str, threads: int, onnxruntime, PiperVoice, PiperConfig):
    """A voice whose onnxruntime session computes on `threads` threads.

    `PiperVoice.load` makes its session with default options: an intra-op pool of one thread per core,
    which spins on every core while it reads and would take the CPU from the server's messages. The
    session is made here instead, as `PiperVoice.load` makes it (CPU provider, the model's own config)
    but with its thread pools bounded and no spinning between operators.
    """
    with open(model + ".json", "r", encoding="utf-8") as config_file:
        config = PiperConfig.from_dict(json.load(config_file))
    session_options = onnxruntime.SessionOptions()
    session_options.intra_op_num_threads = threads
    session_options.inter_op_num_threads = 1
    session_options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    session_options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    # Basic graph optimisations only: the extended and layout ones cost 0.2-0.5 s more at every start
    # (the worker's start is the cold first sentence) and made synthesis no faster here (measured: a
    # 12-sentence story 4.3-4.5 s CPU with basic, 4.8 s with all).
    session_options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
    session = onnxruntime.InferenceSession(model, sess_options=session_options, providers=["CPUExecutionProvider"])
    voice = PiperVoice(session=session, config=config)
    # onnxruntime's first run of a session allocates its buffers and is slower than later ones: paid here,
    # before the worker says it is ready, so that no room's first sentence pays it.
    for _ in voice.synthesize(WARM_UP_TEXT):
        pass
    return voice


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--voice", action="append", default=[], metavar="NAME=MODEL.onnx")
    parser.add_argument("--nice", type=int, default=10, help="how much to lower this process's CPU priority")
    parser.add_argument("--threads", type=int, default=1, help="onnxruntime threads: one unless the server asks for more (its piperThreads)")
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
        import onnxruntime  # imported first so that a missing runtime is named plainly
        from piper import PiperVoice, SynthesisConfig
        from piper.config import PiperConfig
    except Exception as error:  # a missing or broken install: said once, then exit
        say({"ready": False, "error": f"piper-tts cannot be imported: {error}"})
        return 1

    voices = {}
    described = []
    for spec in options.voice:
        name, _, model = spec.partition("=")
        try:
            voice = load_voice(model, options.threads, onnxruntime, PiperVoice, PiperConfig)
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
