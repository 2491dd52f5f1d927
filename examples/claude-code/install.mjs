#!/usr/bin/env node
// Install the Nexus hooks and MCP server into a Claude Code project:
//
//   node examples/claude-code/install.mjs --agent NAME [--project DIR] [--vault DIR] [--bin PATH] [--command-hooks]
//
// It copies plugin/nexus-hook.mjs to PROJECT/.claude/hooks/, merges the four
// hooks (SessionStart, UserPromptSubmit, PreCompact, Stop) and
// "enabledMcpjsonServers": ["nexus"] into PROJECT/.claude/settings.json, and
// the "nexus" server (node nexus-hook.mjs --mcp, which runs nexus serve
// --stdio --agent NAME) into PROJECT/.mcp.json. UserPromptSubmit and Stop
// are hooks of type mcp_tool on that server, so a turn starts no process;
// --command-hooks makes all four command hooks (one process per hook), for
// a Claude Code without mcp_tool hooks. Everything else in those files is
// kept; running it again replaces only what it wrote before (the hooks that
// run nexus-hook.mjs or call its tool, the "nexus" server). A file that is not valid JSON is left alone and the
// install stops. Node's standard library only.

import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const EVENTS = ["SessionStart", "UserPromptSubmit", "PreCompact", "Stop"];
const HOOK_FILE = "nexus-hook.mjs";
const HOOK_TIMEOUT_S = 30; // Claude Code's bound; the hook bounds each Nexus call at 5 s itself
const HOOK_TOOL = "claude_code_hook"; // nexus-hook.mjs --mcp answers it; not offered to the model

// What each mcp_tool hook passes (Claude Code fills ${field} from the
// hook's input).
const FIELDS = {
  UserPromptSubmit: ["hook_event_name", "session_id", "prompt_id", "transcript_path", "cwd", "prompt"],
  Stop: ["hook_event_name", "session_id", "prompt_id", "transcript_path", "cwd", "last_assistant_message"],
};

// mcpToolHook is the hook of type mcp_tool for event on server.
export function mcpToolHook(event, server) {
  const input = Object.fromEntries(FIELDS[event].map((f) => [f, `\${${f}}`]));
  return { type: "mcp_tool", server, tool: HOOK_TOOL, input, timeout: HOOK_TIMEOUT_S };
}

const USAGE = `usage: node install.mjs --agent NAME [--project DIR] [--vault DIR] [--bin PATH]

  --agent NAME    the Nexus agent this Claude Code project is (required; 'nexus agent add NAME' first)
  --project DIR   the project folder Claude Code opens (default: the current folder)
  --vault DIR     the vault (default: $NEXUS_VAULT when set, else the vault above the project)
  --bin PATH      the nexus binary (default: $NEXUS_BIN at run time, else nexus-lite or nexus on PATH)
  --command-hooks every hook a command (a Node process each), for a Claude Code without mcp_tool hooks`;

function parseArgs(argv) {
  const opts = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "-h" || a === "--help") return { help: true };
    if (a === "--command-hooks") {
      opts.commandHooks = true;
      continue;
    }
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

const isOurs = (h) => (typeof h?.command === "string" && h.command.includes(HOOK_FILE)) || (h?.type === "mcp_tool" && h.tool === HOOK_TOOL);

// mergeHooks returns settings with the Nexus hook on each event: earlier
// Nexus hooks are taken out, every other hook stays where it was. With
// server, UserPromptSubmit and Stop call its HOOK_TOOL instead of running
// command.
export function mergeHooks(settings, command, server = "") {
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
    kept.push({ hooks: [server && FIELDS[event] ? mcpToolHook(event, server) : { type: "command", command, timeout: HOOK_TIMEOUT_S }] });
    out.hooks[event] = kept;
  }
  const enabled = Array.isArray(out.enabledMcpjsonServers) ? out.enabledMcpjsonServers : [];
  out.enabledMcpjsonServers = enabled.includes("nexus") ? enabled : [...enabled, "nexus"];
  return out;
}

export function mergeMCP(doc, server) {
  return { ...doc, mcpServers: { ...(doc.mcpServers ?? {}), nexus: server } };
}

export function install({ agent, project = process.cwd(), vault = process.env.NEXUS_VAULT || "", bin = "", commandHooks = false }) {
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
  writeAtomic(settingsFile, JSON.stringify(mergeHooks(settings, command, commandHooks ? "" : "nexus"), null, 2) + "\n");

  // The server: nexus-hook.mjs --mcp passes nexus serve --stdio through
  // and answers the mcp_tool hooks. Its path is absolute: Claude Code
  // does not give MCP servers $CLAUDE_PROJECT_DIR.
  const args = [path.join(root, ".claude", "hooks", HOOK_FILE), "--mcp", "--agent", agent];
  if (vault) args.push("--vault", vault);
  if (bin) args.push("--bin", bin);
  const server = { type: "stdio", command: "node", args, env: {} };
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
