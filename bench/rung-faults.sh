#!/usr/bin/env bash
# Each rung of the ladder under the fault it exists for: starts `oversell up` (3 instances,
# nginx, a class dir of its own), runs each rung's defining chapter N times with
# `loadtest scenario --json`, and prints one Markdown row per rung — the medians of the
# figures read from Redis (oversold, overlaps, foreign releases, lost updates) and of the
# 503s a stalled sale answers — for BENCHMARKS.md's "The ladder under its faults", which
# `python3 bench/charts.py` draws as the book's headline chart.
# Usage: bench/rung-faults.sh [N]   (OVERSELL, LOADTEST: the binaries; target/release by default)
set -euo pipefail
cd "$(dirname "$0")/.."
REPEAT=${1:-3}
OVERSELL=${OVERSELL:-target/release/oversell}
LOADTEST=${LOADTEST:-target/release/loadtest}
[ -x "$OVERSELL" ] && [ -x "$LOADTEST" ] || {
  echo "rung-faults: build first (cargo build --release --workspace) or set OVERSELL and LOADTEST" >&2
  exit 2
}
# tier:chapter — the chapter each rung's defect is shown by, in the ladder's order.
RUNGS="none:none-race local:local-three-instances setnx:setnx-crash
setnx-expire:setnx-expire-crash-between atomic-expiry:atomic-expiry-slow-business
uuid-owner:uuid-owner-release-gap lua-release:lua-release-slow-business
reentrant-watchdog:reentrant-watchdog-freeze fenced:fenced-freeze atomic-deduct:atomic-deduct"
TOKEN=$(python3 -c 'import uuid; print(uuid.uuid4().hex)')
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
LOG=$(mktemp)
OUT=$(mktemp -d)
CLASS_DIR=$(mktemp -d)
RUST_LOG=oversell=error "$OVERSELL" up --instances 3 --port "$PORT" --admin-token "$TOKEN" \
  --class-dir "$CLASS_DIR" >"$LOG" 2>&1 &
UP=$!
trap 'kill -TERM $UP 2>/dev/null; wait $UP 2>/dev/null; rm -rf "$LOG" "$OUT" "$CLASS_DIR"' EXIT
for _ in $(seq 300); do grep -q '^ready:' "$LOG" && break; sleep 0.2; done
grep -q '^ready:' "$LOG" || { cat "$LOG"; echo "rung-faults: oversell up did not become ready" >&2; exit 1; }
echo "rung-faults: $(date -u +%FT%TZ), $REPEAT runs a rung, load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for pair in $RUNGS; do
  chapter=${pair#*:}
  echo "rung-faults: ${pair%%:*} ($chapter) ×$REPEAT" >&2
  for k in $(seq "$REPEAT"); do
    "$LOADTEST" scenario "$chapter" --url "http://127.0.0.1:$PORT" --token "$TOKEN" --json \
      >"$OUT/$chapter.$k.json" || true
  done
done
python3 - "$OUT" "$REPEAT" $RUNGS <<'PY'
import json, statistics, sys
out, repeat, rungs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
# What each chapter does to its rung (the chapter reference has the whole load).
FAULT = {
    "none-race": "none: a crowd at once",
    "local-three-instances": "none: three instances behind nginx",
    "setnx-crash": "the holder crashes inside the lock",
    "setnx-expire-crash-between": "the holder crashes between SETNX and EXPIRE",
    "atomic-expiry-slow-business": "work longer than the lease",
    "uuid-owner-release-gap": "a pause between the GET and the DEL",
    "lua-release-slow-business": "work longer than the lease",
    "reentrant-watchdog-freeze": "the holder's process frozen past the lease",
    "fenced-freeze": "the holder's process frozen past the lease",
    "atomic-deduct": "none: a crowd at once, no lock",
}
print("| tier | chapter | its fault | buyers / items | oversold | overlaps | foreign releases "
      "| lost updates | 503s | held |")
print("|---|---|---|---|---|---|---|---|---|---|")
for pair in rungs:
    tier, chapter = pair.split(":")
    runs = []
    for k in range(1, repeat + 1):
        try:
            runs.append(json.load(open(f"{out}/{chapter}.{k}.json"))["scenarios"][0])
        except (OSError, ValueError, KeyError, IndexError):
            pass
    if not runs:
        print(f"| {tier} | `{chapter}` | — | — | no run answered | | | | | 0/{repeat} |")
        continue
    fig = lambda name: statistics.median(r["last"]["figures"].get(name, 0) for r in runs)
    fault = FAULT.get(chapter, "")
    held = sum(1 for r in runs if r["passed"])
    print(f"| {tier} | `{chapter}` | {fault} | {fig('sent_ok') + fig('sent_sold_out') + fig('sent_503') + fig('sent_other'):.0f} / {fig('initial_stock'):.0f} "
          f"| {fig('oversold'):.0f} | {fig('overlaps'):.0f} | {fig('foreign_releases'):.0f} "
          f"| {fig('lost_updates'):.0f} | {fig('sent_503'):.0f} | {held}/{len(runs)} |")
PY
