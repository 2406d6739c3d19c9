#!/usr/bin/env bash
# The grader's hold rate: every rung of the ladder submitted as a lab lock (static/locks/) and
# graded N times on one fleet (`oversell up --lab`, 3 instances, nginx); per rung, how often
# each attack had each outcome, and whether every grading gave the outcomes of the grader's
# LADDER table (workshop/src/lab/mod.rs). Not part of CI (CI grades each rung once,
# tests/api/lab.rs): about 12 s a grading. Usage: bench/lab-rates.sh [N] [RUNG…]
set -euo pipefail
cd "$(dirname "$0")/.."
REPEAT=${1:-20}
shift || true
RUNGS=${*:-setnx setnx-expire atomic-expiry uuid-owner lua-release reentrant-watchdog}
OVERSELL=target/release/oversell LOADTEST=target/release/loadtest
cargo build --release --quiet --bins
TOKEN=$(python3 -c 'import uuid; print(uuid.uuid4().hex)') REPEAT=$REPEAT
# shellcheck source=fleet.sh
source bench/fleet.sh
RUST_LOG=oversell=error fleet_up --instances 3 --lab
echo "# lab-rates: $REPEAT gradings per rung, $(date -u +%F), load $(cut -d' ' -f1-3 /proc/loadavg)"
for rung in $RUNGS; do
    OVERSELL_ADMIN_TOKEN=$TOKEN "$LOADTEST" lab submit --url "$URL" --room "rate-$rung" --from "static/locks/$rung" >/dev/null
    OVERSELL_ADMIN_TOKEN=$TOKEN "$LOADTEST" lab grade --url "$URL" --room "rate-$rung" --repeat "$REPEAT" --json --quiet \
        | python3 -c "
import json, sys
rung = sys.argv[1]
report = json.load(sys.stdin)
cards = report.get('cards', [report])
# The card names the rung whose LADDER outcomes it got: the same rung, every time.
same = sum(1 for c in cards if c.get('matches') == rung)
print(f'{rung:<20} every outcome as the ladder says: {same}/{len(cards)}')
for attack, seen in report.get('steady', {}).items():
    print(f'    {attack:<28} {seen}')
" "$rung"
done
