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
  With NEXUS_RECALL on (off by default: Hermes recalls on its own), the
  user's message also goes through 'nexus search' and the few best facts
  and notes are added.
- recall_status (Hermes's "memory was used" line): how many entries (and
  facts) were injected, how many wait, or the notice when Nexus failed.
- sync_turn (after each turn): one log entry of kind "turn" summarising the
  exchange, in a background thread, keyed by the turn's id so a retry lands
  once; skipped for trivial turns and for turns in which the model called
  log_append itself.
- on_delegation: one entry of kind "delegation" (the task a subagent was
  given and what it answered), keyed the same way.
- on_pre_compress: a checkpoint, so the work survives the compression. The
  provider declares Hermes's fail-closed checkpoint contract (version 2):
  when Hermes requires the checkpoint and it cannot be saved, the call
  raises, and Hermes keeps the uncompressed transcript.
- on_session_end / shutdown: wait (bounded) for pending appends.

Nothing is written for subagent, cron or flush contexts (except the
checkpoint Hermes requires before a compression).

When Nexus cannot be reached or refuses, the turn says so: Hermes's
warning_callback (its CLI prints it), the recall status line, and a notice
at the head of the injected context, again at the start of the next turn.
Notices not yet shown twice are kept on disk ($HERMES_HOME/nexus/notices.json),
so one raised after the last turn of a process reaches the next process.
Every call is bounded in time (NEXUS_TIMEOUT, default 3 s).

Standard library only; importable with and without Hermes installed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import queue
import re
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional

from .client import CLIClient, HubClient, MCPClient, NexusError, default_binary

try:  # Hermes present: subclass its base class, so its loader accepts us.
    from agent.memory_provider import MemoryProvider as _Base  # type: ignore
except Exception:  # Hermes absent (tests, other hosts): a plain base.

    class _Base:  # type: ignore[no-redef]
        """Stands in for agent.memory_provider.MemoryProvider."""

try:
    from agent.memory_provider import is_trivial_prompt as _hermes_trivial  # type: ignore
except Exception:
    _hermes_trivial = None

try:  # Hermes versions with the "memory was used" indicator.
    from agent.memory_provider import RecallStatus  # type: ignore
except Exception:

    @dataclass(frozen=True)
    class RecallStatus:  # type: ignore[no-redef]
        """Stands in for agent.memory_provider.RecallStatus."""

        provider_label: str
        count: int
        glyph: str = "🧠"

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

# Hermes's fail-closed pre-compress contract (agent/memory_provider.py,
# PRE_COMPRESS_CHECKPOINT_API_VERSION): a provider that declares it saves a
# checkpoint on every successful on_pre_compress, and raises when Hermes
# requires one and it could not be saved. Older Hermes ignores the attribute.
_CHECKPOINT_API_VERSION = 2

# How many turn starts a notice is shown at: the turn it happened in (or the
# next one, for a failure after the reply) and the one after that.
_NOTICE_SHOWINGS = 2

# Hermes's name for a HERMES_HOME that is neither ~/.hermes nor a profile
# folder: not a name to give an agent.
_CUSTOM_PROFILE = "custom"


def hermes_profile(hermes_home: str = "") -> str:
    """The Hermes profile name: "default" for ~/.hermes (or no HERMES_HOME),
    NAME for a folder .../profiles/NAME, "custom" otherwise — what Hermes's
    hermes_cli.profiles.get_active_profile_name answers, which is asked
    first when Hermes is importable and no home is given."""
    if not hermes_home:
        try:
            from hermes_cli.profiles import get_active_profile_name  # type: ignore

            name = str(get_active_profile_name() or "")
            if name:
                return name
        except Exception:
            pass
    home = hermes_home or os.environ.get("HERMES_HOME", "")
    if not home:
        return "default"
    real = os.path.realpath(os.path.expanduser(home))
    if real == os.path.realpath(os.path.expanduser("~/.hermes")):
        return "default"
    parent = os.path.dirname(real)
    name = os.path.basename(real)
    if os.path.basename(parent) == "profiles" and re.match(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", name):
        return name
    return _CUSTOM_PROFILE


def _env_on(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    return str(value or "").strip().lower() in ("1", "true", "yes", "on")


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


class NoticeFile:
    """Notices not yet shown at enough turn starts, in one small JSON file,
    so a notice raised after a process's last turn (a failed append, say)
    still reaches the next process. Written whole and renamed into place;
    a file that cannot be read counts as empty, one that cannot be written
    leaves a warning in Hermes's log."""

    def __init__(self, path: str):
        self.path = path

    def load(self) -> List[Dict[str, Any]]:
        try:
            with open(self.path, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, ValueError):
            return []
        out = []
        for n in doc.get("notices", []) if isinstance(doc, dict) else []:
            if isinstance(n, dict) and isinstance(n.get("text"), str) and int(n.get("left", 0)) > 0:
                out.append({"text": n["text"], "when": str(n.get("when", "")), "left": int(n["left"])})
        return out

    def save(self, notices: List[Dict[str, Any]]) -> None:
        try:
            if not notices:
                if os.path.exists(self.path):
                    os.remove(self.path)
                return
            folder = os.path.dirname(self.path)
            os.makedirs(folder, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".notices-", dir=folder)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump({"notices": notices}, f, ensure_ascii=False)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, self.path)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError as e:
            logger.warning("Nexus: cannot keep notices in %s: %s", self.path, e)


class NexusMemoryProvider(_Base):
    """Hermes memory provider backed by a Nexus vault."""

    NOTICE_PREFIX = "⚠ Nexus (shared memory)"

    # Hermes's fail-closed pre-compress checkpoint contract (see above).
    pre_compress_checkpoint_api_version = _CHECKPOINT_API_VERSION

    def __init__(self, config: Optional[Dict[str, Any]] = None):
        cfg = dict(config or {})
        env = os.environ
        self.vault = cfg.get("vault") or env.get("NEXUS_VAULT", "")
        # The config's bin, else NEXUS_BIN, else nexus-lite on PATH, else nexus.
        self.binary = cfg.get("bin") or env.get("NEXUS_BIN") or default_binary(env)
        self.url = cfg.get("url") or env.get("NEXUS_URL", "")
        self.token = cfg.get("token") or env.get("NEXUS_TOKEN", "")
        # The agent: the config's, else NEXUS_AGENT, else the Hermes profile's name.
        self.agent = cfg.get("agent") or env.get("NEXUS_AGENT", "")
        self.agent_source = "config" if cfg.get("agent") else "NEXUS_AGENT" if self.agent else ""
        if not self.agent and not self.url:
            profile = hermes_profile(cfg.get("hermes_home", ""))
            if profile != _CUSTOM_PROFILE:
                self.agent, self.agent_source = profile, "profile"
        self.channel = cfg.get("channel") or env.get("NEXUS_CHANNEL", "general")
        self.timeout = float(cfg.get("timeout") or _env_float("NEXUS_TIMEOUT", 3.0))
        self.max_entries = int(cfg.get("max_entries") or _env_int("NEXUS_MAX_ENTRIES", 20))
        self.max_chars = int(cfg.get("max_chars") or _env_int("NEXUS_MAX_CHARS", 4000))
        # Relevance prefetch: off unless asked for (Hermes recalls on its own).
        self.recall = _env_on(cfg.get("recall", env.get("NEXUS_RECALL", "")))
        # One 'nexus serve --http' per vault, started on demand (client.HubClient).
        self.hub = _env_on(cfg.get("hub", env.get("NEXUS_HUB", "")))
        self.recall_limit = int(cfg.get("recall_limit") or _env_int("NEXUS_RECALL_LIMIT", 3))
        self.recall_chars = int(cfg.get("recall_chars") or _env_int("NEXUS_RECALL_CHARS", 1500))
        self._hermes_home = cfg.get("hermes_home", "")
        self._client = None
        self._read_only = False
        self._session_id = ""
        self._static: Optional[str] = None
        self._warn: Optional[Callable[[str], Any]] = None
        self._notice_file: Optional[NoticeFile] = None
        # Per turn: Hermes's turn number, which injector ran first
        # ("prefetch"/"hook"), its text, and what recall_status reports.
        self._turn = 0
        self._turn_owner: Optional[str] = None
        self._turn_text = ""
        self._turn_status: Optional[RecallStatus] = None
        self._last_recall: Optional[RecallStatus] = None
        self._notices: List[Dict[str, Any]] = []  # {text, when, left}
        self._lock = threading.Lock()
        self._task = ""  # the session's first non-trivial request
        self._recent: List[str] = []  # summaries of the last turns
        self._jobs: "queue.Queue[Optional[Dict[str, Any]]]" = queue.Queue()
        self._worker: Optional[threading.Thread] = None
        self._warned_unavailable = False
        self._ticks = False  # Hermes calls on_turn_start: it starts turns, not sync_turn
        self._synced = 0  # turns handed to sync_turn this session
        self.appended: List[Dict[str, Any]] = []  # results of appends (for tests and status)

    # -- identity ----------------------------------------------------------

    @property
    def name(self) -> str:
        return "nexus"

    # -- configuration -----------------------------------------------------

    def _make_client(self):
        if self.url:
            return MCPClient(self.url, self.token, self.timeout)
        if self.hub and self.vault:
            return HubClient(self.binary, self.vault, self.agent, self.timeout, log=logger)
        return CLIClient(self.binary, self.vault, self.agent, self.timeout)

    def is_available(self) -> bool:
        """Configured: a URL and token, or an agent (the config's,
        NEXUS_AGENT, else the Hermes profile's name). No process, no
        network: a missing binary or vault, or an agent the vault does not
        have, shows up as a notice in the turn instead. When unavailable,
        Hermes never initialises the provider (and older versions log that
        only at DEBUG), so the reason goes to Hermes's log at WARNING here."""
        ok = bool(self.url and self.token) if self.url else bool(self.agent)
        if not ok and not self._warned_unavailable:
            self._warned_unavailable = True
            logger.warning("Nexus memory provider unavailable: %s", self.unavailable_reason())
        return ok

    def unavailable_reason(self) -> str:
        if self.url and not self.token:
            return "NEXUS_URL is set but NEXUS_TOKEN is not (nexus agent token NAME)"
        if not self.agent:
            home = self._hermes_home or os.environ.get("HERMES_HOME", "")
            return (f"no agent name: HERMES_HOME {home} is not a Hermes profile folder, so its name cannot "
                    "name the Nexus agent; set NEXUS_AGENT (and NEXUS_VAULT), or NEXUS_URL and NEXUS_TOKEN")
        return ""

    def get_config_schema(self) -> List[Dict[str, Any]]:
        return [
            {"key": "agent", "description": "Nexus agent name (its home in the vault; default: the Hermes profile's name)", "env_var": "NEXUS_AGENT"},
            {"key": "vault", "description": "Path of the Nexus vault", "env_var": "NEXUS_VAULT"},
            {"key": "bin", "description": "Path of the nexus binary (default: nexus-lite on PATH, else nexus)", "env_var": "NEXUS_BIN"},
            {"key": "url", "description": "Or: URL of 'nexus serve --http' (http://HOST:PORT/mcp)", "env_var": "NEXUS_URL"},
            {"key": "token", "description": "The agent's token for the URL", "env_var": "NEXUS_TOKEN", "secret": True},
            {"key": "timeout", "description": "Seconds before a Nexus call is given up (default 3)", "env_var": "NEXUS_TIMEOUT", "type": "number"},
            {"key": "hub", "description": "Start one 'nexus serve --http' for the vault on demand and send the turns to it (default off; needs NEXUS_VAULT)", "env_var": "NEXUS_HUB", "type": "boolean", "default": False},
            {"key": "recall", "description": "Also search the vault for the user's message and add the best facts and notes (default off)", "env_var": "NEXUS_RECALL", "type": "boolean", "default": False},
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
        identity = str(kwargs.get("agent_identity") or "")
        if self.agent_source in ("", "profile") and identity and identity != _CUSTOM_PROFILE and not self.url:
            self.agent, self.agent_source = identity, "profile"
        ctx = str(kwargs.get("agent_context") or "primary")
        self._read_only = ctx in _READ_ONLY_CONTEXTS
        warn = kwargs.get("warning_callback")
        self._warn = warn if callable(warn) else None
        home = str(kwargs.get("hermes_home") or self._hermes_home or os.environ.get("HERMES_HOME", "")
                   or os.path.expanduser("~/.hermes"))
        self._notice_file = NoticeFile(os.path.join(home, "nexus", "notices.json"))
        earlier = self._notice_file.load()
        with self._lock:
            self._notices = earlier + self._notices
        for n in earlier:
            self._emit(f"{n['text']} (at {n['when']})")
        self._client = self._make_client()
        problem = self._client.check()
        if problem:
            self._notice(f"not configured: {problem}")
        if not self._read_only:
            self._worker = threading.Thread(target=self._work, name="nexus-sync", daemon=True)
            self._worker.start()

    def initialize_for_inspection(self, session_id: str = "", **kwargs) -> None:
        """Hermes inspecting the agent (its prompt and tools, no turns):
        the client only, read-only — no worker, no acknowledgement, and the
        notices stay on disk for the next real session."""
        self._session_id = session_id or ""
        identity = str(kwargs.get("agent_identity") or "")
        if self.agent_source in ("", "profile") and identity and identity != _CUSTOM_PROFILE and not self.url:
            self.agent, self.agent_source = identity, "profile"
        self._read_only = True
        self._client = self._make_client()

    # -- notices -----------------------------------------------------------

    def _emit(self, what: str) -> None:
        """Say it where the user looks: Hermes's warning_callback (its CLI
        prints it) when this Hermes passes one, and Hermes's log."""
        logger.warning("Nexus: %s", what)
        if self._warn is not None:
            try:
                self._warn(f"{self.NOTICE_PREFIX}: {what}")
            except Exception:
                logger.debug("Nexus: warning_callback failed", exc_info=True)

    def _explain(self, what: str) -> str:
        if self.agent_source == "profile" and "agent" in what.lower():
            what += (f" (the Nexus agent defaults to the Hermes profile name '{self.agent}'; "
                     "set NEXUS_AGENT to use another)")
        return what

    def _notice(self, what: str, showings: int = _NOTICE_SHOWINGS) -> None:
        what = self._explain(what)
        self._emit(what)
        when = time.strftime("%H:%M:%S UTC", time.gmtime())
        with self._lock:
            for n in self._notices:
                if n["text"] == what:
                    n["left"], n["when"] = max(n["left"], showings), when
                    break
            else:
                self._notices.append({"text": what, "when": when, "left": showings})
            self._save_notices()

    def _save_notices(self) -> None:
        # Under self._lock.
        if self._notice_file is not None:
            self._notice_file.save([n for n in self._notices if n["left"] > 0])

    def _take_notices(self) -> List[str]:
        """The notices to show at this turn's start; each counts one showing."""
        with self._lock:
            texts = [n["text"] + (f" (at {n['when']})" if n["left"] < _NOTICE_SHOWINGS else "") for n in self._notices]
            for n in self._notices:
                n["left"] -= 1
            if texts:
                self._notices = [n for n in self._notices if n["left"] > 0]
                self._save_notices()
        return texts

    def _notice_block(self, notes: List[str]) -> str:
        if not notes:
            return ""
        lines = [f"{self.NOTICE_PREFIX}: the shared log could not be used — " + notes[0]]
        lines += ["  also: " + n for n in notes[1:]]
        lines.append("  Other agents' news may be missing from this context, and a turn may not be recorded. Tell the user.")
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

    def _relevant(self, query: str) -> "tuple[str, int]":
        """The few best facts and notes for the user's message (NEXUS_RECALL)."""
        hits = self._client.search(query[:1000], self.recall_limit * 3)
        lines: List[str] = []
        size = 0
        for h in hits:
            path = str(h.get("path", ""))
            if h.get("kind") == "log" or path.endswith("/memory/INDEX.md"):
                continue  # the log comes as unread entries; an index only lists facts
            if path in (f"agents/{self.agent}/MEMORY.md", f"agents/{self.agent}/USER.md"):
                continue  # Hermes injects these itself
            line = f"- {path}:{h.get('line', 1)} {_one_line(h.get('title', ''))}"
            snippet = _one_line(h.get("snippet", ""))
            if snippet:
                line += " — " + _clip(snippet, 300)
            if size + len(line) > self.recall_chars:
                break
            lines.append(line)
            size += len(line)
            if len(lines) >= self.recall_limit:
                break
        if not lines:
            return "", 0
        return ("Relevant in the shared vault (Nexus search for this message; memory_get reads one):\n"
                + "\n".join(lines)), len(lines)

    def _inject(self, owner: str, query: str = "") -> str:
        """The unread entries for this turn, once: the first caller of the
        turn fetches (and acknowledges) them, a repeat call by the same
        caller gets the same text, the other caller gets nothing."""
        with self._lock:
            if self._turn_owner is not None:
                return self._turn_text if self._turn_owner == owner else ""
            self._turn_owner = owner
        text = ""
        shown = more = 0
        try:
            u = self._client.unread(self.max_entries, self.max_chars, ack=not self._read_only)
            shown, more = u["shown"], u["more"]
            if u["total"] > 0:
                text = ("Shared log (Nexus): what other agents wrote since your last reply"
                        + (" (acknowledged; it will not be shown again)" if u["acked"] else "") + ".\n" + u["text"])
        except NexusError as e:
            self._notice(str(e))
        except Exception as e:  # never break the reply
            self._notice(f"unexpected error: {e}")
        relevant = ""
        facts = 0
        if self.recall and query and not is_trivial(query):
            try:
                relevant, facts = self._relevant(query)
            except NexusError as e:
                relevant = f"(Nexus search for this message failed: {e})"
            except Exception as e:
                relevant = f"(Nexus search for this message failed: unexpected error: {e})"
        notes = self._take_notices()
        text = "\n\n".join(t for t in (self._notice_block(notes), text, relevant) if t)
        status = None
        if notes:
            status = RecallStatus(provider_label="Nexus: shared log not read or not recorded — " + _clip(notes[0], 160),
                                  count=shown + facts, glyph="⚠️")
        elif shown or facts:
            label = "Nexus shared log" + (f" ({more} more unread waiting)" if more else "")
            status = RecallStatus(provider_label=label, count=shown + facts)
        with self._lock:
            self._turn_text = text
            self._turn_status = status
        return text

    def on_turn_start(self, turn_number: int, message: str = "", **kwargs) -> None:
        self._ticks = True
        self._next_turn(turn_number)

    def _next_turn(self, number: Optional[int] = None) -> None:
        with self._lock:
            self._turn = number if isinstance(number, int) and number > 0 else self._turn + 1
            self._turn_owner = None
            self._turn_text = ""
            self._turn_status = None

    def prefetch(self, query: str = "", *, session_id: str = "") -> str:
        if self._client is None:
            self._last_recall = None
            return ""
        text = self._inject("prefetch", query)
        with self._lock:
            self._last_recall = self._turn_status if text else None
        return text

    def recall_status(self) -> Optional[RecallStatus]:
        """What the last prefetch injected, for Hermes's indicator line:
        entries (and facts) shown and how many wait, or the notice."""
        return self._last_recall

    def queue_prefetch(self, query: str = "", *, session_id: str = "") -> None:
        """Unread entries are read at the moment of the reply, not ahead."""

    def pre_llm_call(self, **kwargs) -> Optional[Dict[str, str]]:
        """The pre_llm_call plugin hook: runs every turn, also when Hermes
        skips prefetch for a trivial prompt."""
        if self._client is None:
            return None
        text = self._inject("hook", str(kwargs.get("user_message") or ""))
        return {"context": text} if text else None

    # -- after each turn ---------------------------------------------------

    def _turn_key(self, number: int, *parts: str) -> str:
        """The idempotency key of a turn (the turn's id): its session, its
        number in the session and its request, hashed (at most 128
        characters for 'log append --key')."""
        raw = "\x00".join([self._session_id, str(number)] + list(parts))
        return "hermes:" + hashlib.sha256(raw.encode("utf-8")).hexdigest()[:40]

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: Optional[List[Dict[str, Any]]] = None, **kwargs) -> None:
        if session_id:
            self._session_id = self._session_id or session_id
        # Newer Hermes runs sync_turn on a background worker, possibly after
        # the next turn started: count turns here (the worker keeps their
        # order) rather than read the turn being injected.
        self._synced += 1
        key = self._turn_key(self._synced, "turn", _one_line(_content_text(user_content)))
        if not self._ticks:
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
        self._recent = (self._recent + [summary])[-5:]
        self._jobs.put({"op": "append", "kind": "turn", "summary": summary, "body": body, "key": key})

    def on_delegation(self, task: str, result: str, *, child_session_id: str = "", **kwargs) -> None:
        """Hermes calls this on the parent when a subagent finishes: one
        log entry of kind "delegation", so other agents see what was handed
        off and what came back."""
        if self._read_only or self._client is None:
            return
        t = _one_line(_content_text(task))
        r = _one_line(_content_text(result))
        if not t:
            return
        summary = _clip(f"delegated to a subagent: {_clip(t, 200)} → {_clip(r, 250) or '(no answer)'}", 500)
        body = "**Task:** " + _clip(_content_text(task).strip(), 1500) + "\n\n**Result:** " + _clip(_content_text(result).strip(), 1500)
        if child_session_id:
            body += f"\n\nSubagent session: {child_session_id}"
        key = self._turn_key(self._synced, "delegation", child_session_id, t)
        self._recent = (self._recent + [summary])[-5:]
        self._jobs.put({"op": "append", "kind": "delegation", "summary": summary, "body": body, "key": key})

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                if job is None:
                    return
                try:
                    try:
                        res = self._client.append(job["summary"], job["body"], self.channel, job["kind"], job["key"])
                    except NexusError as e:
                        if e.refused:
                            raise
                        # Not answered (a timeout, say): the entry may have
                        # landed all the same; the key makes the retry land once.
                        res = self._client.append(job["summary"], job["body"], self.channel, job["kind"], job["key"])
                    self.appended.append(res)
                except Exception as e:
                    what = str(e) if isinstance(e, NexusError) else f"unexpected error: {e}"
                    # Said now through warning_callback when Hermes gave one
                    # (that turn's output), and at the next turn's start.
                    self._notice(f"the last {job['kind']} was not recorded in the shared log: {what}",
                                 showings=1 if self._warn is not None else _NOTICE_SHOWINGS)
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

    def on_pre_compress(self, messages: List[Dict[str, Any]], *, require_checkpoint: bool = False, **kwargs) -> str:
        """A checkpoint before Hermes compresses. With require_checkpoint
        (Hermes's fail-closed contract, version 2) a checkpoint that cannot
        be saved raises, so Hermes keeps the uncompressed transcript; it is
        saved even in a read-only context then. Without it, a failure is a
        notice and the compressor is told to keep the work context."""
        if self._client is None:
            if require_checkpoint:
                raise NexusError("Nexus memory provider is not initialised: no checkpoint saved")
            return ""
        if self._read_only and not require_checkpoint:
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
            if require_checkpoint:
                raise NexusError(f"Nexus checkpoint before compression not saved: {e}", refused=e.refused) from e
            return ("The Nexus checkpoint before this compression could NOT be saved "
                    f"({_clip(str(e), 200)}): keep the task, the decisions taken and the next step in this summary.")
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
            self._synced = 0
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
