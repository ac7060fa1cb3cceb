#!/usr/bin/env bash
# `make wheel`: one wheel per target into dist/ (x86_64 or aarch64 Linux),
# each with its own Go shared library built by cgo (the machine's gcc for
# its own architecture, Debian's cross compiler for the other one:
# gcc-aarch64-linux-gnu, gcc-x86-64-linux-gnu), tagged
# manylinux_2_N_<arch> from the glibc symbol versions the library needs
# (python/elf_glibc.py). Standard library only: no network, no build backend.
# WHEEL_ARCHES picks the targets: by default this machine's architecture
# only; WHEEL_ARCHES="x86_64 aarch64" builds both, and win_amd64 the Windows
# wheel (toolselect.dll, built with Debian's gcc-mingw-w64-x86-64).
# -trimpath and a fixed zip layout: two runs give the same wheel.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="${1:-$root/dist}"
GO=${GO:-go}
tags=$(grep -v '^#' "$root/BUILDTAGS" | head -n 1) # BUILDTAGS says why
mkdir -p "$out"
host=$(uname -m)
[ "$host" = arm64 ] && host=aarch64
for arch in ${WHEEL_ARCHES:-$host}; do
	case "$arch" in
	x86_64) goarch=amd64 cross=x86_64-linux-gnu-gcc pkg=gcc-x86-64-linux-gnu cc=${CC_X86_64:-} ;;
	aarch64) goarch=arm64 cross=aarch64-linux-gnu-gcc pkg="gcc-aarch64-linux-gnu libc6-dev-arm64-cross" cc=${CC_AARCH64:-} ;;
	win_amd64) goarch=amd64 cross=x86_64-w64-mingw32-gcc pkg=gcc-mingw-w64-x86-64 cc=${CC_WIN_AMD64:-} ;;
	*) echo "build_wheel: unknown target $arch (x86_64, aarch64 or win_amd64)" >&2; exit 2 ;;
	esac
	if [ -z "$cc" ]; then
		if [ "$arch" = "$host" ]; then cc=gcc; else cc=$cross; fi
	fi
	command -v "$cc" >/dev/null || { echo "build_wheel: $arch needs the C compiler $cc (apt-get install -y $pkg)" >&2; exit 2; }
	goos=linux lib="$root/.cache/wheel/$arch/libtoolselect.so"
	[ "$arch" = win_amd64 ] && goos=windows lib="$root/.cache/wheel/$arch/toolselect.dll"
	mkdir -p "$(dirname "$lib")"
	# netgo, osusergo: Go's own resolver and user lookup, so the library
	# needs no glibc resolver symbols (res_search) beyond what cgo needs.
	(cd "$root" && CGO_ENABLED=1 GOOS=$goos GOARCH=$goarch CC=$cc "$GO" build -buildmode=c-shared -trimpath \
		-tags "$tags" -ldflags='-s -w -buildid=' -o "$lib" ./cabi)
	rm -f "${lib%.*}.h"
	"${PYTHON:-python3}" "$here/build_wheel.py" --lib "$lib" --out "$out"
done
echo "build_wheel: install the wheel for this machine with: pip install --no-index --find-links $out toolselect" >&2
