#!/usr/bin/env bash
# `make run`: the main job on local defaults, in a scratch project under $2 (default .demo).
# Records a short dialogue while no logger runs (it waits in the project's outbox), starts the
# reference fleet (the local default fleet, ops/fleet), forwards the outbox with `sync`, writes
# once more with the logger up (which starts the project's agent), writes and reads through the
# agent, and stops the agent and the fleet.
set -euo pipefail
# The reference fleet is development tooling, not installed: it runs from this checkout.
REPO=$(cd "$(dirname "$0")/.." && pwd)
fleet() { PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}" "$BIN/python" -m ops.fleet "$@"; }
BIN=$(cd "$1" && pwd)
DEMO=${2:-.demo}
AM="$BIN/agent-memory"
mkdir -p "$DEMO"
DEMO=$(cd "$DEMO" && pwd)
rm -rf "$DEMO/project" "$DEMO/fleet"
mkdir -p "$DEMO/project"
cd "$DEMO/project"
git init -q .
SID="demo-$(date +%s)"
step() { printf '\n$ agent-memory %s\n' "$*" >&2; "$AM" "$@"; }
field() { "$BIN/python" -c 'import json,sys; print(json.load(sys.stdin)["data"]['"\"$1\""'])'; }

printf '\n# 1. No logger yet: everything lands in the outbox (.agent-memory/)\n' >&2
step store init
step --store file session open --session-id "$SID" --project-id demo --dialogue-kind human,model \
  --participant alice --participant assistant --title "agent-memory demo"
Q=$(step --store file write --session-id "$SID" --sender-kind human --sender-identity alice \
  --receiver-kind model --receiver-identity assistant \
  --text "Where do my messages go when the logger is down?")
echo "$Q"
QID=$(printf '%s' "$Q" | field message_id)
echo "Into .agent-memory/, then to the logger when it answers." | \
  step --store file write --session-id "$SID" --sender-kind model --sender-identity assistant \
  --receiver-kind human --receiver-identity alice --relation "reply:$QID"
find .agent-memory -type f -name '*.msg' -o -type f -name '*.ses' | sort >&2

printf '\n# 2. The reference fleet starts (ops/fleet, loopback only)\n' >&2
fleet up --data "$DEMO/fleet"
trap '"$AM" agent stop >/dev/null 2>&1 || true; fleet down --data "$DEMO/fleet" >/dev/null 2>&1 || true' EXIT
CONFIG="$DEMO/fleet/agent-memory.json"

printf '\n# 3. sync forwards the outbox, keeping ids and times\n' >&2
step --config "$CONFIG" sync
step --config "$CONFIG" write --session-id "$SID" --sender-kind human --sender-identity alice \
  --receiver-kind model --receiver-identity assistant --text "And with the logger up?"
step --config "$CONFIG" --store file read --session-id "$SID"
printf '\nThe outbox is empty; confirmed files are in .agent-memory/.imported/:\n' >&2
find .agent-memory -type f \( -name '*.msg' -o -name '*.ses' \) | sort >&2

printf '\n# 4. That write started the project agent: the next commands go through it\n' >&2
for _ in $(seq 100); do
  "$AM" --config "$CONFIG" agent status | grep -q '"running":true' && break
  sleep 0.1
done
step --config "$CONFIG" agent status
step --config "$CONFIG" write --session-id "$SID" --sender-kind model --sender-identity assistant \
  --receiver-kind human --receiver-identity alice --text "This one went through the agent."
step --config "$CONFIG" read --session-id "$SID"
step --config "$CONFIG" agent stop
