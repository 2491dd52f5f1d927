"""Per-turn cost of the Nexus Hermes provider: inject (prefetch: 'nexus
prompt --only unread --ack') plus append (sync_turn's 'nexus log append'),
on a vault whose live log already holds N entries, against the floor of
starting a process that does nothing (/bin/true).

    go build -o /tmp/nexus ./cmd/nexus && go build -o /tmp/loggen ./cmd/nexus-loggen
    NEXUS_BIN=/tmp/nexus LOGGEN=/tmp/loggen python3 examples/hermes/bench_nexus_hermes.py [-n 10000] [-turns 40] [-http | -hub]

-http talks to a 'nexus serve --http' the bench starts; -hub lets the
provider start its hub on demand (hub: true), as a user's would, and times
the turns once they go to it.

Each turn: ella appends 3 entries (not timed), then lyra's provider runs
prefetch and the append its sync_turn queues, timed together. Prints the
median and p95 per turn.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from nexus_hermes import NexusMemoryProvider  # noqa: E402


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=10000, help="log entries before the first turn")
    ap.add_argument("-turns", type=int, default=40)
    ap.add_argument("-http", action="store_true", help="talk MCP over HTTP to a running 'nexus serve --http' instead of the CLI")
    ap.add_argument("-hub", action="store_true", help="the provider's hub: one 'nexus serve --http' started on demand by the first turn")
    a = ap.parse_args()
    nexus, loggen = os.environ["NEXUS_BIN"], os.environ["LOGGEN"]
    tmp = tempfile.mkdtemp(prefix="nexus-hermes-bench-")
    try:
        vault = os.path.join(tmp, "vault")
        subprocess.run([loggen, "-vault", vault, "-n", str(a.n)], check=True, stdout=subprocess.DEVNULL)
        env = dict(os.environ, NEXUS_SEARCH_HOLD="0")
        # lyra has read everything so far: what is new each turn is small.
        subprocess.run([nexus, "--vault", vault, "--agent", "lyra", "log", "read", "--unread", "--ack"], check=True, stdout=subprocess.DEVNULL, env=env)
        srv = None
        if a.http:
            import json
            import socket
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            addr = "127.0.0.1:%d" % sock.getsockname()[1]
            sock.close()
            tok = json.loads(subprocess.run([nexus, "--vault", vault, "--json", "agent", "token", "lyra"], check=True, capture_output=True, env=env).stdout)["token"]
            srv = subprocess.Popen([nexus, "--vault", vault, "serve", "--http", addr], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
            for _ in range(400):
                try:
                    socket.create_connection(("127.0.0.1", int(addr.split(":")[1])), 0.2).close()
                    break
                except OSError:
                    time.sleep(0.05)
            p = NexusMemoryProvider({"url": f"http://{addr}/mcp", "token": tok, "timeout": 30})
        elif a.hub:
            p = NexusMemoryProvider({"agent": "lyra", "vault": vault, "bin": nexus, "timeout": 30, "hub": True})
        else:
            p = NexusMemoryProvider({"agent": "lyra", "vault": vault, "bin": nexus, "timeout": 30})
        p.initialize("bench", agent_context="primary", hermes_home=os.path.join(tmp, "hermes-home"))
        client = p._client
        if a.hub:
            # Untimed: the first call starts the hub and goes over the CLI;
            # the turns are timed once the calls go to the hub.
            for _ in range(600):
                client.unread(20, 4000, ack=False)
                if client.mcp is not None:
                    break
                time.sleep(0.05)
            else:
                sys.exit("the hub did not answer within 30 s; see " + os.path.join(vault, ".nexus", "state", "hub", "serve.log"))
        turns, floor, cpu = [], [], []

        def child_cpu():
            r = resource.getrusage(resource.RUSAGE_CHILDREN)
            return (r.ru_utime + r.ru_stime) * 1000
        for i in range(a.turns):
            for k in range(3):
                subprocess.run([nexus, "--vault", vault, "--agent", "ella", "log", "append", f"ella turn {i} note {k}"], check=True, stdout=subprocess.DEVNULL, env=env)
            p.on_turn_start(i, "q")
            c0 = child_cpu()
            t0 = time.perf_counter()
            text = p.prefetch(f"What is new for turn {i}?")
            client.append(f"Turn {i}: checked the deploy pipeline → green", "**User:** ...\n\n**Reply:** ...", "general", "turn", f"bench:{i}")
            turns.append((time.perf_counter() - t0) * 1000)
            cpu.append(child_cpu() - c0)
            assert f"ella turn {i} note 2" in text, text
            t0 = time.perf_counter()
            subprocess.run(["/bin/true"], check=True)
            subprocess.run(["/bin/true"], check=True)
            floor.append((time.perf_counter() - t0) * 1000)
        p.shutdown()
        if srv:
            srv.terminate()
            srv.wait()
        if a.hub:
            import json
            try:
                with open(os.path.join(vault, ".nexus", "state", "hub", "serve.json")) as f:
                    os.kill(json.load(f)["pid"], 15)
            except (OSError, ValueError, KeyError):
                pass
            assert client.mcp is not None, "the turns left the hub"
        transport = "the hub (MCP over HTTP, started on demand)" if a.hub else "MCP over HTTP" if a.http else "nexus CLI"
        print(f"log entries before the first turn: {a.n}; turns: {a.turns}; transport: {transport}")
        print(f"hermes provider, inject + append per turn: median {statistics.median(turns):.1f} ms, p95 {pct(turns, 95):.1f} ms, p99 {pct(turns, 99):.1f} ms")
        print(f"  CPU time of the two nexus processes:    median {statistics.median(cpu):.1f} ms")
        print(f"floor, two /bin/true process starts:      median {statistics.median(floor):.1f} ms, p95 {pct(floor, 95):.1f} ms")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
