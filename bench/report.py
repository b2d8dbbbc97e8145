"""bench/run.sh's report: the generator's JSON lines (every run) become bench/results.json and the tables of
bench/results.md: each figure as the median of the runs with its min–max, the ratios to the peers computed
run by run (each StoryCircle run against the peers' runs of the same round, minutes apart), the targets
beside the figures, and every run listed.

    bench/report.py --results RESULTS.jsonl --json OUT.json --markdown OUT.md --seconds S --runs N ...
    bench/report.py --readme README.md [--document bench/results.json]

The second form rewrites the README's Performance table (between its bench-table markers) from a
results.json: the committed one by default, so the README always states the run behind it."""
import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import time

# Each peer in its two forms: the ordinary one (one write per frame) and its batching one (what waits for a
# connection leaves in one write), named for what it is.
PEERS = [("c", "C libwebsockets, one lws_write per writeable callback (poll loop)"),
         ("c-batch", "C libwebsockets on libev, every waiting frame in one write per writeable callback"),
         ("python", "Python websockets + uvloop, broadcast() (one write per frame)"),
         ("python-batch", "Python websockets + uvloop, one writelines per connection per loop turn"),
         ("node", "Node.js ws, ws.send per frame"),
         ("node-cork", "Node.js ws, cork()/uncork() per loop turn"),
         ("go", "Go gorilla/websocket, WritePreparedMessage per frame"),
         ("go-batch", "Go gorilla/websocket, writer draining its channel into one buffered write")]
# StoryCircle itself and its variants (bench/run.sh VARIANTS).
SERVERS = [("storycircle", "StoryCircle"), ("storycircle-uncoalesced", "StoryCircle, coalescing off (`coalesceWrites: false`)")]


def servers():
    return SERVERS + [(f"baseline-{key}", label) for key, label in PEERS]
BEGIN, END = "<!-- bench-table:begin -->", "<!-- bench-table:end -->"


# -- numbers -------------------------------------------------------------------------------------------

def summary(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "runs": len(values)}


def number(value, unit=""):
    """A figure with about three significant digits, and its unit."""
    if value is None:
        return "—"
    if unit == "×":
        return f"{value:.2f}×"
    if isinstance(value, int):
        text = f"{value:,}"
    elif abs(value) >= 1000:
        text = f"{value:,.0f}"
    elif abs(value) >= 100:
        text = f"{value:.0f}"
    elif abs(value) >= 10:
        text = f"{value:.1f}"
    else:
        text = f"{value:.2f}"
    return f"{text} {unit}".strip()


def spread(stats, unit=""):
    """Median (min–max) of the runs, e.g. `12.3 (11.0–14.2) ms`; one run is just its figure."""
    if not stats:
        return "—"
    bare = (lambda v: f"{v:.2f}") if unit == "×" else number
    text = bare(stats["median"]) if stats["runs"] == 1 else f"{bare(stats['median'])} ({bare(stats['min'])}–{bare(stats['max'])})"
    return f"{text}×" if unit == "×" else f"{text} {unit}".strip()


def dig(result, *path):
    for key in path:
        if result is None:
            return None
        result = result.get(key)
    return result


# -- the document ---------------------------------------------------------------------------------------

def machine():
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            model = next((line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name")), model)
    except OSError:
        pass
    return {"cores": os.cpu_count(), "cpu": model, "system": platform.platform(), "kernel": platform.release()}


def git(*arguments):
    return subprocess.run(["git", *arguments], capture_output=True, text=True).stdout.strip()


def build_document(lines, seconds, runs, pinning, full):
    commit = git("rev-parse", "--short", "HEAD")
    dirty = bool(git("status", "--porcelain", "--untracked-files=no", "--", "Sources", "Package.swift", "bench"))
    return {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "commit": commit + ("+uncommitted changes" if dirty else ""),
        "machine": machine(),
        "pinning": pinning,
        "runs": runs,
        "fullSize": full == "yes",
        "seconds": seconds,
        "results": lines,
    }


class Runs:
    """The document's runs, by label."""

    def __init__(self, document):
        # The runs on PostgreSQL have a table of their own; every other table is SQLite's.
        measured = [line for line in document.get("results", []) if "result" in line]
        self.lines = [line for line in measured if line.get("store", "sqlite") == "sqlite"]
        self.postgres = [line for line in measured if line.get("store") == "postgres"]
        self.failures = [line for line in document.get("results", []) if "error" in line]

    def find(self, predicate):
        return sorted((line for line in self.lines if predicate(line["result"])), key=lambda line: line["run"])

    def fanout(self, scenario, target):
        return self.find(lambda r: r.get("scenario") == scenario and r.get("target") == target)

    def lockstep(self, target, rooms, children):
        return self.find(lambda r: r.get("scenario") == "lockstep" and r.get("target") == target
                         and r.get("rooms") == rooms and r.get("children") == children)

    def paced(self, target, rate):
        return self.find(lambda r: r.get("scenario") == "paced" and r.get("target") == target and r.get("broadcastsPerSecond") == rate)

    def paced_rates(self):
        return sorted({line["result"]["broadcastsPerSecond"] for line in self.find(lambda r: r.get("scenario") == "paced")})

    def lockstep_sizes(self):
        # (Not the narration's alongside rooms: a lock-step of their own, reported with the narration.)
        return sorted({(line["result"]["rooms"], line["result"]["children"]) for line in self.find(
                          lambda r: r.get("scenario") == "lockstep" and not is_alongside(r))},
                      key=lambda size: -size[0])

    def scenario(self, name, **fields):
        return self.find(lambda r: r.get("scenario") == name and all(r.get(k) == v for k, v in fields.items()))

    def disk(self):
        found = self.find(lambda r: r.get("scenario") == "disk")
        return found[0]["result"] if found else None


def is_alongside(result):
    """A lock-step window of the narration scenario's (one room beside the natural voice's synthesis)."""
    return result.get("scenario") == "lockstep" and str(result.get("target", "")).startswith("alongside")


def paired_ratio(ours, theirs, path):
    """Their figure ÷ ours, run by run (round n of StoryCircle against round n of the peer)."""
    by_run = {line["run"]: dig(line["result"], *path) for line in ours}
    return summary([dig(line["result"], *path) / by_run[line["run"]] for line in theirs
                    if by_run.get(line["run"]) and dig(line["result"], *path)])


def saturation(result):
    """Which side was at ≥ 90 % of its core: the run's own word, or (for a document from before the
    generator said it) worked out from its cost."""
    if result.get("saturated"):
        return result["saturated"]
    server, generator = dig(result, "cost", "serverCPUPercent"), dig(result, "cost", "generatorCPUPercent")
    if server is None or generator is None:
        return "?"
    return {(True, True): "both", (True, False): "server", (False, True): "generator"}.get((server >= 90, generator >= 90), "neither")


def values(lines, *path):
    return summary([dig(line["result"], *path) for line in lines])


# -- tables ---------------------------------------------------------------------------------------------

def header(document, runs):
    if not document.get("results"):
        return ["No run yet: `make bench` fills this in (commit, date, number of runs, machine, disk)."]
    m, disk = document["machine"], runs.disk()
    disk_text = "—"
    if disk:
        fs = disk["filesystem"]
        disk_text = (f"{fs['type']} ({fs['source']}); a 4 KiB append + fdatasync there: p50 {number(disk['fdatasyncMs']['p50'], 'ms')}, "
                     f"p99 {number(disk['fdatasyncMs']['p99'], 'ms')} (fsync p99 {number(disk['fsyncMs']['p99'], 'ms')})")
    size = "full size" if document.get("fullSize") else "reduced sizes, not for the README"
    # (Not the alongside windows: there the natural voice's worker, a process of its own, is the "other" work
    # on purpose.)
    others = [dig(line["result"], "cost", "otherCPUPercent") for line in runs.lines if not is_alongside(line["result"])]
    others = [value for value in others if value is not None]
    quiet = ""
    if others:
        quiet = (f" Other work on the machine during the measured windows: median {statistics.median(others):.0f} % of a core, "
                 f"at most {max(others):.0f} %")
        if max(others) > 10:
            quiet += " — **the cores were shared: these are not a quiet machine's figures**"
        quiet += "."
    return [f"Commit `{document['commit']}`, {document['date']}, **{document['runs']} run{'' if document['runs'] == 1 else 's'}** of every scenario ({size}, "
            f"{document['seconds'] // 60} min {document['seconds'] % 60} s), servers alternated in each round; median (min–max) of the runs.",
            f"Machine: {m['cores']} × {m['cpu']}, {m['system']}; pinning: {document['pinning']}; generator and server on one machine, loopback.{quiet}",
            f"Data folder: {disk_text}."]


def verdict(stats, target, higher_is_better):
    if not stats:
        return "—"
    # Judged on the figure as printed (a ratio to two decimals), so the verdict never contradicts it.
    median = round(stats["median"], 2)
    ok = median >= target if higher_is_better else median < target
    return "✅ met" if ok else "❌ missed"


def targets_table(runs):
    rows = ["| figure | target | measured | |", "| --- | --- | --- | --- |"]

    def row(label, stats, unit, target, higher_is_better):
        target_text = f"≥ {target:.1f}×" if unit == "×" else f"< {target:g} {unit}"
        rows.append(f"| {label} | {target_text} | {spread(stats, unit)} | {verdict(stats, target, higher_is_better)} |")

    for scenario in ("fanout", "bigroom"):
        ours = runs.fanout(scenario, "storycircle")
        layout = layout_text(ours, scenario)
        row(f"fan-out, {layout}: server CPU per message, Go gorilla's ÷ StoryCircle's", paired_ratio(ours, runs.fanout(scenario, "baseline-go"), ("cost", "microsecondsPerMessage")), "×", 1.0, True)
    big = runs.scenario("quiz", rooms=1)
    rooms = runs.find(lambda r: r.get("scenario") == "quiz" and r.get("rooms", 1) > 1)
    size = big[0]["result"]["children"] if big else 2000
    row(f"quiz, reveal to {size:,} children in one room (one message each): p99 from the last answer", values(big, "reveal", "p99"), "ms", 50, False)
    sustained = runs.scenario("sustained")
    what = f"{sustained[0]['result']['children']:,} children in {sustained[0]['result']['rooms']} rooms for {sustained[0]['result']['durationSeconds']:.0f} s" if sustained else "10,000 children in 250 rooms for 60 s"
    row(f"sustained classroom load, {what}, open loop: p99", values(sustained, "latency", "p99"), "ms", 25, False)
    rate = big[0]["result"]["answersPerSecond"] if big else 2000
    row(f"{rate:,.0f} answers/s in one {size:,}-child room, durable before ack: p99", values(big, "acknowledgement", "p99"), "ms", 25, False)
    if rooms:
        r = rooms[0]["result"]
        row(f"{r['answersPerSecond']:,.0f} answers/s across {r['rooms']} rooms × {r['children'] // r['rooms']}, durable before ack: p99", values(rooms, "acknowledgement", "p99"), "ms", 25, False)
    storm = runs.scenario("joinstorm")
    what = f"{storm[0]['result']['children']:,} children joining within {storm[0]['result']['spreadSeconds']:g} s" if storm else "2,000 children joining within 2 s"
    row(f"join storm, {what}: welcome p99 from the intended start", values(storm, "welcome", "p99"), "ms", 100, False)
    signin = runs.scenario("signin")
    what = f"{signin[0]['result']['teachers']:,} teachers within {signin[0]['result']['spreadSeconds']:g} s" if signin else "500 teachers within 60 s"
    row(f"sign-in with a password (issue #51; Argon2id at OWASP's cost), {what} on one node: p99 from the intended moment", values(signin, "signIn", "p99"), "ms", 300, False)
    return rows


def layout_text(lines, scenario):
    if lines:
        r = lines[0]["result"]
        return f"{r['rooms']} rooms × {r['children'] // r['rooms']}" if r["rooms"] > 1 else f"one room of {r['children']:,}"
    return "250 rooms × 40" if scenario == "fanout" else "one room of 2,000"


WRITES = ("sendto", "sendmsg", "write", "writev")


def lockstep_table(runs, rooms, children):
    """The classroom's regime: one frame per child at a time, everything from one measured window."""
    ours = runs.lockstep("storycircle", rooms, children)
    layout = f"{rooms} rooms × {children // rooms}" if rooms > 1 else f"one room of {children:,}"
    seconds = values(ours, "seconds")
    size = values(ours, "messageBytes")
    rows = [f"**The classroom's regime**, {layout}: one frame per child at a time (each room broadcasts a teacher's pause/resume, "
            f"{number(dig(size, 'median'))} bytes, the next only once every child has it; the peers send the same size), "
            f"windows of {number(dig(seconds, 'median'), 's')}:", "",
            "| server | server CPU per frame (schedstat ns) | user + system (10 ms ticks) | peer ÷ StoryCircle | write calls per frame (sendto, sendmsg, write, writev) | epoll_ctl per frame | broadcast p50 / p99 | rounds in the window | saturated (server / generator share of a core) |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for target, name in servers():
        lines = runs.lockstep(target, rooms, children)
        if not lines and target != "storycircle":
            continue
        ns = summary([dig(l["result"], "nanosecondsPerMessage") / 1000 if dig(l["result"], "nanosecondsPerMessage") is not None else None for l in lines])
        split = f"{number(dig(values(lines, 'cost', 'userMicrosecondsPerMessage'), 'median'))} + {number(dig(values(lines, 'cost', 'systemMicrosecondsPerMessage'), 'median'))} µs" if lines else "—"
        ratio = "1 (reference)" if target == "storycircle" else spread(paired_ratio(ours, lines, ("nanosecondsPerMessage",)), "×")
        writes = summary([sum((dig(l["result"], "syscallsPerMessage") or {}).get(call, 0) for call in WRITES) if dig(l["result"], "syscallsPerMessage") else None for l in lines])
        epoll = summary([(dig(l["result"], "syscallsPerMessage") or {}).get("epoll_ctl") for l in lines])
        saturated = ", ".join(f"{saturation(l['result'])} ({number(dig(l['result'], 'cost', 'serverCPUPercent'))} / {number(dig(l['result'], 'cost', 'generatorCPUPercent'))} %)" for l in lines) or "—"
        rows.append(f"| {name} | {spread(ns, 'µs')} | {split} | {ratio} | {spread(writes)} | {spread(epoll)} | "
                    f"{number(dig(values(lines, 'latency', 'p50'), 'median'), 'ms')} / {spread(values(lines, 'latency', 'p99'), 'ms')} | "
                    f"{spread(values(lines, 'rounds'))} | {saturated} |")
    rows += ["", "Server CPU per frame divides the server's time on a CPU (its threads' schedstat, in nanoseconds) by every frame it sent in the window, "
             "the teacher's included (StoryCircle sends its teacher the broadcast and a `room`; a peer sends it nothing). System calls are counted by perf "
             "on the server for its own window and divided by the frames that arrived within it. A run where neither side was saturated measures cost, "
             "not capacity: its rounds per window are not the server's limit."]
    return rows


def paced_table(runs):
    """The classroom's rates with the broadcast alone: the server sleeps between frames."""
    rates = runs.paced_rates()
    if not rates:
        return []
    first = runs.find(lambda r: r.get("scenario") == "paced")[0]["result"]
    layout = f"{first['rooms']} rooms × {first['children'] // first['rooms']}"
    seconds = values(runs.find(lambda r: r.get("scenario") == "paced"), "seconds")
    rows = [f"**The classroom's rates**, {layout}: the rooms broadcast in turn (a teacher's pause/resume; Poisson times, the same for every server), open loop, "
            f"so the server sleeps between frames as it does in a class; windows of {number(dig(seconds, 'median'), 's')}:", "",
            "| broadcasts per second (frames per second) | server | server CPU per frame (schedstat ns) | peer ÷ StoryCircle | write calls per frame | context switches per frame | p50 / p99 | missed | server / generator share of a core |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for rate in rates:
        ours = runs.paced("storycircle", rate)
        for target, name in servers():
            lines = runs.paced(target, rate)
            if not lines:
                continue
            ns = summary([dig(l["result"], "nanosecondsPerMessage") / 1000 if dig(l["result"], "nanosecondsPerMessage") is not None else None for l in lines])
            ratio = "1 (reference)" if target == "storycircle" else spread(paired_ratio(ours, lines, ("nanosecondsPerMessage",)), "×")
            writes = summary([sum((dig(l["result"], "syscallsPerMessage") or {}).get(call, 0) for call in WRITES) if dig(l["result"], "syscallsPerMessage") else None for l in lines])
            switches = summary([(dig(l["result"], "cost", "voluntarySwitchesPerMessage") or 0) + (dig(l["result"], "cost", "involuntarySwitchesPerMessage") or 0) if dig(l["result"], "cost") else None for l in lines])
            missed = sum(l["result"].get("missed", 0) for l in lines)
            share = f"{number(dig(values(lines, 'cost', 'serverCPUPercent'), 'median'))} / {number(dig(values(lines, 'cost', 'generatorCPUPercent'), 'median'))} %"
            frames = rate * first["children"] / first["rooms"]
            rows.append(f"| {number(rate)} ({number(frames)}) | {name} | {spread(ns, 'µs')} | {ratio} | {spread(writes)} | {spread(switches)} | "
                        f"{number(dig(values(lines, 'latency', 'p50'), 'median'), 'ms')} / {spread(values(lines, 'latency', 'p99'), 'ms')} | {missed} | {share} |")
    rows += ["", "A frame's cost here includes waking up for it: the server's own wake-ups, and on one machine over loopback the generator's receive and wake-up, "
             "which the kernel does inside the server's `sendto`. The sustained scenario sends these frames and also reads, decodes and stores the children's answers and pings. "
             "System calls per frame are perf's counts on the server over a span of the window's length."]
    return rows


def burst_of(lines):
    """Frames queued per child at once in a fan-out's burst (the throughput phase's frames per child)."""
    burst = dig(summary([l["result"]["throughputMessages"] / l["result"]["children"] for l in lines if l["result"].get("children")]), "median")
    return None if burst is None else int(round(burst))


def fanout_table(runs, scenario):
    ours = runs.fanout(scenario, "storycircle")
    rows = [f"**Draining a backlog** (the burst, not the classroom's regime): fan-out, {layout_text(ours, scenario)} (a teacher's pause/resume, {number(values(ours, 'messageBytes')['median'] if ours else None)} bytes, "
            f"{number(burst_of(ours))} queued per child at once, which StoryCircle and the batching peers send in one write and the ordinary peers write one by one; the peers send the same size):", "",
            "| server | server CPU per frame (schedstat ns) | user + system (10 ms ticks) | peer ÷ StoryCircle | write calls per frame (sendto, sendmsg, write, writev) | context switches per frame (vol./invol.) | delivered | broadcast p50 / p99 (latency rounds) | saturated in the burst (server / generator share of a core) |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for target, name in servers():
        lines = runs.fanout(scenario, target)
        if not lines and target != "storycircle":
            continue
        ns = summary([dig(l["result"], "nanosecondsPerMessage") / 1000 if dig(l["result"], "nanosecondsPerMessage") is not None else None for l in lines])
        cpu = spread(values(lines, "cost", "microsecondsPerMessage"), "µs")
        split = f" ({number(dig(values(lines, 'cost', 'userMicrosecondsPerMessage'), 'median'))} + {number(dig(values(lines, 'cost', 'systemMicrosecondsPerMessage'), 'median'))})" if lines else ""
        ratio = "1 (reference)" if target == "storycircle" else spread(paired_ratio(ours, lines, ("nanosecondsPerMessage",)) or paired_ratio(ours, lines, ("cost", "microsecondsPerMessage")), "×")
        writes = summary([sum((dig(l["result"], "syscallsPerMessage") or {}).get(call, 0) for call in WRITES) if dig(l["result"], "syscallsPerMessage") else None for l in lines])
        switches = f"{number(dig(values(lines, 'cost', 'voluntarySwitchesPerMessage'), 'median'))} / {number(dig(values(lines, 'cost', 'involuntarySwitchesPerMessage'), 'median'))}" if lines else "—"
        saturated = ", ".join(f"{saturation(l['result'])} ({number(dig(l['result'], 'cost', 'serverCPUPercent'))} / {number(dig(l['result'], 'cost', 'generatorCPUPercent'))} %)" for l in lines) or "—"
        bound = [l for l in lines if saturation(l["result"]) == "generator"]
        delivered = spread(values(lines, "throughputMessagesPerSecond"), "msg/s") + (" (bound by the generator: not the server's)" if bound else "")
        rows.append(f"| {name} | {spread(ns, 'µs')} | {cpu}{split} | {ratio} | {spread(writes)} | {switches} | {delivered} | "
                    f"{number(dig(values(lines, 'latency', 'p50'), 'median'), 'ms')} / {spread(values(lines, 'latency', 'p99'), 'ms')} | {saturated} |")
    rows += ["", "Peer ÷ StoryCircle above 1 means StoryCircle spends less CPU per frame than that peer (schedstat); each run's ratio pairs it with the StoryCircle run of the same round. "
             "Every frame the server sent in the burst is counted, the teacher's included. The latency is the fan-out's lock-step rounds before the burst, "
             "one frame per child: the burst's own figures are its CPU and calls. System calls: perf on the server for the burst's first second, divided by the frames that arrived within it."]
    return rows


def disk_sentence(runs):
    disk = runs.disk()
    if not disk:
        return ""
    return (f"Answers are acknowledged once SQLite has committed them, in a data folder on {disk['filesystem']['type']} "
            f"({disk['filesystem']['source']}), where a 4 KiB append + fdatasync took p50 {number(disk['fdatasyncMs']['p50'], 'ms')}, "
            f"p99 {number(disk['fdatasyncMs']['p99'], 'ms')} in this run.")


def quiz_table(runs):
    rows = ["| quiz | question p99 | answer → ack p99 | reveal p99 (first–last spread p99) | podium p99 | server CPU per message | reveal / podium size |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    groups = {}
    for line in runs.scenario("quiz"):
        r = line["result"]
        groups.setdefault((r["rooms"], r["children"]), []).append(line)
    for (rooms, children), lines in sorted(groups.items()):
        r = lines[0]["result"]
        what = f"one room of {children:,}" if rooms == 1 else f"{rooms} rooms × {children // rooms}"
        rows.append(f"| {what}, {r['questions']} questions (+{r['warmupQuestions']} warm-up), {r['answersPerSecond']:,.0f} answers/s | "
                    f"{spread(values(lines, 'question', 'p99'), 'ms')} | {spread(values(lines, 'acknowledgement', 'p99'), 'ms')} | "
                    f"{spread(values(lines, 'reveal', 'p99'), 'ms')} ({number(dig(values(lines, 'revealSpread', 'p99'), 'median'), 'ms')}) | "
                    f"{spread(values(lines, 'finished', 'p99'), 'ms')} | {spread(values(lines, 'cost', 'microsecondsPerMessage'), 'µs')} | "
                    f"{number(dig(values(lines, 'revealBytes'), 'median'), 'B')} / {number(dig(values(lines, 'finishedBytes'), 'median'), 'B')} |")
    return rows


def capacity_rows(runs):
    """The ramp of bench/capacity.sh, load by load, and what it implies for one server core."""
    lines = sorted(runs.scenario("capacity"), key=lambda l: l["result"]["children"])
    failed = [l for l in runs.failures if l.get("label", "").startswith("capacity")]
    rows = ["| children (rooms of 40) | p99 | unanswered | server / generator share of a core | server CPU per child-second | children per server core at that cost | server CPU per message | memory per child (peak RSS − RSS before, ÷ children) |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for line in lines:
        r = line["result"]
        s = r["sustained"]
        cost = s.get("cost") or {}
        share = cost.get("serverCPUPercent", 0) / 100
        per_child = share / r["children"] if r["children"] else None
        generator = cost.get("generatorCPUPercent")
        bound = " (generator ≥ 90 %: its limit, not the server's)" if generator is not None and generator >= 90 else ""
        instead = f" (the most this machine's open-file limit, {r['openFileLimit']:,}, allows; in place of {r['insteadOf']:,})" if r.get("insteadOf") else ""
        rows.append(f"| {r['children']:,} from {r['sourceAddresses']} loopback addresses{instead} | {number(s['latency']['p99'], 'ms')} | {s['unanswered']:,} | "
                    f"{number(cost.get('serverCPUPercent'))} / {number(generator)} %{bound} | {number(per_child * 1e6 if per_child else None, 'µs')} | "
                    f"{number(round(1 / per_child) if per_child else None)} | {number(cost.get('microsecondsPerMessage'), 'µs')} | "
                    f"{number((r['rssPeakKiB'] - r['rssBaselineKiB']) / r['children'] if r['children'] else None, 'KiB')} |")
    for line in failed:
        rows.append(f"| {line['label'].split()[-1]} | **failed**: {line['error'].splitlines()[-1] if line['error'] else '(no message)'} | | | | | | |")
    if not lines and not failed:
        return rows + ["| — | | | | | | | |"]
    good = [l for l in lines if l["result"]["sustained"]["latency"]["p99"] < 25 and l["result"]["sustained"]["unanswered"] == 0
            and (dig(l["result"], "sustained", "cost", "generatorCPUPercent") or 0) < 90]
    costs = [(l["result"]["children"], dig(l["result"], "sustained", "cost", "serverCPUPercent")) for l in lines]
    costs = [(children, share / 100 / children * 1e6) for children, share in costs if share and children]
    if len(costs) >= 2:
        (low, low_cost), (high, high_cost) = costs[0], costs[-1]
        rows += ["", f"Server CPU per child-second from {low:,} to {high:,} children: {number(low_cost, 'µs')} → {number(high_cost, 'µs')} "
                 f"(× {high_cost / low_cost:.2f} for × {high / low:.2f} the children: "
                 + ("the cost per child falls as the load grows" if high_cost < low_cost * 0.97 else "the cost per child grows with the load" if high_cost > low_cost * 1.03 else "linear within 3 %") + ")."]
    if good:
        top = good[-1]["result"]
        rows += ["", f"Highest load driven with p99 < 25 ms, nothing unanswered and the generator below 90 % of its core: **{top['children']:,} children** "
                 f"(the server's core {number(dig(top, 'sustained', 'cost', 'serverCPUPercent'))} % busy). The server's settings: "
                 f"maxConnectionsPerAddress {top['maxConnectionsPerAddress']:,}, as a school behind a few NAT addresses would set it."]
    return rows


def sustained_table(runs):
    lines = runs.scenario("sustained")
    rows = ["| sustained | p50 | p99 | progress | unlock | question | ack | reveal | pong | delivered | unanswered | generator late p99 | server CPU |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    if not lines:
        return rows + ["| — | | | | | | | | | | | | |"]
    r = lines[0]["result"]
    kinds = " | ".join(spread(values(lines, "byType", kind, "p99"), "ms") for kind in ("progress", "unlock", "question", "ack", "reveal", "pong"))
    rows.append(f"| {r['children']:,} children, {r['rooms']} rooms, {r['durationSeconds']:.0f} s | {spread(values(lines, 'latency', 'p50'), 'ms')} | "
                f"{spread(values(lines, 'latency', 'p99'), 'ms')} | {kinds} | {spread(values(lines, 'messagesPerSecond'), 'msg/s')} | "
                f"{spread(values(lines, 'unanswered'))} | {spread(values(lines, 'sendLag', 'p99'), 'ms')} | {spread(values(lines, 'cost', 'serverCPUPercent'), '%')} |")
    rows += ["", "Columns progress…pong are p99 per kind of message, each from its intended time: a sentence's `at`; the story's end; "
             "the teacher's intended `next`; each intended answer; the room's last intended answer; each intended ping. "
             "\"Generator late\" is how late the generator itself sent against those times (already inside the latencies)."]
    return rows


def stores_table(runs):
    """The same quiz (one room, the same answer rate) on SQLite and on PostgreSQL, round by round."""
    sqlite = runs.scenario("quiz", rooms=1)
    postgres = sorted((l for l in runs.postgres if l["result"].get("scenario") == "quiz"), key=lambda l: l["run"])
    rows = ["| store | answers/s | answer → ack p50 | answer → ack p99 | reveal p99 |", "| --- | --- | --- | --- | --- |"]
    if not postgres:
        return rows + ["| PostgreSQL | not run (SCENARIOS without quiz-postgres) | | | |"] + failover_rows(runs)
    for name, lines in (("SQLite (embedded, the default)", sqlite), ("PostgreSQL 15 (local, unix socket, fsync on)", postgres)):
        rate = f"{lines[0]['result']['answersPerSecond']:,.0f} in one room of {lines[0]['result']['children']:,}" if lines else "—"
        rows.append(f"| {name} | {rate} | {spread(values(lines, 'acknowledgement', 'p50'), 'ms')} | "
                    f"{spread(values(lines, 'acknowledgement', 'p99'), 'ms')} | {spread(values(lines, 'reveal', 'p99'), 'ms')} |")
    return rows + failover_rows(runs)


def failover_rows(runs):
    """kill -9 of the busiest of three nodes (Tests/Integration/test_cluster.py on the release build)."""
    lines = sorted((l for l in runs.postgres if l["result"].get("scenario") == "failover"), key=lambda l: l["run"])
    if not lines:
        return []
    r = lines[0]["result"]
    lost = sum(l["result"]["lost"] for l in lines)
    acknowledged = sum(l["result"]["acknowledged"] for l in lines)
    return ["", f"Failover: nginx + 3 nodes + PostgreSQL, 20 rooms × 10 children, `kill -9` of the node holding the most rooms "
                f"during an open question (lease {r['leaseSeconds']} s). Until every child of its rooms is welcomed back: "
                f"p50 {spread(summary([l['result']['p50'] * 1000 for l in lines]), 'ms')}, p99 {spread(summary([l['result']['p99'] * 1000 for l in lines]), 'ms')} "
                f"({len(lines)} run{'s' if len(lines) != 1 else ''}, {spread(summary([l['result']['children'] for l in lines]))} children moved per run); "
                f"acknowledged answers lost: {lost} of {acknowledged}."]


def storm_and_more(runs):
    rows = ["| scenario | figure | measured |", "| --- | --- | --- |"]
    storm = runs.scenario("joinstorm")
    if storm:
        r = storm[0]["result"]
        rows.append(f"| join storm, {r['children']:,} within {r['spreadSeconds']:g} s | welcome p50 / p99 (from the intended start) | "
                    f"{number(dig(values(storm, 'welcome', 'p50'), 'median'), 'ms')} / {spread(values(storm, 'welcome', 'p99'), 'ms')} |")
        rows.append(f"| | join → welcome p99 (the server's part) | {spread(values(storm, 'joinToWelcome', 'p99'), 'ms')} |")
        rows.append(f"| | children without a welcome | {spread(values(storm, 'unwelcomed'))} |")
    signin = runs.scenario("signin")
    if signin:
        r = signin[0]["result"]
        rows.append(f"| {r['teachers']:,} teachers signing in within {r['spreadSeconds']:g} s, each from an address of their own | sign-in p50 / p95 / p99 (from the intended moment) | "
                    f"{spread(values(signin, 'signIn', 'p50'), 'ms')} / {spread(values(signin, 'signIn', 'p95'), 'ms')} / {spread(values(signin, 'signIn', 'p99'), 'ms')} |")
        rows.append(f"| | server CPU per sign-in · share of its core over the window · sign-ins that failed | "
                    f"{spread(values(signin, 'cost', 'serverCPUMillisecondsPerSignIn'), 'ms')} · {spread(values(signin, 'cost', 'serverCPUPercent'), '%')} · {spread(values(signin, 'failed'))} |")
    idle = runs.scenario("idle")
    if idle:
        rows.append(f"| {idle[0]['result']['connections']:,} idle joined children | server memory per child | {spread(summary([dig(l['result'], 'bytesPerConnection') / 1024 for l in idle]), 'KiB')} |")
    unlock = runs.scenario("unlock")
    if unlock:
        rows.append(f"| one room of {unlock[0]['result']['children']:,}, quiz unlock | display spread (clock sync) | {spread(values(unlock, 'displaySpreadMs'), 'ms')} |")
    for voice in sorted({r["result"].get("voice", "en") for r in runs.scenario("narration")}):
        narration = [r for r in runs.scenario("narration") if r["result"].get("voice", "en") == voice]
        # Cold: the first room of a fresh server; warm: a new story once the worker is running; restarted
        # (a natural voice only): a new story right after the worker was killed with SIGKILL.
        # After a lobby: a room on a new story started once its class has had `lobbySeconds` to join (a
        # natural voice reads the opening ahead meanwhile), which is how a class starts.
        restarted = values(narration, 'firstSentenceRestartedMs')
        lobby = values(narration, 'firstSentenceAfterLobbyMs')
        lobby_seconds = narration[0]['result'].get('lobbySeconds')
        rows.append(f"| narration ({voice}), {narration[0]['result']['words']} words | first sentence cold / warm"
                    f"{' / after kill -9 of the worker' if restarted else ''}"
                    f"{f' / after a {lobby_seconds:g} s lobby' if lobby else ''} · whole story (empty cache) / cached | "
                    f"{spread(values(narration, 'firstSentenceColdMs'), 'ms')} / {spread(values(narration, 'firstSentenceWarmMs'), 'ms')}"
                    f"{' / ' + spread(restarted, 'ms') if restarted else ''}"
                    f"{' / ' + spread(lobby, 'ms') if lobby else ''} · "
                    f"{spread(values(narration, 'wholeStoryColdMs'), 'ms')} / {spread(values(narration, 'wholeStoryCachedMs'), 'ms')} |")
    quiet, busy = runs.scenario("lockstep", target="alongside-quiet"), runs.scenario("lockstep", target="alongside-synthesising")
    if quiet and busy:
        children = quiet[0]["result"]["children"]
        rows.append(f"| one room of {children} in lock-step while the natural voice reads other rooms' stories (the worker on the server's core) | broadcast p99 quiet / synthesising "
                    f"(p50 quiet / synthesising) | {spread(values(quiet, 'latency', 'p99'), 'ms')} / {spread(values(busy, 'latency', 'p99'), 'ms')} "
                    f"({spread(values(quiet, 'latency', 'p50'), 'ms')} / {spread(values(busy, 'latency', 'p50'), 'ms')}) |")
    return rows


def every_run(runs):
    rows = ["| run | what | figures |", "| --- | --- | --- |"]
    for line in sorted(runs.lines + runs.postgres, key=lambda l: (l["run"], l["label"])):
        r = line["result"]
        if r.get("scenario") == "disk":
            continue
        cost = r.get("cost") or {}
        cpu = f"server {number(cost.get('microsecondsPerMessage'), 'µs')}/msg ({number(cost.get('userMicrosecondsPerMessage'))} user + {number(cost.get('systemMicrosecondsPerMessage'))} sys), " \
              f"{number(cost.get('voluntarySwitchesPerMessage'))}+{number(cost.get('involuntarySwitchesPerMessage'))} ctxsw/msg, server {number(cost.get('serverCPUPercent'))} % / generator {number(cost.get('generatorCPUPercent'))} % / others {number(cost.get('otherCPUPercent'))} % of a core" if cost else ""
        scenario = r.get("scenario")
        if scenario == "lockstep":
            calls = r.get("syscallsPerMessage") or {}
            text = (f"{r['rounds']} rounds in {number(r['seconds'], 's')}, p50 {number(r['latency']['p50'], 'ms')}, p99 {number(r['latency']['p99'], 'ms')}, "
                    f"{number((r.get('nanosecondsPerMessage') or 0) / 1000, 'µs')}/frame on CPU (schedstat), "
                    f"write calls {number(sum(calls.get(c, 0) for c in WRITES))} and epoll_ctl {number(calls.get('epoll_ctl'))} per frame, saturated: {r.get('saturated')}; {cpu}")
        elif scenario == "paced":
            calls = r.get("syscallsPerMessage") or {}
            text = (f"{r['broadcasts']} broadcasts in {number(r['seconds'], 's')}, p50 {number(r['latency']['p50'], 'ms')}, p99 {number(r['latency']['p99'], 'ms')}, {r['missed']} missed, "
                    f"{number((r.get('nanosecondsPerMessage') or 0) / 1000, 'µs')}/frame on CPU (schedstat), write calls {number(sum(calls.get(c, 0) for c in WRITES))} per frame; {cpu}")
        elif scenario in ("fanout", "bigroom"):
            calls = r.get("syscallsPerMessage") or {}
            text = (f"p50 {number(r['latency']['p50'], 'ms')}, p99 {number(r['latency']['p99'], 'ms')}, {number(r['throughputMessagesPerSecond'])} msg/s, "
                    f"{number((r.get('nanosecondsPerMessage') or 0) / 1000, 'µs')}/frame on CPU (schedstat), write calls {number(sum(calls.get(c, 0) for c in WRITES))} per frame, "
                    f"{r.get('framesToTeachers', 0)} frames to teachers, saturated: {r.get('saturated')}; {cpu}")
        elif scenario == "capacity":
            s = r["sustained"]
            text = (f"{r['children']:,} children from {r['sourceAddresses']} addresses: p99 {number(s['latency']['p99'], 'ms')}, {s['unanswered']} unanswered, "
                    f"RSS {r['rssBaselineKiB']:,} → {r['rssPeakKiB']:,} KiB; " + (f"server {number(dig(s, 'cost', 'microsecondsPerMessage'), 'µs')}/msg, server {number(dig(s, 'cost', 'serverCPUPercent'))} % / generator {number(dig(s, 'cost', 'generatorCPUPercent'))} % of a core" if s.get("cost") else ""))
        elif scenario == "quiz":
            text = (f"question p99 {number(r['question']['p99'], 'ms')}, ack p99 {number(r['acknowledgement']['p99'], 'ms')}, reveal p99 {number(r['reveal']['p99'], 'ms')}, "
                    f"podium p99 {number(r['finished']['p99'], 'ms')}; {cpu}")
        elif scenario == "sustained":
            text = f"p50 {number(r['latency']['p50'], 'ms')}, p99 {number(r['latency']['p99'], 'ms')}, max {number(r['latency']['max'], 'ms')}, {number(r['messagesPerSecond'])} msg/s, {r['unanswered']} unanswered, generator late p99 {number(r['sendLag']['p99'], 'ms')}; {cpu}"
        elif scenario == "joinstorm":
            text = f"welcome p50 {number(r['welcome']['p50'], 'ms')}, p99 {number(r['welcome']['p99'], 'ms')}, {r['unwelcomed']} unwelcomed; {cpu}"
        elif scenario == "idle":
            text = f"{number(r['bytesPerConnection'] / 1024, 'KiB')} per child"
        elif scenario == "signin":
            text = (f"sign-in p50 {number(r['signIn']['p50'], 'ms')}, p95 {number(r['signIn']['p95'], 'ms')}, p99 {number(r['signIn']['p99'], 'ms')}, "
                    f"max {number(r['signIn']['max'], 'ms')}, {r['failed']} failed {r['statuses']}, generator late p99 {number(r['generatorLate']['p99'], 'ms')}; "
                    f"server {number(r['cost']['serverCPUMillisecondsPerSignIn'], 'ms')} CPU per sign-in, server {number(r['cost']['serverCPUPercent'])} % / "
                    f"generator {number(r['cost']['generatorCPUPercent'])} % / others {number(r['cost']['otherCPUPercent'])} % of a core")
        elif scenario == "unlock":
            text = f"display spread {number(r['displaySpreadMs'], 'ms')}"
        elif scenario == "failover":
            text = f"{r['rooms']} rooms, {r['children']} children moved; back p50 {r['p50']:.2f} s, p99 {r['p99']:.2f} s; {r['lost']} of {r['acknowledged']} acknowledged answers lost"
        elif scenario == "narration":
            text = f"first sentence {number(r['firstSentenceColdMs'], 'ms')} cold, {number(r['firstSentenceWarmMs'], 'ms')} warm"
            if r.get("firstSentenceRestartedMs") is not None:
                text += f", {number(r['firstSentenceRestartedMs'], 'ms')} after kill -9 of the worker"
            if r.get("firstSentenceAfterLobbyMs") is not None:
                text += f", {number(r['firstSentenceAfterLobbyMs'], 'ms')} after a {r['lobbySeconds']:g} s lobby"
            text += f"; whole story {number(r['wholeStoryColdMs'], 'ms')}, cached {number(r['wholeStoryCachedMs'], 'ms')}"
        else:
            text = ""
        rows.append(f"| {line['run']} | {line['label']} | {text} |")
    for line in runs.failures:
        rows.append(f"| {line['run']} | {line['label']} | **failed**: {line['error'].splitlines()[-1] if line['error'] else '(no message)'} |")
    return rows


def lockstep_tables(runs):
    out = []
    for rooms, children in runs.lockstep_sizes():
        out += lockstep_table(runs, rooms, children) + [""]
    return out


def readme_block(document):
    runs = Runs(document)
    capacity = ["**A node's capacity** at classroom rates (the sustained scenario ramped until its p99 reaches 25 ms, bench/capacity.sh):", ""] + capacity_rows(runs) + [""] if runs.scenario("capacity") else []
    paced = paced_table(runs)
    return (header(document, runs) + [""] + lockstep_tables(runs) + (paced + [""] if paced else []) + capacity + targets_table(runs) + [""] + fanout_table(runs, "fanout") + [""] + fanout_table(runs, "bigroom")
            + ["", "The same quiz on either store (answers acknowledged only once committed):", ""] + stores_table(runs))


def full_report(document):
    runs = Runs(document)
    out = ["# make bench", ""] + header(document, runs)
    if runs.lockstep_sizes():
        out += ["", "## The classroom's regime: one frame per child", ""] + lockstep_tables(runs)[:-1]
    if runs.paced_rates():
        out += ["", "## The classroom's rates: the server sleeps between frames", ""] + paced_table(runs)
    out += ["", "## Targets (issue #14)", ""] + targets_table(runs)
    out += ["", "## Draining a backlog: the fan-out's burst against the peers", ""] + fanout_table(runs, "fanout") + [""] + fanout_table(runs, "bigroom")
    out += ["", "## A whole quiz round", ""] + quiz_table(runs)
    out += ["", "## SQLite and PostgreSQL", ""] + stores_table(runs)
    out += ["", disk_sentence(runs)] if runs.disk() else []
    out += ["", "Question: the teacher's `next` → each child. Ack: each answer's intended send time → its `answer.ack` (stored first). "
            "Reveal: the room's last intended answer → each child's own reveal. Podium: the last `next` → each child's `finished`."]
    out += ["", "## Sustained classroom load (open loop)", ""] + sustained_table(runs)
    out += ["", "## A node's capacity (bench/capacity.sh)", ""] + capacity_rows(runs)
    out += ["", "## Join storm, sign-in, memory, unlock, narration", ""] + storm_and_more(runs)
    out += ["", "## Every run", ""] + every_run(runs)
    if runs.failures:
        out += ["", f"**{len(runs.failures)} run(s) failed**; see the table above."]
    return "\n".join(out) + "\n"


def rewrite_readme(path, document):
    text = open(path).read()
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    block = "\n".join(readme_block(document))
    with open(path, "w") as readme:
        readme.write(text[:start] + "\n" + block + "\n" + text[end:])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--results")
    parser.add_argument("--json")
    parser.add_argument("--markdown")
    parser.add_argument("--seconds", type=int, default=0)
    parser.add_argument("--runs", type=int, default=0)
    parser.add_argument("--pinning", default="")
    parser.add_argument("--full", default="no")
    parser.add_argument("--readme")
    parser.add_argument("--document", default="bench/results.json")
    arguments = parser.parse_args()
    if arguments.readme:
        document = json.load(open(arguments.document)) if os.path.exists(arguments.document) else {}
        rewrite_readme(arguments.readme, document)
        return
    lines = [json.loads(line) for line in open(arguments.results) if line.strip()]
    document = build_document(lines, arguments.seconds, arguments.runs, arguments.pinning, arguments.full)
    with open(arguments.json, "w") as out:
        json.dump(document, out, indent=1)
        out.write("\n")
    with open(arguments.markdown, "w") as out:
        out.write(full_report(document))


if __name__ == "__main__":
    main()
