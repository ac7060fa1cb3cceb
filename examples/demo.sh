#!/usr/bin/env bash
# make demo: toolselect's main job on the shipped example catalog.
#
# It asks a model which tool calls three tasks need, through `toolselect
# select`, and shows what a user wants to see: the offer, the calls returned
# and validated, a call with an invalid argument refused with its violation,
# and the search round when the offer is too small. Then what runs without
# any model: ranking, token counts, a provider view, argument validation.
#
# The model is the endpoint configured (LLM_COMMON_TOOL_SELECTION_BASE_URL or
# OPENAI_BASE_URL, plus the matching API key). Without one it is a scripted
# stand-in on loopback (internal/testing/faultserver answering from
# examples/demo-model.json), and the demo says so in one line.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${TOOLSELECT_BIN:-bin/toolselect}
CATALOG=examples/catalog.json
CONTEXT=examples/context.json
if [ ! -x "$BIN" ]; then
  go build -o "$BIN" ./cmd/toolselect
fi

section() { printf '\n== %s\n' "$*"; }
# show prints a command, runs it, and reports its exit status without stopping the demo.
show() {
  local a line='$ toolselect'
  for a in "$@"; do
    if [[ $a =~ ^[A-Za-z0-9_./:=@-]+$ ]]; then line+=" $a"; else line+=" '${a//\'/\'\\\'\'}'"; fi
  done
  printf '%s\n' "$line"
  local code=0
  "$BIN" "$@" || code=$?
  printf '(exit %d)\n' "$code"
  last=$code
  return 0
}
# pretty indents one JSON document when python3 is around.
pretty() {
  if command -v python3 >/dev/null 2>&1; then python3 -m json.tool; else cat; fi
}

TASK="Checkout is failing in production since 14:02: find out why and tell the team"
SUBTASK1="check the error rate and recent logs of checkout-api"
SUBTASK2="post a summary to the incident channel"
# What the ranking reads: the task and its sub-tasks, as select's pre-filter does.
RANK_QUERY="$TASK. Then $SUBTASK1, and $SUBTASK2."

if [ -z "${LLM_COMMON_TOOL_SELECTION_BASE_URL:-}${OPENAI_BASE_URL:-}" ]; then
  FAKE_BIN=.cache/bin/faultserver
  mkdir -p "$(dirname "$FAKE_BIN")"
  go build -o "$FAKE_BIN" ./internal/testing/faultserver/cmd
  # It serves until its stdin closes: when this script exits.
  coproc FAKE { "$FAKE_BIN" -script examples/demo-model.json; }
  read -r url <&"${FAKE[0]}"
  export LLM_COMMON_TOOL_SELECTION_BASE_URL=$url LLM_COMMON_TOOL_SELECTION_MODEL=scripted-stand-in
  unset LLM_COMMON_TOOL_SELECTION_FALLBACK_MODEL
  echo "scripted stand-in for a model; export LLM_COMMON_TOOL_SELECTION_BASE_URL to use yours"
fi
MODEL=${LLM_COMMON_TOOL_SELECTION_MODEL:-glm-4.5-air}
# explain says what select's exit status (show leaves it in $last) means.
explain() {
  case $1 in
    0) echo "every call above names an offered tool and its arguments passed the tool's schema: validated before anyone runs it" ;;
    3) echo "selection failed closed: no calls, and each attempt above names the violation that refused it" ;;
  esac
}

section "select: the model ($MODEL) picks the tool calls for a task"
printf 'task: %s\nsub-tasks: %s; %s\n' "$TASK" "$SUBTASK1" "$SUBTASK2"
echo "the offer: the whole catalog fits the offer budget (LLM_COMMON_TOOL_SELECTION_OFFER_TOKENS, 10,000 tokens), so every eligible tool is offered (unsafe ones are left out)"
show select --json=false --catalog "$CATALOG" --context "$CONTEXT" --task "$TASK" --subtask "$SUBTASK1" --subtask "$SUBTASK2"
explain "$last"

section "select: a call with an invalid argument is refused, with its violation"
TASK2="What was the error rate of checkout-api over the last half hour?"
printf 'task: %s\n' "$TASK2"
echo "get_metrics takes a window such as 30m or 1h (pattern ^[0-9]+[mhd]\$)"
show select --json=false --catalog "$CATALOG" --task "$TASK2"
explain "$last"

section "select: the offer is too small, so the model searches the catalog"
TASK3="Get a person from payments-sre on the phone now: checkout is down"
printf 'task: %s\n' "$TASK3"
echo "with --k 2 the first offer is the 2 best-ranked tools for the task:"
show rank --catalog "$CATALOG" --k 2 "$TASK3"
echo "if none fits, the model answers with words to search for, and is asked again with the catalog's best matches for them:"
show select --json=false --catalog "$CATALOG" --context "$CONTEXT" --k 2 --task "$TASK3"
explain "$last"

section "rank: which of the catalog's 13 tools matter for the task (offline, no model; score 0..1 and why)"
printf 'task: %s\nsub-tasks: %s; %s\n' "$TASK" "$SUBTASK1" "$SUBTASK2"
show rank --catalog "$CATALOG" --k 3 "$RANK_QUERY"
echo "select offers the whole catalog while its tool definitions fit the offer budget (LLM_COMMON_TOOL_SELECTION_OFFER_TOKENS, 10,000 tokens), else such a top K (LLM_COMMON_TOOL_SELECTION_TOP_K, 10; select --k N overrides) and lets the model search for more."

section "tokens: what sending tool definitions costs per request"
show tokens --catalog "$CATALOG" --k 3 "$RANK_QUERY"

section "schema: the catalog as OpenAI chat tools (one of them shown; names OpenAI forbids are mapped reversibly)"
# get_metrics (the tool validate checks below), its parameters schema on one line.
"$BIN" schema --catalog "$CATALOG" --format openai | python3 -c '
import json, sys
t = json.load(sys.stdin)[1]
p = t["function"].pop("parameters")
t["function"]["parameters"] = "@P@"
print(json.dumps(t, indent=2).replace("\"@P@\"", json.dumps(p, separators=(",", ":"))))' 2>/dev/null \
  || "$BIN" schema --catalog "$CATALOG" --format openai | head -c 600
for f in openai anthropic mcp; do
  printf '%-10s names: ' "$f"
  "$BIN" schema --catalog "$CATALOG" --format "$f" | grep -o '"name":"[^"]*"' | sed 's/"name"://; s/"//g' | paste -sd' ' -
done

section "validate: arguments checked against the tool's JSON Schema"
show validate --json=false --catalog "$CATALOG" --tool get_metrics --args '{"service":"checkout-api","metric":"error_rate","window":"30m"}'
show validate --json=false --catalog "$CATALOG" --tool get_metrics --args '{"service":"checkout-api","metric":"errors","window":"half an hour"}'

