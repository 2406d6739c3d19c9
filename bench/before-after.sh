#!/usr/bin/env bash
# Before/after of a change on the sale path, in one run: two builds of the project (their
# target dirs), each on a fleet of its own (`oversell up --instances 3`), run alternately
# ROUNDS times through bench/selling-rate.sh with the same rows, so the machine's drift falls on
# both sides alike. Prints selling-rate's TSV lines, each prefixed with its label and round.
#
#   bench/before-after.sh BEFORE_TARGET_DIR AFTER_TARGET_DIR [ROUNDS] [SECONDS]
#
# Each target dir must hold release builds of oversell, loadtest and serial-floor
# (`cargo build --release -p oversell -p workshop -p oversell-bench`). Environment: ROWS
# (default: none lua-release reentrant-watchdog fenced lua-release@cohort:32), CONNECTIONS (64).
set -euo pipefail
BEFORE=$1 AFTER=$2 ROUNDS=${3:-2} SECONDS_=${4:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
export ROWS=${ROWS:-none lua-release reentrant-watchdog fenced lua-release@cohort:32}
export TOOLS=loadtest FLOOR_SECONDS=${FLOOR_SECONDS:-1}
TOKEN=before-after
for dir in "$BEFORE" "$AFTER"; do
    for bin in oversell loadtest serial-floor; do
        [ -x "$dir/release/$bin" ] || { echo "error: no $dir/release/$bin (build it with --release)" >&2; exit 1; }
    done
done
for round in $(seq "$ROUNDS"); do
    for side in before after; do
        dir=$BEFORE; [ "$side" = after ] && dir=$AFTER
        OVERSELL=$dir/release/oversell LOADTEST=$dir/release/loadtest REPEAT=1
        # shellcheck source=fleet.sh
        source "$HERE/fleet.sh"
        fleet_up --instances 3
        LOADTEST=$LOADTEST SERIAL_FLOOR=$dir/release/serial-floor \
            bash "$HERE/selling-rate.sh" "$URL" "$TOKEN" 0 "${CONNECTIONS:-64}" "$SECONDS_" \
            | sed "s/^/$side\t$round\t/"
        fleet_down
    done
done
