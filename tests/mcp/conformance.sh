#!/usr/bin/env bash
# Runs the MCP conformance suite twice in one go, against
#   1. `toolselect mcp --listen` with server-everything as its upstream, checked
#      against tests/mcp/expected-failures.yml (every expected failure carries a
#      reason; one that starts passing fails the run), and
#   2. server-everything alone (its streamable HTTP mode),
# then fails if the proxy loses any check the server passes: a proxy must cost
# its client nothing.
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
for p in conformance mcp-server-everything node python3; do
  if ! command -v "$p" >/dev/null; then
    msg="conformance.sh: $p not found: npm ci testdata/mcp-peers into DIR and set TOOLSELECT_MCP_PEERS=DIR"
    if [[ "${TOOLSELECT_REQUIRE_PEERS:-}" == 1 ]]; then echo "$msg" >&2; exit 1; fi
    echo "SKIP $msg" >&2; exit 0
  fi
done

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

bin=${TOOLSELECT_BIN:-}
if [[ -z "$bin" ]]; then
  bin="$work/toolselect"
  (cd "$root" && go build -o "$bin" ./cmd/toolselect)
fi

# waiturl PID FILE PATTERN: the URL a starting server printed in FILE.
waiturl() {
  local url=
  for _ in $(seq 150); do
    url=$(grep -o "$3" "$2" | head -1 || true)
    [[ -n "$url" ]] && { echo "$url"; return 0; }
    if ! kill -0 "$1" 2>/dev/null; then cat "$2" >&2; return 1; fi
    sleep 0.1
  done
  echo "conformance.sh: server did not start" >&2; cat "$2" >&2; return 1
}

"$bin" mcp --listen 127.0.0.1:0 --upstream mcp-server-everything 2>"$work/proxy.err" &
pids+=($!)
proxy_url=$(waiturl "${pids[-1]}" "$work/proxy.err" 'http://127.0.0.1:[0-9]*/mcp')

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
PORT=$port mcp-server-everything streamableHttp >"$work/everything.out" 2>&1 &
pids+=($!)
for _ in $(seq 150); do
  (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  kill -0 "${pids[-1]}" 2>/dev/null || { cat "$work/everything.out" >&2; exit 1; }
  sleep 0.1
done
server_url="http://127.0.0.1:$port/mcp"

# Both runs at once: each takes a few seconds, mostly waiting.
set +e
conformance server --url "$proxy_url" --expected-failures "$here/expected-failures.yml" -o "$work/proxy" >"$work/proxy.log" 2>&1 &
p1=$!
conformance server --url "$server_url" -o "$work/server" >"$work/server.log" 2>&1 &
p2=$!
wait $p1; rc=$?
wait $p2
set -e

echo "== toolselect mcp in front of server-everything"
grep -E '^(✓|✗)|Total:|Baseline|Unexpected|Stale|  [~✓✗] ' "$work/proxy.log" || cat "$work/proxy.log"
echo "== server-everything alone"
grep -E 'Total:' "$work/server.log" || cat "$work/server.log"

# Every check the server passes, the proxy must pass too.
python3 - "$work/server" "$work/proxy" <<'PY' || rc=1
import json, os, re, sys
def passed(d):
    out = {}
    for sub in os.listdir(d):
        m = re.match(r"server-(.+)-\d{4}-\d\d-\d\dT", sub)
        f = os.path.join(d, sub, "checks.json")
        if not m or not os.path.exists(f):
            continue
        for c in json.load(open(f)):
            out[(m.group(1), c["id"])] = c["status"] == "SUCCESS"
    return out
server, proxy = passed(sys.argv[1]), passed(sys.argv[2])
if not server or not proxy:
    print("conformance.sh: no results to compare", file=sys.stderr); sys.exit(1)
lost = sorted(k for k, ok in server.items() if ok and not proxy.get(k, False))
sp, pp = sum(server.values()), sum(proxy.values())
print(f"== checks passed: server-everything {sp}, proxy {pp}; lost by the proxy: {len(lost)}")
for scenario, check in lost:
    print(f"LOST {scenario}: {check}", file=sys.stderr)
sys.exit(1 if lost else 0)
PY
exit $rc
