#!/usr/bin/env bash
# Cold-process benchmarks of the live log on a 1,000,000-entry log in the
# feeds layout: 4 writers (lyra, ella, mallory, orion) x 250,000 entries,
# written by cmd/nexus-loggen as real appends write them
# (docs/benchmarks.md, "Live log"):
#   - 'nexus --agent ella log read --unread' with 10 new entries among the
#     1,000,000 (target: under 20 ms wall per process);
#   - the same for an agent with no cursor, that never acknowledged: all
#     1,000,000 entries unread (target: max RSS under 100 MB), and
#     'nexus --agent quinn prompt' for that agent;
#   - 'nexus log verify' over the whole log (target: 20,000 entries/s).
# Each line says the load average when it was taken (the machine may be
# shared). Usage, from the repo root:
#   bash livelog/bench_cold.sh [DIR] [ENTRIES]
# DIR is made a vault and filled if it has no log (default: a temp folder,
# removed after). The 10 new entries and the agent quinn are added on each
# run; run it on a fresh DIR to measure exactly 10.
set -euo pipefail
dir=${1:-}
n=${2:-1000000}
bin=$(mktemp -d)
cleanup() { rm -rf "$bin"; if [ -n "${tmpdir:-}" ]; then rm -rf "$tmpdir"; fi; }
if [ -z "$dir" ]; then tmpdir=$(mktemp -d); dir=$tmpdir/vault; fi
trap cleanup EXIT
go build -o "$bin/nexus" ./cmd/nexus
go build -o "$bin/nexus-loggen" ./cmd/nexus-loggen
go build -tags lite -o "$bin/nexus-lite" ./cmd/nexus # the lean build adapters run per turn
nexus() { "$bin/nexus" --vault "$dir" "$@"; }
load() { uptime | sed 's/.*load average: /load /'; }
echo "machine: $(nproc) cores, $(uname -sm), $(go version | cut -d' ' -f3), $(date -u +%Y-%m-%dT%H:%MZ)"
if [ ! -d "$dir/log/live" ] || [ -z "$(ls -A "$dir/log/live" 2>/dev/null)" ]; then
  echo "generating ($(load)):"
  "$bin/nexus-loggen" -vault "$dir" -n "$n" -feeds 4
fi
echo "log: $(ls "$dir"/log/live/*/ | tr '\n' ' ')$(du -sh "$dir/log/live" | cut -f1)"
# timed RUN...: wall ms, user+sys CPU ms and max RSS MB of one process.
timed() {
  /usr/bin/time -f '%e %U %S %M' -o "$bin/time.out" "$@" >/dev/null 2>&1 || true
  read -r e u s m <"$bin/time.out"
  awk -v e="$e" -v u="$u" -v s="$s" -v m="$m" 'BEGIN { printf "%.0f ms wall, %.0f ms CPU, %.1f MB max RSS", e*1000, (u+s)*1000, m/1024 }'
}
nexus agent add quinn --role "never acknowledges" >/dev/null 2>&1 || true
echo "no cursor: quinn log read --unread (all $n unread): $(timed "$bin/nexus" --vault "$dir" --agent quinn log read --unread) ($(load))"
echo "no cursor: quinn prompt: $(timed "$bin/nexus" --vault "$dir" --agent quinn prompt) ($(load))"
echo "no cursor: ella log read --unread --ack (her first ack): $(timed "$bin/nexus" --vault "$dir" --agent ella log read --unread --ack) ($(load))"
for i in $(seq 1 10); do nexus --agent lyra log append "new entry $i" >/dev/null; done
got=$(nexus --agent ella --json log read --unread | grep -c '"summary"')
echo "unread entries for ella: $got (want 10)"
ms() { local s e; s=$(date +%s%N); "$@" >/dev/null; e=$(date +%s%N); echo $(( (e - s) / 1000 )); }
stats() { sort -n | awk '{ a[NR] = $1 } END { printf "min %.1f median %.1f p90 %.1f max %.1f ms", a[1]/1000, a[int((NR+1)/2)]/1000, a[int(NR*0.9)]/1000, a[NR]/1000 }'; }
runs=()
for i in $(seq 1 30); do runs+=("$(ms nexus --agent ella log read --unread)"); done
echo "ella log read --unread, 10 new, 30 cold runs: $(printf '%s\n' "${runs[@]}" | stats) ($(load))"
runs=()
for i in $(seq 1 30); do runs+=("$(ms "$bin/nexus" --help)"); done
echo "nexus --help (process start only), 30 runs: $(printf '%s\n' "${runs[@]}" | stats) ($(load))"
runs=()
for i in $(seq 1 30); do runs+=("$(ms "$bin/nexus-lite" --vault "$dir" --agent ella log read --unread)"); done
echo "nexus-lite: ella log read --unread, 10 new, 30 cold runs: $(printf '%s\n' "${runs[@]}" | stats) ($(load))"
runs=()
for i in $(seq 1 30); do runs+=("$(ms "$bin/nexus-lite" --help)"); done
echo "nexus-lite --help (process start only), 30 runs: $(printf '%s\n' "${runs[@]}" | stats) ($(load))"
echo "ella log read --unread, 10 new: $(timed "$bin/nexus" --vault "$dir" --agent ella log read --unread)"
entries=$(nexus --json log verify | grep -m1 '"entries"' | tr -dc 0-9)
/usr/bin/time -f '%e %U %S %M' -o "$bin/time.out" "$bin/nexus" --vault "$dir" log verify >/dev/null 2>&1 || true
read -r e u s m <"$bin/time.out"
awk -v n="$entries" -v e="$e" -v u="$u" -v s="$s" -v m="$m" -v l="$(load)" 'BEGIN {
  printf "log verify: %d entries in %.1f s wall = %.0f entries/s; %.1f s CPU = %.0f entries per CPU-second; %.0f MB max RSS (%s)\n", n, e, n/e, u+s, n/(u+s), m/1024, l }'
