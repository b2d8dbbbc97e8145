#!/usr/bin/env python3
"""bench/ab.sh's table: per scenario and build, every figure's median with min–max over the runs.

    bench/ab-report.py build/ab/ab-<date>.jsonl
"""
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
def figures(r):
    res, cost = r["result"], r["result"].get("cost") or {}
    f = {"µs/msg": cost.get("microsecondsPerMessage"), "user": cost.get("userMicrosecondsPerMessage"),
         "sys": cost.get("systemMicrosecondsPerMessage"),
         "ctxsw/msg": (cost.get("voluntarySwitchesPerMessage", 0) + cost.get("involuntarySwitchesPerMessage", 0)) if cost else None,
         "generator %": cost.get("generatorCPUPercent"), "others %": cost.get("otherCPUPercent")}
    s = r["scenario"]
    if s in ("fanout", "bigroom"):
        f["p99 ms"] = res["latency"]["p99"]; f["msg/s"] = res["throughputMessagesPerSecond"]
    elif s.startswith("quiz"):
        f["reveal p99"] = res["reveal"]["p99"]; f["ack p99"] = res["acknowledgement"]["p99"]; f["podium p99"] = res["finished"]["p99"]
    elif s == "sustained":
        f["p99 ms"] = res["latency"]["p99"]; f["msg/s"] = res["messagesPerSecond"]
    elif s.startswith("lockstep") or s.startswith("paced"):
        f["µs/msg ns-acct"] = (res.get("nanosecondsPerMessage") or 0) / 1000 or None
        f["p99 ms"] = res["latency"]["p99"]
        f["server %"] = cost.get("serverCPUPercent")
        calls = res.get("syscallsPerMessage") or {}
        f["sendto/msg"] = calls.get("sendto")
        f["writes/msg"] = sum(calls.get(k, 0) for k in ("sendto", "sendmsg", "write", "writev")) if calls else None
        f["rounds" if "rounds" in res else "broadcasts"] = res.get("rounds", res.get("broadcasts"))
    elif s == "joinstorm":
        f["welcome p99"] = res["welcome"]["p99"]
    return f
def fmt(v):
    return "—" if v is None else (f"{v:.2f}" if abs(v) < 100 else f"{v:.0f}")
print(f"| scenario | build | runs | " + " | ".join(["figure: median (min–max)"]) + " |")
print("| --- | --- | --- | --- |")
for scenario in dict.fromkeys(r["scenario"] for r in rows):
    for build in dict.fromkeys(["A", "B"] + [r["build"] for r in rows]):
        runs = [figures(r) for r in rows if r["scenario"] == scenario and r["build"] == build]
        if not runs: continue
        cells = []
        for key in runs[0]:
            values = [r[key] for r in runs if r.get(key) is not None]
            if values:
                cells.append(f"{key} {fmt(statistics.median(values))} ({fmt(min(values))}–{fmt(max(values))})")
        print(f"| {scenario} | {build} | {len(runs)} | " + " · ".join(cells) + " |")
# Runs of one number were made back to back (A B, B A, …): a ratio within a run shares that run's load,
# which a busy machine changes more between runs than between the two halves of one.
def cost(r):
    # The lock-step scenario's nanosecond accounting where there is one; 10 ms ticks otherwise.
    if r["result"].get("nanosecondsPerMessage"):
        return r["result"]["nanosecondsPerMessage"] / 1000
    return (r["result"].get("cost") or {}).get("microsecondsPerMessage")
print()
print("| scenario | ratio of server CPU per message, per run | median (min–max) |")
print("| --- | --- | --- |")
for scenario in dict.fromkeys(r["scenario"] for r in rows):
    builds = list(dict.fromkeys(r["build"] for r in rows if r["scenario"] == scenario))
    pairs = [("B", o) for o in builds if o != "B"] + [("A", o) for o in builds if o not in ("A", "B")]
    if "storycircle" in builds:
        # bench/lockstep.sh: each peer against StoryCircle (above 1: StoryCircle spends less per message).
        pairs = [(o, "storycircle") for o in builds if o != "storycircle" and not o.endswith("+tls")]
    # TLS=1: each peer over TLS against StoryCircle over TLS, then what TLS costs each server (above 1: TLS
    # costs that much more per message than plain WebSocket, in the same run).
    if "storycircle+tls" in builds:
        pairs += [(o, "storycircle+tls") for o in builds if o.endswith("+tls") and o != "storycircle+tls"]
    pairs += [(o, o[:-len("+tls")]) for o in builds if o.endswith("+tls") and o[:-len("+tls")] in builds]
    for this, other in pairs:
        ratios = []
        for run in sorted({r["run"] for r in rows}):
            b = [cost(r) for r in rows if r["scenario"] == scenario and r["run"] == run and r["build"] == this]
            o = [cost(r) for r in rows if r["scenario"] == scenario and r["run"] == run and r["build"] == other]
            if b and o and b[0] and o[0]:
                ratios.append(b[0] / o[0])
        if ratios:
            print(f"| {scenario} | {this} / {other} | {statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f}), {len(ratios)} runs |")
