#!/usr/bin/env bash
# tests/aarch64-python.sh - an aarch64 CPython for the aarch64 wheel's test:
# Debian's own arm64 python3.N packages, and the pip wheel Debian ships,
# unpacked (dpkg-deb -x, never installed: the machine's python3 is left
# alone) into a folder outside the repo, once; prints that folder. The test
# runs it as `qemu-aarch64-static -L DIR DIR/usr/bin/python3.N`.
# tests/install-tools.sh calls it; by hand it needs root (dpkg --add-architecture arm64 and
# apt-get update the first time).
#
#   TOOLSELECT_AARCH64_PYTHON=$(bash tests/aarch64-python.sh)
#
# The folder is $TOOLSELECT_AARCH64_PYTHON when set, else
# $HOME/.cache/toolselect-aarch64-python. With TOOLSELECT_NO_INSTALL set it
# only finds a folder unpacked before. Exits 1 (printing why on stderr,
# nothing on stdout) when it cannot be had: not Debian, not root, no network.
set -euo pipefail
root=${TOOLSELECT_AARCH64_PYTHON:-$HOME/.cache/toolselect-aarch64-python}
if [ -f "$root/.complete" ]; then
	echo "$root"
	exit 0
fi
say() { echo "aarch64-python: $*" >&2; }
[ -z "${TOOLSELECT_NO_INSTALL:-}" ] || { say "not unpacked at $root, and TOOLSELECT_NO_INSTALL is set"; exit 1; }
command -v dpkg-deb >/dev/null && command -v apt-get >/dev/null || { say "needs Debian's dpkg and apt"; exit 1; }
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	[ "$(id -u)" = 0 ] || { say "needs root to add the arm64 architecture (dpkg --add-architecture arm64)"; exit 1; }
	dpkg --add-architecture arm64
fi
# The package lists: arm64's are fetched the first time (about 2 s here).
if ! apt-cache show python3-minimal:arm64 >/dev/null 2>&1; then
	[ "$(id -u)" = 0 ] || { say "needs root for apt-get update"; exit 1; }
	apt-get update -qq >&2
fi
# python3-minimal:arm64 names the release's python3.N.
py=$(apt-cache depends python3-minimal:arm64 2>/dev/null | sed -n 's/.*Depends: \(python3\.[0-9]*\)-minimal.*/\1/p' | head -n1)
[ -n "$py" ] || { say "no python3-minimal:arm64 in the package lists"; exit 1; }
# What `import toolselect`, venv, ctypes and pip need: the interpreter and
# its standard library, the C libraries their modules load, and pip's wheel.
pkgs="$py-minimal:arm64 lib$py-minimal:arm64 lib$py-stdlib:arm64 libc6:arm64 libffi8:arm64 zlib1g:arm64
      libexpat1:arm64 libssl3:arm64 libbz2-1.0:arm64 liblzma5:arm64 python3-pip-whl"
say "unpacking $(echo $pkgs | wc -w) Debian packages ($py for arm64, pip's wheel) into $root"
rm -rf "$root"
mkdir -p "$root/debs"
# shellcheck disable=SC2086 # one word per package
download() { (cd "$root/debs" && apt-get download -qq -o APT::Sandbox::User=root $pkgs) >&2; }
if ! download; then # lists older than the mirror: fetch them again, once
	[ "$(id -u)" = 0 ] || { say "apt-get download failed, and only root can apt-get update"; exit 1; }
	apt-get update -qq >&2
	download
fi
for deb in "$root"/debs/*.deb; do
	dpkg-deb -x "$deb" "$root"
done
rm -rf "$root/debs"
ln -sf "$py" "$root/usr/bin/python3"
touch "$root/.complete"
echo "$root"
