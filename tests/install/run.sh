#!/usr/bin/env bash
# The README's install line, as typed, in a clean container: the Rust image the compose build
# starts from (no oversell, no build of it, an empty crate cache), the repository as committed
# (`git archive HEAD`: no target directory, nothing untracked), the line read from README.md
# itself so that the test follows the book. Passes when, after that line alone, `oversell` and
# `loadtest` are on PATH and answer `--version`.
#
#   bash tests/install/run.sh            (needs Docker and the image `rust:1-bookworm`:
#                                         `bash deploy/base-images.sh` makes it offline)
#
# Not part of .ci/run: it is two release builds from nothing (39 minutes on two cores busy
# with other builds, 2026-12-08), and the compose image's build compiles the same crates
# every run.
set -euo pipefail
cd "$(dirname "$0")/../.."

image="${INSTALL_IMAGE:-rust:1-bookworm}"
say() { echo "install: $*"; }

line="$(grep -m1 -E '^cargo install --locked --path \. ' README.md | sed 's/[[:space:]]*#.*$//')"
[ -n "$line" ] || { say "error: README.md has no 'cargo install --locked --path .' line"; exit 1; }
docker image inspect "$image" >/dev/null 2>&1 \
  || { say "error: no image $image here (bash deploy/base-images.sh makes it)"; exit 1; }

work="$(mktemp -d "${TMPDIR:-/tmp}/oversell-install.XXXXXX")"
trap 'rm -rf "$work"' EXIT
git archive --format=tar HEAD >"$work/src.tar"

say "in a clean $image, as README.md types it: $line"
start=$SECONDS
# The line is passed as data (an argument), never spliced into the script's text.
docker run --rm -v "$work/src.tar:/src.tar:ro" "$image" bash -euo pipefail -c '
  if command -v oversell >/dev/null || command -v loadtest >/dev/null; then
    echo "install: error: the image already has oversell or loadtest"; exit 1
  fi
  mkdir /src && tar -xf /src.tar -C /src && cd /src
  # Niced, as the image build is: a run beside other work leaves it the CPU. The whole log
  # is kept: the summary lines of cargo are shown, and the end of the log if the line fails.
  if ! nice -n 10 bash -euo pipefail -c "$1" >/tmp/install.log 2>&1; then
    tail -n 30 /tmp/install.log; echo "install: FAIL: the line exited non-zero"; exit 1
  fi
  grep -E "^ *(Installing|Installed|Finished)" /tmp/install.log || true
  for bin in oversell loadtest; do
    path="$(command -v "$bin")" || { echo "install: FAIL: $bin is not on PATH ($PATH)"; exit 1; }
    echo "install: $bin on PATH at $path: $("$bin" --version)"
  done
' install "$line"
say "PASS in $((SECONDS - start)) s"
