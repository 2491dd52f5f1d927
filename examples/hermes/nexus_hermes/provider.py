"""The Nexus memory provider for Hermes Agent.

What it does each session (docs/runtimes.md in the Nexus repository):

- system_prompt_block (once): identity, memory index, latest checkpoint and
  current decisions from 'nexus prompt'; never MEMORY.md/USER.md, which
  Hermes injects itself from its memories folder (the agent's home).
- prefetch (before each reply) and the pre_llm_call hook (for the turns
  Hermes skips prefetch on, such as "ok"): the agent's unread shared-log
  entries, bounded, acknowledged exactly as shown. Whichever of the two runs
  first in a turn injects; the other adds nothing, so every entry reaches
  the model once.
- sync_turn (after each turn): one log entry of kind "turn" summarising the
  exchange, in a background thread, keyed so a retry lands once; skipped for
  trivial turns and for turns in which the model called log_append itself.
- on_pre_compress: a checkpoint, so the work survives the compression.
- on_session_end / shutdown: wait (bounded) for pending appends.

Nothing is written for subagent, cron or flush contexts.

When Nexus cannot be reached or refuses, the next injection carries a
visible notice saying so; a turn without the shared log never looks like
success. Every call is bounded in time (NEXUS_TIMEOUT, default 3 s).

Standard library only; importable with and without Hermes installed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import queue
import re
import threading
import time
from typing import Any, Dict, List, Optional

from .client import CLIClient, MCPClient, NexusError, default_binary

try:  # Hermes present: subclass its base class, so its loader accepts us.
    from agent.memory_provider import MemoryProvider as _Base  # type: ignore
except Exception:  # Hermes absent (tests, other hosts): a plain base.

    class _Base:  # type: ignore[no-redef]
        """Stands in for agent.memory_provider.MemoryProvider."""

try:
    from agent.memory_provider import is_trivial_prompt as _hermes_trivial  # type: ignore
except Exception:
    _hermes_trivial = None

logger = logging.getLogger(__name__)

# Short acknowledgements and greetings carry nothing worth a log entry.
_TRIVIAL = re.compile(
    r"^(yes|no|ok|okay|sure|thanks|thank you|thx|ty|y|n|yep|nope|yeah|nah|hi|hey|hello|yo|"
    r"continue|go ahead|do it|proceed|got it|cool|nice|great|done|next|lgtm|k|"
    r"네|응|예|아니|아니요|좋아|좋아요|고마워|감사합니다|계속|ㅇㅇ|ㅇㅋ)"
    r"[\s!?.:;,\"'~…()\[\]*]*$",
    re.IGNORECASE,
)

# The agent contexts in which Hermes runs a provider that must not write.
_READ_ONLY_CONTEXTS = ("subagent", "cron", "flush")


def is_trivial(text: Optional[str]) -> bool:
    """True for an empty prompt, a slash command, or a bare acknowledgement."""
    if _hermes_trivial is not None:
        try:
            return bool(_hermes_trivial(text))
        except Exception:
            pass
    s = (text or "").strip()
    return not s or s.startswith("/") or bool(_TRIVIAL.match(s))


def _one_line(text: str) -> str:
    return " ".join((text or "").split())


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _env_float(name: str, default: float) -> float:
    try:
        v = float(os.environ.get(name, ""))
        return v if v > 0 else default
    except ValueError:
        return default


def _env_int(name: str, default: int) -> int:
    try:
        v = int(os.environ.get(name, ""))
        return v if v > 0 else default
    except ValueError:
        return default


def _content_text(content: Any) -> str:
    """The text of an OpenAI-style message content (a string or parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def model_appended(messages: Optional[List[Dict[str, Any]]]) -> bool:
    """Whether the model called a log_append tool after the last user
    message (any MCP naming: log_append, nexus__log_append, mcp_nexus_log_append)."""
    if not messages:
        return False
    for m in reversed(messages):
        if not isinstance(m, dict):
            continue
        if m.get("role") == "user":
            return False
        for call in m.get("tool_calls") or []:
            fn = (call or {}).get("function") or {}
            name = fn.get("name") or call.get("name") or ""
            if name == "log_append" or name.endswith("_log_append") or name.endswith("__log_append"):
                return True
    return False


class NexusMemoryProvider(_Base):
    """Hermes memory provider backed by a Nexus vault."""

    NOTICE_PREFIX = "⚠ Nexus (shared memory)"

    def __init__(self, config: Optional[Dict[str, Any]] = None):
        cfg = dict(config or {})
        env = os.environ
        self.agent = cfg.get("agent") or env.get("NEXUS_AGENT", "")
        self.vault = cfg.get("vault") or env.get("NEXUS_VAULT", "")
        # The config's bin, else NEXUS_BIN, else nexus-lite on PATH, else nexus.
        self.binary = cfg.get("bin") or env.get("NEXUS_BIN") or default_binary(env)
        self.url = cfg.get("url") or env.get("NEXUS_URL", "")
        self.token = cfg.get("token") or env.get("NEXUS_TOKEN", "")
        self.channel = cfg.get("channel") or env.get("NEXUS_CHANNEL", "general")
        self.timeout = float(cfg.get("timeout") or _env_float("NEXUS_TIMEOUT", 3.0))
        self.max_entries = int(cfg.get("max_entries") or _env_int("NEXUS_MAX_ENTRIES", 20))
        self.max_chars = int(cfg.get("max_chars") or _env_int("NEXUS_MAX_CHARS", 4000))
        self._client = None
        self._read_only = False
        self._session_id = ""
        self._static: Optional[str] = None
        # Per turn: which injector ran first ("prefetch"/"hook"), and its text.
        self._turn = 0
        self._turn_owner: Optional[str] = None
        self._turn_text = ""
        self._notices: List[str] = []
        self._lock = threading.Lock()
        self._task = ""  # the session's first non-trivial request
        self._recent: List[str] = []  # summaries of the last turns
        self._jobs: "queue.Queue[Optional[Dict[str, Any]]]" = queue.Queue()
        self._worker: Optional[threading.Thread] = None
        self.appended: List[Dict[str, Any]] = []  # results of appends (for tests and status)

    # -- identity ----------------------------------------------------------

    @property
    def name(self) -> str:
        return "nexus"

    # -- configuration -----------------------------------------------------

    def _make_client(self):
        if self.url:
            return MCPClient(self.url, self.token, self.timeout)
        return CLIClient(self.binary, self.vault, self.agent, self.timeout)

    def is_available(self) -> bool:
        """Configured (an agent name, or a URL and token). No process, no
        network: a missing binary or vault shows up as a notice in the
        agent's context instead, so it cannot go unnoticed."""
        return bool(self.url and self.token) or bool(self.agent)

    def unavailable_reason(self) -> str:
        if self.url and not self.token:
            return "NEXUS_URL is set but NEXUS_TOKEN is not (nexus agent token NAME)"
        return "set NEXUS_AGENT (and NEXUS_VAULT), or NEXUS_URL and NEXUS_TOKEN"

    def get_config_schema(self) -> List[Dict[str, Any]]:
        return [
            {"key": "agent", "description": "Nexus agent name (its home in the vault)", "env_var": "NEXUS_AGENT", "required": True},
            {"key": "vault", "description": "Path of the Nexus vault", "env_var": "NEXUS_VAULT"},
            {"key": "bin", "description": "Path of the nexus binary (default: nexus-lite on PATH, else nexus)", "env_var": "NEXUS_BIN"},
            {"key": "url", "description": "Or: URL of 'nexus serve --http' (http://HOST:PORT/mcp)", "env_var": "NEXUS_URL"},
            {"key": "token", "description": "The agent's token for the URL", "env_var": "NEXUS_TOKEN", "secret": True},
            {"key": "timeout", "description": "Seconds before a Nexus call is given up (default 3)", "env_var": "NEXUS_TIMEOUT", "type": "number"},
        ]

    def save_config(self, values: Dict[str, Any], hermes_home: str) -> None:
        """Configuration is read from the environment; nothing to write."""

    def get_tool_schemas(self) -> List[Dict[str, Any]]:
        """No tools of its own: the 13 Nexus tools come through MCP (config.yaml)."""
        return []

    def backup_paths(self) -> List[str]:
        return [self.vault] if self.vault and not self.url else []

    # -- lifecycle ---------------------------------------------------------

    def initialize(self, session_id: str = "", **kwargs) -> None:
        self._session_id = session_id or ""
        if not self.agent and kwargs.get("agent_identity") and not self.url:
            self.agent = str(kwargs["agent_identity"])
        ctx = str(kwargs.get("agent_context") or "primary")
        self._read_only = ctx in _READ_ONLY_CONTEXTS
        self._client = self._make_client()
        problem = self._client.check()
        if problem:
            self._notice(f"not configured: {problem}")
        if not self._read_only:
            self._worker = threading.Thread(target=self._work, name="nexus-sync", daemon=True)
            self._worker.start()

    def _notice(self, what: str) -> None:
        logger.warning("Nexus: %s", what)
        with self._lock:
            if what not in self._notices:
                self._notices.append(what)

    def _take_notices(self) -> str:
        with self._lock:
            notes, self._notices = self._notices, []
        if not notes:
            return ""
        lines = [f"{self.NOTICE_PREFIX}: the shared log could not be used — " + notes[0]]
        lines += ["  also: " + n for n in notes[1:]]
        lines.append("  Other agents' news may be missing from this context, and this turn may not be recorded. Tell the user if it matters.")
        return "\n".join(lines)

    def system_prompt_block(self) -> str:
        if self._static is None:
            try:
                self._static = (self._client or self._make_client()).static_block().strip()
            except NexusError as e:
                self._notice(str(e))
                return ""
        if not self._static:
            return ""
        return "# Nexus shared memory (frozen at session start)\n\n" + self._static

    # -- before each reply -------------------------------------------------

    def _inject(self, owner: str) -> str:
        """The unread entries for this turn, once: the first caller of the
        turn fetches (and acknowledges) them, a repeat call by the same
        caller gets the same text, the other caller gets nothing."""
        with self._lock:
            if self._turn_owner is not None:
                return self._turn_text if self._turn_owner == owner else ""
            self._turn_owner = owner
        text = ""
        try:
            u = self._client.unread(self.max_entries, self.max_chars, ack=not self._read_only)
            if u["total"] > 0:
                text = ("Shared log (Nexus): what other agents wrote since your last reply"
                        + (" (acknowledged; it will not be shown again)" if u["acked"] else "") + ".\n" + u["text"])
        except NexusError as e:
            self._notice(str(e))
        except Exception as e:  # never break the reply
            self._notice(f"unexpected error: {e}")
        notices = self._take_notices()
        text = "\n\n".join(t for t in (notices, text) if t)
        with self._lock:
            self._turn_text = text
        return text

    def on_turn_start(self, turn_number: int, message: str = "", **kwargs) -> None:
        self._next_turn()

    def _next_turn(self) -> None:
        with self._lock:
            self._turn += 1
            self._turn_owner = None
            self._turn_text = ""

    def prefetch(self, query: str = "", *, session_id: str = "") -> str:
        if self._client is None:
            return ""
        return self._inject("prefetch")

    def queue_prefetch(self, query: str = "", *, session_id: str = "") -> None:
        """Unread entries are read at the moment of the reply, not ahead."""

    def pre_llm_call(self, **kwargs) -> Optional[Dict[str, str]]:
        """The pre_llm_call plugin hook: runs every turn, also when Hermes
        skips prefetch for a trivial prompt."""
        if self._client is None:
            return None
        text = self._inject("hook")
        return {"context": text} if text else None

    # -- after each turn ---------------------------------------------------

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: Optional[List[Dict[str, Any]]] = None) -> None:
        turn = self._turn
        self._next_turn()
        if self._read_only or self._client is None:
            return
        user = _one_line(_content_text(user_content))
        reply = _one_line(_content_text(assistant_content))
        if not user and not reply:
            return
        if is_trivial(user) and len(reply) < 200:
            return
        if model_appended(messages):
            return
        if not self._task and not is_trivial(user):
            self._task = _clip(user, 300)
        summary = _clip(f"{_clip(user, 180)} → {_clip(reply, 280)}", 500)
        body = "**User:** " + _clip(_content_text(user_content).strip(), 1500) + "\n\n**Reply:** " + _clip(_content_text(assistant_content).strip(), 1500)
        sid = session_id or self._session_id
        key = "hermes:" + hashlib.sha256(f"{sid}\x00{turn}\x00{user}\x00{reply}".encode("utf-8")).hexdigest()[:32]
        self._recent = (self._recent + [summary])[-5:]
        self._jobs.put({"op": "append", "summary": summary, "body": body, "key": key})

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                if job is None:
                    return
                try:
                    try:
                        res = self._client.append(job["summary"], job["body"], self.channel, "turn", job["key"])
                    except NexusError as e:
                        if e.refused:
                            raise
                        # Not answered (a timeout, say): the entry may have
                        # landed all the same; the key makes the retry land once.
                        res = self._client.append(job["summary"], job["body"], self.channel, "turn", job["key"])
                    self.appended.append(res)
                except NexusError as e:
                    self._notice(f"the last turn was not recorded in the shared log: {e}")
                except Exception as e:
                    self._notice(f"the last turn was not recorded in the shared log: unexpected error: {e}")
            finally:
                self._jobs.task_done()

    def flush(self, timeout: Optional[float] = None) -> bool:
        """Wait for pending appends, at most timeout seconds (default: two
        call timeouts per pending append, at most 30 s). True if none is left."""
        if self._worker is None:
            return True
        limit = timeout if timeout is not None else min(30.0, self.timeout * 2 * max(1, self._jobs.unfinished_tasks))
        deadline = time.monotonic() + limit
        while self._jobs.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.01)
        return self._jobs.unfinished_tasks == 0

    # -- compression, session end ------------------------------------------

    def on_pre_compress(self, messages: List[Dict[str, Any]]) -> str:
        if self._read_only or self._client is None:
            return ""
        users = [_one_line(_content_text(m.get("content"))) for m in messages or [] if isinstance(m, dict) and m.get("role") == "user"]
        users = [u for u in users if u and not is_trivial(u)]
        task = self._task or (_clip(users[0], 300) if users else "conversation with the user")
        state = f"Context compressed after {len(messages or [])} messages; last request: {_clip(users[-1], 300) if users else '(none)'}"
        notes = [f"Recent turns: {' | '.join(self._recent)}"] if self._recent else []
        self.flush()
        try:
            self._client.checkpoint(task, state, "", notes)
        except NexusError as e:
            self._notice(f"the checkpoint before compression was not saved: {e}")
            return ""
        return f"A Nexus checkpoint was saved before this compression (task: {_clip(task, 200)}); checkpoint_load restores it."

    def on_session_end(self, messages: List[Dict[str, Any]]) -> None:
        if not self.flush():
            logger.warning("Nexus: appends still pending at session end")

    def on_session_switch(self, new_session_id: str, **kwargs) -> None:
        self.flush()
        self._session_id = new_session_id or self._session_id
        if kwargs.get("reset"):
            self._task = ""
            self._recent = []
        self._next_turn()

    def on_memory_write(self, action: str, target: str, content: str, metadata: Optional[Dict[str, Any]] = None) -> None:
        """Hermes's memory folder is the agent's home in the vault: its
        writes land in MEMORY.md/USER.md there already."""

    def shutdown(self) -> None:
        self.flush()
        if self._worker is not None:
            self._jobs.put(None)
            self._worker.join(timeout=self.timeout)
            self._worker = None


def status(provider: NexusMemoryProvider) -> str:
    """A one-line JSON status, for debugging from a Python prompt."""
    return json.dumps({"agent": provider.agent, "vault": provider.vault, "url": provider.url,
                       "read_only": provider._read_only, "appended": len(provider.appended)})
