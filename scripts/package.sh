#!/usr/bin/env bash
# Packs a built speed binary into the archive a release carries, as the
# release workflow (.github/workflows/release.yml) and `cargo binstall`
# (Cargo.toml's [package.metadata.binstall]) expect it:
#
#   speed-<target>.tar.gz   (speed-<target>.zip on Windows)
#     speed-<target>/speed  (speed.exe)
#     speed-<target>/README.md, LICENSE when present
#   speed-<target>.tar.gz.sha256   one line: "<sha256>  <archive name>"
#
# Usage: scripts/package.sh TARGET BINARY OUT_DIR
#   TARGET   a Rust target triple (x86_64-unknown-linux-gnu, …)
#   BINARY   the built executable (target/TARGET/release/speed)
#   OUT_DIR  where the archive and its checksum are written
set -euo pipefail

if [ "$#" -ne 3 ]; then
  echo "usage: $0 TARGET BINARY OUT_DIR" >&2
  exit 2
fi
target=$1
binary=$2
out=$3
root=$(cd "$(dirname "$0")/.." && pwd)

if [ ! -f "$binary" ]; then
  echo "package.sh: no binary at $binary" >&2
  exit 1
fi
case "$target" in
  *-windows-*) exe=speed.exe; format=zip ;;
  *) exe=speed; format=tar.gz ;;
esac

name="speed-$target"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/$name" "$out"
cp "$binary" "$stage/$name/$exe"
chmod 755 "$stage/$name/$exe"
for doc in README.md LICENSE LICENSE.md; do
  if [ -f "$root/$doc" ]; then
    cp "$root/$doc" "$stage/$name/"
  fi
done

archive="$name.$format"
out=$(cd "$out" && pwd)
rm -f "$out/$archive" "$out/$archive.sha256"
if [ "$format" = zip ]; then
  if command -v 7z >/dev/null 2>&1; then
    (cd "$stage" && 7z a -tzip -bd "$out/$archive" "$name" >/dev/null)
  else
    (cd "$stage" && zip -qr "$out/$archive" "$name")
  fi
else
  # The same archive for the same files (GNU tar): no owner, fixed order.
  if tar --version 2>/dev/null | grep -q 'GNU tar'; then
    (cd "$stage" && tar --sort=name --owner=0 --group=0 --numeric-owner -czf "$out/$archive" "$name")
  else
    (cd "$stage" && tar -czf "$out/$archive" "$name")
  fi
fi

if command -v sha256sum >/dev/null 2>&1; then
  sum=$(sha256sum "$out/$archive" | cut -d' ' -f1)
else
  sum=$(shasum -a 256 "$out/$archive" | cut -d' ' -f1)
fi
printf '%s  %s\n' "$sum" "$archive" > "$out/$archive.sha256"
echo "$out/$archive"
