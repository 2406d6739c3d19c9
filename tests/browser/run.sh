#!/usr/bin/env bash
# The pages' real-browser tests (all.test.mjs, or the files named: `run.sh viewer.mjs`):
# Debian's headless Chromium driven by playwright-core against a fleet (`oversell up`) the
# test starts and stops itself.
#
# playwright-core comes from PyPI, not npm: the `playwright` wheel carries its driver, which
# is playwright-core itself plus a node binary to run it. The wheel goes into a virtualenv
# under target/, the driver's package is linked as node_modules/playwright-core, and the
# driver's node runs `node --test`. No browser is downloaded: the test launches Debian's
# chromium (CHROMIUM, default /usr/bin/chromium).
# Installs what is missing (chromium, a CJK font for the Chinese screenshots, the wheel),
# builds the binary if needed. Screenshots: artifacts/browser/.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
# The driver's playwright-core must speak to the chromium Debian ships; move both together.
playwright_version=1.65.2

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
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || missing+=(chromium)
fc-list :lang=zh 2>/dev/null | grep -q . || missing+=(fonts-wqy-microhei)
command -v redis-server >/dev/null || missing+=(redis-server)
command -v nginx >/dev/null || missing+=(nginx)
python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
if [ ${#missing[@]} -gt 0 ]; then
  echo "browser test: installing ${missing[*]}"
  apt_install "${missing[@]}"
fi

venv="$root/target/browser-venv"
if ! "$venv/bin/python" -c "import playwright, sys; from importlib.metadata import version; sys.exit(version('playwright') != '$playwright_version')" 2>/dev/null; then
  echo "browser test: installing playwright $playwright_version (PyPI) into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "playwright==$playwright_version"
fi
driver="$("$venv/bin/python" -c 'import os, playwright; print(os.path.join(os.path.dirname(playwright.__file__), "driver"))')"
mkdir -p "$here/node_modules"
ln -sfn "$driver/package" "$here/node_modules/playwright-core"

bin="${OVERSELL_BIN:-$root/target/debug/oversell}"
if [ -z "${OVERSELL_BIN:-}" ]; then
  # loadtest too: the viewer's test writes its page with `loadtest check --html`.
  (cd "$root" && cargo build --quiet --bin oversell && cargo build --quiet -p workshop --bin loadtest)
fi
mkdir -p "$root/artifacts/browser"
cd "$here"
OVERSELL_BIN="$bin" LOADTEST_BIN="${LOADTEST_BIN:-$(dirname "$bin")/loadtest}" "$driver/node" --test --test-reporter=spec "${@:-all.test.mjs}"
