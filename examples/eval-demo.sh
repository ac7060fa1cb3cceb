#!/usr/bin/env bash
# make eval-demo: which model should select? `toolselect eval --select` scores
# whole selections on examples/eval-tasks.jsonl (24 tasks written for
# examples/catalog.json, with gold calls) and writes eval-report.html.
#
# It scores the scripted stand-in (internal/testing/faultserver answering from
# examples/eval-model.json, which gets four tasks wrong on purpose, so the
# report has failures to show), and, when an endpoint is configured
# (LLM_COMMON_TOOL_SELECTION_BASE_URL or OPENAI_BASE_URL), your model too.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${TOOLSELECT_BIN:-bin/toolselect}
REPORT=${REPORT:-eval-report.html}
if [ ! -x "$BIN" ]; then
  go build -o "$BIN" ./cmd/toolselect
fi
FAKE_BIN=.cache/bin/faultserver
mkdir -p "$(dirname "$FAKE_BIN")"
go build -o "$FAKE_BIN" ./internal/testing/faultserver/cmd
# It serves until its stdin closes: when this script exits.
coproc FAKE { "$FAKE_BIN" -script examples/eval-model.json; }
read -r url <&"${FAKE[0]}"

CANDIDATES=$(mktemp)
trap 'rm -f "$CANDIDATES"' EXIT
if [ -n "${LLM_COMMON_TOOL_SELECTION_BASE_URL:-}${OPENAI_BASE_URL:-}" ]; then
  MODEL=${LLM_COMMON_TOOL_SELECTION_MODEL:-glm-4.5-air}
  printf '[{"name": "scripted-stand-in", "base_url": "%s", "model": "scripted-stand-in"}, {"name": "%s", "model": "%s"}]\n' "$url" "$MODEL" "$MODEL" >"$CANDIDATES"
  echo "scoring the scripted stand-in and $MODEL at your endpoint"
else
  printf '[{"name": "scripted-stand-in", "base_url": "%s", "model": "scripted-stand-in"}]\n' "$url" >"$CANDIDATES"
  echo "scoring the scripted stand-in only; export LLM_COMMON_TOOL_SELECTION_BASE_URL to score your model too"
fi
set -x
"$BIN" eval --select --catalog examples/catalog.json --tasks examples/eval-tasks.jsonl \
  --candidates "$CANDIDATES" --price scripted-stand-in=0.10/0.40 --parallel 2 \
  --report "$REPORT" --json=false
{ set +x; } 2>/dev/null
echo "report: $REPORT"
