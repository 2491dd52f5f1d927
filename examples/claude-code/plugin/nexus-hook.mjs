#!/usr/bin/env node
// The Nexus hook for Claude Code: "read the shared log before every reply,
// append after every meaningful turn" in Claude Code's own command hooks,
// so it holds whether or not the model calls a Nexus tool (SPEC §10).
//
//   SessionStart       add the session-start snapshot (nexus prompt: identity,
//                      memory, memory index, checkpoint, decisions)
//   UserPromptSubmit   add the agent's unread log entries, acknowledged
//                      exactly as shown (nexus prompt --only unread --ack);
//                      with NEXUS_RECALL=1 also the few facts and notes of
//                      the vault that best match the prompt (nexus search)
//   PreCompact         save a checkpoint (the request, the last reply, the
//                      files edited) before the context is compacted
//   Stop               append one entry of kind "turn", unless the model
//                      called log_append itself since the prompt
//
// Claude Code runs it as: node nexus-hook.mjs [--agent NAME] [--vault DIR]
// [--bin PATH] with the hook's JSON input on stdin; the event is the input's
// hook_event_name. With --mcp it is instead the session's "nexus" MCP
// server (see serveMCP): nexus serve --stdio passed through, plus the tool
// claude_code_hook that hooks of type mcp_tool call with the same input, so
// a turn's hooks start no process. Defaults: $NEXUS_AGENT, $NEXUS_VAULT (else the vault
// above the project folder), $NEXUS_BIN (else nexus-lite on PATH, else
// nexus). A Nexus that is missing, misconfigured or slow never fails the
// turn and is never silent: the user sees a notice (systemMessage), the
// model is told, and a notice of a turn that could not be recorded is kept
// on disk and said again at the start of the next turn.
//
// Node's standard library only; no build step.

import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { accessSync, constants, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const NOTICE = "⚠ Nexus (shared memory)";

const oneLine = (s) => String(s ?? "").split(/\s+/u).filter(Boolean).join(" ");
const clip = (s, n) => {
  const cps = Array.from(String(s ?? ""));
  return cps.length <= n ? cps.join("") : cps.slice(0, n - 1).join("") + "…";
};
const keyOf = (...parts) => createHash("sha256").update(parts.join("\u0000")).digest("hex").slice(0, 32);

// Acknowledgements and greetings carry nothing worth an entry.
const TRIVIAL =
  /^(yes|no|ok|okay|sure|thanks|thank you|thx|ty|y|n|yep|nope|yeah|nah|hi|hey|hello|yo|continue|go ahead|do it|proceed|got it|cool|nice|great|done|next|lgtm|k|네|응|예|아니|아니요|좋아|좋아요|고마워|감사합니다|계속|ㅇㅇ|ㅇㅋ)[\s!?.:;,"'~…()[\]*]*$/iu;
export const isTrivial = (text) => {
  const s = String(text ?? "").trim();
  return s === "" || s.startsWith("/") || TRIVIAL.test(s);
};

// settings reads the command line and the environment.
export function settings(argv = process.argv.slice(2), env = process.env) {
  const flag = (name) => {
    const i = argv.indexOf(name);
    return i >= 0 && i + 1 < argv.length ? argv[i + 1] : undefined;
  };
  const num = (v, d) => (Number.isFinite(Number(v)) && Number(v) > 0 ? Number(v) : d);
  return {
    agent: flag("--agent") || env.NEXUS_AGENT || "",
    vault: flag("--vault") || env.NEXUS_VAULT || "",
    bin: flag("--bin") || env.NEXUS_BIN || defaultBin(env),
    channel: flag("--channel") || env.NEXUS_CHANNEL || "general",
    timeoutMs: num(flag("--timeout-ms") ?? env.NEXUS_TIMEOUT_MS, 5000),
    maxEntries: num(env.NEXUS_MAX_ENTRIES, 20),
    maxChars: num(env.NEXUS_MAX_CHARS, 4000),
    // Relevance prefetch: off unless asked for (Claude Code's model can
    // call memory_search itself).
    recall: argv.includes("--recall") || /^(1|true|yes|on)$/iu.test(env.NEXUS_RECALL ?? ""),
    recallLimit: num(env.NEXUS_RECALL_LIMIT, 3),
    recallChars: num(env.NEXUS_RECALL_CHARS, 1500),
    stateDir: env.NEXUS_HOOK_STATE || path.join(env.XDG_STATE_HOME || path.join(os.homedir(), ".local", "state"), "nexus-claude-code"),
  };
}

// defaultBin is nexus-lite if it is in an absolute PATH folder (it starts
// several times faster), else nexus.
function defaultBin(env) {
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    if (!dir || !path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, "nexus-lite");
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return "nexus";
}

class NexusError extends Error {
  constructor(message, refused = false) {
    super(message);
    this.refused = refused; // Nexus answered and said no, as opposed to not answering
  }
}

// nexus runs the CLI with --json, bounded by cfg.timeoutMs, and returns its
// JSON document.
function nexus(cfg, args, cwd, { asAgent = true } = {}) {
  const argv = [];
  if (cfg.vault) argv.push("--vault", cfg.vault);
  if (asAgent) argv.push("--agent", cfg.agent);
  argv.push("--json", ...args);
  const what = args.slice(0, 2).filter((a) => !a.startsWith("-")).join(" ");
  return new Promise((resolve, reject) => {
    execFile(
      cfg.bin,
      argv,
      { cwd, timeout: cfg.timeoutMs, killSignal: "SIGKILL", maxBuffer: 32 << 20, env: { ...process.env, NEXUS_SEARCH_HOLD: "0" } },
      (err, stdout, stderr) => {
        let doc = null;
        try {
          doc = stdout.trim() ? JSON.parse(stdout) : null;
        } catch {
          doc = null;
        }
        if (err) {
          if (err.killed || err.signal === "SIGKILL") return reject(new NexusError(`nexus ${what} timed out after ${cfg.timeoutMs} ms (the vault may be locked or on a stalled disk)`));
          if (err.code === "ENOENT") return reject(new NexusError(`cannot run ${cfg.bin}: not found (install nexus, or set NEXUS_BIN or --bin)`));
          const msg = ((doc && doc.error) || String(stderr).trim().split("\n")[0] || err.message).replace(/^nexus: /u, "");
          return reject(new NexusError(`nexus ${what}: ${msg}`, err.code === 1));
        }
        if (!doc || typeof doc !== "object") return reject(new NexusError(`nexus ${what} printed no JSON document`));
        resolve(doc);
      },
    );
  });
}

// Notices of turns that could not be recorded, kept on disk so the next
// hook process (the next turn, or the next session) says them again.
function noticeFile(cfg) {
  return path.join(cfg.stateDir, `${(cfg.agent || "_").replace(/[^\w.-]/gu, "_")}.notices.json`);
}
function loadNotices(cfg) {
  try {
    const list = JSON.parse(readFileSync(noticeFile(cfg), "utf8"));
    return Array.isArray(list) ? list.map(String) : [];
  } catch {
    return [];
  }
}
function saveNotices(cfg, list) {
  try {
    mkdirSync(cfg.stateDir, { recursive: true });
    const file = noticeFile(cfg);
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(list.slice(-10)));
    renameSync(tmp, file);
  } catch (e) {
    process.stderr.write(`nexus hook: cannot keep the notice in ${cfg.stateDir}: ${e.message}\n`);
  }
}

// relevantText is the few best facts and notes of the vault for the
// prompt: log entries (they come as unread entries) and memory indexes
// (they only list facts) left out, at most limit lines in at most chars
// characters.
export function relevantText(hits, { limit, chars }) {
  const lines = [];
  let size = 0;
  for (const h of hits ?? []) {
    const p = String(h.path ?? "");
    if (h.kind === "log" || p.startsWith("log/") || p.endsWith("/memory/INDEX.md")) continue;
    let line = `- ${p}:${h.line ?? 1} ${oneLine(h.title)}`;
    const snippet = oneLine(h.snippet);
    if (snippet) line += ` — ${clip(snippet, 300)}`;
    const n = Array.from(line).length;
    if (size + n > chars) break;
    lines.push(line);
    size += n;
    if (lines.length >= limit) break;
  }
  if (lines.length === 0) return "";
  return `Relevant in the shared vault (Nexus search for this prompt; the nexus memory_get tool reads one):\n${lines.join("\n")}`;
}

function check(cfg) {
  if (!cfg.agent) return "no agent: pass --agent NAME in the hook command or set NEXUS_AGENT";
  return null;
}

// textOf returns the text parts of a message's content.
function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.filter((p) => p && p.type === "text").map((p) => p.text ?? "").join("\n");
}

const LOG_APPEND = /(^|[_.:-])log_append$/u;
const EDITS = new Set(["Edit", "Write", "MultiEdit", "NotebookEdit"]);

// readTranscript returns what the hooks need of the session's transcript
// (JSON lines): the last user request, the replies after it, whether the
// model called a log_append tool after it, and the files edited.
export function readTranscript(file) {
  const out = { user: "", userId: "", reply: "", appended: false, files: [] };
  let lines;
  try {
    lines = readFileSync(file, "utf8").split("\n");
  } catch {
    return null;
  }
  const files = new Set();
  for (const line of lines) {
    let e;
    try {
      e = JSON.parse(line);
    } catch {
      continue;
    }
    const msg = e?.message;
    if (!msg || e.isMeta || e.isSidechain || e.isCompactSummary) continue;
    const parts = Array.isArray(msg.content) ? msg.content : [];
    if (e.type === "user" && msg.role === "user") {
      if (parts.some((p) => p?.type === "tool_result")) continue;
      let text = textOf(msg.content);
      if (!text.trim() || text.startsWith("<local-command-")) continue; // a slash command's output
      const cmd = /^<command-name>([^<]*)<\/command-name>/u.exec(text);
      if (cmd) text = cmd[1]; // a slash command: "/compact"
      Object.assign(out, { user: text, userId: e.uuid ?? "", reply: "", appended: false });
    } else if (e.type === "assistant") {
      const text = textOf(msg.content);
      if (text.trim()) out.reply = text;
      for (const p of parts) {
        if (p?.type !== "tool_use") continue;
        if (LOG_APPEND.test(p.name ?? "")) out.appended = true;
        if (EDITS.has(p.name) && typeof p.input?.file_path === "string") files.add(p.input.file_path);
        if (EDITS.has(p.name) && typeof p.input?.notebook_path === "string") files.add(p.input.notebook_path);
      }
    }
  }
  out.files = [...files].slice(-200);
  return out;
}

function unreadHeader(doc) {
  return `Shared log (Nexus): what other agents wrote since your last reply${doc.acked ? " (acknowledged; it will not be shown again)" : ""}.`;
}

function noticeText(first, rest) {
  return [
    `${NOTICE}: the shared log could not be used — ${first}`,
    ...rest.map((r) => `  also: ${r}`),
    "  Other agents' news may be missing from this context, and this turn may not be recorded. Tell the user if it matters.",
  ].join("\n");
}

// cliBackend does a hook's Nexus work over the CLI: one nexus process per
// call.
export function cliBackend(cfg, cwd) {
  return {
    async unread() {
      const doc = await nexus(cfg, ["prompt", "--only", "unread", "--ack", "--max-entries", String(cfg.maxEntries), "--max-chars", String(cfg.maxChars)], cwd);
      return { total: doc.unread_total ?? 0, text: doc.unread ?? "", acked: Boolean(doc.acked) };
    },
    append: (a) => nexus(cfg, ["log", "append", "--channel", a.channel, "--kind", a.kind, "--key", a.key, "--body", a.body, "--", a.summary], cwd),
    async search(query, limit) {
      const doc = await nexus(cfg, ["search", "--limit", String(limit), "--", query], cwd, { asAgent: false });
      return doc.hits ?? [];
    },
    checkpoint(c) {
      const args = ["checkpoint", "save", "--task", c.task, "--state", c.state];
      if (c.next) args.push("--next", c.next);
      if (c.files.length) args.push("--files", c.files.join(","));
      args.push("--note", c.note);
      return nexus(cfg, args, cwd);
    },
  };
}

// renderEntry is one unread entry as 'nexus prompt' renders it: a head
// line and the body folded to one line, cut to 300 characters.
function renderEntry(e) {
  if (e.hand) return `- (typed by hand, unsigned) ${clip(oneLine(e.body), 300)}`;
  let s = `- ${e.signed ? "" : "(unsigned) "}${e.time ?? ""} ${e.agent ?? ""} [${e.channel ?? ""}/${e.kind ?? ""}] ${oneLine(e.summary)}`;
  if (e.body) s += `\n  ${clip(oneLine(e.body), 300)}`;
  return s;
}

// mcpBackend does a hook's Nexus work as MCP tool calls on a running
// 'nexus serve' (call(name, args) returns the tool's structured result):
// no process starts. The unread entries are read as 'nexus prompt --only
// unread --ack' renders them: log_read peeks, then acknowledges exactly the
// entries that fit maxChars, so none is acknowledged unshown.
export function mcpBackend(cfg, call) {
  return {
    async unread() {
      const peek = await call("log_read", { ack: false, limit: Math.max(1, Math.min(cfg.maxEntries, 100)) });
      const entries = peek.entries ?? [];
      const blocks = entries.map(renderEntry);
      let fit = 0;
      let size = 0;
      for (const b of blocks) {
        const n = Array.from(b).length + 1;
        if (fit > 0 && size + n > cfg.maxChars) break;
        size += n;
        fit++;
      }
      let acked = false;
      if (fit > 0) acked = Boolean((await call("log_read", { ack: true, limit: fit })).acked);
      const more = (peek.remaining ?? 0) + (entries.length - fit);
      const total = fit + more;
      let text = `## Unread log entries (${total})\n`;
      if (more) text += `(${more} newer unread ${more === 1 ? "entry" : "entries"} not shown yet; they stay unread and come next time; log_read shows them now.)\n`;
      text += blocks.slice(0, fit).join("\n");
      return { total, text: text.trimEnd(), acked };
    },
    append: (a) => call("log_append", { summary: a.summary, body: a.body, channel: a.channel, kind: a.kind, key: a.key }),
    async search(query, limit) {
      const doc = await call("memory_search", { query, limit });
      return doc.hits ?? doc.results ?? [];
    },
    checkpoint(c) {
      const args = { task: c.task, state: c.state, notes: c.note };
      if (c.next) args.next = c.next;
      if (c.files.length) args.files = c.files;
      return call("checkpoint_save", args);
    },
  };
}

// handle runs one hook and returns the JSON document to print (or null).
// backend does the Nexus work (the CLI unless given); input.turn, when
// given, is what readTranscript would find (the MCP path knows it without
// reading the transcript).
export async function handle(input, cfg, backend) {
  const event = input.hook_event_name ?? "";
  const cwd = input.cwd || process.cwd();
  const be = backend ?? cliBackend(cfg, cwd);
  const problems = []; // this turn's
  const carried = loadNotices(cfg); // earlier turns'
  const context = [];
  const problem = check(cfg);

  const take = async (fn) => {
    if (problem) {
      problems.push(`not configured: ${problem}`);
      return;
    }
    try {
      await fn();
    } catch (e) {
      problems.push(e instanceof NexusError ? e.message : `unexpected error: ${e?.message ?? e}`);
    }
  };

  if (event === "SessionStart") {
    await take(async () => {
      // The unread entries come with the first prompt, acknowledged.
      const doc = await nexus(cfg, ["prompt", "--without", "unread"], cwd);
      if (doc.prompt) context.push(`Nexus session start for agent ${cfg.agent} (shared memory; the MCP tools of server "nexus" read and write it):\n\n${doc.prompt}`);
    });
  } else if (event === "UserPromptSubmit") {
    const query = oneLine(input.prompt);
    // The search runs beside the read: a turn waits for the slower one.
    const recall =
      cfg.recall && !problem && query && !isTrivial(query)
        ? be.search(clip(query, 1000), Math.min(cfg.recallLimit * 3, 50)).then(
            (hits) => relevantText(hits, { limit: cfg.recallLimit, chars: cfg.recallChars }),
            (e) => {
              // A failed search costs only the relevance part.
              process.stderr.write(`nexus hook: the relevance search failed: ${e.message}\n`);
              return "";
            },
          )
        : Promise.resolve("");
    await take(async () => {
      const doc = await be.unread();
      if (doc.total > 0) context.push(`${unreadHeader(doc)}\n${doc.text}`.trimEnd());
    });
    const relevant = await recall;
    if (relevant) context.push(relevant);
  } else if (event === "PreCompact") {
    await take(async () => {
      const t = (input.transcript_path && readTranscript(input.transcript_path)) || { user: "", reply: "", files: [] };
      const c = {
        task: clip(oneLine(t.user) || "Claude Code session", 1000),
        state: clip(`context compacted (${input.trigger || "auto"}); last reply: ${oneLine(t.reply) || "(none)"}`, 1000),
        next: input.custom_instructions ? clip(oneLine(input.custom_instructions), 1000) : "",
        files: t.files,
        note: `saved by the Claude Code PreCompact hook, session ${input.session_id ?? "?"}`,
      };
      try {
        await be.checkpoint(c);
      } catch (e) {
        throw new NexusError(`no checkpoint was saved before the compaction: ${e.message}`);
      }
    });
  } else if (event === "Stop") {
    if (!problem) {
      const t = input.turn ?? (input.transcript_path ? readTranscript(input.transcript_path) : null);
      const user = oneLine(t?.user);
      const reply = oneLine(input.last_assistant_message ?? t?.reply);
      if (!t) {
        problems.push(`the last turn was not recorded in the shared log: cannot read the transcript ${input.transcript_path ?? "(none given)"}`);
      } else if (!t.appended && (user || reply) && !(isTrivial(user) && Array.from(reply).length < 200)) {
        const summary = clip(`${clip(user || "(no text)", 180)} → ${clip(reply || "(no text reply)", 280)}`, 500);
        const body = `**User:** ${clip(String(t.user).trim(), 1500)}\n\n**Reply:** ${clip(String(input.last_assistant_message ?? t.reply).trim(), 1500)}`;
        // The key is the turn's id (Claude Code's prompt_id), so a retry,
        // or the other path's hook on the same turn, lands once.
        const key = "claude-code:" + (input.prompt_id ? keyOf(input.session_id ?? "", input.prompt_id) : keyOf(input.session_id ?? "", t.userId || user, reply));
        const a = { channel: cfg.channel, kind: "turn", key, body, summary };
        try {
          try {
            await be.append(a);
          } catch (e) {
            if (!(e instanceof NexusError) || e.refused) throw e;
            await be.append(a); // not answered: it may have landed; the key makes the retry land once
          }
        } catch (e) {
          problems.push(`the last turn was not recorded in the shared log: ${e?.message ?? e}`);
        }
      }
    } else {
      problems.push(`the last turn was not recorded in the shared log: not configured: ${problem}`);
    }
  } else {
    return null;
  }

  // Notices: this turn's and the ones kept from earlier turns, said in
  // the user's view (systemMessage) and, where the hook can add context,
  // to the model. A notice kept on disk is said again until a hook that
  // can put it in front of the model (SessionStart, UserPromptSubmit)
  // has done so; such a hook's own failure is said now and kept for the
  // next turn's start.
  const canTell = event === "SessionStart" || event === "UserPromptSubmit";
  const all = [...carried, ...problems.filter((p) => !carried.includes(p))];
  const out = {};
  if (all.length) {
    out.systemMessage = noticeText(all[0], all.slice(1));
    if (canTell) context.unshift(out.systemMessage);
  }
  if (canTell) {
    const again = problems.filter((p) => !carried.includes(p));
    if (carried.length || again.length) saveNotices(cfg, again);
  } else if (problems.length) {
    saveNotices(cfg, all);
  }
  if (context.length) out.hookSpecificOutput = { hookEventName: event, additionalContext: context.join("\n\n") };
  return Object.keys(out).length ? out : null;
}

// HOOK_TOOL is the tool the hooks of type mcp_tool call on the server
// --mcp serves. It is not in tools/list, so the model is never offered it;
// Claude Code calls a hook's tool by name.
export const HOOK_TOOL = "claude_code_hook";
const OWN_ID = "nexus-hook:";

// fullBin is the nexus that serves: nexus-lite leaves the server out, so
// the full nexus beside it (or on PATH).
function fullBin(bin) {
  if (path.basename(bin) !== "nexus-lite") return bin;
  const beside = path.join(path.dirname(bin), "nexus");
  try {
    accessSync(beside, constants.X_OK);
    return beside;
  } catch {
    return "nexus";
  }
}

// serveMCP is --mcp: the "nexus" MCP server of the session. It runs
// 'nexus serve --stdio' once and passes every message through both ways,
// so the model gets the Nexus tools as before, and answers the hooks'
// calls of HOOK_TOOL itself: their Nexus work goes to that same server as
// tool calls of its own, so a turn (UserPromptSubmit, Stop) starts no
// process at all. When the server cannot be run or has ended, the hooks
// go over the CLI (and say why it failed), and the client still gets
// answers (initialize, an empty tool list, errors).
export function serveMCP(cfg, { stdin = process.stdin, stdout = process.stdout } = {}) {
  const write = (msg) => stdout.write(JSON.stringify(msg) + "\n");
  const pending = new Map(); // own request id -> {resolve, reject, timer}
  const prompts = new Map(); // prompt_id -> the prompt (for Stop)
  let appendedSince = false; // the model called log_append since the last prompt
  let seq = 0;
  let down = ""; // why the server is not there
  let child = null;
  const inflight = new Map(); // the client's requests the server has not answered: id -> message
  const failInflight = () => {
    for (const m of inflight.values()) answerDown(m);
    inflight.clear();
  };
  if (cfg.agent) {
    const argv = cfg.vault ? ["--vault", cfg.vault] : [];
    argv.push("--agent", cfg.agent, "serve", "--stdio");
    child = spawn(fullBin(cfg.bin), argv, { stdio: ["pipe", "pipe", "inherit"], env: { ...process.env, NEXUS_SEARCH_HOLD: "0" } });
    child.on("error", (e) => {
      down = e.code === "ENOENT" ? `cannot run ${fullBin(cfg.bin)}: not found (install nexus, or set NEXUS_BIN or --bin)` : `cannot run nexus serve: ${e.message}`;
      for (const p of pending.values()) p.reject(new NexusError(down));
      pending.clear();
      failInflight();
    });
    child.on("exit", (code, signal) => {
      down ||= `nexus serve ended (${signal ?? `exit ${code}`})`;
      for (const p of pending.values()) p.reject(new NexusError(down));
      pending.clear();
      failInflight();
    });
    child.stdin.on("error", () => {}); // an ended server: 'exit' says it
    createInterface({ input: child.stdout, crlfDelay: Infinity }).on("line", (line) => {
      let msg;
      try {
        msg = JSON.parse(line);
      } catch {
        msg = null;
      }
      const own = msg && typeof msg.id === "string" && msg.id.startsWith(OWN_ID) && !msg.method ? pending.get(msg.id) : undefined;
      if (!own) {
        if (msg && !msg.method && msg.id !== undefined) inflight.delete(JSON.stringify(msg.id));
        return void stdout.write(line + "\n");
      }
      pending.delete(msg.id);
      clearTimeout(own.timer);
      if (msg.error) return own.reject(new NexusError(`nexus serve: ${msg.error.message ?? JSON.stringify(msg.error)}`, true));
      const r = msg.result ?? {};
      const text = (r.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("");
      if (r.isError) return own.reject(new NexusError(`nexus ${own.name}: ${clip(oneLine(text), 300)}`, true));
      if (r.structuredContent && typeof r.structuredContent === "object") return own.resolve(r.structuredContent);
      try {
        own.resolve(JSON.parse(text));
      } catch {
        own.resolve({});
      }
    });
  } else {
    down = `not configured: ${check(cfg)}`;
  }
  const alive = () => child && !down && child.exitCode === null;

  const call = (name, args) =>
    new Promise((resolve, reject) => {
      if (!alive()) return reject(new NexusError(down));
      const id = OWN_ID + ++seq;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new NexusError(`nexus serve did not answer ${name} within ${cfg.timeoutMs} ms (the vault may be locked or on a stalled disk)`));
      }, cfg.timeoutMs);
      pending.set(id, { resolve, reject, timer, name });
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } }) + "\n");
    });

  const hook = async (args) => {
    const input = { ...(args ?? {}) };
    for (const k of Object.keys(input)) if (input[k] === "") delete input[k]; // an absent field interpolates as ""
    const event = input.hook_event_name;
    if (event === "UserPromptSubmit") {
      if (input.prompt_id) {
        prompts.set(input.prompt_id, String(input.prompt ?? ""));
        if (prompts.size > 100) prompts.delete(prompts.keys().next().value);
      }
      appendedSince = false;
    } else if (event === "Stop" && input.prompt_id && prompts.has(input.prompt_id) && input.last_assistant_message !== undefined) {
      // What the transcript would say, known without reading it.
      input.turn = { user: prompts.get(input.prompt_id), userId: input.prompt_id, reply: input.last_assistant_message, appended: appendedSince, files: [] };
    }
    const problems = [];
    const backend = mcpBackend(cfg, call);
    const viaCLI = cliBackend(cfg, input.cwd || process.cwd());
    // A server that is not there costs the CLI's process starts, not the turn.
    const either = {};
    for (const m of Object.keys(backend)) {
      either[m] = async (...a) => {
        if (!alive()) {
          if (down && !problems.includes(down)) problems.push(down);
          return viaCLI[m](...a);
        }
        return backend[m](...a);
      };
    }
    const out = (await handle(input, cfg, either)) ?? {};
    if (problems.length && !out.systemMessage) process.stderr.write(`nexus hook: the hooks went over the CLI: ${problems.join("; ")}\n`);
    return out;
  };

  const answerDown = (msg) => {
    if (msg.method === "initialize") {
      return write({ jsonrpc: "2.0", id: msg.id, result: { protocolVersion: msg.params?.protocolVersion ?? "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "nexus", version: "hooks-only" }, instructions: `Nexus is not available: ${down}` } });
    }
    if (msg.method === "tools/list") return write({ jsonrpc: "2.0", id: msg.id, result: { tools: [] } });
    if (msg.method === "ping") return write({ jsonrpc: "2.0", id: msg.id, result: {} });
    return write({ jsonrpc: "2.0", id: msg.id, error: { code: -32603, message: `Nexus is not available: ${down}` } });
  };

  const lines = createInterface({ input: stdin, crlfDelay: Infinity });
  lines.on("line", (line) => {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      msg = null;
    }
    if (msg && msg.method === "tools/call" && msg.params?.name === HOOK_TOOL) {
      hook(msg.params.arguments).then(
        (out) => write({ jsonrpc: "2.0", id: msg.id, result: { content: [{ type: "text", text: JSON.stringify(out) }] } }),
        (e) => write({ jsonrpc: "2.0", id: msg.id, result: { isError: true, content: [{ type: "text", text: `nexus hook: ${e?.message ?? e}` }] } }),
      );
      return;
    }
    if (msg && msg.method === "tools/call" && LOG_APPEND.test(msg.params?.name ?? "")) appendedSince = true;
    if (alive()) {
      if (msg && msg.method && msg.id !== undefined) inflight.set(JSON.stringify(msg.id), msg);
      return void child.stdin.write(line + "\n");
    }
    if (msg && msg.id !== undefined && msg.method) answerDown(msg);
  });
  lines.on("close", () => {
    if (child && child.exitCode === null) child.stdin.end();
    else process.exitCode = 0;
  });
  return { child };
}

async function main() {
  if (process.argv.includes("--mcp")) {
    serveMCP(settings());
    return;
  }
  const cfg = settings();
  let raw = "";
  for await (const chunk of process.stdin) raw += chunk;
  let input;
  try {
    input = JSON.parse(raw || "{}");
  } catch (e) {
    input = {};
    process.stderr.write(`nexus hook: the hook input is not JSON: ${e.message}\n`);
  }
  // A last bound on the whole hook, below Claude Code's own timeout:
  // Nexus calls are bounded one by one, this catches anything else.
  const watchdog = setTimeout(() => {
    process.stdout.write(JSON.stringify({ systemMessage: noticeText(`the ${input.hook_event_name ?? ""} hook did not finish within ${3 * cfg.timeoutMs} ms`, []) }) + "\n");
    process.exit(0);
  }, 3 * cfg.timeoutMs);
  watchdog.unref();
  const out = await handle(input, cfg);
  if (out) process.stdout.write(JSON.stringify(out) + "\n");
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main();
}
