// Unit tests of the Nexus OpenClaw plugin's hooks, with a stand-in for
// OpenClaw's plugin API and the real nexus binary on a real vault.
// (examples/openclaw_test.go runs the plugin inside a real OpenClaw.)
//
//   NEXUS_BIN=/path/to/nexus node --test examples/openclaw/plugin/test/
//
// Without NEXUS_BIN the tests build nexus with 'go build'.

import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import plugin, { createNexusPlugin, isTrivial, lastExchange } from "../index.js";
import { defaultBin, resolveBin } from "../nexus.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../../../..");
const tmp = mkdtempSync(path.join(os.tmpdir(), "nexus-openclaw-"));
let NEXUS = process.env.NEXUS_BIN;

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

// fakeApi stands in for OpenClaw's plugin API: what register() uses.
function fakeApi(pluginConfig) {
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
  test("register wires the two hooks and the corpus supplement", () => {
    const api = fakeApi({ vault: "/nowhere", agent: "ella" });
    plugin.register(api);
    assert.equal(typeof api.hooks.before_prompt_build, "function");
    assert.equal(typeof api.hooks.agent_end, "function");
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

describe("failures are visible and bounded", () => {
  test("a missing binary is a notice in the context", async () => {
    const p = createNexusPlugin(fakeApi({ vault: "/nonexistent", agent: "ella", bin: "/nonexistent/nexus" }));
    const r = await p.beforePromptBuild({ prompt: "q", messages: [] }, {});
    assert.match(r.prependContext, /⚠ Nexus \(shared memory\): the shared log could not be used/u);
    assert.match(r.prependContext, /\/nonexistent\/nexus/u);
  });

  test("a refused append is said on the next reply", async () => {
    const vault = makeVault();
    const p = createNexusPlugin(fakeApi({ vault, agent: "ghost", bin: NEXUS, timeoutMs: 20000 }));
    await p.agentEnd({ runId: "r", success: true, messages: exchange("Summarise the incidents", "Two are open.") }, {});
    const r = await p.beforePromptBuild({ prompt: "q", messages: [] }, {});
    assert.match(r.prependContext, /the last turn was not recorded in the shared log/u);
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
    const srv = spawn(NEXUS, ["--vault", vault, "serve", "--http", `127.0.0.1:${port}`], { stdio: "ignore", env: { ...process.env, NEXUS_SEARCH_HOLD: "0" } });
    try {
      for (let i = 0; ; i++) {
        const up = await new Promise((ok) => {
          const c = net.connect(port, "127.0.0.1", () => (c.end(), ok(true)));
          c.on("error", () => ok(false));
        });
        if (up) break;
        if (i > 200) throw new Error("nexus serve --http did not start");
        await new Promise((ok) => setTimeout(ok, 50));
      }
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
