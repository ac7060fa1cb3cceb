#!/usr/bin/env bash
# tests/run.sh - `make test`: every test, then a summary of what ran, what
# failed and what was skipped with the reason each test gave.
#
# Steps (each runs even when an earlier one failed, so the summary is whole):
#   vet      gofmt and go vet
#   go       go test -race ./... (with the MCP peers: see below)
#   cabi     the C-exports fuzz seeds through cgo (-tags cabifuzz), race detector on
#   python   the Python package's unittest suite against a freshly built library
#   fuzz     every Go fuzz target for FUZZ_SECONDS (default 5) of fuzzing each
# The MCP peer tests need the real peers: they are found at
# $TOOLSELECT_MCP_PEERS, else at $HOME/.cache/toolselect-mcp-peers (where
# .ci/run installs them), and installed there the same way (tests/mcp-peers.sh)
# when missing. If they cannot be had, those tests skip and the summary says so.
# The last line is "total: N passed, N failed, N skipped"; the exit status is
# 1 when anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
PYTHON=${PYTHON:-python3}
FUZZ_SECONDS=${FUZZ_SECONDS:-5}
report=$(mktemp -d)
trap 'rm -rf "$report"' EXIT
mkdir -p .cache
$GO build -o .cache/testreport ./internal/tools/testreport || exit 2
tr=.cache/testreport
t_all=$(date +%s)

step() { # step NAME LABEL: announce a step and record its place in the summary
	echo
	echo "== make test: $2 ($(date -u +%H:%M:%S) UTC) =="
	echo "$1" >>"$report/steps"
	echo "$2" >"$report/$1.label"
}

# The MCP peers.
if peers=$(bash tests/mcp-peers.sh); then
	export TOOLSELECT_MCP_PEERS="$peers"
	export PATH="$peers/node_modules/.bin:$PATH"
	echo "make test: MCP peers at $peers"
else
	echo "make test: MCP peers not available; their tests will skip (see the summary)"
fi

step vet "vet (gofmt, go vet)"
t0=$(date +%s)
vet_fail=0
make --no-print-directory vet GO="$GO" || vet_fail=1 # the Makefile's vet: gofmt, then go vet
printf 'count\t%d\t%d\t0\ntime\t%d\n' $((1 - vet_fail)) $vet_fail $(($(date +%s) - t0)) >"$report/vet.tsv"
[ $vet_fail -eq 1 ] && printf 'fail\tgofmt or go vet\n' >>"$report/vet.tsv"

step go "go test -race ./..."
$GO test -race -count=1 -json ./... 2>&1 | $tr gotest -step go -dir "$report"

step cabi "cabi fuzz seeds through C (-race)"
$GO test -race -count=1 -json -tags cabifuzz -run 'Fuzz' ./cabi 2>&1 | $tr gotest -step cabi -dir "$report"

step python "python unittest"
if make --no-print-directory python; then
	if [ -d python/tests ]; then
		(cd python && $PYTHON ../tests/pyunit_report.py "$report/python.tsv")
	else
		printf 'count\t0\t0\t0\nnote\tno python/tests folder\n' >"$report/python.tsv"
	fi
else
	printf 'count\t0\t1\t0\nfail\tbuilding the shared library (make python)\n' >"$report/python.tsv"
fi

step fuzz "fuzz (${FUZZ_SECONDS}s per target)"
TOOLSELECT_REPORT="$report/fuzz.tsv" bash tests/fuzz.sh "$FUZZ_SECONDS"

echo
echo "make test: $(($(date +%s) - t_all))s in all"
$tr summary -dir "$report"
