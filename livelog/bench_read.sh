#!/usr/bin/env bash
# No-cursor read against rg (issue 33: 'log read --unread' for an agent
# that never acknowledged, on a 1,000,000-entry log, at most 2x
# 'rg -c "" log/live' over the same files). Each round runs the read and
# rg one after the other and prints wall and CPU (user + system) time of
# each, and the load average; CPU moves far less with the load.
# Usage, from the repo root:
#   bash livelog/bench_read.sh [DIR] [ROUNDS] [ENTRIES]
# DIR is made a vault and filled (4 feeds, by cmd/nexus-loggen) if it has
# no log; default: a temp folder, removed after.
set -euo pipefail
dir=${1:-}
rounds=${2:-3}
n=${3:-1000000}
bin=$(mktemp -d)
cleanup() { rm -rf "$bin"; if [ -n "${tmpdir:-}" ]; then rm -rf "$tmpdir"; fi; }
if [ -z "$dir" ]; then tmpdir=$(mktemp -d); dir=$tmpdir/vault; fi
trap cleanup EXIT
go build -o "$bin/nexus" ./cmd/nexus
go build -o "$bin/nexus-loggen" ./cmd/nexus-loggen
if [ ! -d "$dir/log/live" ] || [ -z "$(ls -A "$dir/log/live" 2>/dev/null)" ]; then
  "$bin/nexus-loggen" -vault "$dir" -n "$n" -feeds 4
fi
"$bin/nexus" --vault "$dir" agent add quinn --role "never acknowledges" >/dev/null 2>&1 || true
echo "machine: $(nproc) cores, $(uname -sm), $(go version | cut -d' ' -f3), $(date -u +%Y-%m-%dT%H:%MZ); log: $(du -sh "$dir/log/live" | cut -f1)"
timed() {
  local label=$1
  shift
  /usr/bin/time -f '%e %U %S' -o "$bin/time.out" "$@" >/dev/null
  read -r e u s <"$bin/time.out"
  awk -v l="$label" -v e="$e" -v u="$u" -v s="$s" -v load="$(uptime | sed 's/.*load average: //')" \
    'BEGIN { printf "%-28s %7.0f ms wall %7.0f ms CPU (load %s)\n", l, e*1000, (u+s)*1000, load }'
}
for i in $(seq 1 "$rounds"); do
  timed "log read --unread" "$bin/nexus" --vault "$dir" --agent quinn log read --unread
  timed "log read --unread --json" "$bin/nexus" --vault "$dir" --agent quinn --json log read --unread
  (cd "$dir" && timed "rg -c '' log/live" rg -c '' log/live)
done
