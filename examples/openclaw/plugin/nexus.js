// Talking to Nexus from the OpenClaw plugin: the nexus CLI with --json, or
// MCP (Streamable HTTP, JSON-RPC) to 'nexus serve --http' with the agent's
// bearer token. Every call is bounded by timeoutMs: a stalled nexus process
// is killed, a stalled server abandoned, and the caller gets a NexusError
// whose message says so. Node's standard library only.

import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { accessSync, closeSync, constants, existsSync, mkdirSync, openSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";

export class NexusError extends Error {
  constructor(message, { refused = false } = {}) {
    super(message);
    this.name = "NexusError";
    // refused: Nexus answered and said no (a scan hit, a limit), as
    // opposed to not answering at all.
    this.refused = refused;
  }
}

const oneLine = (s) => String(s ?? "").split(/\s+/u).filter(Boolean).join(" ");
const clip = (s, n) => {
  const cps = Array.from(s);
  return cps.length <= n ? s : cps.slice(0, n - 1).join("") + "…";
};
export { oneLine, clip };

export function keyOf(...parts) {
  return createHash("sha256").update(parts.join("\u0000")).digest("hex").slice(0, 32);
}

// The prefix of the paths the corpus supplement hands out: a lookup without
// it is someone else's (OpenClaw's own memory files).
export const CORPUS_PREFIX = "nexus/";

// The lean build of nexus (go build -tags lite, docs/cli.md): the same
// commands, without the MCP server's and the index's start-up cost.
export const LITE_BIN = "nexus-lite";

// defaultBin is the nexus to run when neither config.bin nor NEXUS_BIN
// names one: nexus-lite if it is on PATH (it starts several times faster;
// it hands the commands it leaves out to the full nexus), else nexus.
export function defaultBin(env = process.env) {
  const exe = process.platform === "win32" ? ".exe" : "";
  for (const dir of (env.PATH ?? env.Path ?? "").split(path.delimiter)) {
    if (!dir || !path.isAbsolute(dir)) continue; // never one from the working folder
    const candidate = path.join(dir, LITE_BIN + exe);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return "nexus";
}

// resolveBin is the order the plugin picks its binary in: config.bin, then
// NEXUS_BIN, then nexus-lite on PATH, then nexus.
export function resolveBin(bin, env = process.env) {
  return bin || env.NEXUS_BIN || defaultBin(env);
}

export class CLIClient {
  constructor({ bin, vault, agent, timeoutMs }) {
    this.bin = bin;
    this.vault = vault;
    this.agent = agent;
    this.timeoutMs = timeoutMs;
    this.keyFlag = true; // cleared when this nexus predates 'log append --key'
  }

  describe() {
    return `nexus CLI ${this.bin} (vault ${this.vault || "$NEXUS_VAULT"}, agent ${this.agent})`;
  }

  check() {
    if (!this.agent) return "no agent: set plugins.entries.nexus.config.agent (or NEXUS_AGENT)";
    if (this.bin.includes("/") || this.bin.includes("\\")) {
      if (!existsSync(this.bin)) return `the nexus binary ${this.bin} does not exist (set config.bin or NEXUS_BIN)`;
    }
    if (this.vault && !existsSync(path.join(this.vault, ".nexus"))) {
      return `${this.vault} is not a Nexus vault (no .nexus folder; set config.vault)`;
    }
    return null;
  }

  run(args, { agent = true } = {}) {
    const argv = [];
    if (this.vault) argv.push("--vault", this.vault);
    if (agent) argv.push("--agent", this.agent);
    argv.push("--json", ...args);
    const what = args.slice(0, 2).filter((a) => !a.startsWith("-")).join(" ");
    return new Promise((resolve, reject) => {
      execFile(
        this.bin,
        argv,
        {
          timeout: this.timeoutMs,
          killSignal: "SIGKILL",
          maxBuffer: 32 << 20,
          env: { ...process.env, NEXUS_SEARCH_HOLD: process.env.NEXUS_SEARCH_HOLD ?? "0" },
          windowsHide: true,
        },
        (err, stdout, stderr) => {
          let doc = null;
          try {
            doc = stdout.trim() ? JSON.parse(stdout) : null;
          } catch {
            doc = null;
          }
          if (err) {
            if (err.killed || err.signal === "SIGKILL") {
              reject(new NexusError(`nexus ${what} timed out after ${this.timeoutMs} ms (the vault may be locked or on a stalled disk)`));
              return;
            }
            if (err.code === "ENOENT") {
              reject(new NexusError(`cannot run ${this.bin}: not found (install nexus or set config.bin)`));
              return;
            }
            let msg = (doc && doc.error) || String(stderr).trim().split("\n")[0] || err.message;
            msg = msg.replace(/^nexus: /u, "");
            reject(new NexusError(`nexus ${what}: ${msg}`, { refused: err.code === 1 }));
            return;
          }
          if (!doc || typeof doc !== "object") {
            reject(new NexusError(`nexus ${what} printed no JSON document`));
            return;
          }
          resolve(doc);
        },
      );
    });
  }

  async unread({ maxEntries, maxChars, ack }) {
    const args = ["prompt", "--only", "unread", "--max-entries", String(maxEntries), "--max-chars", String(maxChars)];
    if (ack) args.push("--ack");
    const doc = await this.run(args);
    return {
      text: doc.unread ?? "",
      total: doc.unread_total ?? 0,
      shown: doc.unread_shown ?? 0,
      more: doc.unread_more ?? 0,
      acked: Boolean(doc.acked),
    };
  }

  async append({ summary, body, channel, kind, key }) {
    const args = ["log", "append", "--channel", channel, "--kind", kind];
    if (body) args.push("--body", body);
    if (key && this.keyFlag) {
      try {
        return await this.run([...args, "--key", key, "--", summary]);
      } catch (e) {
        if (!String(e.message).includes("unknown flag: --key")) throw e;
        this.keyFlag = false; // an older nexus: append without the key
      }
    }
    return this.run([...args, "--", summary]);
  }

  async checkpoint({ task, state, next, notes }) {
    const args = ["checkpoint", "save", "--task", task];
    if (state) args.push("--state", state);
    if (next) args.push("--next", next);
    for (const n of notes ?? []) args.push("--note", n);
    return this.run(args);
  }

  async search({ query, maxResults }) {
    const doc = await this.run(["search", "--limit", String(maxResults), "--", query], { agent: false });
    return (doc.hits ?? []).map((h) => ({
      path: h.path,
      title: h.title,
      kind: h.kind,
      score: h.score,
      snippet: h.snippet,
      startLine: h.line,
      endLine: h.end_line,
      updatedAt: h.date,
    }));
  }

  // get reads a markdown file of the vault by its vault-relative path
  // through Nexus's own memory_get (a one-shot 'nexus serve --stdio'),
  // never by path here: Nexus opens it through the vault's root and
  // refuses dot-folders (.nexus/ holds the private keys), non-markdown
  // files and links that lead out of the vault or into a dot-folder, at
  // the open itself, so a link swapped meanwhile cannot redirect it.
  async get({ relPath, fromLine, lineCount }) {
    if (!this.vault) throw new NexusError("memory_get of a Nexus path needs config.vault");
    const rel = relPath.replace(/\\/gu, "/");
    if (rel.startsWith("/") || rel.split("/").some((p) => p === ".." || p.startsWith(".")) || !rel.endsWith(".md")) {
      throw new NexusError(`${relPath}: not a markdown file of the vault`);
    }
    const args = { path: rel };
    if (fromLine) args.from = fromLine;
    if (lineCount) args.lines = Math.max(1, Math.min(lineCount, 2000));
    let doc;
    try {
      doc = await this.mcpOnce("memory_get", args);
    } catch (e) {
      if (/not found/u.test(e.message)) return null;
      throw e;
    }
    if (typeof doc.content !== "string" && typeof doc.text !== "string") return null;
    return { content: doc.content ?? doc.text, fromLine: doc.from ?? fromLine ?? 1, lineCount: doc.lines ?? lineCount ?? 0 };
  }

  // mcpOnce calls one MCP tool of a 'nexus serve --stdio' started for it,
  // and ends it.
  mcpOnce(name, args) {
    const argv = [];
    if (this.vault) argv.push("--vault", this.vault);
    argv.push("--agent", this.agent, "serve", "--stdio");
    return new Promise((resolve, reject) => {
      let out = "";
      let errText = "";
      let settled = false;
      const child = spawn(this.bin, argv, {
        env: { ...process.env, NEXUS_SEARCH_HOLD: process.env.NEXUS_SEARCH_HOLD ?? "0" },
        stdio: ["pipe", "pipe", "pipe"],
        windowsHide: true,
      });
      const finish = (fn, v) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        child.stdin.end();
        fn(v);
      };
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        finish(reject, new NexusError(`nexus ${name} timed out after ${this.timeoutMs} ms (the vault may be locked or on a stalled disk)`));
      }, this.timeoutMs);
      const send = (msg) => child.stdin.write(JSON.stringify({ jsonrpc: "2.0", ...msg }) + "\n");
      child.on("error", (e) =>
        finish(reject, new NexusError(e.code === "ENOENT" ? `cannot run ${this.bin}: not found (install nexus or set config.bin)` : `nexus ${name}: ${e.message}`)),
      );
      child.stdin.on("error", () => {}); // a nexus that ended early: said by "close"
      child.stderr.on("data", (d) => (errText += d));
      child.stdout.on("data", (d) => {
        out += d;
        for (let i = out.indexOf("\n"); i >= 0; i = out.indexOf("\n")) {
          const line = out.slice(0, i);
          out = out.slice(i + 1);
          let msg;
          try {
            msg = JSON.parse(line);
          } catch {
            continue;
          }
          if (msg.id === 1) {
            send({ method: "notifications/initialized" });
            send({ id: 2, method: "tools/call", params: { name, arguments: args } });
          } else if (msg.id === 2) {
            if (msg.error) {
              finish(reject, new NexusError(`nexus ${name}: ${clip(oneLine(msg.error.message), 300)}`));
              return;
            }
            const res = msg.result ?? {};
            const text = (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("");
            if (res.isError) {
              finish(reject, new NexusError(`nexus ${name}: ${clip(oneLine(text), 300)}`, { refused: true }));
              return;
            }
            if (res.structuredContent && typeof res.structuredContent === "object") {
              finish(resolve, res.structuredContent);
              return;
            }
            try {
              finish(resolve, JSON.parse(text));
            } catch {
              finish(resolve, {});
            }
          }
        }
      });
      child.on("close", (code) =>
        finish(reject, new NexusError(`nexus ${name}: nexus serve ended (exit ${code}) before answering: ${clip(oneLine(errText), 300)}`)),
      );
      send({ id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "openclaw-nexus", version: "1" } } });
    });
  }
}

// renderEntry is one unread entry as 'nexus prompt' renders it: a head
// line and the body folded to one line, cut to 300 characters.
function renderEntry(e) {
  if (e.hand) return `- (typed by hand, unsigned) ${clip(oneLine(e.body), 300)}`;
  let s = `- ${e.signed ? "" : "(unsigned) "}${e.time ?? ""} ${e.agent ?? ""} [${e.channel ?? ""}/${e.kind ?? ""}] ${oneLine(e.summary)}`;
  if (e.body) s += `\n  ${clip(oneLine(e.body), 300)}`;
  return s;
}

export class MCPClient {
  constructor({ url, token, timeoutMs }) {
    this.url = url;
    this.token = token;
    this.timeoutMs = timeoutMs;
    this.session = null;
    this.id = 0;
    this.keyArg = true;
  }

  describe() {
    return `nexus serve at ${this.url}`;
  }

  check() {
    if (!/^https?:\/\//u.test(this.url)) return `config.url ${JSON.stringify(this.url)} is not an http(s) URL`;
    if (!this.token) return "config.token is empty (get one with: nexus agent token NAME)";
    return null;
  }

  async post(payload) {
    const headers = {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      Authorization: `Bearer ${this.token}`,
    };
    if (this.session) headers["Mcp-Session-Id"] = this.session;
    let resp;
    let raw;
    try {
      resp = await fetch(this.url, { method: "POST", headers, body: JSON.stringify(payload), signal: AbortSignal.timeout(this.timeoutMs) });
      raw = await resp.text();
    } catch (e) {
      if (e && (e.name === "TimeoutError" || e.name === "AbortError")) {
        throw new NexusError(`${this.url} did not answer within ${this.timeoutMs} ms`);
      }
      const err = new NexusError(`cannot reach ${this.url}: ${e?.cause?.code ?? e?.message ?? e}`);
      err.unreachable = true; // nothing listens there: a hub that went away
      throw err;
    }
    const sid = resp.headers.get("mcp-session-id");
    if (sid) this.session = sid;
    if (!resp.ok) {
      const err = new NexusError(`${this.url}: HTTP ${resp.status} ${clip(oneLine(raw), 200)}`.trim());
      if (resp.status === 401) err.unauthorized = true;
      if (resp.status === 404 && headers["Mcp-Session-Id"]) {
        // The server no longer knows the session (it restarted, or the
        // session expired while idle): the caller starts a new one.
        this.session = null;
        err.sessionLost = true;
      }
      throw err;
    }
    if (payload.id === undefined) return null;
    let doc = null;
    if ((resp.headers.get("content-type") ?? "").includes("text/event-stream")) {
      for (const line of raw.split("\n")) {
        if (!line.startsWith("data:")) continue;
        try {
          const msg = JSON.parse(line.slice(5).trim());
          if (msg.id === payload.id) doc = msg;
        } catch {
          // not a JSON-RPC message
        }
      }
      if (!doc) throw new NexusError(`${this.url}: no answer in the event stream`);
    } else {
      try {
        doc = JSON.parse(raw);
      } catch {
        throw new NexusError(`${this.url}: the answer is not JSON`);
      }
    }
    if (doc.error) throw new NexusError(`${this.url}: ${doc.error.message ?? JSON.stringify(doc.error)}`);
    return doc.result ?? {};
  }

  async rpc(method, params) {
    try {
      return await this.rpcOnce(method, params);
    } catch (e) {
      if (!e.sessionLost) throw e;
      return this.rpcOnce(method, params); // once more, in a new session
    }
  }

  async rpcOnce(method, params) {
    if (!this.session) {
      await this.post({
        jsonrpc: "2.0",
        id: ++this.id,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "openclaw-nexus", version: "0.1.0" } },
      });
      await this.post({ jsonrpc: "2.0", method: "notifications/initialized" });
    }
    return (await this.post({ jsonrpc: "2.0", id: ++this.id, method, params })) ?? {};
  }

  async tool(name, args) {
    const res = await this.rpc("tools/call", { name, arguments: args });
    const text = (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("");
    if (res.isError) throw new NexusError(`${name}: ${clip(oneLine(text), 300)}`, { refused: true });
    if (res.structuredContent && typeof res.structuredContent === "object") return res.structuredContent;
    try {
      return JSON.parse(text);
    } catch {
      return {};
    }
  }

  // unread renders the unread entries as 'nexus prompt --only unread'
  // does: at most maxEntries in at most maxChars characters (at least one
  // entry), oldest first when acknowledging. log_read has no character
  // bound, so it first peeks, then acknowledges exactly the entries that
  // fit: none is acknowledged without being shown.
  async unread({ maxEntries, maxChars, ack }) {
    const limit = Math.max(1, Math.min(maxEntries, 100));
    const peek = await this.tool("log_read", { ack: false, limit });
    const entries = peek.entries ?? [];
    const blocks = entries.map(renderEntry);
    let fit = 0;
    let size = 0;
    for (const b of blocks) {
      const n = Array.from(b).length + 1;
      if (fit > 0 && size + n > (maxChars ?? Infinity)) break;
      size += n;
      fit++;
    }
    let acked = false;
    if (ack && fit > 0) {
      const got = await this.tool("log_read", { ack: true, limit: fit });
      acked = Boolean(got.acked);
    }
    const more = (peek.remaining ?? 0) + (entries.length - fit);
    const total = fit + more;
    let text = `## Unread log entries (${total})\n`;
    if (fit === 0) text += "Nothing new in the live log.\n";
    if (more) text += `(${more} newer unread ${more === 1 ? "entry" : "entries"} not shown yet; they stay unread and come next time; log_read shows them now.)\n`;
    text += blocks.slice(0, fit).join("\n");
    return { text: text.trimEnd(), total, shown: fit, more, acked };
  }

  async append({ summary, body, channel, kind, key }) {
    const args = { summary, channel, kind };
    if (body) args.body = body;
    if (key && this.keyArg) {
      try {
        return await this.tool("log_append", { ...args, key });
      } catch (e) {
        if (!(e.refused && /key/iu.test(e.message))) throw e;
        this.keyArg = false; // a server that predates the key argument
      }
    }
    return this.tool("log_append", args);
  }

  async checkpoint({ task, state, next, notes }) {
    const args = { task };
    if (state) args.state = state;
    if (next) args.next = next;
    if (notes?.length) args.notes = notes.join("\n");
    return this.tool("checkpoint_save", args);
  }

  async search({ query, maxResults }) {
    const doc = await this.tool("memory_search", { query, limit: maxResults });
    return (doc.hits ?? doc.results ?? []).map((h) => ({
      path: h.path,
      title: h.title,
      kind: h.kind,
      score: h.score ?? 0,
      snippet: h.snippet ?? "",
      startLine: h.line,
      endLine: h.end_line,
      updatedAt: h.date,
    }));
  }

  async get({ relPath, fromLine, lineCount }) {
    const args = { path: relPath };
    if (fromLine) args.from = fromLine;
    if (lineCount) args.lines = lineCount;
    const doc = await this.tool("memory_get", args);
    if (typeof doc.content !== "string" && typeof doc.text !== "string") return null;
    return { content: doc.content ?? doc.text, fromLine: doc.from ?? fromLine ?? 1, lineCount: doc.lines ?? lineCount ?? 0 };
  }
}

// The hub: one 'nexus serve --http' per vault on this machine, started on
// demand by the first turn that finds none and shared by every adapter's
// turns after it, so a turn costs a few loopback HTTP calls instead of two
// process starts. It listens on 127.0.0.1 and exits by itself after
// HUB_IDLE without a request. Its address and the agent's token live in
// VAULT/.nexus/state/hub/ (machine-local, never synced; the folder 0700,
// the files 0600):
//
//   serve.json       {"url": "http://127.0.0.1:PORT/mcp", "pid": N}
//   AGENT.token      the agent's bearer token, issued by 'nexus agent token'
//   AGENT.no-token   why the agent cannot use the hub (it had a token
//                    already, which only its owner knows); delete it after
//                    putting that token in AGENT.token
//   serve.log        the server's log
//
// The turn that starts the hub runs over the CLI, as does any turn that
// finds the hub gone; none waits for it.
export const HUB_IDLE = "10m";
const HUB_STARTING_MS = 30000; // a start younger than this is not repeated

export class HubClient {
  constructor(cfg, { log = console } = {}) {
    this.cli = new CLIClient(cfg);
    this.cfg = cfg;
    this.log = log;
    this.vault = cfg.vault || process.env.NEXUS_VAULT || "";
    this.dir = this.vault ? path.join(this.vault, ".nexus", "state", "hub") : "";
    this.mcp = null;
  }

  describe() {
    return this.mcp ? `${this.mcp.describe()} (the hub of ${this.vault})` : this.cli.describe();
  }

  check() {
    return this.cli.check();
  }

  agentFile(ext) {
    return path.join(this.dir, `${this.cfg.agent.replace(/[^\w.-]/gu, "_")}.${ext}`);
  }

  // connect returns the MCP client of a running hub, or null.
  connect() {
    if (this.mcp) return this.mcp;
    if (!this.dir) return null;
    try {
      const { url } = JSON.parse(readFileSync(path.join(this.dir, "serve.json"), "utf8"));
      const token = readFileSync(this.agentFile("token"), "utf8").trim();
      if (!/^http:\/\/127\.0\.0\.1:\d+\/mcp$/u.test(url) || !token) return null;
      this.mcp = new MCPClient({ url, token, timeoutMs: this.cfg.timeoutMs });
      return this.mcp;
    } catch {
      return null;
    }
  }

  // via runs one call on the hub when it answers, else over the CLI (and
  // starts a hub in the background for the next turns).
  async via(method, args) {
    const mcp = this.connect();
    if (mcp) {
      try {
        return await mcp[method](args);
      } catch (e) {
        if (!e.unreachable && !e.unauthorized) throw e;
        this.mcp = null;
        if (e.unauthorized) rmSync(this.agentFile("token"), { force: true }); // rotated: issue a new one
        else if (!alive(readJSON(path.join(this.dir, "serve.json"))?.pid)) rmSync(path.join(this.dir, "serve.json"), { force: true });
      }
    }
    // Not awaited: this turn goes over the CLI. Kept for tests to await.
    this.starting = this.start().catch((e) => this.log.warn?.(`nexus: cannot start the hub: ${e?.message ?? e}`));
    return this.cli[method](args);
  }

  unread(args) {
    return this.via("unread", args);
  }
  append(args) {
    return this.via("append", args);
  }
  checkpoint(args) {
    return this.via("checkpoint", args);
  }
  search(args) {
    return this.via("search", args);
  }
  get(args) {
    return this.cli.get(args); // a file read, no server needed
  }

  // start issues the agent's token if it has none and starts the server
  // unless one is running or starting.
  async start() {
    if (!this.dir || this.cli.check()) return;
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    if (existsSync(this.agentFile("no-token"))) return;
    if (!existsSync(this.agentFile("token"))) {
      try {
        const doc = await this.cli.run(["agent", "token", this.cfg.agent], { agent: false });
        writePrivate(this.agentFile("token"), `${doc.token}\n`);
      } catch (e) {
        writePrivate(this.agentFile("no-token"), `${e.message}\n`);
        this.log.warn?.(`nexus: agent ${this.cfg.agent} cannot use the hub (${e.message}); turns go over the CLI. Put its token in ${this.agentFile("token")} and delete ${this.agentFile("no-token")} to use it.`);
        return;
      }
    }
    const state = readJSON(path.join(this.dir, "serve.json"));
    if (state && alive(state.pid)) return; // running (or still starting)
    const lock = path.join(this.dir, "serve.starting");
    try {
      if (Date.now() - statSync(lock).mtimeMs < HUB_STARTING_MS) return;
      rmSync(lock, { force: true });
    } catch {
      // no start under way
    }
    let fd;
    try {
      fd = openSync(lock, "wx", 0o600);
    } catch {
      return; // another process is starting it
    }
    closeSync(fd);
    const port = await freePort();
    const logFd = openSync(path.join(this.dir, "serve.log"), "a", 0o600);
    const child = spawn(fullBin(this.cli.bin), ["--vault", this.vault, "serve", "--http", `127.0.0.1:${port}`, "--idle", HUB_IDLE], {
      detached: true,
      stdio: ["ignore", "ignore", logFd],
      env: { ...process.env, NEXUS_SEARCH_HOLD: "0" },
      windowsHide: true,
    });
    closeSync(logFd);
    child.on("error", (e) => this.log.warn?.(`nexus: cannot start the hub: ${e.message}`));
    child.unref();
    if (child.pid) writePrivate(path.join(this.dir, "serve.json"), JSON.stringify({ url: `http://127.0.0.1:${port}/mcp`, pid: child.pid }));
    rmSync(lock, { force: true }); // serve.json and a live pid say "running" from here
  }
}

// fullBin is the nexus that serves: nexus-lite leaves the server out, so
// the full nexus beside it (or on PATH).
export function fullBin(bin) {
  if (path.basename(bin).replace(/\.exe$/u, "") !== LITE_BIN) return bin;
  const beside = path.join(path.dirname(bin), "nexus" + (process.platform === "win32" ? ".exe" : ""));
  return existsSync(beside) ? beside : "nexus";
}

function readJSON(file) {
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return null;
  }
}

function alive(pid) {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === "EPERM";
  }
}

function writePrivate(file, text) {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  renameSync(tmp, file);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}
