#!/usr/bin/env bash
# A hub started on a big log without a search index (issue 33): a
# 200,000-entry log (4 feeds, written by cmd/nexus-loggen), .nexus/index
# removed, 'nexus serve --http' started, then a new agent (no cursor):
#   - its first log_append (initialize, initialized, tools/call), target:
#     answered within 1 s of the process's start;
#   - a log_read (limit 5) while the first index build runs;
#   - SIGTERM, target: exit 0 within 10 s.
# Each request's own time is curl's time_total; the wall times from the
# start include starting curl (tens of ms on a quiet machine, far more on
# a loaded one). Usage, from the repo root:
#   bash mcpserver/bench_hubstart.sh [DIR] [ENTRIES]
# DIR is made a vault and filled if it has no log (default: a temp
# folder, removed after); each run adds one new agent. NEXUS=path runs
# that binary instead of building ./cmd/nexus (to compare two builds).
# Also printed: the server's CPU time (user+sys, from /proc) up to the
# SIGTERM, and an anchor run just before the read: sha256sum of the log's
# files (its wall time shows how loaded the machine is).
set -euo pipefail
dir=${1:-}
n=${2:-200000}
bin=$(mktemp -d)
trap 'rm -rf "$bin"; [ -z "${1:-}" ] && rm -rf "$dir"' EXIT
if [ -n "${NEXUS:-}" ]; then cp "$NEXUS" "$bin/nexus"; else go build -o "$bin/nexus" ./cmd/nexus; fi
go build -o "$bin/loggen" ./cmd/nexus-loggen
if [ -z "$dir" ]; then dir=$(mktemp -d); fi
if [ ! -d "$dir/log/live" ]; then
  "$bin/loggen" -vault "$dir" -n "$n" -feeds 4 >/dev/null
fi
agent=fresh$RANDOM
"$bin/nexus" --vault "$dir" agent add "$agent" >/dev/null
tok=$("$bin/nexus" --vault "$dir" agent token "$agent" | grep -o 'nxs_[A-Za-z0-9_-]*' | head -1)
port=$((20000 + RANDOM % 10000))
url=http://127.0.0.1:$port/mcp
rm -rf "$dir/.nexus/index"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg); log: $(du -sh "$dir/log" | cut -f1)"
t0=$(date +%s.%N)
"$bin/nexus" --vault "$dir" serve --http 127.0.0.1:$port 2>"$bin/serve.err" &
pid=$!
until curl -s -o /dev/null "$url"; do sleep 0.01; done
t1=$(date +%s.%N)
call() { # TOOL ARGS-JSON: initialize, initialized, tools/call; prints each request's time
  local h sid
  h=$(mktemp)
  curl -s -w "initialize %{time_total}s, " -D "$h" -o /dev/null -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}' "$url"
  sid=$(grep -i '^mcp-session-id' "$h" | cut -d' ' -f2 | tr -d '\r'); rm -f "$h"
  curl -s -w "initialized %{time_total}s, " -o /dev/null -H "Authorization: Bearer $tok" -H "Mcp-Session-Id: $sid" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$url"
  curl -s -w "$1 %{time_total}s" -o /dev/null -H "Authorization: Bearer $tok" -H "Mcp-Session-Id: $sid" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -d "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"$1\",\"arguments\":$2}}" "$url"
  echo
}
call log_append '{"summary":"first append after start","key":"k'$RANDOM'"}'
t2=$(date +%s.%N)
a0=$(date +%s.%N)
find "$dir/log" -name '*.md' -exec cat {} + | sha256sum >/dev/null
a1=$(date +%s.%N)
call log_read '{"limit":5}'
t3=$(date +%s.%N)
cpu=$(awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14+$15)/hz}' /proc/$pid/stat)
kill -TERM $pid
rc=0; wait $pid || rc=$?
t4=$(date +%s.%N)
echo "listening $(echo "$t1-$t0" | bc) s after start; first log_append answered $(echo "$t2-$t0" | bc) s after start; log_read $(echo "$t3-$t2" | bc) s; SIGTERM: exit $rc after $(echo "$t4-$t3" | bc) s; server CPU $cpu s; anchor (sha256sum of the log) $(echo "$a1-$a0" | bc) s"
