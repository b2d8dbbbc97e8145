"""bench/signin.py: teachers signing in with their passwords (issue #51, item 7: 500 teachers within a minute on
one node, sign-in p99 < 300 ms with Argon2id at OWASP's cost).

Setup, not timed: one school and TEACHERS teacher accounts with known passwords, made through the API with the
admin token (POST /api/schools, POST /api/accounts: the server hashes each password, as it does for a real
account). Then the measured window: every teacher signs in once (POST /api/session), at a moment drawn at
random over SECONDS (uniform, fixed seed: a Poisson-like arrival, bursts and lulls, not a metronome), open
loop: a slow answer does not delay the next teacher. Each teacher comes from an address of their own
(127.1.x.y: a district's teachers sit at many computers; the per-address throttle is not what is measured)
on a new connection, as a browser opening the sign-in page does.

Latency is from the teacher's intended moment to the whole answer read (a late generator counts against the
server, never for it; its own lateness is reported beside). CPU: the server's (all its threads, from
/proc/PID/stat) over the window, per sign-in and as a share of a core; the generator's and everything else's
on the machine too, so a reader can tell a quiet run from a crowded one.

Prints one JSON line on stdout (the bench's results) and a summary line on stderr.
  bench/signin.py --port P --admin-token T --server-pid PID [--teachers 500] [--seconds 60]
"""
import argparse
import concurrent.futures
import http.client
import json
import math
import os
import random
import sys
import threading
import time

PASSWORD = "bench teacher password {:04d}"
TICKS = os.sysconf("SC_CLK_TCK")


def request(port, method, path, body=None, token=None, source=None, timeout=60):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout, source_address=(source, 0) if source else None)
    try:
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        connection.request(method, path, body=json.dumps(body).encode(), headers=headers)
        response = connection.getresponse()
        raw = response.read()
        return response.status, raw
    finally:
        connection.close()


def source_address(index):
    return f"127.1.{1 + index // 250}.{1 + index % 250}"


def login(index):
    return f"teacher{index:04d}"


def set_up(port, token, teachers):
    status, raw = request(port, "POST", "/api/schools", {"name": "Bench Primary"}, token)
    if status not in (200, 201):
        sys.exit(f"creating the school: {status} {raw[:300]!r}")
    school = json.loads(raw)["id"]

    def create(index):
        body = {"login": login(index), "displayName": f"Teacher {index}", "role": "teacher", "schoolID": school, "password": PASSWORD.format(index)}
        status, raw = request(port, "POST", "/api/accounts", body, token)
        if status not in (200, 201):
            raise RuntimeError(f"creating {login(index)}: {status} {raw[:300]!r}")

    # Four at a time: the server hashes two at once (its password threads); more would only queue there.
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        list(pool.map(create, range(teachers)))


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def machine_busy_seconds():
    with open("/proc/stat") as stat:
        values = [int(v) for v in stat.readline().split()[1:]]
    idle = values[3] + values[4]
    return (sum(values[:8]) - idle) / TICKS


def percentile(values, q):
    ordered = sorted(values)
    if not ordered:
        return None
    # Nearest rank: the smallest value with at least q % of them at or below it.
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def distribution(values):
    return {"p50": percentile(values, 50), "p95": percentile(values, 95), "p99": percentile(values, 99),
            "max": max(values) if values else None, "count": len(values)}


def sign_in_window(port, teachers, seconds, server_pid, seed):
    rng = random.Random(seed)
    moments = sorted(rng.uniform(0, seconds) for _ in range(teachers))
    order = list(range(teachers))
    rng.shuffle(order)
    results = [None] * teachers
    lock = threading.Lock()

    def one(slot, index, intended):
        sent = time.monotonic()
        try:
            status, raw = request(port, "POST", "/api/session", {"login": login(index), "password": PASSWORD.format(index)}, source=source_address(index))
            ok = status == 200 and "csrf" in json.loads(raw)
        except (OSError, http.client.HTTPException, ValueError) as error:
            status, ok = f"{type(error).__name__}", False
        done = time.monotonic()
        with lock:
            results[slot] = {"status": status, "ok": ok, "fromIntended": (done - intended) * 1000, "fromSent": (done - sent) * 1000,
                             "late": (sent - intended) * 1000}

    # Enough threads that a stalled server never holds back the next teacher (open loop).
    pool = concurrent.futures.ThreadPoolExecutor(min(teachers, 200))
    server_before, machine_before = cpu_seconds(server_pid), machine_busy_seconds()
    own_before = time.process_time()
    start = time.monotonic() + 0.2
    futures = []
    for slot, (index, moment) in enumerate(zip(order, moments)):
        intended = start + moment
        delay = intended - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        futures.append(pool.submit(one, slot, index, intended))
    concurrent.futures.wait(futures)
    pool.shutdown()
    window = time.monotonic() - start
    server = cpu_seconds(server_pid) - server_before
    machine = machine_busy_seconds() - machine_before
    generator = time.process_time() - own_before
    return results, window, server, generator, machine


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--admin-token", required=True)
    parser.add_argument("--server-pid", type=int, required=True)
    parser.add_argument("--teachers", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--seed", type=int, default=51)
    arguments = parser.parse_args()
    if not 1 <= arguments.teachers <= 60_000:
        sys.exit("Error: --teachers must be 1 to 60000")

    began = time.monotonic()
    set_up(arguments.port, arguments.admin_token, arguments.teachers)
    setup_seconds = time.monotonic() - began
    results, window, server, generator, machine = sign_in_window(arguments.port, arguments.teachers, arguments.seconds, arguments.server_pid, arguments.seed)

    answered = [r for r in results if r["ok"]]
    statuses = {}
    for r in results:
        statuses[str(r["status"])] = statuses.get(str(r["status"]), 0) + 1
    line = {
        "scenario": "signin", "target": "storycircle", "teachers": arguments.teachers, "spreadSeconds": arguments.seconds,
        "setupSeconds": round(setup_seconds, 1), "windowSeconds": round(window, 2),
        "signedIn": len(answered), "failed": len(results) - len(answered), "statuses": statuses,
        # Every sign-in counts, a failed one with the time it took to fail.
        "signIn": distribution([r["fromIntended"] for r in results]),
        "signInFromSent": distribution([r["fromSent"] for r in results]),
        "generatorLate": distribution([r["late"] for r in results]),
        "cost": {
            "serverCPUSeconds": round(server, 2),
            "serverCPUMillisecondsPerSignIn": round(server * 1000 / len(results), 1),
            "serverCPUPercent": round(100 * server / window, 1),
            "generatorCPUPercent": round(100 * generator / window, 1),
            "otherCPUPercent": round(100 * max(0.0, machine - server - generator) / window, 1),
        },
    }
    print(json.dumps(line))
    s, c = line["signIn"], line["cost"]
    print(f"signin {arguments.teachers} in {arguments.seconds:g} s: p50 {s['p50']:.0f} ms, p95 {s['p95']:.0f} ms, p99 {s['p99']:.0f} ms, "
          f"max {s['max']:.0f} ms, {line['failed']} failed; server {c['serverCPUMillisecondsPerSignIn']} ms CPU per sign-in, "
          f"{c['serverCPUPercent']} % of a core (generator {c['generatorCPUPercent']} %, others {c['otherCPUPercent']} %); setup {setup_seconds:.0f} s",
          file=sys.stderr)


if __name__ == "__main__":
    main()
