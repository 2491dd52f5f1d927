"""The Nexus Hermes provider driven the way Hermes drives a memory provider,
against a real vault and the real nexus binary.

Run from the repository root (the .ci/run script does):

    python3 -m unittest discover -s examples/hermes -v

NEXUS_BIN names a built nexus; without it the tests build one with 'go build'.
Hermes itself is not needed: the harness below calls the provider's hooks in
Hermes's order (initialize, system_prompt_block, then per turn on_turn_start,
prefetch unless the prompt is trivial, the pre_llm_call hook, the model's
reply, sync_turn, queue_prefetch; on_pre_compress before a compression;
on_session_end and shutdown at the end).
"""

from __future__ import annotations

import inspect
import json
import os
import queue
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import nexus_hermes  # noqa: E402
from nexus_hermes import NexusMemoryProvider, is_trivial  # noqa: E402
from nexus_hermes.client import HubClient, MCPClient, full_binary, strip_sections  # noqa: E402

NEXUS = os.environ.get("NEXUS_BIN", "")
_BUILD_DIR = None


def setUpModule():
    global NEXUS, _BUILD_DIR
    if NEXUS:
        return
    _BUILD_DIR = tempfile.mkdtemp(prefix="nexus-hermes-bin-")
    NEXUS = os.path.join(_BUILD_DIR, "nexus")
    subprocess.run(["go", "build", "-o", NEXUS, "./cmd/nexus"], cwd=ROOT, check=True)


def tearDownModule():
    if _BUILD_DIR:
        shutil.rmtree(_BUILD_DIR, ignore_errors=True)


def nx(vault, *args, agent=None):
    """Run nexus --json and return its document."""
    cmd = [NEXUS, "--vault", vault, "--json"]
    if agent:
        cmd += ["--agent", agent]
    env = dict(os.environ, NEXUS_SEARCH_HOLD="0")
    p = subprocess.run(cmd + list(args), capture_output=True, env=env, timeout=60)
    if p.returncode != 0:
        raise AssertionError(f"nexus {' '.join(args)}: exit {p.returncode}\n{p.stdout.decode()}{p.stderr.decode()}")
    return json.loads(p.stdout or b"{}")


def make_vault(tmp):
    vault = os.path.join(tmp, "vault")
    subprocess.run([NEXUS, "init", vault], check=True, capture_output=True)
    for a in ("lyra", "ella"):
        nx(vault, "agent", "add", a)
    # What Hermes injects itself: it must never come through the provider.
    nx(vault, "memory", "add", "MEMORY-MARKER staging uses port 2222", agent="lyra")
    nx(vault, "memory", "add", "--target", "user", "USER-MARKER prefers Korean first", agent="lyra")
    nx(vault, "decide", "Deploys", "--decision", "DECISION-MARKER deploys go through lyra", agent="ella")
    return vault


def entries(vault, who):
    # Every entry, filtered here: --from refuses an agent the vault does
    # not have, and "ghost" must be shown to have written nothing.
    doc = nx(vault, "log", "read", "--last", "0")
    return [e for e in doc["entries"] if e.get("agent") == who]


class FakeContext:
    """The two registration calls a Hermes plugin context offers."""

    def __init__(self):
        self.providers = []
        self.hooks = {}

    def register_memory_provider(self, provider):
        self.providers.append(provider)

    def register_hook(self, name, fn):
        self.hooks.setdefault(name, []).append(fn)


class Harness:
    """Drives one provider through a Hermes session."""

    def __init__(self, provider, hook, session_id="s-1", agent_context="primary", hermes_home=None, **init):
        self.p = provider
        self.hook = hook
        self.session_id = session_id
        self.messages = []
        self.injected = []  # per turn: everything the provider put in front of the model
        self.status = []  # per turn: recall_status() right after prefetch (None without prefetch)
        self.warnings = []  # what the provider passed to Hermes's warning_callback
        if hermes_home is None:
            hermes_home = tempfile.mkdtemp(prefix="hermes-home-")
            self._own_home = hermes_home
        self.hermes_home = hermes_home
        init.setdefault("warning_callback", self.warnings.append)
        if init["warning_callback"] is None:
            del init["warning_callback"]  # a Hermes that offers none (gateway, older versions)
        self.p.initialize(session_id, hermes_home=hermes_home, platform="cli", agent_context=agent_context, **init)
        self.system = self.p.system_prompt_block()

    def turn(self, user, reply, tool_calls=None):
        n = len(self.injected) + 1
        self.p.on_turn_start(n, user)
        parts = []
        status = None
        if not is_trivial(user):  # Hermes skips prefetch for trivial prompts
            parts.append(self.p.prefetch(user, session_id=self.session_id))
            status = self.p.recall_status()  # Hermes's describe_recall, right after prefetch
            # Hermes may call prefetch again within the turn (a tool loop).
            again = self.p.prefetch(user, session_id=self.session_id)
            assert again == parts[0], "a repeat prefetch in one turn changed what it returns"
        self.status.append(status)
        for fn in self.hook:
            r = fn(session_id=self.session_id, user_message=user, conversation_history=list(self.messages),
                   is_first_turn=not self.messages, model="scripted", platform="cli")
            if r:
                parts.append(r["context"] if isinstance(r, dict) else r)
        self.injected.append("\n".join(p for p in parts if p))
        self.messages.append({"role": "user", "content": user})
        if tool_calls:
            self.messages.append({"role": "assistant", "content": "", "tool_calls": tool_calls})
            self.messages.append({"role": "tool", "content": "{}"})
        self.messages.append({"role": "assistant", "content": reply})
        self.p.sync_turn(user, reply, session_id=self.session_id, messages=list(self.messages))
        self.p.queue_prefetch(user, session_id=self.session_id)
        return self.injected[-1]

    def compress(self):
        note = self.p.on_pre_compress(list(self.messages))
        self.messages = self.messages[-2:]
        return note

    def end(self):
        self.p.on_session_end(list(self.messages))
        self.p.shutdown()
        if getattr(self, "_own_home", None):
            shutil.rmtree(self._own_home, ignore_errors=True)


def provider_for(vault, agent="lyra", **extra):
    cfg = {"agent": agent, "vault": vault, "bin": NEXUS, "timeout": 20}
    cfg.update(extra)
    ctx = FakeContext()
    nexus_hermes.register(ctx)
    assert len(ctx.providers) == 1
    # register() reads the environment; the tests configure explicitly.
    p = NexusMemoryProvider(cfg)
    return p, [p.pre_llm_call]


class SessionTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="nexus-hermes-")
        self.vault = make_vault(self.tmp)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_session(self):
        v = self.vault
        nx(v, "log", "append", "--channel", "deploy", "--kind", "shipped", "ELLA-1 fixed the login timeout", agent="ella")
        p, hook = provider_for(v)
        self.assertTrue(p.is_available())
        h = Harness(p, hook)

        # The static block: identity, memory index, checkpoint, decisions; no MEMORY/USER.
        self.assertIn("IDENTITY (who you are: agents/lyra/IDENTITY.md)", h.system)
        self.assertIn("DECISION-MARKER", h.system)
        self.assertIn("## Latest checkpoint", h.system)
        self.assertNotIn("Unread log entries", h.system)

        t1 = h.turn("What changed overnight on staging?", "Ella fixed the login timeout; nothing else changed.")
        self.assertIn("ELLA-1", t1)
        self.assertEqual(t1.count("ELLA-1"), 1, "entry injected twice in one turn")

        t2 = h.turn("Please check the deploy pipeline for the API gateway", "The pipeline is green; last run 10 minutes ago.")
        self.assertNotIn("ELLA-1", t2, "an acknowledged entry came again")

        # Ella writes; the next prompt is trivial: Hermes gives it no
        # prefetch, the pre_llm_call hook still brings the news.
        nx(v, "log", "append", "ELLA-2 rotating the staging certificate at 14:00", agent="ella")
        t3 = h.turn("ok", "👍")
        self.assertIn("ELLA-2", t3)

        # The model records a turn itself: the provider adds nothing.
        h.turn("Record that the cache warmup is done", "Recorded.",
               tool_calls=[{"id": "c1", "type": "function", "function": {"name": "mcp_nexus_log_append", "arguments": "{}"}}])

        note = h.compress()
        self.assertIn("checkpoint", note.lower())

        nx(v, "log", "append", "ELLA-3 certificate rotated", agent="ella")
        t5 = h.turn("어제 배포는 어떻게 됐어?", "배포는 성공했고 롤백은 없었습니다.")
        self.assertIn("ELLA-3", t5)
        self.assertNotIn("ELLA-2", t5)
        h.end()

        # Each of ella's entries reached lyra's context exactly once.
        everything = "\n".join(h.injected)
        for e in ("ELLA-1", "ELLA-2", "ELLA-3"):
            self.assertEqual(everything.count(e), 1, f"{e} injected {everything.count(e)} times")
        # Nothing of MEMORY.md / USER.md came through the provider.
        for text in [h.system] + h.injected:
            self.assertNotIn("MEMORY-MARKER", text)
            self.assertNotIn("USER-MARKER", text)
        # One entry per non-trivial turn the model did not record itself:
        # turns 1, 2 and 5 (3 was "ok", 4 the model appended).
        mine = entries(v, "lyra")
        self.assertEqual([e["kind"] for e in mine], ["turn", "turn", "turn"], mine)
        self.assertTrue(all(e["signed"] and e["agent"] == "lyra" for e in mine))
        self.assertIn("What changed overnight", mine[0]["summary"])
        self.assertIn("어제 배포는", mine[2]["summary"])
        # The checkpoint from the compression.
        cp = nx(v, "checkpoint", "show", agent="lyra")
        blob = json.dumps(cp, ensure_ascii=False)
        self.assertIn("What changed overnight", blob)
        self.assertIn("compressed", blob)
        # Everything was acknowledged as it was shown.
        self.assertEqual(nx(v, "log", "read", "--unread", agent="lyra")["count"], 0)

    def test_subagent_writes_nothing(self):
        v = self.vault
        nx(v, "log", "append", "ELLA-S news for the parent", agent="ella")
        for ctx in ("subagent", "cron", "flush"):
            p, hook = provider_for(v)
            h = Harness(p, hook, session_id="sub-" + ctx, agent_context=ctx)
            t = h.turn("Summarise the open incidents for the on-call handover", "Two incidents are open.")
            self.assertIn("ELLA-S", t, "a read-only context still sees the news")
            self.assertEqual(h.compress(), "")
            h.end()
        self.assertEqual(entries(v, "lyra"), [], "a subagent/cron/flush context wrote to the log")
        # Nothing was acknowledged either: the parent still gets the news.
        self.assertEqual(nx(v, "log", "read", "--unread", agent="lyra")["count"], 1)
        with self.assertRaises(AssertionError):
            nx(v, "checkpoint", "show", agent="lyra")

    def test_unread_bounded_with_a_count_of_the_rest(self):
        v = self.vault
        for i in range(12):
            nx(v, "log", "append", f"ELLA-B{i:02d} " + "x" * 300, agent="ella")
        p, hook = provider_for(v, max_entries=5)
        h = Harness(p, hook)
        t1 = h.turn("What is new in the log for me?", "Five entries so far.")
        self.assertIn("ELLA-B00", t1)
        self.assertNotIn("ELLA-B05", t1)
        self.assertIn("(7 newer unread entries not shown yet", t1)
        t2 = h.turn("And after those?", "Five more.")
        self.assertIn("ELLA-B05", t2)
        self.assertNotIn("ELLA-B00", t2)
        h.end()

    def test_refused_append_is_a_notice(self):
        # An agent the vault does not know: Nexus answers, and refuses.
        p, hook = provider_for(self.vault, agent="ghost")
        h = Harness(p, hook)
        t1 = h.turn("Summarise the open incidents for the handover", "Two are open.")
        self.assertIn(NexusMemoryProvider.NOTICE_PREFIX, t1)
        self.assertIn("ghost", t1)
        p.flush()
        t2 = h.turn("What's next on the migration plan?", "Step 4: run the schema change.")
        self.assertIn("the last turn was not recorded in the shared log", t2)
        h.end()
        self.assertEqual(entries(self.vault, "ghost"), [])


class FailureTest(unittest.TestCase):
    def test_missing_binary_is_a_visible_notice(self):
        p = NexusMemoryProvider({"agent": "lyra", "vault": "/nonexistent/vault", "bin": "/nonexistent/nexus", "timeout": 2})
        h = Harness(p, [p.pre_llm_call])
        t = h.turn("What changed overnight?", "I could not read the shared log.")
        self.assertIn(NexusMemoryProvider.NOTICE_PREFIX, t)
        self.assertIn("/nonexistent/nexus", t)
        h.end()

    def test_missing_binary_reaches_warning_callback_and_recall_status(self):
        p = NexusMemoryProvider({"agent": "lyra", "vault": "/nonexistent/vault", "bin": "/nonexistent/nexus", "timeout": 2})
        h = Harness(p, [p.pre_llm_call])
        h.turn("What changed overnight?", "I could not read the shared log.")
        h.end()
        self.assertTrue(any("/nonexistent/nexus" in w for w in h.warnings), h.warnings)
        self.assertTrue(all(w.startswith(NexusMemoryProvider.NOTICE_PREFIX) for w in h.warnings), h.warnings)
        st = h.status[0]
        self.assertIsNotNone(st, "a turn that could not read the log showed no recall status")
        self.assertIn("not read", st.provider_label)
        self.assertIn("/nonexistent/nexus", st.provider_label)

    def test_stalled_cli_times_out(self):
        tmp = tempfile.mkdtemp(prefix="nexus-hermes-stall-")
        try:
            stall = os.path.join(tmp, "nexus")
            with open(stall, "w") as f:
                f.write("#!/bin/sh\nexec sleep 60\n")
            os.chmod(stall, 0o755)
            p = NexusMemoryProvider({"agent": "lyra", "bin": stall, "timeout": 0.5})
            start = time.monotonic()
            h = Harness(p, [p.pre_llm_call])
            t = h.turn("What changed overnight?", "Nothing I could see.")
            h.end()
            took = time.monotonic() - start
            self.assertIn("timed out after 0.5 s", t)
            self.assertLess(took, 15, f"a stalled nexus held the session for {took:.1f} s")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_stalled_server_times_out(self):
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(8)
        held = []
        stop = threading.Event()

        def accept():
            srv.settimeout(0.2)
            while not stop.is_set():
                try:
                    c, _ = srv.accept()
                    held.append(c)  # read nothing, answer nothing
                except OSError:
                    pass

        th = threading.Thread(target=accept, daemon=True)
        th.start()
        try:
            url = "http://127.0.0.1:%d/mcp" % srv.getsockname()[1]
            p = NexusMemoryProvider({"url": url, "token": "nxs_test", "timeout": 0.5})
            start = time.monotonic()
            h = Harness(p, [p.pre_llm_call])
            t = h.turn("What changed overnight?", "Nothing I could see.")
            h.end()
            took = time.monotonic() - start
            self.assertIn("did not answer within 0.5 s", t)
            self.assertLess(took, 15, f"a stalled server held the session for {took:.1f} s")
        finally:
            stop.set()
            th.join()
            for c in held:
                c.close()
            srv.close()


class MCPTest(unittest.TestCase):
    """The same session over MCP (Streamable HTTP) with the agent's token."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="nexus-hermes-mcp-")
        self.vault = make_vault(self.tmp)
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.addr = "127.0.0.1:%d" % s.getsockname()[1]
        s.close()
        self.token = nx(self.vault, "agent", "token", "lyra")["token"]
        self.start()

    def start(self):
        """Starts nexus serve --http and returns once it says it listens
        (its log line on stderr)."""
        self.srv = subprocess.Popen([NEXUS, "--vault", self.vault, "serve", "--http", self.addr],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                    env=dict(os.environ, NEXUS_SEARCH_HOLD="0"))
        said = b""
        for line in self.srv.stderr:
            said += line
            if b"serving MCP over Streamable HTTP" in line:
                break
        else:
            raise AssertionError("nexus serve --http did not start: " + said.decode())
        # Keep reading its log so a full pipe never blocks it.
        threading.Thread(target=self.srv.stderr.read, daemon=True).start()

    def stop(self):
        self.srv.terminate()
        self.srv.wait(30)

    def tearDown(self):
        self.srv.terminate()
        try:
            self.srv.wait(10)
        except subprocess.TimeoutExpired:
            self.srv.kill()
            self.srv.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_max_chars_and_a_server_restart(self):
        v = self.vault
        for i in range(6):
            nx(v, "log", "append", "--body", "x" * 250, "ELLA-C%d" % i, agent="ella")
        c = MCPClient("http://%s/mcp" % self.addr, self.token, 20)
        u = c.unread(20, 700, ack=True)
        self.assertLess(len(u["text"]), 900, u["text"])
        self.assertIn("ELLA-C0", u["text"])
        self.assertNotIn("ELLA-C5", u["text"])
        shown = len(re.findall(r"ELLA-C\d", u["text"]))
        self.assertEqual((u["shown"], u["more"], u["total"]), (shown, 6 - shown, 6))
        self.assertIn("(%d newer unread entr" % (6 - shown), u["text"])
        left = nx(v, "log", "read", "--unread", "--ack=false", agent="lyra")["count"]
        self.assertEqual(left, 6 - shown, "acknowledged more than it showed")
        # The server restarts: the old session is gone, the next call
        # starts a new one and is not a failure.
        self.stop()
        self.start()
        nx(v, "log", "append", "ELLA-R after the restart", agent="ella")
        u = c.unread(20, 100000, ack=True)
        self.assertIn("ELLA-R after the restart", u["text"])

    def test_session_over_http(self):
        v = self.vault
        nx(v, "log", "append", "ELLA-H over http", agent="ella")
        p = NexusMemoryProvider({"url": "http://%s/mcp" % self.addr, "token": self.token, "timeout": 20})
        h = Harness(p, [p.pre_llm_call])
        self.assertIn("IDENTITY (who you are: agents/lyra/IDENTITY.md)", h.system)
        self.assertIn("DECISION-MARKER", h.system)
        self.assertNotIn("MEMORY-MARKER", h.system)
        self.assertNotIn("USER-MARKER", h.system)
        self.assertNotIn("Unread log entries", h.system)
        t1 = h.turn("What changed overnight on staging?", "Ella's note arrived over HTTP.")
        self.assertIn("ELLA-H", t1)
        t2 = h.turn("Anything else since then?", "No.")
        self.assertNotIn("ELLA-H", t2)
        self.assertIn("checkpoint", h.compress().lower())
        h.end()
        mine = entries(v, "lyra")
        self.assertEqual(len(mine), 2, mine)
        self.assertTrue(all(e["signed"] and e["agent"] == "lyra" and e["kind"] == "turn" for e in mine))


class HubTest(unittest.TestCase):
    """The hub: the first call that finds no 'nexus serve --http' for the
    vault goes over the CLI and starts one; the next calls (a new process
    too) use it; a hub that went away costs no notice."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="nexus-hermes-hub-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.vault = make_vault(self.tmp)
        self.dir = os.path.join(self.vault, ".nexus", "state", "hub")
        # serve.log is a named pipe here, so the test waits on the hub's
        # own words (a blocking read) instead of polling a file: one
        # reader per server started, each reporting "ready" once the hub
        # says it listens, or "exited" when it closes its log first.
        os.makedirs(self.dir, mode=0o700)
        self.log = os.path.join(self.dir, "serve.log")
        os.mkfifo(self.log, 0o600)
        self.said: "queue.Queue[tuple[str, str]]" = queue.Queue()
        self.closing = threading.Event()
        reader = threading.Thread(target=self._read_log, daemon=True)
        reader.start()
        self.addCleanup(self._stop_reader, reader)

    def _read_log(self):
        while not self.closing.is_set():
            with open(self.log, "rb") as f:  # blocks until a server opens it
                said, told = b"", False
                for line in f:
                    said += line
                    if not told and b"serving MCP over Streamable HTTP" in line:
                        self.said.put(("ready", said.decode(errors="replace")))
                        told = True
                if not told and not self.closing.is_set():
                    self.said.put(("exited", said.decode(errors="replace")))

    def _stop_reader(self, reader):
        self.closing.set()
        try:  # a writer that opens and closes at once wakes the reader
            os.close(os.open(self.log, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass  # the reader is not waiting in open()
        reader.join(30)

    def wait_listening(self, srv):
        """Returns once the hub's log says it listens, or fails when it exits."""
        what, said = self.said.get(timeout=60)  # a bound for a hung hub, not a sync
        if what != "ready":
            raise AssertionError("the hub exited: " + said)

    def stop(self, srv):
        srv.terminate()
        srv.wait(30)

    def test_started_on_demand_and_reused(self):
        nx(self.vault, "log", "append", "ELLA-HUB1 before the hub", agent="ella")
        c1 = HubClient(NEXUS, self.vault, "lyra", 20)
        u = c1.unread(20, 4000, ack=True)
        self.assertIn("ELLA-HUB1", u["text"])
        self.assertIsNone(c1.mcp, "the first call went to a hub that was not there")
        self.assertIsNotNone(c1.started, "no hub was started")
        self.addCleanup(lambda: c1.started.poll() is None and self.stop(c1.started))
        self.assertEqual(os.stat(self.dir).st_mode & 0o777, 0o700)
        self.assertEqual(os.stat(os.path.join(self.dir, "lyra.token")).st_mode & 0o777, 0o600)
        self.wait_listening(c1.started)

        nx(self.vault, "log", "append", "ELLA-HUB2 through the hub", agent="ella")
        c2 = HubClient(NEXUS, self.vault, "lyra", 20)
        u = c2.unread(20, 4000, ack=True)
        self.assertIn("ELLA-HUB2", u["text"])
        self.assertNotIn("ELLA-HUB1", u["text"])
        self.assertIsNotNone(c2.mcp, "the second client did not use the hub")
        self.assertIsNone(c2.started)
        c2.append("through the hub", "", "general", "turn", "hermes:hub-test")
        c2.append("through the hub", "", "general", "turn", "hermes:hub-test")  # a retry: the key holds
        self.assertEqual(len(entries(self.vault, "lyra")), 1)

        # The hub goes away: the next call goes over the CLI, no error.
        self.stop(c1.started)
        nx(self.vault, "log", "append", "ELLA-HUB3 after the hub", agent="ella")
        u = c2.unread(20, 4000, ack=True)
        self.assertIn("ELLA-HUB3", u["text"])
        self.assertIsNotNone(c2.started, "no new hub was started")
        self.addCleanup(lambda: c2.started.poll() is None and self.stop(c2.started))
        self.wait_listening(c2.started)

    def test_agent_with_a_token_stays_on_the_cli(self):
        nx(self.vault, "agent", "token", "lyra")
        c = HubClient(NEXUS, self.vault, "lyra", 20)
        c.unread(20, 4000, ack=True)
        self.assertIsNone(c.started)
        with open(os.path.join(self.dir, "lyra.no-token")) as f:
            self.assertIn("already has a token", f.read())

    def test_full_binary(self):
        d = os.path.join(self.tmp, "bin")
        os.mkdir(d)
        _executable(d, "nexus-lite")
        full = _executable(d, "nexus")
        self.assertEqual(full_binary(os.path.join(d, "nexus-lite")), full)
        self.assertEqual(full_binary("/opt/x/nexus-lite"), "nexus")
        self.assertEqual(full_binary("/opt/x/nexus"), "/opt/x/nexus")


def _executable(folder, name):
    path = os.path.join(folder, name + (".exe" if os.name == "nt" else ""))
    with open(path, "w") as f:
        f.write("#!/bin/sh\nexit 0\n")
    os.chmod(path, 0o755)
    return path


class BinaryChoiceTest(unittest.TestCase):
    """Which nexus the provider runs: the config's bin, NEXUS_BIN, then
    nexus-lite on PATH (the lean build), then nexus."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="nexus-hermes-bin-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def provider(self, env, cfg=None):
        saved = dict(os.environ)
        self.addCleanup(lambda: (os.environ.clear(), os.environ.update(saved)))
        for k in ("NEXUS_BIN", "PATH"):
            os.environ.pop(k, None)
        os.environ.update(env)
        return NexusMemoryProvider(dict({"agent": "lyra"}, **(cfg or {})))

    def test_order(self):
        with_lite = os.path.join(self.tmp, "with-lite")
        without = os.path.join(self.tmp, "without")
        os.mkdir(with_lite)
        os.mkdir(without)
        lite = _executable(with_lite, "nexus-lite")
        _executable(without, "nexus")
        both = with_lite + os.pathsep + without
        for name, env, cfg, want in [
            ("nexus-lite on PATH", {"PATH": both}, None, lite),
            ("only nexus on PATH", {"PATH": without}, None, "nexus"),
            ("NEXUS_BIN wins over nexus-lite", {"PATH": both, "NEXUS_BIN": "/opt/nexus"}, None, "/opt/nexus"),
            ("config bin wins over both", {"PATH": both, "NEXUS_BIN": "/opt/nexus"}, {"bin": "/srv/nexus"}, "/srv/nexus"),
            ("empty NEXUS_BIN is unset", {"PATH": both, "NEXUS_BIN": ""}, None, lite),
        ]:
            with self.subTest(name):
                self.assertEqual(self.provider(env, cfg).binary, want)

    def test_not_executable_is_not_chosen(self):
        if os.name == "nt":
            self.skipTest("no execute bit on Windows")
        lite = _executable(self.tmp, "nexus-lite")
        os.chmod(lite, 0o644)
        self.assertEqual(self.provider({"PATH": self.tmp}).binary, "nexus")

    def test_session_through_the_lean_build(self):
        # The real lean build on PATH, the full nexus beside it (what it
        # runs 'search' and the like with): one turn injects and appends.
        folder = os.path.join(self.tmp, "bin")
        os.mkdir(folder)
        lite = os.path.join(folder, "nexus-lite")
        subprocess.run(["go", "build", "-tags", "lite", "-o", lite, "./cmd/nexus"], cwd=ROOT, check=True)
        shutil.copy(NEXUS, os.path.join(folder, "nexus"))
        vault = make_vault(self.tmp)
        nx(vault, "log", "append", "ELLA-L through the lean build", agent="ella")
        p = self.provider({"PATH": folder + os.pathsep + os.environ.get("PATH", "")}, {"vault": vault, "timeout": 20})
        self.assertEqual(p.binary, lite)
        h = Harness(p, [p.pre_llm_call])
        self.assertIn("IDENTITY", h.system)
        t1 = h.turn("What changed overnight on staging?", "Ella's note about the lean build.")
        self.assertIn("ELLA-L", t1)
        h.end()
        self.assertEqual([e["kind"] for e in entries(vault, "lyra")], ["turn"])
        version = subprocess.run([lite, "version"], capture_output=True, text=True, check=True).stdout
        self.assertIn("lean build", version)


class EnvMixin:
    def set_env(self, **env):
        """Set (value) or unset (None) environment variables for this test."""
        saved = dict(os.environ)
        self.addCleanup(lambda: (os.environ.clear(), os.environ.update(saved)))
        for k, v in env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class ManifestTest(unittest.TestCase):
    """plugin.yaml as Hermes's plugin loader (hermes_cli/plugins.py) reads it."""

    # hermes_cli/plugins.py _VALID_PLUGIN_KINDS; an unknown kind is warned
    # about and loaded as "standalone" by the general plugin loader.
    HERMES_KINDS = {"standalone", "backend", "exclusive", "platform", "model-provider"}

    def manifest(self):
        out = {}
        with open(os.path.join(HERE, "nexus_hermes", "plugin.yaml"), encoding="utf-8") as f:
            for line in f:
                m = re.match(r"^([a-z_]+):\s*(\S.*)?$", line.rstrip("\n"))
                if m:
                    out[m.group(1)] = (m.group(2) or "").strip()
        return out

    def test_kind_is_exclusive(self):
        m = self.manifest()
        self.assertEqual(m.get("name"), "nexus")
        self.assertIn(m.get("kind"), self.HERMES_KINDS, "Hermes would warn and treat the plugin as standalone")
        # Memory providers are the "exclusive" kind: one active, chosen by
        # memory.provider, loaded by plugins/memory discovery.
        self.assertEqual(m.get("kind"), "exclusive")

    def test_memory_discovery_recognises_the_package(self):
        # plugins/memory/__init__.py _is_memory_provider_dir: the first
        # 8192 characters of __init__.py name the provider contract.
        with open(os.path.join(HERE, "nexus_hermes", "__init__.py"), encoding="utf-8") as f:
            head = f.read()[:8192]
        self.assertTrue("register_memory_provider" in head or "MemoryProvider" in head)


class ProfileTest(EnvMixin, unittest.TestCase):
    """Without NEXUS_AGENT the agent is the Hermes profile's name."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="nexus-hermes-profile-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def test_agent_from_hermes_home(self):
        home = os.path.join(self.tmp, "home")
        for name, hermes_home, want in [
            ("a profile folder", os.path.join(home, ".hermes", "profiles", "lyra"), "lyra"),
            ("the default home", os.path.join(home, ".hermes"), "default"),
            ("no HERMES_HOME", None, "default"),
        ]:
            with self.subTest(name):
                self.set_env(HOME=home, HERMES_HOME=hermes_home, NEXUS_AGENT=None, NEXUS_URL=None, NEXUS_TOKEN=None)
                p = NexusMemoryProvider()
                self.assertEqual(p.agent, want)
                self.assertEqual(p.agent_source, "profile")
                self.assertTrue(p.is_available())

    def test_nexus_agent_wins(self):
        self.set_env(HERMES_HOME=os.path.join(self.tmp, "profiles", "lyra"), NEXUS_AGENT="ella", NEXUS_URL=None)
        p = NexusMemoryProvider()
        self.assertEqual((p.agent, p.agent_source), ("ella", "NEXUS_AGENT"))

    def test_unnamed_home_is_unavailable_with_a_warning(self):
        self.set_env(HERMES_HOME=os.path.join(self.tmp, "somewhere"), NEXUS_AGENT=None, NEXUS_URL=None, NEXUS_TOKEN=None)
        p = NexusMemoryProvider()
        with self.assertLogs("nexus_hermes", level="WARNING") as logs:
            self.assertFalse(p.is_available())
        self.assertIn("NEXUS_AGENT", p.unavailable_reason())
        self.assertIn("NEXUS_AGENT", "\n".join(logs.output))

    def test_url_without_token_is_unavailable_with_a_warning(self):
        self.set_env(NEXUS_URL="http://127.0.0.1:1/mcp", NEXUS_TOKEN=None, NEXUS_AGENT=None)
        p = NexusMemoryProvider()
        with self.assertLogs("nexus_hermes", level="WARNING") as logs:
            self.assertFalse(p.is_available())
        self.assertIn("NEXUS_TOKEN", "\n".join(logs.output))

    def test_session_as_the_profile(self):
        vault = make_vault(self.tmp)
        nx(vault, "log", "append", "ELLA-P for the lyra profile", agent="ella")
        self.set_env(HERMES_HOME=os.path.join(self.tmp, "profiles", "lyra"), NEXUS_AGENT=None, NEXUS_URL=None)
        p = NexusMemoryProvider({"vault": vault, "bin": NEXUS, "timeout": 20})
        self.assertTrue(p.is_available())
        # Hermes passes the same name as agent_identity.
        h = Harness(p, [p.pre_llm_call], agent_identity="lyra")
        t = h.turn("What changed overnight on staging?", "Ella wrote to the lyra profile.")
        h.end()
        self.assertIn("ELLA-P", t)
        self.assertEqual([e["kind"] for e in entries(vault, "lyra")], ["turn"])

    def test_profile_without_an_agent_says_how_to_fix_it(self):
        vault = make_vault(self.tmp)
        self.set_env(HERMES_HOME=os.path.join(self.tmp, "profiles", "coder"), NEXUS_AGENT=None, NEXUS_URL=None)
        p = NexusMemoryProvider({"vault": vault, "bin": NEXUS, "timeout": 20})
        h = Harness(p, [p.pre_llm_call], agent_identity="coder")
        t = h.turn("What changed overnight on staging?", "Nothing I could see.")
        h.end()
        self.assertIn(NexusMemoryProvider.NOTICE_PREFIX, t)
        self.assertIn("Hermes profile name 'coder'", t)
        self.assertIn("NEXUS_AGENT", t)


class ContractTest(unittest.TestCase):
    """recall_status, on_delegation, the fail-closed pre-compress contract,
    idempotent appends, notices kept on disk, relevance prefetch."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="nexus-hermes-contract-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.vault = make_vault(self.tmp)

    def test_recall_status_counts_what_was_injected(self):
        v = self.vault
        for i in range(3):
            nx(v, "log", "append", f"ELLA-R{i}", agent="ella")
        p, hook = provider_for(v, max_entries=2)
        h = Harness(p, hook)
        h.turn("What is new in the log for me?", "Two entries.")
        h.turn("Anything after those?", "One more.")
        h.turn("And now?", "Nothing new.")
        h.end()
        self.assertEqual(h.status[0].count, 2)
        self.assertIn("1 more unread waiting", h.status[0].provider_label)
        self.assertEqual(h.status[1].count, 1)
        self.assertNotIn("waiting", h.status[1].provider_label)
        self.assertIsNone(h.status[2], "a prefetch that injected nothing kept a stale status")

    def test_delegation_is_recorded(self):
        p, hook = provider_for(self.vault)
        h = Harness(p, hook)
        h.turn("Audit the staging firewall rules", "I handed the audit to a subagent.")
        p.on_delegation("Audit the staging firewall rules and list open ports",
                        "Open: 22, 443, 2222.", child_session_id="child-7")
        h.end()
        mine = entries(self.vault, "lyra")
        self.assertEqual([e["kind"] for e in mine], ["turn", "delegation"], mine)
        self.assertIn("delegated to a subagent: Audit the staging firewall", mine[1]["summary"])
        self.assertIn("2222", mine[1]["summary"])

    def test_delegation_in_a_read_only_context_writes_nothing(self):
        p, hook = provider_for(self.vault)
        h = Harness(p, hook, agent_context="cron")
        p.on_delegation("Rotate the logs", "Done.", child_session_id="c")
        h.end()
        self.assertEqual(entries(self.vault, "lyra"), [])

    def test_pre_compress_declares_the_fail_closed_contract(self):
        p = NexusMemoryProvider({"agent": "lyra"})
        self.assertGreaterEqual(p.pre_compress_checkpoint_api_version, 2)
        # Hermes's MemoryManager passes require_checkpoint only to a
        # provider whose on_pre_compress accepts it by keyword.
        params = inspect.signature(p.on_pre_compress).parameters
        self.assertIn(params["require_checkpoint"].kind,
                      (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD))

    def test_pre_compress_fails_closed(self):
        msgs = [{"role": "user", "content": "Migrate the billing database"}, {"role": "assistant", "content": "Step 1 done."}]
        for name, cfg, require, want in [
            ("saved, required", {}, True, "saved"),
            ("saved, best effort", {}, False, "saved"),
            ("failed, required", {"bin": "/nonexistent/nexus"}, True, "raises"),
            ("failed, best effort", {"bin": "/nonexistent/nexus"}, False, "could NOT be saved"),
        ]:
            with self.subTest(name):
                p, hook = provider_for(self.vault, **cfg)
                h = Harness(p, hook)
                if want == "raises":
                    with self.assertRaises(Exception) as cm:
                        p.on_pre_compress(msgs, require_checkpoint=require)
                    self.assertIn("checkpoint", str(cm.exception))
                else:
                    note = p.on_pre_compress(msgs, require_checkpoint=require)
                    self.assertIn(want, note)
                h.end()
        self.assertIn("Migrate the billing database", json.dumps(nx(self.vault, "checkpoint", "show", agent="lyra")))

    def test_required_checkpoint_is_saved_in_a_read_only_context(self):
        p, hook = provider_for(self.vault)
        h = Harness(p, hook, agent_context="subagent")
        note = p.on_pre_compress([{"role": "user", "content": "Summarise the incident timeline"}], require_checkpoint=True)
        h.end()
        self.assertIn("saved", note)
        self.assertIn("incident timeline", json.dumps(nx(self.vault, "checkpoint", "show", agent="lyra")))

    def test_retry_after_a_timeout_does_not_duplicate(self):
        # A nexus whose first 'log append' writes the entry and then never
        # answers: the provider times out, retries with the same key, and
        # the vault holds one entry.
        marker = os.path.join(self.tmp, "stalled-once")
        slow = os.path.join(self.tmp, "nexus-slow")
        with open(slow, "w") as f:
            f.write('#!/bin/sh\n"%s" "$@"\nrc=$?\ncase "$*" in *"log append"*) ;; *) exit $rc ;; esac\n'
                    '[ -e "%s" ] && exit $rc\n: > "%s"\nexec sleep 60\n' % (NEXUS, marker, marker))
        os.chmod(slow, 0o755)
        p, hook = provider_for(self.vault, bin=slow, timeout=3)
        h = Harness(p, hook)
        h.turn("Deploy the API gateway to staging", "Deployed; all checks green.")
        self.assertTrue(p.flush(60))
        h.end()
        self.assertTrue(os.path.exists(marker), "the stalled append never ran")
        mine = entries(self.vault, "lyra")
        self.assertEqual(len(mine), 1, mine)
        self.assertTrue(p.appended and p.appended[-1].get("duplicate"), p.appended)
        self.assertEqual(h.warnings, [])

    def test_inspection_starts_nothing_and_keeps_notices(self):
        home = os.path.join(self.tmp, "hermes-home")
        os.makedirs(os.path.join(home, "nexus"))
        kept = os.path.join(home, "nexus", "notices.json")
        with open(kept, "w") as f:
            json.dump({"notices": [{"text": "KEPT-NOTICE", "when": "01:00:00 UTC", "left": 2}]}, f)
        nx(self.vault, "log", "append", "ELLA-I unread", agent="ella")
        p, _ = provider_for(self.vault)
        p.initialize_for_inspection("s-i", hermes_home=home, platform="cli")
        self.assertIn("DECISION-MARKER", p.system_prompt_block())
        self.assertIsNone(p._worker)
        self.assertEqual(p.prefetch("What is new?").count("ELLA-I"), 1)
        self.assertNotIn("KEPT-NOTICE", p.prefetch("What is new?"))
        with open(kept) as f:
            self.assertIn("KEPT-NOTICE", f.read())
        self.assertEqual(nx(self.vault, "log", "read", "--unread", agent="lyra")["count"], 1, "inspection acknowledged")

    def test_turn_keys_differ_per_turn_and_hold_per_turn(self):
        p = NexusMemoryProvider({"agent": "lyra"})
        p._session_id = "s-1"
        k1, k1again, k2 = p._turn_key(1, "turn", "hi there"), p._turn_key(1, "turn", "hi there"), p._turn_key(2, "turn", "hi there")
        self.assertEqual(k1, k1again)
        self.assertNotEqual(k1, k2)
        self.assertLessEqual(len(k1), 128)

    def test_notice_survives_the_process(self):
        # Process 1: its only turn could not be recorded (an agent the vault
        # does not know), and it exits right after.
        home = os.path.join(self.tmp, "hermes-home")
        p1, hook1 = provider_for(self.vault, agent="ghost")
        h1 = Harness(p1, hook1, hermes_home=home, warning_callback=None)
        h1.turn("Summarise the open incidents", "Two are open.")
        h1.end()
        self.assertTrue(os.path.exists(os.path.join(home, "nexus", "notices.json")))
        # Process 2 (same Hermes home, Nexus fine again): the notice comes at
        # the start of its first two turns, then no more.
        p2, hook2 = provider_for(self.vault)
        h2 = Harness(p2, hook2, hermes_home=home)
        self.assertTrue(any("not recorded" in w for w in h2.warnings), h2.warnings)
        t1 = h2.turn("What is next on the migration plan?", "Step 4.")
        t2 = h2.turn("And after step 4?", "Step 5.")
        t3 = h2.turn("And after step 5?", "Done.")
        h2.end()
        self.assertIn("the last turn was not recorded in the shared log", t1)
        self.assertIn("the last turn was not recorded in the shared log", t2)
        self.assertNotIn("not recorded", t3)
        self.assertFalse(os.path.exists(os.path.join(home, "nexus", "notices.json")))

    def test_failed_append_is_said_now_and_at_the_next_turn(self):
        p, hook = provider_for(self.vault, agent="ghost")
        h = Harness(p, hook)
        h.turn("Summarise the open incidents", "Two are open.")
        p.flush()
        said_after_turn = [w for w in h.warnings if "not recorded" in w]
        t2 = h.turn("What is next?", "Step 4.")
        h.end()
        self.assertTrue(said_after_turn, h.warnings)
        self.assertIn("the last turn was not recorded in the shared log", t2)

    def test_relevance_prefetch(self):
        v = self.vault
        nx(v, "fact", "write", "--name", "Staging SSH", "--type", "project", "--description",
           "staging host needs port 2222", "FACT-MARKER Staging (10.0.1.50) listens on 2222.", agent="ella")
        q = "Which port does staging ssh listen on?"
        for name, cfg, want in [("off by default", {}, False), ("on", {"recall": True}, True)]:
            with self.subTest(name):
                p, hook = provider_for(v, **cfg)
                h = Harness(p, hook)
                t = h.turn(q, "Port 2222.")
                h.end()
                self.assertEqual("agents/ella/memory/staging-ssh.md" in t, want, t)
                self.assertNotIn("INDEX.md", t)
                if want:
                    self.assertIn("Relevant in the shared vault", t)
                    self.assertGreaterEqual(h.status[0].count, 1)

    def test_relevance_prefetch_is_bounded(self):
        v = self.vault
        for i in range(6):
            nx(v, "fact", "write", "--name", f"Runbook {i}", "--type", "reference", "--description",
               f"runbook {i} for the gateway", f"gateway runbook step {i}", agent="ella")
        p, hook = provider_for(v, recall=True, recall_limit=2)
        h = Harness(p, hook)
        t = h.turn("gateway runbook", "Here are the steps.")
        h.end()
        self.assertEqual(len(re.findall(r"agents/ella/memory/runbook-\d\.md", t)), 2, t)


class RealHermesTest(unittest.TestCase):
    """The provider under Hermes Agent's own MemoryManager, from a Hermes
    source checkout named by HERMES_AGENT_SRC (skipped without one)."""

    def test_session_under_hermes_memory_manager(self):
        src = os.environ.get("HERMES_AGENT_SRC", "")
        if not src or not os.path.isfile(os.path.join(src, "agent", "memory_manager.py")):
            self.skipTest("HERMES_AGENT_SRC does not name a Hermes Agent checkout")
        tmp = tempfile.mkdtemp(prefix="nexus-hermes-real-")
        self.addCleanup(shutil.rmtree, tmp, True)
        vault = make_vault(tmp)
        nx(vault, "log", "append", "ELLA-REAL fixed the login timeout", agent="ella")
        proc = subprocess.run([sys.executable, os.path.join(HERE, "hermes_real_driver.py"), src, vault, NEXUS,
                               os.path.join(tmp, "hermes-home")], capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        out = json.loads(proc.stdout)
        self.assertTrue(out["hermes_base"])
        self.assertTrue(out["available"])
        self.assertIn("ELLA-REAL", out["prefetch"])
        if out["recall"] is not None:
            self.assertIn("Nexus shared log", out["recall"])
        self.assertIn("checkpoint was saved", out["compress"])
        self.assertEqual(out["warnings"], [])
        kinds = [e["kind"] for e in entries(vault, "lyra")]
        self.assertEqual(kinds, ["turn", "delegation"])


class UnitTest(unittest.TestCase):
    def test_trivial(self):
        for s in ("ok", "OK!", "thanks :)", "/help", "", "  ", "네", "lgtm"):
            self.assertTrue(is_trivial(s), s)
        for s in ("ok, deploy it to staging", "k8s is down", "note this", "배포해줘"):
            self.assertFalse(is_trivial(s), s)

    def test_strip_sections(self):
        rule = "═" * 46
        text = "\n".join([
            rule, "IDENTITY (who you are: agents/lyra/IDENTITY.md)", rule, "# lyra", "",
            rule, "MEMORY (your personal notes) [1% — 3/2,200 chars]", rule, "m1", "§", "m2", "",
            rule, "USER PROFILE (who the user is) [1% — 2/1,375 chars]", rule, "u1", "",
            rule, "MEMORY INDEX (your fact files) [1/200 lines]", rule, "- [[a|A]]", "",
            "## Unread log entries (1)", "- x", "", "## Latest checkpoint", "No checkpoint saved.",
        ])
        got = strip_sections(text, ("MEMORY (your personal notes)", "USER PROFILE (who the user is)"), "## Unread log entries")
        self.assertNotIn("m1", got)
        self.assertNotIn("u1", got)
        self.assertNotIn("- x", got)
        for want in ("# lyra", "MEMORY INDEX", "- [[a|A]]", "## Latest checkpoint"):
            self.assertIn(want, got)

    def test_importable_without_hermes(self):
        self.assertNotIn("agent.memory_provider", sys.modules)
        self.assertEqual(NexusMemoryProvider().name, "nexus")
        self.assertEqual(NexusMemoryProvider().get_tool_schemas(), [])

    def test_mcp_client_rejects_bad_config(self):
        self.assertIn("not an http", MCPClient("ftp://x", "t", 1).check())
        self.assertIn("NEXUS_TOKEN", MCPClient("http://127.0.0.1:1/mcp", "", 1).check())


if __name__ == "__main__":
    unittest.main()
