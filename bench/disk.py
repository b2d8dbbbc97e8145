"""The disk under the bench's data folder: its filesystem and the latency of a durable write there.

StoryCircle acknowledges an answer only once SQLite has committed it (WAL, synchronous=FULL): every
acknowledgement waits for an fsync-class call on this disk, so the answer figures mean nothing without it.
Appends 4 KiB and syncs, as a WAL commit does, 200 times each with fdatasync (what SQLite calls on Linux)
and fsync. Prints one JSON line for bench/run.sh: {"run": 0, "label": "disk", "result": {...}}."""
import json
import os
import subprocess
import sys
import time


def percentiles(values):
    ordered = sorted(values)

    def at(fraction):
        index = max(0, min(len(ordered) - 1, -(-len(ordered) * fraction // 1) - 1))
        return ordered[int(index)]

    return {"count": len(ordered), "p50": at(0.50), "p95": at(0.95), "p99": at(0.99), "max": ordered[-1],
            "mean": sum(ordered) / len(ordered)}


def sync_latencies(path, sync, count=200):
    block = os.urandom(4096)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        latencies = []
        for _ in range(count):
            os.write(fd, block)
            start = time.perf_counter_ns()
            sync(fd)
            latencies.append((time.perf_counter_ns() - start) / 1e6)
        return percentiles(latencies)
    finally:
        os.close(fd)
        os.unlink(path)


def filesystem(folder):
    try:
        out = subprocess.run(["findmnt", "-n", "-o", "FSTYPE,SOURCE,OPTIONS", "-T", folder],
                             capture_output=True, text=True, check=True).stdout.split()
        return {"type": out[0], "source": out[1], "options": out[2] if len(out) > 2 else ""}
    except (OSError, subprocess.CalledProcessError, IndexError):
        return {"type": "unknown", "source": "unknown", "options": ""}


def main(folder):
    os.makedirs(folder, exist_ok=True)
    probe = os.path.join(folder, "fsync-probe")
    result = {
        "scenario": "disk",
        "folder": os.path.abspath(folder),
        "filesystem": filesystem(folder),
        "fdatasyncMs": sync_latencies(probe, os.fdatasync),
        "fsyncMs": sync_latencies(probe, os.fsync),
    }
    print(json.dumps({"run": 0, "label": "disk", "result": result}))
    fs = result["filesystem"]
    print(f"  disk: {fs['type']} on {fs['source']}; 4 KiB append + fdatasync p50 {result['fdatasyncMs']['p50']:.2f} ms, "
          f"p99 {result['fdatasyncMs']['p99']:.2f} ms", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1])
