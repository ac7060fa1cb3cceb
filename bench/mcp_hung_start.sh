#!/usr/bin/env bash
# Time from starting `toolselect mcp` to its answer to initialize, with one
# upstream that never answers (`sleep 600`) beside server-memory, for each
# binary given, N rounds interleaved; prints each run. Without the hung
# upstream (-q) it times the healthy start.
#
#   bench/mcp_hung_start.sh [-n N] [-q] BIN...
#
# Needs the pinned MCP peers: TOOLSELECT_MCP_PEERS=$(bash tests/mcp-peers.sh).
set -euo pipefail
n=1
hung=(--upstream "hung=sleep 600")
while getopts n:q opt; do
	case $opt in
	n) n=$OPTARG ;;
	q) hung=() ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
peers=${TOOLSELECT_MCP_PEERS:-$HOME/.cache/toolselect-mcp-peers}
export PATH=$peers/node_modules/.bin:$PATH
mem=$(mktemp)
trap 'rm -f "$mem"' EXIT
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}'
for ((i = 0; i < n; i++)); do
	for bin in "$@"; do
		start=$(date +%s.%N)
		coproc P { "$bin" mcp "${hung[@]}" --upstream "memory=MEMORY_FILE_PATH=$mem mcp-server-memory" 2>/dev/null; }
		echo "$init" >&"${P[1]}"
		read -r _ <&"${P[0]}"
		end=$(date +%s.%N)
		exec {P[1]}>&-
		wait "$P_PID" 2>/dev/null || true
		echo "$bin: initialize answered after $(echo "$end - $start" | bc) s"
	done
done
