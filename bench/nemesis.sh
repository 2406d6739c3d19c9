#!/usr/bin/env bash
# The fleet under its own nemesis (bench/src/bin/nemesis/): a fleet started with `oversell up
# --lab`, a class of 30 rooms buying on the safe tiers, voting and grading through nginx,
# while its members are SIGKILLed, paused and restarted at random, seeded and logged. Ends
# with `acknowledged lost`, `oversold on safe tiers`, `votes lost`, `gradings lost` and
# `longest recovery`; exits 1 when a count is not 0 or a member was not back in time.
#
#   bench/nemesis.sh --minutes 2 [--seed N] [more nemesis flags: target/release/nemesis --help]
#
# Bounded: the minutes asked, 15 s of quiet, and at most 4 min for a last grading.
# What the fleet itself says (its warnings while members are struck) goes to
# target/nemesis-fleet.log, shown in part when the run fails.
# Environment: NEMESIS, OVERSELL (the binaries; built in release when unset).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${NEMESIS:-}" ] || [ -z "${OVERSELL:-}" ]; then
  cargo build --release --workspace --bins --quiet
fi
log=target/nemesis-fleet.log
if "${NEMESIS:-target/release/nemesis}" --oversell "${OVERSELL:-target/release/oversell}" "$@" 2>"$log"; then
  exit 0
fi
echo "nemesis: failed; the fleet's last words ($log):" >&2
tail -n 40 "$log" >&2
exit 1
