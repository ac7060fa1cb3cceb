#!/usr/bin/env bash
# Build the platform wheel (python/toolselect + libtoolselect.so) into dist/
# with the Python standard library only: no network, no build backend.
# Run from the repository root after `make lib` (the Makefile's `wheel` target does both).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-$(cd "$here/.." && pwd)/dist}"
exec "${PYTHON:-python3}" "$here/build_wheel.py" --out "$out"
