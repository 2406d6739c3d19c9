#!/usr/bin/env bash
# The dashboard's real-browser test: Debian's headless Chromium driven by playwright-core
# against a fleet (`oversell up`) the test starts and stops itself.
# Installs what is missing (chromium, a CJK font for the Chinese screenshots, npm deps),
# builds the binary if needed, and runs `node --test`. Screenshots: artifacts/browser/.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

apt_install() {
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq >/dev/null || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  else
    sudo apt-get update -qq >/dev/null || true
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  fi
}

missing=()
command -v node >/dev/null || missing+=(nodejs npm)
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || missing+=(chromium)
fc-list :lang=zh 2>/dev/null | grep -q . || missing+=(fonts-wqy-microhei)
command -v redis-server >/dev/null || missing+=(redis-server)
command -v nginx >/dev/null || missing+=(nginx)
if [ ${#missing[@]} -gt 0 ]; then
  echo "browser test: installing ${missing[*]}"
  apt_install "${missing[@]}"
fi

cd "$here"
npm ci --no-audit --no-fund --loglevel=error

bin="${OVERSELL_BIN:-$root/target/debug/oversell}"
if [ -z "${OVERSELL_BIN:-}" ]; then
  (cd "$root" && cargo build --quiet --bin oversell)
fi
mkdir -p "$root/artifacts/browser"
OVERSELL_BIN="$bin" node --test --test-reporter=spec dashboard.test.mjs
