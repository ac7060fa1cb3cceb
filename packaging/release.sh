#!/usr/bin/env bash
# `make release`: every artefact toolselect ships, into dist/ (docs/packaging.md).
#
#   dist/toolselect_VERSION_{linux_amd64,linux_arm64,darwin_amd64,darwin_arm64}.tar.gz
#   dist/toolselect_VERSION_windows_amd64.zip
#       the command (toolselect, toolselect.exe), LICENSE and README.md in a
#       folder of the archive's name; built with CGO_ENABLED=0, -trimpath and
#       -ldflags '-s -w' (the version is the embedded VERSION file)
#   dist/toolselect-VERSION-py3-none-manylinux_2_N_{x86_64,aarch64}.whl,
#   dist/toolselect-VERSION-py3-none-win_amd64.whl, dist/toolselect-VERSION.tar.gz
#       the Python wheels (python/build_wheel.sh) and the sdist (python/build_sdist.py)
#   dist/SHA256SUMS
#       sha256sum's format, one line per file above
#
# Two runs give the same bytes: archives carry fixed times, owners and order
# (packaging/archive.py), SOURCE_DATE_EPOCH defaults to the last commit's
# time. `make release-check` builds everything twice and compares.
# RELEASE_TARGETS picks command platforms (default: all five); RELEASE_PYTHON=0
# leaves the Python artefacts out. No network: Go cross-compiles the command,
# Debian's gcc-aarch64-linux-gnu and gcc-mingw-w64-x86-64 build the libraries.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
GO=${GO:-go}
tags=$(grep -v '^#' BUILDTAGS | head -n 1) # BUILDTAGS says why
PYTHON=${PYTHON:-python3}
out=${1:-$root/dist}
version=$(tr -d ' \n' <VERSION)
targets=${RELEASE_TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64}
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
	SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || echo 1577836800)
fi
export SOURCE_DATE_EPOCH
mkdir -p "$out"
# This version's artefacts from an earlier run go: SHA256SUMS lists what this run wrote.
rm -f "$out"/toolselect_"$version"_* "$out"/toolselect-"$version"-*.whl "$out"/toolselect-"$version".tar.gz "$out/SHA256SUMS"
written=()
# A staging folder of this run's own: a test may run the script beside `make release`.
stage_root=$(mktemp -d "${TMPDIR:-/tmp}/toolselect-release.XXXXXX")
trap 'rm -rf "$stage_root"' EXIT

for t in $targets; do
	os=${t%/*} arch=${t#*/}
	exe=toolselect
	[ "$os" = windows ] && exe=toolselect.exe
	stage="$stage_root/${os}_$arch"
	mkdir -p "$stage"
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch "$GO" build -trimpath -tags "$tags" -ldflags='-s -w -buildid=' -o "$stage/$exe" ./cmd/toolselect
	name=toolselect_${version}_${os}_$arch
	ext=tar.gz
	[ "$os" = windows ] && ext=zip
	"$PYTHON" packaging/archive.py --out "$out/$name.$ext" --dir "$name" "$stage/$exe" LICENSE README.md >/dev/null
	echo "release: $name.$ext ($(du -k "$stage/$exe" | cut -f1) KB binary)" >&2
	written+=("$name.$ext")
done

if [ "${RELEASE_PYTHON:-1}" != 0 ]; then
	while read -r w; do written+=("$(basename "$w")"); done < <(WHEEL_ARCHES="x86_64 aarch64 win_amd64" GO="$GO" PYTHON="$PYTHON" bash python/build_wheel.sh "$out")
	written+=("$(basename "$("$PYTHON" python/build_sdist.py --out "$out")")")
fi

(cd "$out" && sha256sum "${written[@]}" >SHA256SUMS)
echo "release: $out/SHA256SUMS lists ${#written[@]} files" >&2
