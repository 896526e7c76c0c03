#!/usr/bin/env bash
# `make run`: the main job on local defaults, in a scratch project under $2 (default .demo).
# Opens a session, records a short dialogue in the project's outbox and reads it back.
set -euo pipefail
BIN=$(cd "$1" && pwd)
DEMO=${2:-.demo}
AM="$BIN/agent-memory"
rm -rf "$DEMO/project"
mkdir -p "$DEMO/project"
cd "$DEMO/project"
git init -q .
SID="demo-$(date +%s)"
step() { printf '\n$ agent-memory %s\n' "$*" >&2; "$AM" "$@"; }
step store init
step session open --session-id "$SID" --project-id demo --dialogue-kind human,model \
  --participant alice --participant assistant --title "agent-memory demo"
Q=$(step write --session-id "$SID" --sender-kind human --sender-identity alice \
  --receiver-kind model --receiver-identity assistant --text "Where do my messages go when the logger is down?")
echo "$Q"
QID=$(printf '%s' "$Q" | "$BIN/python" -c 'import json,sys; print(json.load(sys.stdin)["data"]["message_id"])')
echo "Into .agent-memory/, then to the logger when it answers." | \
  step write --session-id "$SID" --sender-kind model --sender-identity assistant \
  --receiver-kind human --receiver-identity alice --relation "reply:$QID"
step read --session-id "$SID"
step sessions
printf '\nThe outbox of %s:\n' "$PWD" >&2
find .agent-memory -type f | sort >&2
