// Per-turn cost of the Nexus OpenClaw plugin: before_prompt_build (inject,
// acknowledged) plus agent_end (append), on a vault whose live log already
// holds N entries, against the floor of starting a process that does
// nothing (/bin/true).
//
//   go build -o /tmp/nexus ./cmd/nexus && go build -o /tmp/loggen ./cmd/nexus-loggen
//   NEXUS_BIN=/tmp/nexus LOGGEN=/tmp/loggen node examples/openclaw/plugin/bench.js [N] [TURNS] [cli|http|hub]
//
// Each turn: lyra appends 3 entries (not timed), then ella's two hooks run,
// timed together. Prints the median, p95 and p99 per turn. "hub" builds a
// new plugin for every turn, as 'openclaw agent --local' (a process per
// turn) does, with the hub started on demand by a first, untimed turn.

import { execFileSync, spawn } from "node:child_process";
import net from "node:net";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

import { createNexusPlugin } from "./index.js";

const n = Number(process.argv[2] ?? 10000);
const turns = Number(process.argv[3] ?? 40);
// "http": MCP over HTTP to a running nexus serve --http, instead of the CLI
const http = process.argv[4] === "http";
const hub = process.argv[4] === "hub";
const nexus = process.env.NEXUS_BIN;
const loggen = process.env.LOGGEN;
const env = { ...process.env, NEXUS_SEARCH_HOLD: "0" };
const tmp = mkdtempSync(path.join(os.tmpdir(), "nexus-openclaw-bench-"));
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.round((p / 100) * (s.length - 1)))];
};

try {
  const vault = path.join(tmp, "vault");
  execFileSync(loggen, ["-vault", vault, "-n", String(n)]);
  execFileSync(nexus, ["--vault", vault, "--agent", "ella", "log", "read", "--unread", "--ack"], { env, stdio: "ignore" });
  let srv = null;
  let pluginConfig = { vault, agent: "ella", bin: nexus, timeoutMs: 30000 };
  if (http) {
    const port = await new Promise((ok) => {
      const s = net.createServer();
      s.listen(0, "127.0.0.1", () => {
        const p = s.address().port;
        s.close(() => ok(p));
      });
    });
    const token = JSON.parse(execFileSync(nexus, ["--vault", vault, "--json", "agent", "token", "ella"], { env })).token;
    srv = spawn(nexus, ["--vault", vault, "serve", "--http", `127.0.0.1:${port}`], { stdio: "ignore", env });
    for (;;) {
      const up = await new Promise((ok) => {
        const c = net.connect(port, "127.0.0.1", () => (c.end(), ok(true)));
        c.on("error", () => ok(false));
      });
      if (up) break;
      await new Promise((ok) => setTimeout(ok, 50));
    }
    pluginConfig = { url: `http://127.0.0.1:${port}/mcp`, token, timeoutMs: 30000 };
  }
  if (hub) {
    pluginConfig = { ...pluginConfig, hub: true, stateDir: path.join(tmp, "state") };
    const first = createNexusPlugin({ pluginConfig, logger: { warn: (m) => console.error(m) } });
    await first.beforePromptBuild({ prompt: "q", messages: [] }, {});
    await first.client.starting;
    const state = JSON.parse(readFileSync(path.join(vault, ".nexus", "state", "hub", "serve.json"), "utf8"));
    const port = Number(new URL(state.url).port);
    for (;;) {
      const up = await new Promise((ok) => {
        const c = net.connect(port, "127.0.0.1", () => (c.end(), ok(true)));
        c.on("error", () => ok(false));
      });
      if (up) break;
      await new Promise((ok) => setTimeout(ok, 50));
    }
    srv = { kill: () => process.kill(state.pid, "SIGTERM") };
  }
  const api = { pluginConfig, logger: { warn: (m) => console.error(m) } };
  let p = createNexusPlugin(api);
  const per = [];
  const floor = [];
  for (let i = 0; i < turns; i++) {
    for (let k = 0; k < 3; k++) execFileSync(nexus, ["--vault", vault, "--agent", "lyra", "log", "append", `lyra turn ${i} note ${k}`], { env });
    const t0 = performance.now();
    if (hub) p = createNexusPlugin(api);
    const r = await p.beforePromptBuild({ prompt: "q", currentUserMessageId: `m${i}`, messages: [] }, { runId: `r${i}` });
    await p.agentEnd(
      {
        runId: `r${i}`,
        success: true,
        messages: [
          { role: "user", content: `What is new for turn ${i}?` },
          { role: "assistant", content: [{ type: "text", text: "Lyra's notes are in; nothing else changed." }] },
        ],
      },
      { sessionKey: "bench" },
    );
    per.push(performance.now() - t0);
    if (hub && !p.client.mcp) throw new Error(`turn ${i}: not through the hub`);
    if (!r?.prependContext?.includes(`lyra turn ${i} note 2`)) throw new Error(`turn ${i}: not injected: ${r?.prependContext}`);
    const f0 = performance.now();
    execFileSync("/bin/true");
    execFileSync("/bin/true");
    floor.push(performance.now() - f0);
  }
  srv?.kill("SIGINT");
  const med = (xs) => pct(xs, 50).toFixed(1);
  console.log(`log entries before the first turn: ${n}; turns: ${turns}; transport: ${hub ? "the hub (a new plugin per turn)" : http ? "MCP over HTTP" : "nexus CLI"}`);
  console.log(`openclaw plugin, inject + append per turn: median ${med(per)} ms, p95 ${pct(per, 95).toFixed(1)} ms, p99 ${pct(per, 99).toFixed(1)} ms`);
  console.log(`floor, two /bin/true process starts:       median ${med(floor)} ms, p95 ${pct(floor, 95).toFixed(1)} ms, p99 ${pct(floor, 99).toFixed(1)} ms`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
