#!/bin/sh
# Installs speed from a release: the archive for this machine, checked
# against its published SHA-256 before anything is written.
#
#   curl -LsSf https://github.com/OWNER/speed/releases/latest/download/install.sh | sh
#
# Environment:
#   SPEED_VERSION       a version to install (1.2.0); default: the latest release
#   SPEED_INSTALL_DIR   where `speed` goes; default: ~/.local/bin
#   SPEED_REPO          OWNER/NAME of the GitHub repository (the release
#                       workflow writes it into this script)
#   SPEED_DOWNLOAD_URL  the folder holding the archives, instead of the
#                       GitHub release (a mirror, a local copy: file://…)
#
# Linux and macOS, x86_64 and aarch64. On Windows, take the .zip of the
# release, or `cargo binstall speed`.
set -eu

repo="${SPEED_REPO:-__SPEED_REPO__}"
install_dir="${SPEED_INSTALL_DIR:-$HOME/.local/bin}"

say() { printf 'speed install: %s\n' "$*" >&2; }
fail() { say "$*"; exit 1; }

os=$(uname -s)
arch=$(uname -m)
case "$arch" in
  x86_64 | amd64) arch=x86_64 ;;
  aarch64 | arm64) arch=aarch64 ;;
  *) fail "no release for the processor $arch: build it with \`cargo install --locked --git <repository> speed\`" ;;
esac
case "$os" in
  Linux) target="$arch-unknown-linux-gnu" ;;
  Darwin) target="$arch-apple-darwin" ;;
  MINGW* | MSYS* | CYGWIN*) fail "on Windows, download speed-x86_64-pc-windows-msvc.zip from the release, or run \`cargo binstall speed\`" ;;
  *) fail "no release for $os: build it with \`cargo install --locked --git <repository> speed\`" ;;
esac

if [ -n "${SPEED_DOWNLOAD_URL:-}" ]; then
  base="${SPEED_DOWNLOAD_URL%/}"
else
  case "$repo" in
    __SPEED_REPO__) fail "set SPEED_REPO=OWNER/NAME (this copy of the script was not written by a release)" ;;
  esac
  if [ -n "${SPEED_VERSION:-}" ]; then
    base="https://github.com/$repo/releases/download/v${SPEED_VERSION#v}"
  else
    base="https://github.com/$repo/releases/latest/download"
  fi
fi

fetch() {
  # fetch URL FILE
  if command -v curl >/dev/null 2>&1; then
    curl --proto '=https,file' --tlsv1.2 -fsSL "$1" -o "$2"
  elif command -v wget >/dev/null 2>&1; then
    wget -q -O "$2" "$1"
  else
    fail "neither curl nor wget is installed"
  fi
}

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d' ' -f1
  else
    fail "neither sha256sum nor shasum is installed, so the archive cannot be checked"
  fi
}

name="speed-$target"
archive="$name.tar.gz"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

say "downloading $base/$archive"
fetch "$base/$archive" "$tmp/$archive" || fail "cannot download $base/$archive"
fetch "$base/$archive.sha256" "$tmp/$archive.sha256" || fail "cannot download $base/$archive.sha256"
expected=$(cut -d' ' -f1 < "$tmp/$archive.sha256")
actual=$(sha256 "$tmp/$archive")
if [ "$expected" != "$actual" ]; then
  fail "$archive does not match its published SHA-256 (expected $expected, got $actual): nothing was installed"
fi

tar -xzf "$tmp/$archive" -C "$tmp"
[ -f "$tmp/$name/speed" ] || fail "$archive holds no $name/speed"
mkdir -p "$install_dir"
# Into place in one rename, so a running speed is never half-written.
cp "$tmp/$name/speed" "$install_dir/.speed.new"
chmod 755 "$install_dir/.speed.new"
mv -f "$install_dir/.speed.new" "$install_dir/speed"

version=$("$install_dir/speed" --version 2>/dev/null || echo "speed")
say "installed $version at $install_dir/speed"
case ":$PATH:" in
  *":$install_dir:"*) ;;
  *) say "$install_dir is not on your PATH: add it (export PATH=\"$install_dir:\$PATH\") so your shell and git hooks find speed" ;;
esac
