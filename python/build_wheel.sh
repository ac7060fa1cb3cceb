#!/usr/bin/env bash
# `make wheel`: one wheel per target into dist/ (x86_64 and aarch64 Linux),
# each with its own Go shared library built by cgo (the Debian cross
# compiler gcc-aarch64-linux-gnu for aarch64), tagged
# manylinux_2_N_<arch> from the glibc symbol versions the library needs
# (python/elf_glibc.py). Standard library only: no network, no build backend.
# WHEEL_ARCHES picks the targets (default: x86_64 aarch64).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="${1:-$root/dist}"
GO=${GO:-go}
mkdir -p "$out"
for arch in ${WHEEL_ARCHES:-x86_64 aarch64}; do
	case "$arch" in
	x86_64) goarch=amd64 cc=${CC_X86_64:-gcc} ;;
	aarch64) goarch=arm64 cc=${CC_AARCH64:-aarch64-linux-gnu-gcc} ;;
	*) echo "build_wheel: unknown target $arch (x86_64 or aarch64)" >&2; exit 2 ;;
	esac
	command -v "$cc" >/dev/null || { echo "build_wheel: $arch needs the C compiler $cc (apt-get install gcc-aarch64-linux-gnu)" >&2; exit 2; }
	lib="$root/.cache/wheel/$arch/libtoolselect.so"
	mkdir -p "$(dirname "$lib")"
	# netgo, osusergo: Go's own resolver and user lookup, so the library
	# needs no glibc resolver symbols (res_search) beyond what cgo needs.
	(cd "$root" && CGO_ENABLED=1 GOOS=linux GOARCH=$goarch CC=$cc "$GO" build -buildmode=c-shared \
		-tags netgo,osusergo -ldflags='-s -w' -o "$lib" ./cabi)
	rm -f "${lib%.so}.h"
	"${PYTHON:-python3}" "$here/build_wheel.py" --lib "$lib" --out "$out"
done
echo "build_wheel: install the wheel for this machine with: pip install --no-index --find-links $out toolselect" >&2
