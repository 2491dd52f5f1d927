#!/usr/bin/env node
// Install the Nexus hooks and MCP server into a Claude Code project:
//
//   node examples/claude-code/install.mjs --agent NAME [--project DIR] [--vault DIR] [--bin PATH]
//
// It copies plugin/nexus-hook.mjs to PROJECT/.claude/hooks/, merges the four
// hooks (SessionStart, UserPromptSubmit, PreCompact, Stop) and
// "enabledMcpjsonServers": ["nexus"] into PROJECT/.claude/settings.json, and
// the "nexus" server (nexus serve --stdio --agent NAME) into PROJECT/.mcp.json.
// Everything else in those files is kept; running it again replaces only
// what it wrote before (the hooks whose command runs nexus-hook.mjs, the
// "nexus" server). A file that is not valid JSON is left alone and the
// install stops. Node's standard library only.

import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const EVENTS = ["SessionStart", "UserPromptSubmit", "PreCompact", "Stop"];
const HOOK_FILE = "nexus-hook.mjs";
const HOOK_TIMEOUT_S = 30; // Claude Code's bound; the hook bounds each Nexus call at 5 s itself

const USAGE = `usage: node install.mjs --agent NAME [--project DIR] [--vault DIR] [--bin PATH]

  --agent NAME    the Nexus agent this Claude Code project is (required; 'nexus agent add NAME' first)
  --project DIR   the project folder Claude Code opens (default: the current folder)
  --vault DIR     the vault (default: $NEXUS_VAULT when set, else the vault above the project)
  --bin PATH      the nexus binary (default: $NEXUS_BIN at run time, else nexus-lite or nexus on PATH)`;

function parseArgs(argv) {
  const opts = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "-h" || a === "--help") return { help: true };
    const m = /^--(agent|project|vault|bin)(?:=(.*))?$/u.exec(a);
    if (!m) throw new Error(`unknown argument ${a}`);
    const v = m[2] ?? argv[++i];
    if (v === undefined || v === "") throw new Error(`--${m[1]} needs a value`);
    opts[m[1]] = v;
  }
  return opts;
}

// shellQuote quotes s for the POSIX shell Claude Code runs hook commands in.
const shellQuote = (s) => (/^[\w@%+=:,./-]+$/u.test(s) ? s : `'${s.replace(/'/gu, `'\\''`)}'`);

function readJSON(file) {
  if (!existsSync(file)) return {};
  const text = readFileSync(file, "utf8");
  if (!text.trim()) return {};
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new Error(`${file} is not valid JSON (${e.message}); fix it first, nothing was changed`);
  }
  if (!doc || typeof doc !== "object" || Array.isArray(doc)) throw new Error(`${file} does not hold a JSON object; nothing was changed`);
  return doc;
}

// writeAtomic replaces file with data through a temporary file beside it.
function writeAtomic(file, data) {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, file);
}

const isOurs = (h) => typeof h?.command === "string" && h.command.includes(HOOK_FILE);

// mergeHooks returns settings with the Nexus hook on each event: earlier
// Nexus hooks are taken out, every other hook stays where it was.
export function mergeHooks(settings, command) {
  const out = { ...settings, hooks: { ...(settings.hooks ?? {}) } };
  for (const event of EVENTS) {
    const groups = Array.isArray(out.hooks[event]) ? out.hooks[event] : [];
    const kept = [];
    for (const g of groups) {
      if (!g || !Array.isArray(g.hooks)) {
        kept.push(g);
        continue;
      }
      const hooks = g.hooks.filter((h) => !isOurs(h));
      if (hooks.length) kept.push({ ...g, hooks });
    }
    kept.push({ hooks: [{ type: "command", command, timeout: HOOK_TIMEOUT_S }] });
    out.hooks[event] = kept;
  }
  const enabled = Array.isArray(out.enabledMcpjsonServers) ? out.enabledMcpjsonServers : [];
  out.enabledMcpjsonServers = enabled.includes("nexus") ? enabled : [...enabled, "nexus"];
  return out;
}

export function mergeMCP(doc, server) {
  return { ...doc, mcpServers: { ...(doc.mcpServers ?? {}), nexus: server } };
}

export function install({ agent, project = process.cwd(), vault = process.env.NEXUS_VAULT || "", bin = "" }) {
  if (!agent) throw new Error("--agent is required");
  if (!/^[\w.-]+$/u.test(agent)) throw new Error(`--agent ${JSON.stringify(agent)}: letters, digits, '-', '_' and '.' only`);
  const root = path.resolve(project);
  if (!existsSync(root)) throw new Error(`project folder ${root} does not exist`);
  if (vault) vault = path.resolve(vault);
  if (bin && bin.includes(path.sep)) bin = path.resolve(bin);

  const settingsFile = path.join(root, ".claude", "settings.json");
  const mcpFile = path.join(root, ".mcp.json");
  const settings = readJSON(settingsFile); // both read before anything is written
  const mcp = readJSON(mcpFile);

  const hookSrc = path.join(path.dirname(fileURLToPath(import.meta.url)), "plugin", HOOK_FILE);
  writeAtomic(path.join(root, ".claude", "hooks", HOOK_FILE), readFileSync(hookSrc));

  let command = `node "$CLAUDE_PROJECT_DIR/.claude/hooks/${HOOK_FILE}" --agent ${shellQuote(agent)}`;
  if (vault) command += ` --vault ${shellQuote(vault)}`;
  if (bin) command += ` --bin ${shellQuote(bin)}`;
  writeAtomic(settingsFile, JSON.stringify(mergeHooks(settings, command), null, 2) + "\n");

  const server = { type: "stdio", command: bin || "nexus", args: ["serve", "--stdio", "--agent", agent], env: {} };
  if (vault) server.env.NEXUS_VAULT = vault;
  writeAtomic(mcpFile, JSON.stringify(mergeMCP(mcp, server), null, 2) + "\n");
  return { settingsFile, mcpFile, command, vault };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const opts = parseArgs(process.argv.slice(2));
    if (opts.help) {
      console.log(USAGE);
    } else {
      const r = install(opts);
      console.log(`nexus: hooks for agent ${opts.agent} in ${r.settingsFile}`);
      console.log(`nexus: MCP server "nexus" in ${r.mcpFile}`);
      console.log(r.vault ? `nexus: vault ${r.vault}` : "nexus: no vault given: the hooks use $NEXUS_VAULT at run time, else the vault above the project");
    }
  } catch (e) {
    console.error(`install: ${e.message}\n\n${USAGE}`);
    process.exit(2);
  }
}
