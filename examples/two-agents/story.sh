#!/bin/sh
# The 'nexus demo' story, step by step with the CLI: two agents, lyra
# (operations, Hermes-style) and ella (research and planning,
# OpenClaw-style), that never talk to each other and stay in step through
# one vault. Each command is what an agent's MCP tool call does; run them
# yourself, or run this script and press Enter between scenes.
#
#   sh examples/two-agents/story.sh [VAULT]      (default: a new temp folder)
#
# The CLI stamps entries with the real time, so "02:00" and "July" are the
# story's words only ('nexus demo' runs its server on a story clock).
#
# Environment: NEXUS (the nexus command, default "nexus"), STEP=0 to run
# without pausing, APPENDS (entries each agent appends in scene 5, default
# 100; 'nexus demo' does 500 through the MCP server).
set -eu

NEXUS=${NEXUS:-nexus}
APPENDS=${APPENDS:-100}
STEP=${STEP:-1}
VAULT=${1:-$(mktemp -d "${TMPDIR:-/tmp}/nexus-story-XXXXXX")}
export NEXUS_VAULT="$VAULT"
unset NEXUS_AGENT || true

lyra() { "$NEXUS" --agent lyra "$@"; }
ella() { "$NEXUS" --agent ella "$@"; }
say() { printf '\n%s\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }
scene() {
	if [ "$STEP" = 1 ] && [ -t 0 ]; then
		printf '\n[Enter for the next scene] '
		read -r _
	fi
	printf '\n=== %s ===\n' "$*"
}
# json_field NAME: the first "NAME": "value" in a JSON document on stdin.
json_field() { sed -n "s/^ *\"$1\": \"\\([^\"]*\\)\".*/\\1/p" | head -n 1; }

scene "Setup: a vault and two agents"
run "$NEXUS" init "$VAULT"
run "$NEXUS" agent add lyra --role "operations: deploys, on-call, migrations (runs on Hermes)"
run "$NEXUS" agent add ella --role "research and planning (runs on OpenClaw)"

scene "1. 02:00 — lyra ships a fix and hands off"
say "lyra appends a signed entry to the live log (MCP: log_append):"
run lyra log append --channel deploy --kind handoff \
	--body "Ella: please re-run the signup funnel analysis this morning.
로그인 시간 초과 문제를 수정했습니다 — 아침에 가입 퍼널 분석을 다시 실행해 주세요." \
	"Fixed the login timeout on the API gateway; PR #123 merged and deployed"
say "In the morning ella's session starts (MCP: session_start) and shows what is new:"
run ella prompt
say "She reads it and acknowledges it (MCP: log_read with ack):"
run ella log read --unread --ack
run ella log read --unread

scene "2. January — how secrets are stored"
D1=$(lyra --json decide "Secrets storage" \
	--decision "Service secrets live in sops-encrypted files in the infra repo" \
	--rationale "Reviewed in pull requests; no extra service to run" | json_field id)
say "lyra recorded decision $D1 (MCP: decision_record). ella's next session (\"July\") sees it:"
run ella prompt
say "Later, a decision supersedes it:"
run ella decide "Secrets storage, revised" --supersedes "$D1" \
	--decision "Service secrets move to the cloud secret manager; sops files are read-only until removed" \
	--rationale "Rotation without a deploy; audit log"
run lyra decisions
run lyra decisions --all

scene "3. lyra crashes mid-migration"
step=1
while [ $step -le 8 ]; do
	printf 'lyra: migration step %d of 10\n' $step
	if [ $((step % 3)) -eq 0 ]; then
		lyra checkpoint save --task "Migrate the users table to the new schema" \
			--state "steps 1-$step of 10 done" --next "step $((step + 1))" \
			--files migrations/0042_users.sql >/dev/null
		printf '  (checkpoint saved: next is step %d)\n' $((step + 1))
	fi
	step=$((step + 1))
done
say "lyra crashes during step 8. Her next session loads the checkpoint (MCP: checkpoint_load):"
NEXT=$(lyra --json checkpoint show | json_field next)
run lyra checkpoint show
resume=${NEXT#step }
say "She resumes at step $resume, not at step 1:"
step=$resume
while [ $step -le 10 ]; do
	printf 'lyra: migration step %d of 10\n' $step
	step=$((step + 1))
done
run lyra checkpoint save --task "Migrate the users table to the new schema" \
	--state "done: all 10 steps (resumed at step $resume after a crash)" --next "none"

scene "4. ella wants to remember something about the user"
ID=$(ella --json retain --type user --name "Prefers Korean first" \
	--description "Answer in Korean first, then English" \
	"The user reads Korean first; answer in Korean, then give the English." | json_field id)
say "It waits for review as review/pending/$ID.md. You, the person, approve it:"
run "$NEXUS" review list
run "$NEXUS" review approve "$ID" --by you --why "correct"
say "It is now in ella's memory index, in her next session:"
run ella prompt --memory-only

scene "5. Both agents append at the same instant, $APPENDS times each"
i=1
while [ $i -le "$APPENDS" ]; do lyra log append --channel load "lyra entry $i" >/dev/null; i=$((i + 1)); done &
p1=$!
i=1
while [ $i -le "$APPENDS" ]; do ella log append --channel load "ella entry $i" >/dev/null; i=$((i + 1)); done &
p2=$!
wait $p1
wait $p2
run "$NEXUS" log verify

scene "6. Search finds the 02:00 handoff, in English and in Korean"
run "$NEXUS" search "login timeout"
run "$NEXUS" search "로그인"

scene "Done"
run "$NEXUS" doctor
say "The vault is $VAULT — open it in Obsidian (Open folder as vault)."
