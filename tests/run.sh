#!/usr/bin/env bash
# tests/run.sh - `make test`: every test, then a summary of what ran, what
# failed and what was skipped with the reason each test gave.
#
# Steps (each runs even when an earlier one failed, so the summary is whole),
# after the installer (below):
#   vet      gofmt, go vet and mypy (skipped, saying so, when mypy is missing)
#   go       go test -race ./... (with the MCP peers: see below)
#   cabi     the C-exports fuzz seeds through cgo (-tags cabifuzz), race detector on
#   python   the Python package's unittest suite against a freshly built library
#   fuzz     every Go fuzz target for FUZZ_SECONDS (default 5) of fuzzing each
# First tests/install-tools.sh (the installer .ci/run uses too): as root with
# apt-get it installs what the tests use beyond Go, gcc and python3 (mypy,
# redis-server, npm and the MCP peers, the aarch64 cross compiler, qemu and an
# arm64 CPython, ...); otherwise it lists what is missing with the line that
# installs it, and the tests needing it skip, each saying so in the summary.
# TOOLSELECT_NO_INSTALL=1 installs nothing, even as root.
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

# What the tests use beyond Go, gcc and python3.
eval "$(PYTHON=$PYTHON bash tests/install-tools.sh)"
if [ -n "${TOOLSELECT_MCP_PEERS:-}" ]; then
	echo "make test: MCP peers at $TOOLSELECT_MCP_PEERS"
else
	echo "make test: MCP peers not available; their tests will skip (see the summary)"
fi

step vet "vet (gofmt, go vet, mypy)"
t0=$(date +%s)
vet_fail=0
make --no-print-directory vet GO="$GO" || vet_fail=1 # the Makefile's vet: gofmt, go vet, then mypy when installed
mypy_skip=0
command -v mypy >/dev/null || mypy_skip=1
printf 'count\t%d\t%d\t%d\ntime\t%d\n' $((1 - vet_fail)) $vet_fail $mypy_skip $(($(date +%s) - t0)) >"$report/vet.tsv"
[ $vet_fail -eq 1 ] && printf 'fail\tgofmt, go vet or mypy\n' >>"$report/vet.tsv"
[ $mypy_skip -eq 1 ] && printf 'skip\tmypy\tmypy is not installed (apt-get install -y mypy; make test installs it when run as root)\n' >>"$report/vet.tsv"

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
