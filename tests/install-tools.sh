#!/usr/bin/env bash
# tests/install-tools.sh - the one installer of what the tests use beyond Go,
# gcc and python3. Two callers: `make test` (tests/run.sh) and .ci/run.
#
#   eval "$(bash tests/install-tools.sh)"
#
# Run as root on a machine with apt-get, it installs what is missing:
#   the Debian packages of the checks below (apt-get update first, once);
#   Debian's arm64 CPython, unpacked by tests/aarch64-python.sh;
#   the MCP peers pinned in testdata/mcp-peers, by tests/mcp-peers.sh (npm ci).
# Otherwise (or with TOOLSELECT_NO_INSTALL=1) it installs no Debian package
# and lists on stderr each missing tool with the line that installs it; the
# tests that need it skip, giving the same line, and `make test` passes. The
# MCP peers (npm ci) and pydantic 2 (pip install --target) are installed by
# any user who has npm and pip (into cache folders in $HOME, outside the
# repository).
#
# stdout is only `export NAME=VALUE` lines for the caller to eval: where the
# MCP peers and the arm64 CPython are (TOOLSELECT_MCP_PEERS,
# TOOLSELECT_AARCH64_PYTHON, and the peers' .bin first on PATH), and pydantic
# 2's folder on PYTHONPATH. The exit status is 0 even when something is
# missing: a missing tool is a skip.
set -uo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
PYTHON=${PYTHON:-python3}
say() { echo "install-tools: $*" >&2; }

# Each check: what is missing and which tests need it, the Debian packages
# that bring it, and the command that fails without it.
missing=() # "what|packages"
check() { # check WHAT PACKAGES COMMAND...: record WHAT when COMMAND fails
	local what=$1 pkgs=$2
	shift 2
	"$@" >/dev/null 2>&1 || missing+=("$what|$pkgs")
}
has() { command -v "$1"; }
check "mypy (make vet's Python type check)" "mypy" has mypy
check "chromium (renders eval --select's HTML report headless)" "chromium" has chromium
check "redis-server (the Redis embedding cache and feedback store tests)" "redis-server" has redis-server
check "haproxy (the replicas test: three proxies behind a real load balancer)" "haproxy" has haproxy
check "promtool (checks the proxy's /metrics)" "prometheus" has promtool
check "npm (installs the MCP peers)" "npm" has npm
check "the WordNet database (rank's related-words table is regenerated and compared)" "wordnet-base" test -f /usr/share/wordnet/data.noun
check "aarch64-linux-gnu-gcc (the aarch64 wheel)" "gcc-aarch64-linux-gnu libc6-dev-arm64-cross" has aarch64-linux-gnu-gcc
check "qemu-aarch64-static (runs the aarch64 wheel's library)" "qemu-user-static" has qemu-aarch64-static
check "wine (runs the Windows command and DLL: tests/release)" "wine wine64" has wine
check "x86_64-w64-mingw32-gcc (the Windows DLL, its C smoke test and the test-only bcryptprimitives.dll)" "gcc-mingw-w64-x86-64" has x86_64-w64-mingw32-gcc
check "venv and ensurepip (the wheel's install test)" "python3-venv" "$PYTHON" -c 'import venv, ensurepip'
# `pip install ./python` offline needs a build backend: Debian's, for /usr/bin/python3.
if [ -x /usr/bin/python3 ]; then
	check "setuptools and wheel for /usr/bin/python3 (pip install ./python offline)" "python3-venv python3-setuptools python3-wheel" \
		/usr/bin/python3 -c 'import venv, ensurepip, setuptools, wheel'
fi
check "pip (installs pydantic 2 for the tests that compare with it)" "python3-pip" "$PYTHON" -m pip --version

root=0
[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && [ -z "${TOOLSELECT_NO_INSTALL:-}" ] && root=1

if [ ${#missing[@]} -gt 0 ]; then
	pkgs=$(printf '%s\n' "${missing[@]}" | cut -d'|' -f2 | tr ' ' '\n' | sort -u | tr '\n' ' ')
	if [ $root = 1 ]; then
		say "installing ${pkgs}(apt-get update first)"
		apt-get update -qq >&2 || say "apt-get update failed; installing from the lists there are"
		# shellcheck disable=SC2086 # one word per package
		if ! apt-get install -y -qq --no-install-recommends $pkgs >/dev/null; then
			# One package this release lacks must not cost the others.
			for p in $pkgs; do
				apt-get install -y -qq --no-install-recommends "$p" >/dev/null ||
					say "could not install $p: the tests needing it will skip"
			done
		fi
	else
		for m in "${missing[@]}"; do
			say "missing ${m%%|*}: apt-get install -y ${m#*|}"
		done
		say "as root, make test (or this script) installs them all: sudo bash tests/install-tools.sh"
	fi
fi

# Debian's arm64 CPython for the aarch64 wheel's test (root: it adds the arm64
# architecture); found again without root once unpacked.
if a64=$(if [ $root = 1 ]; then bash tests/aarch64-python.sh; else TOOLSELECT_NO_INSTALL=1 bash tests/aarch64-python.sh 2>/dev/null; fi); then
	printf 'export TOOLSELECT_AARCH64_PYTHON=%q\n' "$a64"
else
	say "missing an arm64 CPython (the aarch64 wheel's test under qemu): sudo bash tests/aarch64-python.sh"
fi

# pydantic 2, for the tests that compare with it (Debian 12's python3-pydantic
# is 1.10): pip installs it from PyPI into a folder of its own, once, for
# anyone with pip (--target leaves the system's Python alone); the tests find
# it on PYTHONPATH.
pyver=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
pyd=$HOME/.cache/toolselect-pydantic-py$pyver
if "$PYTHON" -c 'import pydantic, sys; sys.exit(int(pydantic.VERSION.split(".")[0]) < 2)' 2>/dev/null; then
	: # the interpreter has it
elif [ -f "$pyd/.complete" ] || { [ -z "${TOOLSELECT_NO_INSTALL:-}" ] &&
	"$PYTHON" -m pip install -q --disable-pip-version-check --retries 1 --timeout 15 --target "$pyd" 'pydantic>=2,<3' >/dev/null 2>&1 &&
	touch "$pyd/.complete"; }; then
	printf 'export PYTHONPATH=%q${PYTHONPATH:+:$PYTHONPATH}\n' "$pyd"
else
	rm -rf "$pyd"
	say "missing pydantic 2 (the tests that compare with it): $PYTHON -m pip install 'pydantic>=2' (pip could not install it into $pyd)"
fi

# The MCP peers, for anyone with npm.
if peers=$(bash tests/mcp-peers.sh); then
	printf 'export TOOLSELECT_MCP_PEERS=%q\n' "$peers"
	printf 'export PATH=%q:"$PATH"\n' "$peers/node_modules/.bin"
fi
exit 0
