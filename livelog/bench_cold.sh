#!/usr/bin/env bash
# Cold-process benchmarks of the live log on a 1,000,000-entry log
# (docs/benchmarks.md, "Live log"):
#   - 'nexus --agent ella log read --unread' with 10 new entries at the end
#     (target: under 20 ms wall per process);
#   - 'nexus log verify' over the whole log (target: 20,000 entries/s).
# Usage: bash livelog/bench_cold.sh [DIR] [ENTRIES]   (from the repo root)
# DIR is made a vault if needed (default: a temp folder, removed after).
set -euo pipefail
dir=${1:-}
n=${2:-1000000}
bin=$(mktemp -d)
cleanup() { rm -rf "$bin"; if [ -z "${1:-}" ] && [ -n "${tmpdir:-}" ]; then rm -rf "$tmpdir"; fi; }
if [ -z "$dir" ]; then tmpdir=$(mktemp -d); dir=$tmpdir/vault; fi
trap cleanup EXIT
go build -o "$bin/nexus" ./cmd/nexus
go build -o "$bin/nexus-loggen" ./cmd/nexus-loggen
nexus() { "$bin/nexus" --vault "$dir" "$@"; }
if [ ! -d "$dir/log/live" ] || [ -z "$(ls -A "$dir/log/live" 2>/dev/null)" ]; then
  "$bin/nexus-loggen" -vault "$dir" -n "$n"
fi
nexus --agent ella log read --unread --ack >/dev/null   # ella has read everything
for i in $(seq 1 10); do nexus --agent lyra log append "new entry $i" >/dev/null; done
got=$(nexus --agent ella --json log read --unread | grep -c '"summary"')
echo "unread entries: $got (want 10)"
ms() { local s e; s=$(date +%s%N); "$@" >/dev/null; e=$(date +%s%N); echo $(( (e - s) / 1000 )); }
runs=()
for i in $(seq 1 30); do runs+=("$(ms nexus --agent ella log read --unread)"); done
sorted=$(printf '%s\n' "${runs[@]}" | sort -n)
echo "log read --unread, 30 cold runs (µs): min $(echo "$sorted" | head -1) median $(echo "$sorted" | sed -n 15p) p90 $(echo "$sorted" | sed -n 27p) max $(echo "$sorted" | tail -1)"
runs=()
for i in $(seq 1 30); do runs+=("$(ms "$bin/nexus" --help)"); done
sorted=$(printf '%s\n' "${runs[@]}" | sort -n)
echo "nexus --help (process start only), 30 runs (µs): min $(echo "$sorted" | head -1) median $(echo "$sorted" | sed -n 15p) max $(echo "$sorted" | tail -1)"
entries=$(nexus --json log verify | grep -m1 '"entries"' | tr -dc 0-9)
us=$(ms nexus log verify)
echo "log verify: $entries entries in $((us / 1000)) ms = $(( entries * 1000000 / us )) entries/s"
