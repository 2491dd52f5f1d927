"""Talking to Nexus: the nexus CLI with --json, or MCP over HTTP with a token.

Both clients give the provider the same six calls (unread, static_block,
append, checkpoint, search, describe) and raise NexusError with a message a person
can act on. Every call is bounded in time: a stalled nexus process is killed,
a stalled server is abandoned, and the caller gets NexusError("... timed
out after N s").

Standard library only.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from typing import Any, Dict, List, Optional

# The sections the static system-prompt block carries. MEMORY and USER are
# left out: Hermes injects its own memories folder (the agent's home).
STATIC_SECTIONS = ("identity", "memory_index", "checkpoint", "decisions")

# The lean build of nexus (go build -tags lite, docs/cli.md): the same
# commands, without the MCP server's and the index's start-up cost.
LITE_BINARY = "nexus-lite"


def default_binary(env: Optional[Dict[str, str]] = None) -> str:
    """The nexus to run when neither the config's bin nor NEXUS_BIN names
    one: nexus-lite if it is on PATH (it starts several times faster; it
    hands the commands it leaves out to the full nexus), else nexus."""
    env = os.environ if env is None else env
    return shutil.which(LITE_BINARY, path=env.get("PATH", os.defpath)) or "nexus"


# How much of a body the MCP transport shows per unread entry (the CLI's
# 'nexus prompt' cuts bodies to 300 code points itself).
_MCP_BODY_CHARS = 300


def _render_entry(e: Dict[str, Any]) -> str:
    """One unread entry as 'nexus prompt' renders it: a head line and the
    body folded to one line, cut to 300 characters."""
    if e.get("hand"):
        return "- (typed by hand, unsigned) " + _clip(_one_line(e.get("body", "")), _MCP_BODY_CHARS)
    head = "- " + ("" if e.get("signed") else "(unsigned) ")
    head += f"{e.get('time', '')} {e.get('agent', '')} [{e.get('channel', '')}/{e.get('kind', '')}] {_one_line(e.get('summary', ''))}"
    if e.get("body"):
        head += "\n  " + _clip(_one_line(e["body"]), _MCP_BODY_CHARS)
    return head


class NexusError(Exception):
    """Nexus could not be reached, or refused the call."""

    def __init__(self, message: str, *, refused: bool = False):
        super().__init__(message)
        # refused is True when Nexus answered and said no (a scan hit, a
        # limit), as opposed to not answering at all.
        self.refused = refused


def _one_line(text: str) -> str:
    return " ".join((text or "").split())


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


class CLIClient:
    """Runs the nexus binary for one agent of one vault."""

    def __init__(self, binary: str, vault: str, agent: str, timeout: float):
        self.binary = binary
        self.vault = vault
        self.agent = agent
        self.timeout = timeout
        self._key_flag = True  # cleared if this nexus predates 'log append --key'

    def describe(self) -> str:
        return f"nexus CLI {self.binary} (vault {self.vault or '$NEXUS_VAULT'}, agent {self.agent})"

    def check(self) -> Optional[str]:
        """What is missing locally (no process started), or None."""
        if os.path.sep in self.binary or (os.altsep and os.altsep in self.binary):
            if not os.path.isfile(self.binary):
                return f"the nexus binary {self.binary} does not exist (set NEXUS_BIN)"
        elif shutil.which(self.binary) is None:
            return f"no '{self.binary}' on PATH (install nexus or set NEXUS_BIN to its path)"
        if self.vault and not os.path.isdir(os.path.join(self.vault, ".nexus")):
            return f"{self.vault} is not a Nexus vault (no .nexus folder; set NEXUS_VAULT)"
        return None

    def _run(self, args: List[str], timeout: Optional[float] = None, as_agent: bool = True) -> Dict[str, Any]:
        cmd = [self.binary]
        if self.vault:
            cmd += ["--vault", self.vault]
        if as_agent:
            cmd += ["--agent", self.agent]
        cmd += ["--json"] + args
        env = dict(os.environ)
        env.setdefault("NEXUS_SEARCH_HOLD", "0")
        limit = timeout or self.timeout
        what = " ".join(a for a in args[:2] if not a.startswith("-"))
        try:
            proc = subprocess.run(
                cmd, capture_output=True, timeout=limit, env=env, stdin=subprocess.DEVNULL
            )
        except subprocess.TimeoutExpired:
            raise NexusError(f"nexus {what} timed out after {limit:g} s (the vault may be locked or on a stalled disk)")
        except OSError as e:
            raise NexusError(f"cannot run {self.binary}: {e.strerror or e}")
        out = proc.stdout.decode("utf-8", "replace").strip()
        err = proc.stderr.decode("utf-8", "replace").strip()
        doc: Dict[str, Any] = {}
        if out:
            try:
                doc = json.loads(out)
            except ValueError:
                doc = {}
        if proc.returncode != 0:
            msg = doc.get("error") if isinstance(doc, dict) else None
            if not msg:
                msg = err.splitlines()[0] if err else f"exit {proc.returncode}"
            if msg.startswith("nexus: "):
                msg = msg[len("nexus: "):]
            raise NexusError(f"nexus {what}: {msg}", refused=proc.returncode == 1)
        if not isinstance(doc, dict):
            raise NexusError(f"nexus {what} printed no JSON document")
        return doc

    def unread(self, max_entries: int, max_chars: int, ack: bool) -> Dict[str, Any]:
        """The unread section: {text, total, shown, more, acked}."""
        args = ["prompt", "--only", "unread", "--max-entries", str(max_entries), "--max-chars", str(max_chars)]
        if ack:
            args.append("--ack")
        doc = self._run(args)
        return {
            "text": doc.get("unread", ""),
            "total": int(doc.get("unread_total", 0)),
            "shown": int(doc.get("unread_shown", 0)),
            "more": int(doc.get("unread_more", 0)),
            "acked": bool(doc.get("acked", False)),
        }

    def static_block(self) -> str:
        doc = self._run(["prompt", "--only", ",".join(STATIC_SECTIONS)])
        return doc.get("prompt", "")

    def append(self, summary: str, body: str, channel: str, kind: str, key: str) -> Dict[str, Any]:
        args = ["log", "append", "--channel", channel, "--kind", kind]
        if body:
            args += ["--body", body]
        if key and self._key_flag:
            try:
                return self._run(args + ["--key", key, "--", summary])
            except NexusError as e:
                if "unknown flag: --key" not in str(e):
                    raise
                self._key_flag = False  # an older nexus: append without the key
        return self._run(args + ["--", summary])

    def search(self, query: str, limit: int) -> List[Dict[str, Any]]:
        """The best hits for query over the whole vault (every agent's
        facts and notes: a global --agent would narrow 'nexus search' to
        one agent, so none is passed)."""
        doc = self._run(["search", "--limit", str(limit), "--", query], as_agent=False)
        hits = doc.get("hits") or []
        return [h for h in hits if isinstance(h, dict)]

    def checkpoint(self, task: str, state: str, next_step: str, notes: List[str]) -> Dict[str, Any]:
        args = ["checkpoint", "save", "--task", task]
        if state:
            args += ["--state", state]
        if next_step:
            args += ["--next", next_step]
        for n in notes:
            args += ["--note", n]
        return self._run(args)


class _SessionLost(NexusError):
    """The server answered 404 to a request of a session it no longer knows."""


class MCPClient:
    """Speaks MCP (Streamable HTTP, JSON-RPC) to 'nexus serve --http' with a
    bearer token; the token names the agent."""

    def __init__(self, url: str, token: str, timeout: float):
        self.url = url
        self.token = token
        self.timeout = timeout
        self._session: Optional[str] = None
        self._id = 0
        self._key_arg = True

    def describe(self) -> str:
        return f"nexus serve at {self.url}"

    def check(self) -> Optional[str]:
        if not self.url.startswith(("http://", "https://")):
            return f"NEXUS_URL {self.url!r} is not an http(s) URL"
        if not self.token:
            return "NEXUS_TOKEN is empty (get one with: nexus agent token NAME)"
        return None

    def _post(self, payload: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        data = json.dumps(payload).encode("utf-8")
        req = urllib.request.Request(self.url, data=data, method="POST")
        req.add_header("Content-Type", "application/json")
        req.add_header("Accept", "application/json, text/event-stream")
        req.add_header("Authorization", "Bearer " + self.token)
        if self._session:
            req.add_header("Mcp-Session-Id", self._session)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                sid = resp.headers.get("Mcp-Session-Id")
                if sid:
                    self._session = sid
                raw = resp.read().decode("utf-8", "replace")
                ctype = resp.headers.get("Content-Type", "")
        except urllib.error.HTTPError as e:
            detail = e.read().decode("utf-8", "replace").strip()[:200]
            if e.code == 404 and self._session:
                # The server forgot the session (it restarted, or the
                # session expired while idle): the caller starts a new one.
                self._session = None
                raise _SessionLost(f"{self.url}: HTTP 404 {detail}".strip())
            err = NexusError(f"{self.url}: HTTP {e.code} {detail}".strip())
            err.unauthorized = e.code == 401
            raise err
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            if "timed out" in str(reason):
                raise NexusError(f"{self.url} did not answer within {self.timeout:g} s")
            err = NexusError(f"cannot reach {self.url}: {reason}")
            err.unreachable = "refused" in str(reason).lower()  # nothing listens there
            raise err
        if "id" not in payload:
            return None
        if "text/event-stream" in ctype:
            doc = None
            for line in raw.splitlines():
                if line.startswith("data:"):
                    try:
                        msg = json.loads(line[5:].strip())
                    except ValueError:
                        continue
                    if msg.get("id") == payload["id"]:
                        doc = msg
            if doc is None:
                raise NexusError(f"{self.url}: no answer in the event stream")
        else:
            try:
                doc = json.loads(raw)
            except ValueError:
                raise NexusError(f"{self.url}: the answer is not JSON")
        if "error" in doc:
            raise NexusError(f"{self.url}: {doc['error'].get('message', doc['error'])}")
        return doc.get("result", {})

    def _rpc(self, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
        try:
            return self._rpc_once(method, params)
        except _SessionLost:
            return self._rpc_once(method, params)  # once more, in a new session

    def _rpc_once(self, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
        if self._session is None:
            self._id += 1
            self._post({"jsonrpc": "2.0", "id": self._id, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "nexus-hermes", "version": "0.1.0"},
            }})
            self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self._id += 1
        return self._post({"jsonrpc": "2.0", "id": self._id, "method": method, "params": params}) or {}

    def _tool(self, name: str, args: Dict[str, Any]) -> Dict[str, Any]:
        res = self._rpc("tools/call", {"name": name, "arguments": args})
        text = "".join(c.get("text", "") for c in res.get("content", []) if c.get("type") == "text")
        if res.get("isError"):
            raise NexusError(f"{name}: {_clip(_one_line(text), 300)}", refused=True)
        doc = res.get("structuredContent")
        if doc is None:
            try:
                doc = json.loads(text)
            except ValueError:
                doc = {}
        return doc if isinstance(doc, dict) else {}

    def unread(self, max_entries: int, max_chars: int, ack: bool) -> Dict[str, Any]:
        """The unread entries as 'nexus prompt --only unread' renders them:
        at most max_entries in at most max_chars characters (at least one).
        log_read has no character bound, so this peeks first and then
        acknowledges exactly the entries that fit: none is acknowledged
        without being shown."""
        limit = max(1, min(max_entries, 100))
        peek = self._tool("log_read", {"ack": False, "limit": limit})
        entries = peek.get("entries") or []
        blocks = [_render_entry(e) for e in entries]
        fit = size = 0
        for b in blocks:
            n = len(b) + 1
            if fit > 0 and size + n > max_chars:
                break
            size += n
            fit += 1
        acked = False
        if ack and fit:
            acked = bool(self._tool("log_read", {"ack": True, "limit": fit}).get("acked", False))
        more = int(peek.get("remaining", 0)) + len(entries) - fit
        total = fit + more
        text = f"## Unread log entries ({total})\n"
        if not fit:
            text += "Nothing new in the live log."
        if more:
            noun = "entry" if more == 1 else "entries"
            text += f"({more} newer unread {noun} not shown yet; they stay unread and come next time; log_read shows them now.)\n"
        text += "\n".join(blocks[:fit])
        return {"text": text.rstrip("\n"), "total": total, "shown": fit, "more": more, "acked": acked}

    def static_block(self) -> str:
        res = self._rpc("prompts/get", {"name": "session_start"})
        text = "".join(m.get("content", {}).get("text", "") for m in res.get("messages", []))
        return strip_sections(text, ("MEMORY (your personal notes)", "USER PROFILE (who the user is)"), "## Unread log entries")

    def append(self, summary: str, body: str, channel: str, kind: str, key: str) -> Dict[str, Any]:
        args: Dict[str, Any] = {"summary": summary, "channel": channel, "kind": kind}
        if body:
            args["body"] = body
        if key and self._key_arg:
            try:
                return self._tool("log_append", dict(args, key=key))
            except NexusError as e:
                if not (e.refused and "key" in str(e).lower()):
                    raise
                self._key_arg = False  # a server that predates the key argument
        return self._tool("log_append", args)

    def search(self, query: str, limit: int) -> List[Dict[str, Any]]:
        doc = self._tool("memory_search", {"query": query[:1000], "maxResults": max(1, min(limit, 100))})
        hits = doc.get("hits") or []
        return [h for h in hits if isinstance(h, dict)]

    def checkpoint(self, task: str, state: str, next_step: str, notes: List[str]) -> Dict[str, Any]:
        args: Dict[str, Any] = {"task": task}
        if state:
            args["state"] = state
        if next_step:
            args["next"] = next_step
        if notes:
            args["notes"] = "\n".join(notes)
        return self._tool("checkpoint_save", args)


_RULE = "═" * 46


def strip_sections(text: str, titles, drop_from: str) -> str:
    """Remove the framed blocks whose title line starts with one of titles,
    and everything from the line drop_from on to the next '## ' heading, from
    a session-start render (the layout agents/render.go writes: a rule line,
    a title line, a rule line, the body; blocks apart by a blank line)."""
    lines = text.split("\n")
    out: List[str] = []
    skipping = False
    i = 0
    while i < len(lines):
        line = lines[i]
        framed = line == _RULE and i + 2 < len(lines) and lines[i + 2] == _RULE
        if framed:
            skipping = lines[i + 1].startswith(tuple(titles))
        elif line.startswith("## "):
            skipping = line.startswith(drop_from)
        if not skipping:
            out.append(line)
        i += 1
    joined = "\n".join(out)
    while "\n\n\n" in joined:
        joined = joined.replace("\n\n\n", "\n\n")
    return joined.strip("\n")


# The hub: one 'nexus serve --http' per vault on this machine, started on
# demand and shared by every adapter (the OpenClaw plugin and the Claude
# Code hook use the same files), so a turn costs a few loopback HTTP calls
# instead of two process starts. See docs/runtimes.md, "One server started
# on demand". Files in VAULT/.nexus/state/hub/ (machine-local, 0700/0600):
# serve.json {url, pid}, AGENT.token, AGENT.no-token, serve.log.
HUB_IDLE = "10m"
_HUB_STARTING = 30.0  # seconds: a start younger than this is not repeated


def _alive(pid: Any) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
        return True
    except PermissionError:
        return True
    except OSError:
        return False


def _read_json(path: str) -> Optional[Dict[str, Any]]:
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        return doc if isinstance(doc, dict) else None
    except (OSError, ValueError):
        return None


def _write_private(path: str, text: str) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def full_binary(binary: str) -> str:
    """The nexus that serves: nexus-lite leaves the server out, so the full
    nexus beside it (or on PATH)."""
    name = os.path.basename(binary)
    if name not in ("nexus-lite", "nexus-lite.exe"):
        return binary
    beside = os.path.join(os.path.dirname(binary), "nexus" + (".exe" if os.name == "nt" else ""))
    return beside if os.path.isfile(beside) else "nexus"


class HubClient:
    """Sends each call to the vault's hub when one answers, else runs it
    over the CLI and starts a hub (in the background, not waited for) for
    the next turns."""

    def __init__(self, binary: str, vault: str, agent: str, timeout: float, log: Any = None):
        self.cli = CLIClient(binary, vault, agent, timeout)
        self.vault = vault
        self.agent = agent
        self.timeout = timeout
        self.dir = os.path.join(vault, ".nexus", "state", "hub") if vault else ""
        self.mcp: Optional[MCPClient] = None
        self.started: Optional[subprocess.Popen] = None  # for tests: the server this client started
        self._log = log

    def describe(self) -> str:
        return f"{self.mcp.describe()} (the hub of {self.vault})" if self.mcp else self.cli.describe()

    def check(self) -> Optional[str]:
        return self.cli.check()

    def _agent_file(self, ext: str) -> str:
        return os.path.join(self.dir, re.sub(r"[^\w.-]", "_", self.agent) + "." + ext)

    def _connect(self) -> Optional[MCPClient]:
        if self.mcp is None and self.dir:
            state = _read_json(os.path.join(self.dir, "serve.json")) or {}
            url = str(state.get("url", ""))
            try:
                with open(self._agent_file("token"), encoding="utf-8") as f:
                    token = f.read().strip()
            except OSError:
                return None
            if re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", url) and token:
                self.mcp = MCPClient(url, token, self.timeout)
        return self.mcp

    def _via(self, method: str, *args: Any, **kw: Any) -> Any:
        mcp = self._connect()
        if mcp is not None:
            try:
                return getattr(mcp, method)(*args, **kw)
            except NexusError as e:
                if not (getattr(e, "unreachable", False) or getattr(e, "unauthorized", False)):
                    raise
                self.mcp = None
                try:
                    if getattr(e, "unauthorized", False):
                        os.remove(self._agent_file("token"))  # rotated: issue a new one
                    elif not _alive((_read_json(os.path.join(self.dir, "serve.json")) or {}).get("pid")):
                        os.remove(os.path.join(self.dir, "serve.json"))
                except OSError:
                    pass
        try:
            self.start()
        except (OSError, NexusError) as e:
            if self._log:
                self._log.warning("Nexus: cannot start the hub: %s", e)
        return getattr(self.cli, method)(*args, **kw)

    def unread(self, max_entries: int, max_chars: int, ack: bool) -> Dict[str, Any]:
        return self._via("unread", max_entries, max_chars, ack)

    def static_block(self) -> str:
        return self._via("static_block")

    def append(self, summary: str, body: str, channel: str, kind: str, key: str) -> Dict[str, Any]:
        return self._via("append", summary, body, channel, kind, key)

    def search(self, query: str, limit: int) -> List[Dict[str, Any]]:
        return self._via("search", query, limit)

    def checkpoint(self, task: str, state: str, next_step: str, notes: List[str]) -> Dict[str, Any]:
        return self._via("checkpoint", task, state, next_step, notes)

    def start(self) -> None:
        """Issues the agent's token if it has none and starts the server
        unless one is running or starting."""
        if not self.dir or self.cli.check():
            return
        os.makedirs(self.dir, mode=0o700, exist_ok=True)
        if os.path.exists(self._agent_file("no-token")):
            return
        if not os.path.exists(self._agent_file("token")):
            try:
                doc = self.cli._run(["agent", "token", self.agent], as_agent=False)
            except NexusError as e:
                _write_private(self._agent_file("no-token"), f"{e}\n")
                if self._log:
                    self._log.warning("Nexus: agent %s cannot use the hub (%s); turns go over the CLI. Put its token in %s "
                                      "and delete %s to use it.", self.agent, e, self._agent_file("token"), self._agent_file("no-token"))
                return
            _write_private(self._agent_file("token"), f"{doc.get('token', '')}\n")
        state = _read_json(os.path.join(self.dir, "serve.json"))
        if state and _alive(state.get("pid")):
            return  # running, or still starting
        lock = os.path.join(self.dir, "serve.starting")
        try:
            if time.time() - os.stat(lock).st_mtime < _HUB_STARTING:
                return
            os.remove(lock)
        except OSError:
            pass
        try:
            os.close(os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except OSError:
            return  # another process is starting it
        try:
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
            s.close()
            env = dict(os.environ)
            env.setdefault("NEXUS_SEARCH_HOLD", "0")
            fd = os.open(os.path.join(self.dir, "serve.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                self.started = subprocess.Popen(
                    [full_binary(self.cli.binary), "--vault", self.vault, "serve", "--http", f"127.0.0.1:{port}", "--idle", HUB_IDLE],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=fd, env=env, start_new_session=True)
            finally:
                os.close(fd)
            _write_private(os.path.join(self.dir, "serve.json"),
                           json.dumps({"url": f"http://127.0.0.1:{port}/mcp", "pid": self.started.pid}))
        finally:
            os.remove(lock)  # serve.json and a live pid say "running" from here
