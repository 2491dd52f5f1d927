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
// hook_event_name. Defaults: $NEXUS_AGENT, $NEXUS_VAULT (else the vault
// above the project folder), $NEXUS_BIN (else nexus-lite on PATH, else
// nexus). A Nexus that is missing, misconfigured or slow never fails the
// turn and is never silent: the user sees a notice (systemMessage), the
// model is told, and a notice of a turn that could not be recorded is kept
// on disk and said again at the start of the next turn.
//
// Node's standard library only; no build step.

import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { accessSync, constants, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
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

// handle runs one hook and returns the JSON document to print (or null).
export async function handle(input, cfg) {
  const event = input.hook_event_name ?? "";
  const cwd = input.cwd || process.cwd();
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
        ? nexus(cfg, ["search", "--limit", String(Math.min(cfg.recallLimit * 3, 50)), "--", clip(query, 1000)], cwd, { asAgent: false }).then(
            (doc) => relevantText(doc.hits, { limit: cfg.recallLimit, chars: cfg.recallChars }),
            (e) => {
              // A failed search costs only the relevance part.
              process.stderr.write(`nexus hook: the relevance search failed: ${e.message}\n`);
              return "";
            },
          )
        : Promise.resolve("");
    await take(async () => {
      const doc = await nexus(cfg, ["prompt", "--only", "unread", "--ack", "--max-entries", String(cfg.maxEntries), "--max-chars", String(cfg.maxChars)], cwd);
      if ((doc.unread_total ?? 0) > 0) context.push(`${unreadHeader(doc)}\n${doc.unread ?? ""}`.trimEnd());
    });
    const relevant = await recall;
    if (relevant) context.push(relevant);
  } else if (event === "PreCompact") {
    await take(async () => {
      const t = (input.transcript_path && readTranscript(input.transcript_path)) || { user: "", reply: "", files: [] };
      const args = ["checkpoint", "save", "--task", clip(oneLine(t.user) || "Claude Code session", 1000)];
      args.push("--state", clip(`context compacted (${input.trigger || "auto"}); last reply: ${oneLine(t.reply) || "(none)"}`, 1000));
      if (input.custom_instructions) args.push("--next", clip(oneLine(input.custom_instructions), 1000));
      if (t.files.length) args.push("--files", t.files.join(","));
      args.push("--note", `saved by the Claude Code PreCompact hook, session ${input.session_id ?? "?"}`);
      try {
        await nexus(cfg, args, cwd);
      } catch (e) {
        throw new NexusError(`no checkpoint was saved before the compaction: ${e.message}`);
      }
    });
  } else if (event === "Stop") {
    if (!problem) {
      const t = input.transcript_path ? readTranscript(input.transcript_path) : null;
      const user = oneLine(t?.user);
      const reply = oneLine(input.last_assistant_message ?? t?.reply);
      if (!t) {
        problems.push(`the last turn was not recorded in the shared log: cannot read the transcript ${input.transcript_path ?? "(none given)"}`);
      } else if (!t.appended && (user || reply) && !(isTrivial(user) && Array.from(reply).length < 200)) {
        const summary = clip(`${clip(user || "(no text)", 180)} → ${clip(reply || "(no text reply)", 280)}`, 500);
        const body = `**User:** ${clip(String(t.user).trim(), 1500)}\n\n**Reply:** ${clip(String(input.last_assistant_message ?? t.reply).trim(), 1500)}`;
        const key = "claude-code:" + keyOf(input.session_id ?? "", t.userId || user, reply);
        const args = ["log", "append", "--channel", cfg.channel, "--kind", "turn", "--key", key, "--body", body, "--", summary];
        try {
          try {
            await nexus(cfg, args, cwd);
          } catch (e) {
            if (!(e instanceof NexusError) || e.refused) throw e;
            await nexus(cfg, args, cwd); // not answered: it may have landed; the key makes the retry land once
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

async function main() {
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
