#!/usr/bin/env bash
# The README's ten-minute lesson, run as written: every ```sh,runnable block of README.md, in
# order, in one shell, against a fleet this script starts (`oversell up --class 1` on a free
# port, so a fleet you have up on 8080 is untouched), within a deadline. A block that fails, a
# chapter that does not show its outcome, or a lesson slower than the deadline fails the run.
#
# The blocks are written for a reader on port 8080 with `loadtest` aliased: the script points
# `localhost:8080` at its own port and makes `loadtest` its binary with `--url` added, and makes
# curl fail on an HTTP error (the reader sees the error's JSON; a script needs the exit code).
#
#   bash tests/docs/lesson.sh          # binaries from target/debug (LESSON_BIN_DIR to change)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${LESSON_BIN_DIR:-$root/target/debug}"
deadline="${LESSON_DEADLINE_S:-110}"
start=$SECONDS

if [ ! -x "$bin/oversell" ] || [ ! -x "$bin/loadtest" ]; then
  (cd "$root" && cargo build --quiet --workspace --bins)
fi

work="$(mktemp -d)"
up_pid=""
cleanup() {
  if [ -n "$up_pid" ] && kill -0 "$up_pid" 2>/dev/null; then
    kill -TERM "$up_pid" 2>/dev/null || true
    wait "$up_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# The blocks, in order; none is a failure of the README, not a pass.
awk '/^```sh,runnable[[:space:]]*$/ {on=1; n++; print "echo \"lesson: block " n "\""; next}
     on && /^```[[:space:]]*$/ {on=0; next}
     on {print}' "$root/README.md" > "$work/blocks.sh"
blocks=$(grep -c '^echo "lesson: block' "$work/blocks.sh" || true)
if [ "$blocks" -eq 0 ]; then
  echo "lesson: README.md has no \`\`\`sh,runnable block" >&2
  exit 1
fi

port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
# Its class dir in the work dir: a lesson run keeps no class in the home directory.
(cd "$work" && exec "$bin/oversell" up --port "$port" --class 1 --class-dir "$work/class" >"$work/up.log" 2>&1) &
up_pid=$!
until grep -q '^ready:' "$work/up.log" 2>/dev/null; do
  if ! kill -0 "$up_pid" 2>/dev/null; then
    tail -n 20 "$work/up.log" >&2
    echo "lesson: oversell up exited before it was ready" >&2
    exit 1
  fi
  if [ $((SECONDS - start)) -ge 60 ]; then
    tail -n 20 "$work/up.log" >&2
    echo "lesson: the fleet was not ready within 60 s" >&2
    exit 1
  fi
  sleep 0.5
done
# The banner names the files the tokens are in (it prints no token), as a reader finds them.
banner_file() { sed -n "s/^$1: \([^ ]*\).*/\1/p" "$work/up.log" | head -n 1; }
admin_file="$(banner_file 'admin token file')"
rooms_file="$(banner_file 'room tokens file')"
admin="$(cat "$admin_file" 2>/dev/null || true)"
room="$(awk '$1 == "student-01" {print $2}' "$rooms_file" 2>/dev/null | head -n 1)"
if [ -z "$admin" ] || [ -z "$room" ]; then
  echo "lesson: could not read the admin token and student-01's token from the files oversell up named" >&2
  exit 1
fi

{
  echo "set -euo pipefail"
  echo "export OVERSELL_ADMIN_TOKEN='$admin' ROOM_TOKEN='$room'"
  echo "loadtest() { '$bin/loadtest' \"\$@\" --url 'http://127.0.0.1:$port'; }"
  echo "curl() { command curl --fail-with-body \"\$@\"; echo; }"
  sed -e "s#localhost:8080#127.0.0.1:$port#g" -e "s#127\.0\.0\.1:8080#127.0.0.1:$port#g" "$work/blocks.sh"
} > "$work/lesson.sh"

left=$((deadline - (SECONDS - start)))
echo "lesson: $blocks blocks against http://127.0.0.1:$port (fleet up in $((SECONDS - start)) s, ${left} s left)"
if ! timeout "$left" bash "$work/lesson.sh"; then
  echo "lesson: FAILED (or past the ${deadline} s deadline); the fleet's log:" >&2
  tail -n 30 "$work/up.log" >&2
  exit 1
fi
echo "lesson: every block ran, in $((SECONDS - start)) s"
