#!/usr/bin/env bash
# How often each timing-dependent scenario shows its expected outcome: starts `oversell up`
# (3 instances, nginx), runs `loadtest curriculum --timing-sensitive --repeat N`, stops the
# fleet. Not part of CI: it takes a few minutes. Usage: bench/curriculum-rates.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
REPEAT=${1:-20}
cargo build --release --quiet --bins
TOKEN=$(python3 -c 'import uuid; print(uuid.uuid4().hex)')
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
LOG=$(mktemp)
# A class dir of its own (removed below): the run starts from nothing and keeps nothing in the home dir.
CLASS_DIR=$(mktemp -d)
RUST_LOG=oversell=error target/release/oversell up --instances 3 --port "$PORT" --admin-token "$TOKEN" --class-dir "$CLASS_DIR" >"$LOG" 2>&1 &
UP=$!
trap 'kill -TERM $UP 2>/dev/null; wait $UP 2>/dev/null; rm -rf "$LOG" "$CLASS_DIR"' EXIT
for _ in $(seq 150); do grep -q '^ready:' "$LOG" && break; sleep 0.2; done
grep -q '^ready:' "$LOG" || { cat "$LOG"; echo "oversell up did not become ready" >&2; exit 1; }
target/release/loadtest curriculum --url "http://127.0.0.1:$PORT" --token "$TOKEN" \
    --instances 3 --timing-sensitive --repeat "$REPEAT" --lang en
