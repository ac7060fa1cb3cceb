#!/usr/bin/env bash
# tests/mcp-peers.sh - install the real MCP peers (reference servers, inspector,
# conformance suite) pinned by testdata/mcp-peers into a cache folder outside
# the repo, once, and print that folder. .ci/run and `make test` both use it.
#
#   TOOLSELECT_MCP_PEERS=$(bash tests/mcp-peers.sh)
#
# The folder is $TOOLSELECT_MCP_PEERS when set, else $HOME/.cache/toolselect-mcp-peers.
# Reinstalls when the pinned package-lock.json changed. Exits 1 (printing why
# on stderr, nothing on stdout) when the peers cannot be had: no pin file, no npm.
set -euo pipefail
cd "$(dirname "$0")/.."
src=testdata/mcp-peers
peers=${TOOLSELECT_MCP_PEERS:-$HOME/.cache/toolselect-mcp-peers}
if [ -d "$peers/node_modules/.bin" ] && { [ ! -f "$src/package-lock.json" ] || cmp -s "$src/package-lock.json" "$peers/package-lock.json"; }; then
	echo "$peers"
	exit 0
fi
if [ ! -f "$src/package-lock.json" ]; then
	echo "mcp-peers: no $src/package-lock.json to install the peers from" >&2
	exit 1
fi
if ! command -v npm >/dev/null; then
	echo "mcp-peers: npm is not installed (apt-get install npm)" >&2
	exit 1
fi
echo "mcp-peers: installing the MCP peers into $peers (npm ci)" >&2
mkdir -p "$peers"
cp "$src"/package.json "$src"/package-lock.json "$peers/"
(cd "$peers" && npm ci --no-audit --no-fund --loglevel=error) >&2
echo "$peers"
