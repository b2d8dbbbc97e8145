"""bench/report.py states what a run measured and no more: a burst bounded by the generator is marked
as the generator's limit, saturation is worked out for documents from before the generator named it, the
classroom's regime and the capacity head the README's block, and the capacity's highest load counts only
loads driven with p99 < 25 ms, nothing unanswered and the generator below 90 % of its core."""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("bench_report", ROOT / "bench" / "report.py")
report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(report)


def cost(server, generator, per_message=1.0):
    return {"serverCPUPercent": server, "generatorCPUPercent": generator, "microsecondsPerMessage": per_message,
            "userMicrosecondsPerMessage": per_message / 2, "systemMicrosecondsPerMessage": per_message / 2,
            "voluntarySwitchesPerMessage": 0, "involuntarySwitchesPerMessage": 0, "otherCPUPercent": 0}


def fanout(target, server, generator, saturated=None):
    result = {"scenario": "fanout", "target": target, "rooms": 250, "children": 10000, "messageBytes": 68,
              "throughputMessages": 400000, "throughputMessagesPerSecond": 500000.0,
              "latency": {"p50": 1.0, "p99": 2.0}, "cost": cost(server, generator)}
    if saturated:
        result["saturated"] = saturated
    return {"run": 1, "label": f"fanout {target}", "result": result}


def capacity(children, p99, generator, unanswered=0):
    sustained = {"scenario": "sustained", "latency": {"p50": 1.0, "p99": p99, "max": p99}, "unanswered": unanswered,
                 "cost": cost(children / 1000, generator, 15.0)}
    return {"run": 0, "label": f"capacity {children}", "result": {"scenario": "capacity", "children": children, "sourceAddresses": children // 4000 + 1,
            "maxConnectionsPerAddress": 5000, "rssBaselineKiB": 10000, "rssPeakKiB": 10000 + children * 8, "sustained": sustained}}


def lockstep(target):
    return {"run": 1, "label": f"lockstep {target}", "result": {"scenario": "lockstep", "target": target, "rooms": 250, "children": 10000,
            "messageBytes": 70, "seconds": 10.0, "rounds": 40, "latency": {"p50": 5.0, "p99": 9.0}, "nanosecondsPerMessage": 9000.0,
            "syscallsPerMessage": {"sendto": 1.0, "epoll_ctl": 0.0}, "saturated": "neither", "cost": cost(40, 40)}}


def document(lines):
    return {"date": "2026-12-02T14:00:00Z", "commit": "abc1234", "machine": {"cores": 2, "cpu": "test", "system": "Linux"},
            "pinning": "server on CPU 0", "runs": 1, "fullSize": True, "seconds": 60, "results": lines}


def test_a_generator_bound_burst_is_not_the_servers_throughput():
    lines = [fanout("storycircle", 60.0, 97.0), fanout("baseline-go-batch", 99.0, 60.0, saturated="server")]
    table = "\n".join(report.fanout_table(report.Runs(document(lines)), "fanout"))
    storycircle = next(row for row in table.splitlines() if row.startswith("| StoryCircle |"))
    go = next(row for row in table.splitlines() if row.startswith("| Go gorilla/websocket, writer draining"))
    assert "bound by the generator" in storycircle and "generator (60.0 / 97.0 %)" in storycircle
    assert "bound by the generator" not in go and "server (99.0 / 60.0 %)" in go
    assert "Draining a backlog" in table


def test_the_classroom_regime_and_the_capacity_head_the_readme_block():
    lines = [lockstep("storycircle"), lockstep("baseline-c-batch"), capacity(10000, 4.0, 50), fanout("storycircle", 60, 50)]
    block = "\n".join(report.readme_block(document(lines)))
    assert block.index("The classroom's regime") < block.index("A node's capacity") < block.index("Draining a backlog")
    assert "C libwebsockets on libev, every waiting frame in one write per writeable callback" in block


def test_the_capacity_counts_only_loads_within_the_limits():
    lines = [capacity(10000, 4.0, 50), capacity(20000, 9.0, 70), capacity(40000, 12.0, 95), capacity(80000, 30.0, 80)]
    rows = "\n".join(report.capacity_rows(report.Runs(document(lines))))
    assert "**20,000 children**" in rows
    forty = next(row for row in rows.splitlines() if row.startswith("| 40,000"))
    assert "its limit, not the server's" in forty
    # 10,000 children at 10 % of a core: 10 µs of server CPU per child-second, 100,000 children per core; 8 KiB each.
    ten = next(row for row in rows.splitlines() if row.startswith("| 10,000"))
    assert "| 10.0 µs | 100,000 |" in ten and "8.00 KiB" in ten


def test_a_load_run_in_place_of_one_over_the_open_file_limit_says_so_and_the_cost_is_compared_across_loads():
    stand_in = capacity(15880, 9.0, 60)
    stand_in["result"].update({"openFileLimit": 20000, "insteadOf": 20000})
    # 10,000 at 10 % of a core and 15,880 at 15.88 %: 10 µs per child-second at both, linear.
    rows = "\n".join(report.capacity_rows(report.Runs(document([capacity(10000, 4.0, 50), stand_in]))))
    fitted = next(row for row in rows.splitlines() if row.startswith("| 15,880"))
    assert "the most this machine's open-file limit, 20,000, allows; in place of 20,000" in fitted, fitted
    assert "**15,880 children**" in rows
    assert "from 10,000 to 15,880 children: 10.0 µs → 10.0 µs (× 1.00 for × 1.59 the children: linear within 3 %)" in rows, rows
    # A cost per child that falls with the load is said to fall.
    cheaper = capacity(20000, 6.0, 60)
    cheaper["result"]["sustained"]["cost"]["serverCPUPercent"] = 15.0
    rows = "\n".join(report.capacity_rows(report.Runs(document([capacity(10000, 4.0, 50), cheaper]))))
    assert "10.0 µs → 7.50 µs (× 0.75 for × 2.00 the children: the cost per child falls as the load grows)" in rows, rows


def narration(run, voice, cold, warm, restarted=None, lobby=None):
    result = {"scenario": "narration", "voice": voice, "sentences": 22, "words": 307, "firstSentenceColdMs": cold,
              "firstSentenceWarmMs": warm, "wholeStoryColdMs": 12000.0, "wholeStoryCachedMs": 15.0,
              "cachedSentenceHTTP": {"p50": 1.0, "p99": 2.0}, "audioBytes": 40000}
    if restarted is not None:
        result["firstSentenceRestartedMs"] = restarted
    if lobby is not None:
        result["firstSentenceAfterLobbyMs"] = lobby
        result["lobbySeconds"] = 3.0
    return {"run": run, "label": f"narration {voice}", "result": result}


def test_the_narration_rows_give_the_first_sentence_cold_warm_and_after_a_worker_restart():
    lines = [narration(1, "en", 60.0, 40.0), narration(2, "en", 64.0, 42.0),
             narration(1, "piper:en_US-joe-medium", 1100.0, 250.0, 1200.0), narration(2, "piper:en_US-joe-medium", 1300.0, 270.0, 1250.0)]
    rows = report.storm_and_more(report.Runs(document(lines)))
    piper = next(row for row in rows if row.startswith("| narration (piper:en_US-joe-medium)"))
    espeak = next(row for row in rows if row.startswith("| narration (en)"))
    assert "first sentence cold / warm / after kill -9 of the worker" in piper
    assert "1,200 (1,100–1,300) ms / 260 (250–270) ms / 1,225 (1,200–1,250) ms ·" in piper, piper
    assert "after kill -9" not in espeak and "62.0 (60.0–64.0) ms / 41.0 (40.0–42.0) ms ·" in espeak, espeak
    every = "\n".join(report.every_run(report.Runs(document(lines))))
    assert "first sentence 1,100 ms cold, 250 ms warm, 1,200 ms after kill -9 of the worker;" in every, every
    assert "first sentence 60.0 ms cold, 40.0 ms warm; whole story" in every, every


def test_the_narration_rows_give_the_first_sentence_after_a_lobby_when_the_runs_measured_it():
    lines = [narration(1, "piper:en_US-joe-medium", 1100.0, 450.0, 1200.0, lobby=12.0),
             narration(2, "piper:en_US-joe-medium", 1300.0, 470.0, 1250.0, lobby=16.0)]
    rows = report.storm_and_more(report.Runs(document(lines)))
    piper = next(row for row in rows if row.startswith("| narration (piper:en_US-joe-medium)"))
    assert "first sentence cold / warm / after kill -9 of the worker / after a 3 s lobby ·" in piper, piper
    assert "/ 1,225 (1,200–1,250) ms / 14.0 (12.0–16.0) ms ·" in piper, piper
    every = "\n".join(report.every_run(report.Runs(document(lines))))
    assert "1,200 ms after kill -9 of the worker, 12.0 ms after a 3 s lobby;" in every, every


def alongside(run, target, p50, p99):
    line = lockstep(target)
    line["run"], line["label"] = run, target.replace("-", " ")
    line["result"].update({"rooms": 1, "children": 40, "latency": {"p50": p50, "p99": p99}})
    return line


def test_the_broadcasts_beside_a_synthesis_are_a_narration_row_not_a_lockstep_table():
    lines = [lockstep("storycircle"), alongside(1, "alongside-quiet", 0.5, 1.4), alongside(1, "alongside-synthesising", 0.6, 3.2),
             alongside(2, "alongside-quiet", 0.4, 1.2), alongside(2, "alongside-synthesising", 0.5, 4.0)]
    # The worker's CPU is the synthesising window's "other" work by design: it does not make the run a shared machine's.
    for line in lines[2::2]:
        line["result"]["cost"] = dict(line["result"]["cost"], otherCPUPercent=60)
    runs = report.Runs(document(lines))
    assert runs.lockstep_sizes() == [(250, 10000)], runs.lockstep_sizes()
    assert "the cores were shared" not in " ".join(report.header(document(lines), runs))
    row = next(row for row in report.storm_and_more(runs) if row.startswith("| one room of 40 in lock-step while"))
    assert "| 1.30 (1.20–1.40) ms / 3.60 (3.20–4.00) ms (0.45 (0.40–0.50) ms / 0.55 (0.50–0.60) ms) |" in row, row


def paced(target, rate, run, microseconds, missed=0):
    return {"run": run, "label": f"paced {rate:g}/s {target}", "result": {"scenario": "paced", "target": target, "rooms": 250, "children": 10000,
            "broadcastsPerSecond": rate, "seconds": 15.0, "broadcasts": int(rate * 15), "latency": {"p50": 0.9, "p99": 3.0, "max": 9.0},
            "framesToChildren": int(rate * 15 * 40), "framesToTeachers": int(rate * 15), "missed": missed, "messageBytes": 70,
            "nanosecondsPerMessage": microseconds * 1000, "syscallsPerMessage": {"sendto": 1.0}, "saturated": "neither", "cost": cost(20, 25, microseconds)}}


def test_the_classroom_rates_pair_each_peer_with_storycircle_run_by_run_at_each_rate():
    lines = [paced("storycircle", 100.0, 1, 20.0), paced("baseline-c-batch", 100.0, 1, 18.0),
             paced("storycircle", 100.0, 2, 16.0), paced("baseline-c-batch", 100.0, 2, 20.0, missed=3),
             paced("storycircle", 400.0, 1, 15.0), paced("baseline-c-batch", 400.0, 1, 18.0), lockstep("storycircle"), capacity(10000, 4.0, 50)]
    block = "\n".join(report.readme_block(document(lines)))
    assert block.index("The classroom's regime") < block.index("The classroom's rates") < block.index("A node's capacity")
    rows = block.splitlines()
    hundred = [row for row in rows if row.startswith("| 100 (4,000) |")]
    four_hundred = [row for row in rows if row.startswith("| 400 (16,000) |")]
    assert len(hundred) == 2 and len(four_hundred) == 2, rows
    # Run by run: 18 ÷ 20 = 0.9 and 20 ÷ 16 = 1.25, median 1.075; the missed frames of any run are summed.
    c = next(row for row in hundred if "C libwebsockets on libev" in row)
    assert "| 1.07 (0.90–1.25)× |" in c, c
    assert "| 3 |" in c, c
    assert "| 1.20× |" in next(row for row in four_hundred if "C libwebsockets on libev" in row)
    full = report.full_report(document(lines))
    assert "## The classroom's rates: the server sleeps between frames" in full
    assert "paced 100/s storycircle" in full and "0 missed" in full
