// The Nexus plugin for OpenClaw: "read the shared log before every reply,
// append after every meaningful turn", in OpenClaw's own hooks, so it holds
// whether or not the model calls a Nexus tool.
//
//   before_prompt_build  inject the agent's unread entries (prependContext),
//                        acknowledged exactly as shown; a visible notice
//                        instead when Nexus cannot be reached
//   agent_end            append one entry of kind "turn" summarising the
//                        exchange, keyed by the run so a retry lands once;
//                        skipped for trivial turns, failed runs and turns in
//                        which the model called log_append itself
//                        (heartbeat, cron and subagent runs read the log
//                        without acknowledging and append nothing)
//   before_compaction,   save a checkpoint (the request, where it stood,
//   before_reset         the last reply) before the context is compacted or
//                        the session reset
//   memory corpus        OpenClaw's memory_search / memory_get (corpus "all"
//                        or "wiki") reach the vault through 'nexus search'
//   recall (opt-in)      the user's message through 'nexus search': the few
//                        best facts and notes, after the unread entries
//
// Notices (Nexus missing, slow, refusing) are kept on disk in stateDir and
// said at the head of the context of the turn they happened in (or the
// next, for an append after the reply) and again at the next turn's start.
//
// Configuration (plugins.entries.nexus.config): { vault, agent } for the
// nexus CLI on this machine, or { url, token } for 'nexus serve --http'.
// See docs/runtimes.md in the Nexus repository.

import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

import { CLIClient, CORPUS_PREFIX, HubClient, MCPClient, NexusError, clip, keyOf, oneLine, resolveBin } from "./nexus.js";

const NOTICE = "⚠ Nexus (shared memory)";

// Acknowledgements and greetings carry nothing worth an entry.
const TRIVIAL =
  /^(yes|no|ok|okay|sure|thanks|thank you|thx|ty|y|n|yep|nope|yeah|nah|hi|hey|hello|yo|continue|go ahead|do it|proceed|got it|cool|nice|great|done|next|lgtm|k|네|응|예|아니|아니요|좋아|좋아요|고마워|감사합니다|계속|ㅇㅇ|ㅇㅋ)[\s!?.:;,"'~…()[\]*]*$/iu;

export function isTrivial(text) {
  const s = String(text ?? "").trim();
  return s === "" || s.startsWith("/") || TRIVIAL.test(s);
}

// textOf returns the text of a message's content: a string or parts.
function textOf(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .filter((p) => p && (p.type === "text" || p.type === "input_text" || p.type === "output_text"))
      .map((p) => p.text ?? "")
      .join(" ");
  }
  return "";
}

const LOG_APPEND = /(^|[_.:-])log_append$/u;

// lastExchange returns the last user request, the final reply, and whether
// the model called a log_append tool after that request.
export function lastExchange(messages) {
  let user = "";
  let reply = "";
  let appended = false;
  if (!Array.isArray(messages)) return { user, reply, appended };
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (!m || typeof m !== "object") continue;
    if (m.role === "user") {
      user = textOf(m.content);
      if (user.trim()) break;
      continue;
    }
    if (m.role === "assistant") {
      if (!reply) reply = textOf(m.content);
      for (const part of Array.isArray(m.content) ? m.content : []) {
        const name = part && (part.type === "toolCall" || part.type === "tool_use" || part.type === "toolUse" || part.type === "function_call") ? part.name : "";
        if (name && LOG_APPEND.test(name)) appended = true;
      }
      for (const call of m.tool_calls ?? []) {
        if (LOG_APPEND.test(call?.function?.name ?? call?.name ?? "")) appended = true;
      }
    }
    if ((m.role === "toolResult" || m.role === "tool") && LOG_APPEND.test(m.toolName ?? m.name ?? "")) appended = true;
  }
  return { user, reply, appended };
}

// readOnly reports whether a run must not write to the shared log
// (acknowledge, append): heartbeat and cron runs and subagent sessions read
// the log, the agent's own conversation keeps what it has not been shown.
export function readOnly(ctx = {}) {
  return ctx.trigger === "heartbeat" || ctx.trigger === "cron" || Boolean(ctx.jobId) || /(^|:)subagent:/u.test(ctx.sessionKey ?? "");
}

function settings(api) {
  const c = api.pluginConfig ?? {};
  const env = process.env;
  const num = (v, d) => (Number.isFinite(Number(v)) && Number(v) > 0 ? Number(v) : d);
  return {
    vault: c.vault ?? env.NEXUS_VAULT ?? "",
    agent: c.agent ?? env.NEXUS_AGENT ?? "",
    bin: resolveBin(c.bin, env),
    url: c.url ?? env.NEXUS_URL ?? "",
    token: c.token ?? env.NEXUS_TOKEN ?? "",
    channel: c.channel ?? "general",
    timeoutMs: num(c.timeoutMs ?? env.NEXUS_TIMEOUT_MS, 3000),
    maxEntries: num(c.maxEntries, 20),
    maxChars: num(c.maxChars, 4000),
    appendTurns: c.appendTurns !== false,
    corpus: c.corpus !== false,
    checkpoints: c.checkpoints !== false,
    // One 'nexus serve --http' per vault, started on demand (nexus.js).
    hub: c.hub ?? /^(1|true|yes|on)$/iu.test(env.NEXUS_HUB ?? ""),
    // Relevance prefetch: off unless asked for (OpenClaw recalls its own
    // memory; the vault can be in that corpus too, docs/runtimes.md).
    recall: c.recall ?? /^(1|true|yes|on)$/iu.test(env.NEXUS_RECALL ?? ""),
    recallLimit: num(c.recallLimit ?? env.NEXUS_RECALL_LIMIT, 3),
    recallChars: num(c.recallChars ?? env.NEXUS_RECALL_CHARS, 1500),
    stateDir: c.stateDir ?? env.NEXUS_OPENCLAW_STATE ?? path.join(env.OPENCLAW_STATE_DIR || path.join(env.OPENCLAW_HOME || os.homedir(), ".openclaw"), "nexus"),
  };
}

// Notices kept on disk between processes: 'openclaw agent --local' is one
// process per turn, so a notice kept in memory would die with it. Each
// notice is said twice: in the turn it happened in (or the next, for an
// append that failed after the reply) and again at the next turn's start.
// One file per state folder (the plugin has one configuration per OpenClaw
// home, whatever its transport), written whole and renamed into place,
// removed when empty.
export class NoticeStore {
  constructor(dir) {
    this.file = path.join(dir, "notices.json");
    this.dir = dir;
  }

  load() {
    try {
      const list = JSON.parse(readFileSync(this.file, "utf8"));
      return Array.isArray(list) ? list.filter((n) => n && typeof n.text === "string").map((n) => ({ text: n.text, left: Number(n.left) || 1 })) : [];
    } catch {
      return [];
    }
  }

  save(list, log) {
    try {
      if (list.length === 0) {
        rmSync(this.file, { force: true });
        return;
      }
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      const tmp = `${this.file}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(list.slice(-10)), { mode: 0o600 });
      renameSync(tmp, this.file);
    } catch (e) {
      log.warn?.(`nexus: cannot keep the notice in ${this.dir}: ${e.message}`);
    }
  }

  add(text, log) {
    const list = this.load();
    if (!list.some((n) => n.text === text)) list.push({ text, left: 2 });
    this.save(list, log);
  }

  // take returns the notices to say now and counts this saying.
  take(log) {
    const list = this.load();
    if (list.length === 0) return [];
    this.save(
      list.map((n) => ({ ...n, left: n.left - 1 })).filter((n) => n.left > 0),
      log,
    );
    return list.map((n) => n.text);
  }
}

// relevantText is the few best facts and notes of the vault for the
// user's message: log entries (they come as unread entries) and memory
// indexes (they only list facts) left out, at most limit lines in at most
// chars characters.
export function relevantText(hits, { limit, chars }) {
  const lines = [];
  let size = 0;
  for (const h of hits) {
    const p = String(h.path ?? "");
    if (h.kind === "log" || p.startsWith("log/") || p.endsWith("/memory/INDEX.md")) continue;
    let line = `- ${p}:${h.startLine ?? 1} ${oneLine(h.title)}`;
    const snippet = oneLine(h.snippet);
    if (snippet) line += ` — ${clip(snippet, 300)}`;
    const n = Array.from(line).length;
    if (size + n > chars) break;
    lines.push(line);
    size += n;
    if (lines.length >= limit) break;
  }
  if (lines.length === 0) return "";
  return `Relevant in the shared vault (Nexus search for this message; memory_get with corpus "all" reads nexus/<path>):\n${lines.join("\n")}`;
}

export function createNexusPlugin(api) {
  const cfg = settings(api);
  const log = api.logger ?? console;
  const client = cfg.url ? new MCPClient(cfg) : cfg.hub ? new HubClient(cfg, { log }) : new CLIClient(cfg);
  const notices = new NoticeStore(cfg.stateDir);
  const injected = new Map(); // admission id -> text, so a prompt rebuild does not fetch (and ack) again

  const notice = (what) => {
    log.warn?.(`nexus: ${what}`);
    notices.add(what, log);
  };
  const takeNotices = () => {
    const pending = notices.take(log);
    if (pending.length === 0) return "";
    const [first, ...rest] = pending;
    return [
      `${NOTICE}: the shared log could not be used — ${first}`,
      ...rest.map((r) => `  also: ${r}`),
      "  Other agents' news may be missing from this context, and this turn may not be recorded. Tell the user if it matters.",
    ].join("\n");
  };

  async function beforePromptBuild(event, ctx = {}) {
    const id = event?.currentUserMessageId ?? ctx.runId;
    if (id && injected.has(id)) {
      const text = injected.get(id);
      return text ? { prependContext: text } : undefined;
    }
    const problem = client.check();
    let text = "";
    if (problem) {
      notice(`not configured: ${problem}`);
    } else {
      try {
        const u = await client.unread({ maxEntries: cfg.maxEntries, maxChars: cfg.maxChars, ack: !readOnly(ctx) });
        if (u.total > 0) {
          text = `Shared log (Nexus): what other agents wrote since your last reply${u.acked ? " (acknowledged; it will not be shown again)" : ""}.\n${u.text}`;
        }
      } catch (e) {
        notice(e instanceof NexusError ? e.message : `unexpected error: ${e?.message ?? e}`);
      }
    }
    let relevant = "";
    const query = oneLine(event?.currentUserMessage ?? event?.prompt ?? "");
    if (cfg.recall && !problem && query && !isTrivial(query)) {
      try {
        const hits = await client.search({ query: clip(query, 1000), maxResults: Math.min(cfg.recallLimit * 3, 50) });
        relevant = relevantText(hits, { limit: cfg.recallLimit, chars: cfg.recallChars });
      } catch (e) {
        // A failed search costs only the relevance part; the log was read.
        log.warn?.(`nexus: the relevance search failed: ${e?.message ?? e}`);
      }
    }
    text = [takeNotices(), text, relevant].filter(Boolean).join("\n\n");
    if (id) {
      injected.set(id, text);
      if (injected.size > 64) injected.delete(injected.keys().next().value);
    }
    return text ? { prependContext: text } : undefined;
  }

  async function agentEnd(event, ctx = {}) {
    if (!cfg.appendTurns || !event?.success || readOnly(ctx) || client.check()) return;
    const { user, reply, appended } = lastExchange(event.messages);
    const u = oneLine(user);
    const r = oneLine(reply);
    if (appended || (!u && !r) || (isTrivial(u) && Array.from(r).length < 200)) return;
    const summary = clip(`${clip(u || "(no text)", 180)} → ${clip(r || "(no text reply)", 280)}`, 500);
    const body = `**User:** ${clip(user.trim(), 1500)}\n\n**Reply:** ${clip(reply.trim(), 1500)}`;
    const run = event.runId ?? ctx.runId ?? `${Date.now()}`;
    const key = "openclaw:" + keyOf(ctx.sessionKey ?? ctx.sessionId ?? "", run, u, r);
    const entry = { summary, body, channel: cfg.channel, kind: "turn", key };
    try {
      try {
        await client.append(entry);
      } catch (e) {
        if (!(e instanceof NexusError) || e.refused) throw e;
        // Not answered (a timeout, say): it may have landed all the same;
        // the key makes the retry land once.
        await client.append(entry);
      }
    } catch (e) {
      notice(`the last turn was not recorded in the shared log: ${e?.message ?? e}`);
    }
  }

  // checkpoint saves a checkpoint before OpenClaw compacts the session or
  // resets it: the request, where it stood, the last reply.
  const checkpoint = (what) => async (event, ctx = {}) => {
    if (!cfg.checkpoints || readOnly(ctx) || client.check()) return;
    const { user, reply } = lastExchange(event?.messages);
    const state =
      what === "compaction"
        ? `context compacted by OpenClaw (${event?.messageCount ?? "?"} messages${event?.tokenCount ? `, ${event.tokenCount} tokens` : ""}); last reply: ${oneLine(reply) || "(none)"}`
        : `session reset (${event?.reason ?? "reset"}); last reply: ${oneLine(reply) || "(none)"}`;
    try {
      await client.checkpoint({
        task: clip(oneLine(user) || "OpenClaw session", 1000),
        state: clip(state, 1000),
        notes: [`saved by the Nexus OpenClaw plugin before ${what}, session ${ctx.sessionKey ?? ctx.sessionId ?? "?"}`],
      });
    } catch (e) {
      notice(`no checkpoint was saved before the ${what}: ${e?.message ?? e}`);
    }
  };

  const supplement = {
    async search({ query, maxResults }) {
      if (client.check()) return [];
      const hits = await client.search({ query, maxResults: Math.max(1, Math.min(maxResults ?? 10, 50)) });
      return hits.map((h) => ({
        corpus: "nexus",
        path: CORPUS_PREFIX + h.path,
        title: h.title,
        kind: h.kind,
        score: typeof h.score === "number" ? h.score : 0,
        snippet: h.snippet ?? "",
        startLine: h.startLine,
        endLine: h.endLine,
        citation: `${CORPUS_PREFIX}${h.path}${h.startLine ? `#L${h.startLine}` : ""}`,
        provenanceLabel: "Nexus vault",
        sourceType: "nexus",
        sourcePath: h.path,
        updatedAt: h.updatedAt,
      }));
    },
    async get({ lookup, fromLine, lineCount }) {
      if (typeof lookup !== "string" || !lookup.startsWith(CORPUS_PREFIX) || client.check()) return null;
      const rel = lookup.slice(CORPUS_PREFIX.length).replace(/#L\d+$/u, "");
      const got = await client.get({ relPath: rel, fromLine, lineCount });
      if (!got) return null;
      return { corpus: "nexus", path: lookup, content: got.content, fromLine: got.fromLine, lineCount: got.lineCount, provenanceLabel: "Nexus vault", sourceType: "nexus", sourcePath: rel };
    },
  };

  return { beforePromptBuild, agentEnd, beforeCompaction: checkpoint("compaction"), beforeReset: checkpoint("reset"), supplement, client, cfg };
}

const configSchema = {
  safeParse(value) {
    if (value === undefined) return { success: true, data: undefined };
    if (!value || typeof value !== "object" || Array.isArray(value)) {
      return { success: false, error: { issues: [{ path: [], message: "expected a config object" }] } };
    }
    const known = new Set(["vault", "agent", "bin", "url", "token", "channel", "timeoutMs", "maxEntries", "maxChars", "appendTurns", "corpus", "checkpoints", "recall", "recallLimit", "recallChars", "stateDir", "hub"]);
    const extra = Object.keys(value).filter((k) => !known.has(k));
    if (extra.length) {
      return { success: false, error: { issues: extra.map((k) => ({ path: [k], message: `unknown setting ${k}` })) } };
    }
    return { success: true, data: value };
  },
};

export default {
  id: "nexus",
  name: "Nexus shared memory",
  description: "The Nexus shared log before every reply and after every meaningful turn; memory_search/memory_get reach the vault.",
  configSchema,
  register(api) {
    const p = createNexusPlugin(api);
    api.on("before_prompt_build", p.beforePromptBuild);
    api.on("agent_end", p.agentEnd);
    api.on("before_compaction", p.beforeCompaction);
    api.on("before_reset", p.beforeReset);
    if (p.cfg.corpus && typeof api.registerMemoryCorpusSupplement === "function") {
      api.registerMemoryCorpusSupplement(p.supplement);
    }
  },
};
