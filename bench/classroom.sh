#!/usr/bin/env bash
# The classroom benchmarks of BENCHMARKS.md §4, in one go: what a viewer costs (feed-cost),
# a flooding student beside the demo (fair-share), and a class of 30 with room tokens beside
# the curriculum (class-rehearsal). Each starts its own `oversell up` fleets on loopback and
# prints its figures; nothing is written to BENCHMARKS.md (quote what it prints).
#
#   bash bench/classroom.sh            # about 8 minutes on 2 cores
set -uo pipefail
cd "$(dirname "$0")/.."
cargo build --release --workspace --bins || exit 1
failed=0
echo "## feed-cost ($(date -u +%F), load $(cut -d' ' -f1-3 /proc/loadavg))"
timeout 900 target/release/feed-cost --rounds 5 --seconds 8 || failed=1
echo
echo "## fair-share"
timeout 900 target/release/fair-share --rounds 2 --seconds 8 2> >(grep -v 'limiting requests' >&2) || failed=1
echo
echo "## class-rehearsal"
timeout 900 target/release/class-rehearsal --duration 120 || failed=1
exit $failed
