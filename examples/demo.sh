#!/usr/bin/env bash
# make demo: toolselect's main job on the shipped example catalog.
#
# With a model endpoint configured (LLM_COMMON_TOOL_SELECTION_BASE_URL or
# OPENAI_BASE_URL, plus the matching API key) it asks the model which tool
# calls a sample incident task needs and prints them. Without one it says, in
# one line, how to point it at an OpenAI-compatible server and shows what runs
# offline: the catalog ranked for the task, the token savings, a provider view
# and argument validation.
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

if [ -n "${LLM_COMMON_TOOL_SELECTION_BASE_URL:-}${OPENAI_BASE_URL:-}" ]; then
  section "select: the model picks the tool calls for a task (model ${LLM_COMMON_TOOL_SELECTION_MODEL:-glm-4.5-air})"
  printf 'task: %s\nsub-tasks: %s; %s\n' "$TASK" "$SUBTASK1" "$SUBTASK2"
  code=0
  out=$("$BIN" select --catalog "$CATALOG" --context "$CONTEXT" --task "$TASK" \
    --subtask "$SUBTASK1" --subtask "$SUBTASK2") || code=$?
  if [ -n "$out" ]; then printf '%s\n' "$out" | pretty; fi
  case $code in
    0) echo "(exit 0: every call above names an offered tool and its arguments passed the tool's schema)" ;;
    3) echo "(exit 3: selection failed closed, no calls; each attempt's error is listed above)" ;;
    *) echo "(exit $code)" ;;
  esac
  exit "$code"
fi

echo "No model endpoint configured: export LLM_COMMON_TOOL_SELECTION_BASE_URL (OpenAI https://api.openai.com/v1, GLM https://open.bigmodel.cn/api/paas/v4, Ollama http://localhost:11434/v1, vLLM http://localhost:8000/v1) and LLM_COMMON_TOOL_SELECTION_API_KEY, then run make demo again; meanwhile, here is what runs offline."

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
show validate --catalog "$CATALOG" --tool get_metrics --args '{"service":"checkout-api","metric":"error_rate","window":"30m"}'
show validate --catalog "$CATALOG" --tool get_metrics --args '{"service":"checkout-api","metric":"errors","window":"half an hour"}'

