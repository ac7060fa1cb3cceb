#!/usr/bin/env bash
# The stripped size of a program that imports only registry and executor.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
trap 'rm -f "$out"' EXIT
go build -ldflags='-s -w' -o "$out" ./bench/leanimport
echo "leanimport stripped: $(stat -c %s "$out") bytes"
