"""The bench's generator as it is run from a second machine: against the server's address, with the server's
CPU read from the server's own /metrics, since its /proc is on the other machine. Here both are on one
machine, so the figure can be checked against /proc."""
import json
import os
import pathlib
import resource
import subprocess

import pytest

from conftest import BIN

BENCH = pathlib.Path(BIN).with_name("storycircle-bench")


def test_the_sustained_load_reads_the_servers_cpu_from_its_metrics_as_from_another_machine(make_server):
    # Ten classes' children from one address, as from one generator (the limits bench/lib.sh opens too), to a
    # server that listens on another address than the generator's default.
    server = make_server({"maxConnectionsPerAddress": 0, "joinBurst": 1000, "joinsPerSecond": 1000, "bindAddress": "127.0.0.2"})
    result = subprocess.run(
        [str(BENCH), "sustained", "--host", "127.0.0.2", "--port", str(server.port), "--admin-token", server.admin_token,
         "--rooms", "10", "--children", "30", "--duration", "6", "--warmup-seconds", "1", "--server-pid", str(server.process.pid)],
        capture_output=True, text=True, timeout=120, env=dict(os.environ, STORYCIRCLE_BENCH_CLIENT_THREADS="2"))
    assert result.returncode == 0, result.stderr
    line = json.loads(result.stdout)
    reported, cost = line["reportedCost"], line["cost"]
    assert reported["children"] == 300
    assert reported["messages"] > 0
    # The same window from two sources, /proc in 10 ms ticks and /metrics in nanoseconds; /metrics is read just
    # outside /proc at each end, and answering it costs the server a little.
    from_proc = cost["userSeconds"] + cost["systemSeconds"]
    assert reported["cpuSeconds"] > 0
    assert abs(reported["cpuSeconds"] - from_proc) <= 0.03 + 0.05 * from_proc, (reported, cost)
    assert abs(reported["wallSeconds"] - cost["wallSeconds"]) < 0.5
    assert reported["microsecondsPerMessage"] == pytest.approx(reported["cpuSeconds"] * 1e6 / reported["messages"])
    # Every child and screen holds a socket on the server.
    assert reported["openFileDescriptors"] >= 10 * (30 + 2)
    assert reported["maxFileDescriptors"] == resource.prlimit(server.process.pid, resource.RLIMIT_NOFILE)[0]
    assert "server's /metrics:" in result.stderr


def test_a_server_that_turns_the_children_away_is_named_at_once_not_after_the_timeout(make_server):
    # The default joins per address: a generator's hundreds of children from one address are refused.
    server = make_server({"maxConnectionsPerAddress": 0})
    result = subprocess.run(
        [str(BENCH), "sustained", "--port", str(server.port), "--admin-token", server.admin_token,
         "--rooms", "10", "--children", "30", "--duration", "5"],
        capture_output=True, text=True, timeout=60, env=dict(os.environ, STORYCIRCLE_BENCH_CLIENT_THREADS="2"))
    assert result.returncode == 1
    assert "the server refused" in result.stderr and "rate_limited" in result.stderr, result.stderr
