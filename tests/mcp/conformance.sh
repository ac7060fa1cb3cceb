#!/usr/bin/env bash
# Runs the MCP conformance suite against `toolselect mcp --listen`, with
# server-everything as the upstream, and checks the result against
# tests/mcp/expected-failures.yml (every expected failure carries a reason).
#
# Finds the peers in $TOOLSELECT_MCP_PEERS/node_modules/.bin, then on PATH.
# Uses $TOOLSELECT_BIN if set, otherwise builds bin into a temp dir.
# Without the peers it skips (exit 0) unless TOOLSELECT_REQUIRE_PEERS=1.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

if [[ -n "${TOOLSELECT_MCP_PEERS:-}" ]]; then
  export PATH="$TOOLSELECT_MCP_PEERS/node_modules/.bin:$PATH"
fi
for p in conformance mcp-server-everything node; do
  if ! command -v "$p" >/dev/null; then
    msg="conformance.sh: $p not found: npm ci ../shared/mcp-peers into DIR and set TOOLSELECT_MCP_PEERS=DIR"
    if [[ "${TOOLSELECT_REQUIRE_PEERS:-}" == 1 ]]; then echo "$msg" >&2; exit 1; fi
    echo "SKIP $msg" >&2; exit 0
  fi
done

work=$(mktemp -d)
pid=
cleanup() {
  if [[ -n "$pid" ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

bin=${TOOLSELECT_BIN:-}
if [[ -z "$bin" ]]; then
  bin="$work/toolselect"
  (cd "$root" && go build -o "$bin" ./cmd/toolselect)
fi

"$bin" mcp --listen 127.0.0.1:0 --upstream mcp-server-everything 2>"$work/stderr" &
pid=$!
url=
for _ in $(seq 100); do
  url=$(grep -o 'http://127.0.0.1:[0-9]*/mcp' "$work/stderr" || true)
  [[ -n "$url" ]] && break
  if ! kill -0 "$pid" 2>/dev/null; then cat "$work/stderr" >&2; exit 1; fi
  sleep 0.1
done
[[ -n "$url" ]] || { echo "conformance.sh: proxy did not start" >&2; cat "$work/stderr" >&2; exit 1; }

set +e
conformance server --url "$url" --expected-failures "$here/expected-failures.yml" -o "$work/results" >"$work/log" 2>&1
rc=$?
set -e
grep -E '^(✓|✗)|Total:|Baseline|Unexpected|Stale|  [~✓✗] ' "$work/log" || cat "$work/log"
exit $rc
