// Unit tests of the Nexus OpenClaw plugin's hooks, with a stand-in for
// OpenClaw's plugin API and the real nexus binary on a real vault.
// (examples/openclaw_test.go runs the plugin inside a real OpenClaw.)
//
//   NEXUS_BIN=/path/to/nexus node --test examples/openclaw/plugin/test/
//
// Without NEXUS_BIN the tests build nexus with 'go build'.

import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, watch, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import plugin, { createNexusPlugin, isTrivial, lastExchange, relevantText } from "../index.js";
import { HubClient, defaultBin, fullBin, resolveBin } from "../nexus.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../../../..");
const tmp = mkdtempSync(path.join(os.tmpdir(), "nexus-openclaw-"));
let NEXUS = process.env.NEXUS_BIN;
// Notices are kept on disk between runs; never in the user's ~/.openclaw.
process.env.OPENCLAW_STATE_DIR = path.join(tmp, "openclaw-state");

const nx = (vault, ...args) => {
  const out = execFileSync(NEXUS, ["--vault", vault, "--json", ...args], { env: { ...process.env, NEXUS_SEARCH_HOLD: "0" } });
  return JSON.parse(out.toString() || "{}");
};

let n = 0;
function makeVault() {
  const vault = path.join(tmp, `vault-${++n}`);
  execFileSync(NEXUS, ["init", vault]);
  nx(vault, "agent", "add", "lyra");
  nx(vault, "agent", "add", "ella");
  return vault;
}

const entriesBy = (vault, who) => nx(vault, "log", "read", "--last", "0", "--from", who).entries;

// fakeApi stands in for OpenClaw's plugin API: what register() uses. A
// config object gets a notices folder of its own (kept in the object, so
// plugins built from the same config, like the turns of one OpenClaw
// home, share it).
let states = 0;
function fakeApi(pluginConfig) {
  if (pluginConfig && !pluginConfig.stateDir) pluginConfig.stateDir = path.join(tmp, `state-${++states}`);
  const api = { pluginConfig, hooks: {}, supplements: [], warnings: [] };
  api.logger = { warn: (m) => api.warnings.push(m), info() {}, error() {} };
  api.on = (name, fn) => {
    api.hooks[name] = fn;
  };
  api.registerMemoryCorpusSupplement = (s) => api.supplements.push(s);
  return api;
}

// An exchange as OpenClaw hands it to agent_end.
const exchange = (user, reply, toolName) => {
  const msgs = [{ role: "user", content: [{ type: "text", text: user }] }];
  if (toolName) {
    msgs.push({ role: "assistant", content: [{ type: "toolCall", id: "t1", name: toolName, arguments: {} }] });
    msgs.push({ role: "toolResult", toolCallId: "t1", toolName, content: [{ type: "text", text: "{}" }] });
  }
  msgs.push({ role: "assistant", content: [{ type: "text", text: reply }] });
  return msgs;
};

before(() => {
  if (!NEXUS) {
    NEXUS = path.join(tmp, "nexus");
    execFileSync("go", ["build", "-o", NEXUS, "./cmd/nexus"], { cwd: root, stdio: "inherit" });
  }
});
after(() => rmSync(tmp, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }));

// An executable file NAME in folder, for PATH lookups.
function executable(folder, name) {
  mkdirSync(folder, { recursive: true });
  const p = path.join(folder, name + (process.platform === "win32" ? ".exe" : ""));
  writeFileSync(p, "#!/bin/sh\nexit 0\n");
  chmodSync(p, 0o755);
  return p;
}

describe("which nexus the plugin runs", () => {
  test("config.bin, then NEXUS_BIN, then nexus-lite on PATH, then nexus", () => {
    const withLite = path.join(tmp, "bin-with-lite");
    const without = path.join(tmp, "bin-without");
    const lite = executable(withLite, "nexus-lite");
    executable(without, "nexus");
    const both = [withLite, without].join(path.delimiter);
    assert.equal(resolveBin(undefined, { PATH: both }), lite);
    assert.equal(resolveBin(undefined, { PATH: without }), "nexus");
    assert.equal(resolveBin(undefined, { PATH: both, NEXUS_BIN: "/opt/nexus" }), "/opt/nexus");
    assert.equal(resolveBin("/srv/nexus", { PATH: both, NEXUS_BIN: "/opt/nexus" }), "/srv/nexus");
    assert.equal(resolveBin(undefined, { PATH: both, NEXUS_BIN: "" }), lite, "an empty NEXUS_BIN is unset");
    assert.equal(defaultBin({ PATH: ["relative/dir", without].join(path.delimiter) }), "nexus");
  });

  test("a nexus-lite that cannot be run is not chosen", { skip: process.platform === "win32" }, () => {
    const dir = path.join(tmp, "bin-noexec");
    const lite = executable(dir, "nexus-lite");
    chmodSync(lite, 0o644);
    assert.equal(defaultBin({ PATH: dir }), "nexus");
  });

  test("a turn through the real lean build found on PATH", async () => {
    const dir = path.join(tmp, "bin-real-lite");
    mkdirSync(dir, { recursive: true });
    const lite = path.join(dir, "nexus-lite");
    execFileSync("go", ["build", "-tags", "lite", "-o", lite, "./cmd/nexus"], { cwd: root, stdio: "inherit" });
    copyFileSync(NEXUS, path.join(dir, "nexus")); // what nexus-lite runs search with
    const vault = makeVault();
    nx(vault, "--agent", "lyra", "log", "append", "LYRA-L through the lean build");
    const saved = { PATH: process.env.PATH, NEXUS_BIN: process.env.NEXUS_BIN };
    process.env.PATH = [dir, saved.PATH].join(path.delimiter);
    delete process.env.NEXUS_BIN;
    try {
      const p = createNexusPlugin(fakeApi({ vault, agent: "ella", timeoutMs: 20000 }));
      const r = await p.beforePromptBuild({ prompt: "What changed?", messages: [] }, { runId: "r1" });
      assert.match(r.prependContext, /LYRA-L through the lean build/u);
      await p.agentEnd({ runId: "r1", success: true, messages: exchange("What changed overnight?", "Lyra used the lean build.") }, { sessionKey: "s" });
    } finally {
      process.env.PATH = saved.PATH;
      if (saved.NEXUS_BIN !== undefined) process.env.NEXUS_BIN = saved.NEXUS_BIN;
    }
    const mine = entriesBy(vault, "ella");
    assert.equal(mine.length, 1, JSON.stringify(mine));
    assert.match(execFileSync(lite, ["version"]).toString(), /lean build/u);
  });
});

describe("hooks over the nexus CLI", () => {
  test("register wires the hooks and the corpus supplement", () => {
    const api = fakeApi({ vault: "/nowhere", agent: "ella" });
    plugin.register(api);
    for (const h of ["before_prompt_build", "agent_end", "before_compaction", "before_reset"]) assert.equal(typeof api.hooks[h], "function", h);
    assert.equal(api.supplements.length, 1);
    assert.equal(plugin.id, "nexus");
    assert.equal(plugin.configSchema.safeParse({ vault: "v", agent: "a" }).success, true);
    assert.equal(plugin.configSchema.safeParse({ vualt: "v" }).success, false);
  });

  test("inject once, acknowledged exactly as shown; append one entry per meaningful turn", async () => {
    const vault = makeVault();
    nx(vault, "--agent", "lyra", "log", "append", "LYRA-1 fixed the login timeout");
    const api = fakeApi({ vault, agent: "ella", bin: NEXUS, timeoutMs: 20000 });
    plugin.register(api);
    const bpb = api.hooks.before_prompt_build;

    const r1 = await bpb({ prompt: "What changed?", currentUserMessageId: "m1", messages: [] }, { runId: "r1" });
    assert.match(r1.prependContext, /LYRA-1 fixed the login timeout/u);
    // A rebuild of the same request: same text, no second read.
    const again = await bpb({ prompt: "What changed?", currentUserMessageId: "m1", messages: [] }, { runId: "r1" });
    assert.equal(again.prependContext, r1.prependContext);
    // The next request: nothing new, nothing injected.
    assert.equal(await bpb({ prompt: "And now?", currentUserMessageId: "m2", messages: [] }, { runId: "r2" }), undefined);
    assert.equal(nx(vault, "--agent", "ella", "log", "read", "--unread").count, 0);

    await api.hooks.agent_end({ runId: "r1", success: true, messages: exchange("What changed overnight?", "Lyra fixed the login timeout.") }, { sessionKey: "s" });
    await api.hooks.agent_end({ runId: "r2", success: true, messages: exchange("ok", "👍") }, { sessionKey: "s" });
    await api.hooks.agent_end({ runId: "r3", success: true, messages: exchange("Record the deploy", "Recorded.", "nexus__log_append") }, { sessionKey: "s" });
    await api.hooks.agent_end({ runId: "r4", success: false, error: "model failed", messages: exchange("Deploy it now", "") }, { sessionKey: "s" });
    const mine = entriesBy(vault, "ella");
    assert.equal(mine.length, 1, JSON.stringify(mine));
    assert.equal(mine[0].kind, "turn");
    assert.equal(mine[0].signed, true);
    assert.match(mine[0].summary, /^What changed overnight\? → Lyra fixed/u);
    // lyra sees ella's turn the same way on her next reply.
    const lyra = createNexusPlugin(fakeApi({ vault, agent: "lyra", bin: NEXUS, timeoutMs: 20000 }));
    const seen = await lyra.beforePromptBuild({ prompt: "hi", messages: [] }, { runId: "x" });
    assert.match(seen.prependContext, /ella \[general\/turn\] What changed overnight/u);
  });

  test("heartbeat, cron and subagent runs read without writing", async () => {
    const vault = makeVault();
    nx(vault, "--agent", "lyra", "log", "append", "LYRA-S news for the main session");
    const p = createNexusPlugin(fakeApi({ vault, agent: "ella", bin: NEXUS, timeoutMs: 20000 }));
    for (const ctx of [{ trigger: "heartbeat" }, { trigger: "cron", jobId: "j1" }, { sessionKey: "agent:main:subagent:1234" }]) {
      const r = await p.beforePromptBuild({ prompt: "q", messages: [] }, ctx);
      assert.match(r.prependContext, /LYRA-S/u, JSON.stringify(ctx));
      await p.agentEnd({ runId: "r", success: true, messages: exchange("Summarise the incidents", "Two are open.") }, ctx);
    }
    assert.equal(entriesBy(vault, "ella").length, 0, "a read-only run appended");
    assert.equal(nx(vault, "--agent", "ella", "log", "read", "--unread").count, 1, "a read-only run acknowledged");
  });

  test("at most maxEntries, the rest said and kept for next time", async () => {
    const vault = makeVault();
    for (let i = 0; i < 7; i++) nx(vault, "--agent", "lyra", "log", "append", `LYRA-B${i}`);
    const p = createNexusPlugin(fakeApi({ vault, agent: "ella", bin: NEXUS, maxEntries: 3, timeoutMs: 20000 }));
    const r1 = await p.beforePromptBuild({ prompt: "q", currentUserMessageId: "a", messages: [] }, {});
    assert.match(r1.prependContext, /LYRA-B0/u);
    assert.doesNotMatch(r1.prependContext, /LYRA-B3/u);
    assert.match(r1.prependContext, /\(4 newer unread entries not shown yet/u);
    const r2 = await p.beforePromptBuild({ prompt: "q", currentUserMessageId: "b", messages: [] }, {});
    assert.match(r2.prependContext, /LYRA-B3/u);
    assert.doesNotMatch(r2.prependContext, /LYRA-B0/u);
  });

  test("memory_search and memory_get reach the vault, nowhere else", async () => {
    const vault = makeVault();
    nx(vault, "--agent", "lyra", "log", "append", "--body", "The gateway idle timeout was 30 s.", "Fixed the login timeout");
    const api = fakeApi({ vault, agent: "ella", bin: NEXUS, timeoutMs: 20000 });
    plugin.register(api);
    const s = api.supplements[0];
    const hits = await s.search({ query: "login timeout", maxResults: 5 });
    assert.ok(hits.length >= 1, "no hit");
    assert.ok(hits[0].path.startsWith("nexus/log/"), hits[0].path);
    assert.equal(hits[0].corpus, "nexus");
    const got = await s.get({ lookup: hits[0].path, fromLine: 1, lineCount: 50 });
    assert.match(got.content, /Fixed the login timeout/u);
    assert.equal(await s.get({ lookup: "MEMORY.md" }), null, "a lookup outside the nexus/ prefix is someone else's");
    await assert.rejects(s.get({ lookup: "nexus/../../etc/passwd.md" }), /not a markdown file of the vault/u);
    await assert.rejects(s.get({ lookup: "nexus/.nexus/config.yaml" }), /not a markdown file of the vault/u);
  });

  test("memory_get reads through Nexus: no symlink leads it into .nexus/ or out of the vault", async () => {
    const vault = makeVault();
    const outside = path.join(mkdtempSync(path.join(tmp, "outside-")), "secret.md");
    writeFileSync(outside, "OUTSIDE-SECRET\n");
    mkdirSync(path.join(vault, "notes"), { recursive: true });
    symlinkSync("../.nexus/keys/lyra.key", path.join(vault, "notes", "lyra-key.md")); // relative, into .nexus/
    symlinkSync(path.join(vault, ".nexus", "keys", "lyra.key"), path.join(vault, "notes", "abs-key.md"));
    symlinkSync(outside, path.join(vault, "notes", "outside.md"));
    symlinkSync("../.nexus", path.join(vault, "notes", "dot")); // a folder link into .nexus/
    writeFileSync(path.join(vault, "notes", "plain.md"), "a plain note\n");
    const api = fakeApi({ vault, agent: "ella", bin: NEXUS, timeoutMs: 20000 });
    plugin.register(api);
    const s = api.supplements[0];
    const got = await s.get({ lookup: "nexus/notes/plain.md" });
    assert.match(got.content, /a plain note/u);
    for (const lookup of ["nexus/notes/lyra-key.md", "nexus/notes/abs-key.md", "nexus/notes/outside.md", "nexus/notes/dot/keys/lyra.key.md"]) {
      let text = "";
      try {
        text = JSON.stringify(await s.get({ lookup }));
      } catch (e) {
        text = e.message;
      }
      assert.doesNotMatch(text, /PRIVATE|ed25519|OUTSIDE-SECRET/iu, `${lookup}: ${text}`);
    }
  });
});

describe("checkpoints and relevance", () => {
  test("before_compaction and before_reset save a checkpoint; read-only runs do not", async () => {
    const vault = makeVault();
    const api = fakeApi({ vault, agent: "ella", bin: NEXUS, timeoutMs: 20000 });
    plugin.register(api);
    await api.hooks.before_compaction({ messageCount: 42, tokenCount: 90000, messages: exchange("Migrate the billing tables", "Half of them are done.") }, { sessionKey: "s" });
    let cp = nx(vault, "--agent", "ella", "checkpoint", "show").current;
    assert.equal(cp.task, "Migrate the billing tables");
    assert.match(cp.state, /^context compacted by OpenClaw \(42 messages, 90000 tokens\); last reply: Half of them are done\./u);
    await api.hooks.before_reset({ reason: "new", messages: exchange("Write the release notes", "Drafted them.") }, { sessionKey: "s" });
    cp = nx(vault, "--agent", "ella", "checkpoint", "show").current;
    assert.equal(cp.task, "Write the release notes");
    assert.match(cp.state, /^session reset \(new\)/u);
    await api.hooks.before_compaction({ messageCount: 3, messages: exchange("Heartbeat check", "All quiet.") }, { trigger: "heartbeat" });
    assert.equal(nx(vault, "--agent", "ella", "checkpoint", "show").current.task, "Write the release notes", "a heartbeat run saved a checkpoint");
  });

  test("a checkpoint that cannot be saved is a notice", async () => {
    const vault = makeVault();
    const p = createNexusPlugin(fakeApi({ vault, agent: "ghost", bin: NEXUS, timeoutMs: 20000 }));
    await p.beforeCompaction({ messageCount: 9, messages: exchange("Migrate the billing tables", "Done.") }, {});
    const r = await p.beforePromptBuild({ prompt: "q", messages: [] }, {});
    assert.match(r.prependContext, /no checkpoint was saved before the compaction/u);
  });

  test("recall adds the few best facts and notes for the message, off by default", async () => {
    const vault = makeVault();
    nx(vault, "--agent", "lyra", "fact", "write", "--name", "Deploy window", "--type", "project", "--description", "when production deploys happen", "Deploys to production only on Tuesdays after 14:00 KST.");
    nx(vault, "--agent", "lyra", "log", "append", "Deploy window discussed in the log");
    const off = createNexusPlugin(fakeApi({ vault, agent: "ella", bin: NEXUS, timeoutMs: 20000 }));
    const r0 = await off.beforePromptBuild({ prompt: "When may we deploy to production?", currentUserMessageId: "a", messages: [] }, { trigger: "heartbeat" });
    assert.doesNotMatch(r0.prependContext ?? "", /Relevant in the shared vault/u);
    const on = createNexusPlugin(fakeApi({ vault, agent: "ella", bin: NEXUS, timeoutMs: 20000, recall: true, recallLimit: 2 }));
    const r1 = await on.beforePromptBuild({ prompt: "When may we deploy to production?", currentUserMessageId: "b", messages: [] }, {});
    assert.match(r1.prependContext, /Relevant in the shared vault[^\n]*\n- [^\n]*deploy-window\.md:\d+ deploy-window — [^\n]*Tuesdays/u);
    const relevant = r1.prependContext.slice(r1.prependContext.indexOf("Relevant in the shared vault"));
    assert.doesNotMatch(relevant, /log\/live\//u, "a log entry came as a relevant note");
    // A trivial message searches nothing.
    const r2 = await on.beforePromptBuild({ prompt: "ok", currentUserMessageId: "c", messages: [] }, {});
    assert.equal(r2, undefined);
  });

  test("relevantText is bounded and leaves out the log and indexes", () => {
    const hits = [
      { path: "log/live/2026-12/lyra@box.md", kind: "log", title: "x", snippet: "log" },
      { path: "agents/lyra/memory/INDEX.md", title: "index" },
      { path: "agents/lyra/memory/a.md", startLine: 3, title: "A", snippet: "alpha   beta" },
      { path: "wiki/b.md", title: "B", snippet: "b".repeat(500) },
      { path: "wiki/c.md", title: "C" },
    ];
    const t = relevantText(hits, { limit: 2, chars: 10000 });
    assert.match(t, /\n- agents\/lyra\/memory\/a\.md:3 A — alpha beta\n- wiki\/b\.md:1 B — b+…$/u);
    assert.doesNotMatch(t, /INDEX|log\/live|wiki\/c/u);
    assert.equal(relevantText(hits, { limit: 5, chars: 60 }).split("\n").length, 2, "the character bound");
    assert.equal(relevantText(hits.slice(0, 2), { limit: 3, chars: 1000 }), "");
  });
});

describe("failures are visible and bounded", () => {
  test("a missing binary is a notice in the context", async () => {
    const p = createNexusPlugin(fakeApi({ vault: "/nonexistent", agent: "ella", bin: "/nonexistent/nexus" }));
    const r = await p.beforePromptBuild({ prompt: "q", messages: [] }, {});
    assert.match(r.prependContext, /⚠ Nexus \(shared memory\): the shared log could not be used/u);
    assert.match(r.prependContext, /\/nonexistent\/nexus/u);
  });

  test("a refused append is said on the next two replies, across processes", async () => {
    const vault = makeVault();
    const cfg = { vault, agent: "ghost", bin: NEXUS, timeoutMs: 20000 };
    // 'openclaw agent --local' is one process per turn: a new plugin each time.
    await createNexusPlugin(fakeApi(cfg)).agentEnd({ runId: "r", success: true, messages: exchange("Summarise the incidents", "Two are open.") }, {});
    for (const turn of [1, 2]) {
      const r = await createNexusPlugin(fakeApi(cfg)).beforePromptBuild({ prompt: "q", messages: [] }, {});
      assert.match(r?.prependContext ?? "", /the last turn was not recorded in the shared log/u, `turn ${turn}`);
    }
    const r3 = await createNexusPlugin(fakeApi(cfg)).beforePromptBuild({ prompt: "q", messages: [] }, {});
    assert.doesNotMatch(r3?.prependContext ?? "", /the last turn was not recorded/u, "said a third time");
  });

  test("a failed read is said in its turn and again at the next, then the file is gone", async () => {
    const stateDir = path.join(tmp, "state-read");
    const cfg = { vault: "/nonexistent", agent: "ella", bin: "/nonexistent/nexus", stateDir };
    const r1 = await createNexusPlugin(fakeApi(cfg)).beforePromptBuild({ prompt: "q", messages: [] }, {});
    assert.match(r1.prependContext, /\/nonexistent/u);
    assert.equal(readdirSync(stateDir).length, 1, "the notice is not kept on disk");
    const file = path.join(stateDir, readdirSync(stateDir)[0]);
    assert.match(readFileSync(file, "utf8"), /nonexistent/u);
    // The next process: the notice again (and its own, the same, once).
    const r2 = await createNexusPlugin(fakeApi(cfg)).beforePromptBuild({ prompt: "q", messages: [] }, {});
    assert.equal(r2.prependContext.split("could not be used").length, 2, r2.prependContext);
  });

  test("a stalled nexus is killed after timeoutMs", async () => {
    const stall = path.join(tmp, "stalled-nexus");
    writeFileSync(stall, "#!/bin/sh\nexec sleep 60\n");
    chmodSync(stall, 0o755);
    const p = createNexusPlugin(fakeApi({ agent: "ella", bin: stall, timeoutMs: 500 }));
    const start = Date.now();
    const r = await p.beforePromptBuild({ prompt: "q", messages: [] }, {});
    await p.agentEnd({ runId: "r", success: true, messages: exchange("Summarise the incidents", "Two are open.") }, {});
    assert.ok(Date.now() - start < 10000, `took ${Date.now() - start} ms`);
    assert.match(r.prependContext, /timed out after 500 ms/u);
  });

  test("a stalled server is given up after timeoutMs", async () => {
    const held = [];
    const srv = net.createServer((c) => held.push(c));
    await new Promise((ok) => srv.listen(0, "127.0.0.1", ok));
    try {
      const url = `http://127.0.0.1:${srv.address().port}/mcp`;
      const p = createNexusPlugin(fakeApi({ url, token: "nxs_test", timeoutMs: 500 }));
      const start = Date.now();
      const r = await p.beforePromptBuild({ prompt: "q", messages: [] }, {});
      assert.ok(Date.now() - start < 5000, `took ${Date.now() - start} ms`);
      assert.match(r.prependContext, /did not answer within 500 ms/u);
    } finally {
      held.forEach((c) => c.destroy());
      srv.close();
    }
  });
});

// startServe starts 'nexus serve --http' on port and resolves once it says
// it listens (its log line on stderr), or rejects when it exits first.
function startServe(vault, port) {
  const srv = spawn(NEXUS, ["--vault", vault, "serve", "--http", `127.0.0.1:${port}`], { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, NEXUS_SEARCH_HOLD: "0" } });
  return new Promise((ok, fail) => {
    let err = "";
    srv.stderr.on("data", (d) => {
      err += d;
      if (err.includes("serving MCP over Streamable HTTP")) ok(srv);
    });
    srv.once("exit", (code) => fail(new Error(`nexus serve --http exited (${code}) before listening: ${err}`)));
  });
}

describe("over MCP with the agent's token", () => {
  test("inject and append through nexus serve --http", async () => {
    const vault = makeVault();
    nx(vault, "--agent", "lyra", "log", "append", "LYRA-H over http");
    const token = nx(vault, "agent", "token", "ella").token;
    const port = await new Promise((ok) => {
      const s = net.createServer();
      s.listen(0, "127.0.0.1", () => {
        const p = s.address().port;
        s.close(() => ok(p));
      });
    });
    let srv = await startServe(vault, port);
    try {
      const p = createNexusPlugin(fakeApi({ url: `http://127.0.0.1:${port}/mcp`, token, timeoutMs: 20000 }));
      const r = await p.beforePromptBuild({ prompt: "q", messages: [] }, {});
      assert.match(r.prependContext, /LYRA-H over http/u);
      await p.agentEnd({ runId: "r1", success: true, messages: exchange("What changed overnight?", "Lyra's note came over HTTP.") }, {});
      const mine = entriesBy(vault, "ella");
      assert.equal(mine.length, 1);
      assert.equal(mine[0].signed, true);
      assert.equal(mine[0].kind, "turn");
      const hits = await p.supplement.search({ query: "over http", maxResults: 3 });
      assert.ok(hits.some((h) => h.path.startsWith("nexus/log/")), JSON.stringify(hits));

      // maxChars holds over HTTP as over the CLI, and nothing is
      // acknowledged that was not shown.
      for (let i = 0; i < 6; i++) nx(vault, "--agent", "lyra", "log", "append", "--body", "x".repeat(250), `LYRA-C${i}`);
      const small = createNexusPlugin(fakeApi({ url: `http://127.0.0.1:${port}/mcp`, token, timeoutMs: 20000, maxChars: 700 }));
      const rc = await small.beforePromptBuild({ prompt: "q", currentUserMessageId: "c1", messages: [] }, {});
      const unread = rc.prependContext.slice(rc.prependContext.indexOf("## Unread"));
      assert.ok(Array.from(unread).length < 900, `${Array.from(unread).length} characters: ${unread}`);
      assert.match(unread, /LYRA-C0/u);
      assert.doesNotMatch(unread, /LYRA-C5/u);
      const shown = (unread.match(/LYRA-C\d/gu) ?? []).length;
      assert.match(unread, new RegExp(`\\(${6 - shown} newer unread entr`, "u"));
      assert.equal(nx(vault, "--agent", "ella", "log", "read", "--unread", "--ack=false").count, 6 - shown, "acknowledged more than shown");

      // A server restart: the old session is gone; the next call starts a
      // new one, without a notice.
      const exited = new Promise((ok) => srv.once("exit", ok));
      srv.kill("SIGINT");
      await exited;
      srv = await startServe(vault, port);
      nx(vault, "--agent", "lyra", "log", "append", "LYRA-R after the restart");
      const rr = await p.beforePromptBuild({ prompt: "q", currentUserMessageId: "after", messages: [] }, {});
      assert.match(rr.prependContext, /LYRA-R after the restart/u);
      assert.doesNotMatch(rr.prependContext, /could not be used|HTTP 404/u);
    } finally {
      // Wait for the server to exit: it may still be writing in the vault
      // (the index, its lock) while it shuts down, and the final cleanup
      // must not race it.
      if (srv.exitCode === null && srv.signalCode === null) {
        const exited = new Promise((ok) => srv.once("exit", ok));
        srv.kill("SIGINT");
        await exited;
      }
    }
  });
});

// waitForLog resolves once file holds text, watching it (no polling).
function waitForLog(file, text) {
  return new Promise((ok) => {
    const has = () => existsSync(file) && readFileSync(file, "utf8").includes(text);
    if (has()) return ok();
    const w = watch(path.dirname(file), () => {
      if (has()) {
        w.close();
        ok();
      }
    });
  });
}

// stopHub ends the hub a test started and waits until it says so.
async function stopHub(dir) {
  const state = JSON.parse(readFileSync(path.join(dir, "serve.json"), "utf8"));
  const done = waitForLog(path.join(dir, "serve.log"), "shutting down");
  process.kill(state.pid, "SIGTERM");
  await done;
}

describe("the hub: one nexus serve --http per vault, started on demand", { timeout: 120000 }, () => {
  test("the first turn starts it over the CLI, the next turns use it", async () => {
    const vault = makeVault();
    nx(vault, "--agent", "lyra", "log", "append", "LYRA-HUB1 before the hub");
    const cfg = { vault, agent: "ella", bin: NEXUS, timeoutMs: 20000, hub: true };
    const dir = path.join(vault, ".nexus", "state", "hub");
    const p1 = createNexusPlugin(fakeApi(cfg));
    assert.ok(p1.client instanceof HubClient);
    const r1 = await p1.beforePromptBuild({ prompt: "q", currentUserMessageId: "h1", messages: [] }, {});
    assert.match(r1.prependContext, /LYRA-HUB1/u);
    assert.equal(p1.client.mcp, null, "the first turn went to a hub that was not there");
    await p1.client.starting;
    try {
      assert.equal(statSync(dir).mode & 0o777, 0o700);
      assert.equal(statSync(path.join(dir, "ella.token")).mode & 0o777, 0o600);
      assert.equal(statSync(path.join(dir, "serve.json")).mode & 0o777, 0o600);
      await waitForLog(path.join(dir, "serve.log"), "serving MCP over Streamable HTTP");

      // The next turn (a new process in 'openclaw agent --local'): over MCP.
      nx(vault, "--agent", "lyra", "log", "append", "LYRA-HUB2 through the hub");
      const p2 = createNexusPlugin(fakeApi(cfg));
      const r2 = await p2.beforePromptBuild({ prompt: "q", currentUserMessageId: "h2", messages: [] }, {});
      assert.match(r2.prependContext, /LYRA-HUB2/u);
      assert.doesNotMatch(r2.prependContext, /LYRA-HUB1|could not be used/u);
      assert.ok(p2.client.mcp, "the second turn did not use the hub");
      await p2.agentEnd({ runId: "h2", success: true, messages: exchange("What came through the hub?", "Lyra's second note.") }, { sessionKey: "s" });
      const mine = entriesBy(vault, "ella");
      assert.equal(mine.length, 1);
      assert.equal(mine[0].signed, true);
      assert.equal(p2.client.starting, undefined, "a turn that used the hub started another");
    } finally {
      await stopHub(dir);
    }

    // The hub is gone (its process ended): the turn goes over the CLI
    // without a notice and starts a new hub.
    nx(vault, "--agent", "lyra", "log", "append", "LYRA-HUB3 after the hub");
    const p3 = createNexusPlugin(fakeApi(cfg));
    const r3 = await p3.beforePromptBuild({ prompt: "q", currentUserMessageId: "h3", messages: [] }, {});
    assert.match(r3.prependContext, /LYRA-HUB3/u);
    assert.doesNotMatch(r3.prependContext, /could not be used/u);
    await p3.client.starting;
    await waitForLog(path.join(dir, "serve.log"), "serving MCP over Streamable HTTP");
    await stopHub(dir);
  });

  test("an agent that has a token already stays on the CLI, and says why in the log", async () => {
    const vault = makeVault();
    nx(vault, "agent", "token", "ella");
    const api = fakeApi({ vault, agent: "ella", bin: NEXUS, timeoutMs: 20000, hub: true });
    const p = createNexusPlugin(api);
    await p.beforePromptBuild({ prompt: "q", messages: [] }, {});
    await p.client.starting;
    const dir = path.join(vault, ".nexus", "state", "hub");
    assert.match(readFileSync(path.join(dir, "ella.no-token"), "utf8"), /already has a token/u);
    assert.ok(!existsSync(path.join(dir, "serve.json")), "a hub was started for an agent that cannot use it");
    assert.ok(api.warnings.some((w) => /cannot use the hub/u.test(w)), api.warnings.join("\n"));
  });

  test("the server is the full nexus beside nexus-lite", () => {
    const dir = path.join(tmp, "bin-full");
    executable(dir, "nexus-lite");
    const full = executable(dir, "nexus");
    assert.equal(fullBin(path.join(dir, "nexus-lite")), full);
    assert.equal(fullBin("/opt/x/nexus-lite"), "nexus");
    assert.equal(fullBin("/opt/x/nexus"), "/opt/x/nexus");
  });
});

test("trivial prompts and the last exchange", () => {
  for (const s of ["ok", "OK!", "thanks :)", "/help", "", "네", "lgtm"]) assert.equal(isTrivial(s), true, s);
  for (const s of ["ok, deploy it", "k8s is down", "배포해줘"]) assert.equal(isTrivial(s), false, s);
  const ex = lastExchange([
    { role: "user", content: "first" },
    { role: "assistant", content: [{ type: "toolCall", name: "nexus__log_append" }] },
    { role: "user", content: [{ type: "text", text: "second" }] },
    { role: "assistant", content: [{ type: "text", text: "answer" }] },
  ]);
  assert.deepEqual(ex, { user: "second", reply: "answer", appended: false });
  assert.equal(lastExchange(exchange("a", "b", "mcp_nexus_log_append")).appended, true);
});
