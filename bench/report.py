"""Turns the generator's JSON lines into bench/results.json and a table (bench/results.md) that compares
StoryCircle with the baselines measured in the same run and with the targets of issue #8."""
import json
import os
import platform
import subprocess
import sys
import time

lines = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
json_path, markdown_path, seconds = sys.argv[2], sys.argv[3], int(sys.argv[4])


def find(scenario, target="storycircle"):
    return next((r for r in lines if r["scenario"] == scenario and r.get("target", "storycircle") == target), None)


commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
document = {
    "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    "commit": commit,
    "machine": {"cores": os.cpu_count(), "system": platform.platform()},
    "seconds": seconds,
    "results": lines,
}
with open(json_path, "w") as out:
    json.dump(document, out, indent=2)

rows = []
fan, big = find("fanout"), find("bigroom")
fan_c, big_c = find("fanout", "baseline-c"), find("bigroom", "baseline-c")
fan_py, big_py = find("fanout", "baseline-python"), find("bigroom", "baseline-python")
answers, idle, unlock, narration = find("answers"), find("idle"), find("unlock"), find("narration")


def ms(value):
    return f"{value:.1f} ms" if value >= 10 else f"{value:.2f} ms"


def verdict(ok):
    return "✅" if ok else "❌"


def ratio(a, b):
    return f"{a / b:.2f}×" if a and b else "–"


if fan:
    rows.append((f"{fan['children']:,} children in {fan['rooms']} rooms: broadcast p99", ms(fan["latency"]["p99"]), "< 25 ms", verdict(fan["latency"]["p99"] < 25)))
if big:
    rows.append((f"one {big['children']:,}-child room: broadcast p99", ms(big["latency"]["p99"]), "< 50 ms", verdict(big["latency"]["p99"] < 50)))
if unlock:
    rows.append((f"one {unlock['children']:,}-child room: unlock spread", ms(unlock["displaySpreadMs"]), "< 10 ms", verdict(unlock["displaySpreadMs"] < 10)))
def capacity(result):
    """Messages the server delivers per CPU-second (its cost, whatever else shares the machine)."""
    cost = result and result.get("serverMicrosecondsPerMessage")
    return 1e6 / cost if cost else None


for label, ours, theirs, target in (("C libwebsockets", fan, fan_c, 0.8), ("C libwebsockets", big, big_c, 0.8),
                                    ("Python websockets", fan, fan_py, 5), ("Python websockets", big, big_py, 5)):
    if capacity(ours) and capacity(theirs):
        value = capacity(ours) / capacity(theirs)
        where = "250 rooms" if ours is fan else "one big room"
        rows.append((f"server capacity (messages per CPU-second) vs {label} ({where})", f"{value:.2f}×", f"≥ {target}×", verdict(value >= target)))
if fan and fan_c:
    value = fan["throughputMessagesPerSecond"] / fan_c["throughputMessagesPerSecond"]
    rows.append(("delivered throughput vs C libwebsockets baseline (250 rooms)", f"{value:.2f}×", "≥ 0.8×", verdict(value >= 0.8)))
if big and big_c:
    value = big["throughputMessagesPerSecond"] / big_c["throughputMessagesPerSecond"]
    rows.append(("delivered throughput vs C libwebsockets baseline (one big room)", f"{value:.2f}×", "≥ 0.8×", verdict(value >= 0.8)))
if fan and fan_py:
    value = fan["throughputMessagesPerSecond"] / fan_py["throughputMessagesPerSecond"]
    rows.append(("delivered throughput vs Python websockets baseline (250 rooms)", f"{value:.2f}×", "≥ 5×", verdict(value >= 5)))
if big and big_py:
    value = big["throughputMessagesPerSecond"] / big_py["throughputMessagesPerSecond"]
    rows.append(("delivered throughput vs Python websockets baseline (one big room)", f"{value:.2f}×", "≥ 5×", verdict(value >= 5)))
if idle:
    rows.append((f"server memory per idle child ({idle['connections']:,} joined)", f"{idle['bytesPerConnection'] / 1024:.1f} KiB", "< 8 KiB", verdict(idle["bytesPerConnection"] < 8192)))
if answers:
    rows.append((f"{answers['answers']:,} answers in 1 s, durable before ack: p99", ms(answers["acknowledgement"]["p99"]), "< 50 ms", verdict(answers["acknowledgement"]["p99"] < 50)))

out = [f"Measured {document['date']} on {document['machine']['cores']} cores, commit {commit}, generator on the same machine, loopback ({seconds} s).", "",
       "| what | measured | target | |", "| --- | --- | --- | --- |"]
out += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
out += ["", "Delivered throughput is what one generator, sharing the two cores with the server, received; server capacity",
        "is messages delivered per second of the server's own CPU time, measured over the same burst.", ""]
out += ["| server | scenario | p50 | p95 | p99 | max | delivered | server CPU per message |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
for result in lines:
    if "latency" in result:
        latency = result["latency"]
        cost = result.get("serverMicrosecondsPerMessage")
        cost_text = f"{cost:.2f} µs ({1e6 / cost:,.0f} msg per CPU-s)" if cost else "–"
        out.append(f"| {result['target']} | {result['scenario']} {result['rooms']}×{result['children'] // result['rooms']} | {ms(latency['p50'])} | {ms(latency['p95'])} | {ms(latency['p99'])} | {ms(latency['max'])} | {result['throughputMessagesPerSecond']:,.0f} msg/s | {cost_text} |")
if answers:
    a = answers["acknowledgement"]
    out.append(f"| storycircle | answers → ack ({answers['acknowledged']:,}) | {ms(a['p50'])} | {ms(a['p95'])} | {ms(a['p99'])} | {ms(a['max'])} | | |")
if unlock:
    out.append(f"| storycircle | unlock: clock-sync round trips | {ms(unlock['roundTrip']['p50'])} | {ms(unlock['roundTrip']['p95'])} | {ms(unlock['roundTrip']['p99'])} | {ms(unlock['roundTrip']['max'])} | questions arrived ≥ {unlock['smallestLeadMs']:.0f} ms before the unlock | |")
if narration:
    h = narration["cachedSentenceHTTP"]
    out += ["", f"Narration ({narration['words']} words, {narration['sentences']} sentences, espeak-ng + LAME, empty cache): "
            f"first sentence ready in {narration['firstSentenceColdMs']:.0f} ms, whole story in {narration['wholeStoryColdMs']:.0f} ms; "
            f"the same story again (cache hits) in {narration['wholeStoryCachedMs']:.0f} ms; a cached sentence over HTTP "
            f"({narration['audioBytes']:,} bytes) p50 {ms(h['p50'])}, p99 {ms(h['p99'])}."]
with open(markdown_path, "w") as markdown:
    markdown.write("\n".join(out) + "\n")
