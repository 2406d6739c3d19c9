#!/usr/bin/env bash
# What keeping every acknowledged order costs the selling rate: the same fleet, the same
# tiers, with the resource store's append-only file set three ways in turn (`CONFIG SET
# appendfsync`, live, between rows):
#   everysec  fsynced once a second in the background (loses orders when a lagging fsync
#             makes Redis postpone its write and answer anyway: BENCHMARKS.md section 5)
#   written   every write in the file before its reply, flushed by the kernel (`no`): what
#             `oversell up --resource-persistence written`, the default, runs
#   always    fsynced before every reply
# in the order everysec written always always written everysec per round (both orders: the
# machine drifts), each tier measured by bench/selling-rate.sh with the generator
# (TOOLS=loadtest). Then a second, shorter pass per mode and tier with strace attached to
# the store (`strace -f -c -e trace=fsync,fdatasync`, seccomp-filtered) counts the fsyncs a
# sale costs; its rates are not kept (a traced fsync is slower).
#
#   bench/durability.sh URL TOKEN [ROUNDS] [SECONDS]
#
# Needs a fleet whose locks share the resource store (`oversell up`, the default lock store),
# redis-cli, strace. Environment: ROWS (default: none lua-release reentrant-watchdog fenced
# fair), MODES (default: everysec written always), COUNT_SECONDS (3, the strace pass).
# Bounded: ROUNDS × 2 × modes × rows × SECONDS, plus modes × rows × COUNT_SECONDS.
#
# Prints TSV, then a table per tier (the mean rate per mode, and each mode over everysec):
#   rate   round mode tier items_per_s oversold
#   fsync  mode tier fsyncs items fsyncs_per_sale
set -euo pipefail
URL=$1 TOKEN=$2 ROUNDS=${3:-2} SECONDS_=${4:-6}
HERE=$(cd "$(dirname "$0")" && pwd)
ROWS=${ROWS:-none lua-release reentrant-watchdog fenced fair}
MODES=${MODES:-everysec written always}
COUNT_SECONDS=${COUNT_SECONDS:-3}
command -v strace >/dev/null || { echo "durability.sh: needs strace (apt-get install strace)" >&2; exit 2; }

field() { curl -sf "$URL/state" | python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }
[ "$(field "['lock_store']['kind']")" = shared ] ||
    { echo "durability.sh: needs a fleet whose locks share the resource store (oversell up)" >&2; exit 2; }
REDIS_URL=redis://$(field "['lock_store']['nodes'][0]['addr']")
PID=$(redis-cli -u "$REDIS_URL" INFO server | tr -d '\r' | sed -n 's/^process_id://p')
[ "$(redis-cli -u "$REDIS_URL" CONFIG GET appendonly | tail -1)" = yes ] ||
    { echo "durability.sh: the resource store keeps no append-only file (--resource-persistence none or rdb)" >&2; exit 2; }
was=$(redis-cli -u "$REDIS_URL" CONFIG GET appendfsync | tail -1)
trap 'redis-cli -u "$REDIS_URL" CONFIG SET appendfsync "$was" >/dev/null' EXIT

mode() {
    local fsync=$1
    [ "$fsync" = written ] && fsync=no
    redis-cli -u "$REDIS_URL" CONFIG SET appendfsync "$fsync" >/dev/null
}
# One tier's `sale` line from selling-rate.sh: items/s and oversold.
measure() {
    ROWS=$1 TOOLS=loadtest WARMUP=0 REDIS_URL='' bash "$HERE/selling-rate.sh" "$URL" "$TOKEN" 0 64 "$2" 2>/dev/null |
        awk -F'\t' '$1 == "sale" {print $5, $7, $12}'
}

TSV=$(mktemp)
order=$MODES
reversed=$(tr ' ' '\n' <<<"$MODES" | tac | tr '\n' ' ')
for round in $(seq 1 "$ROUNDS"); do
    for m in $order $reversed; do
        mode "$m"
        for tier in $ROWS; do
            read -r _ rate oversold <<<"$(measure "$tier" "$SECONDS_")"
            printf 'rate\t%s\t%s\t%s\t%s\t%s\n' "$round" "$m" "$tier" "$rate" "$oversold" | tee -a "$TSV"
            echo "   round $round $m $tier: $rate items/s" >&2
        done
    done
done

for m in $MODES; do
    mode "$m"
    for tier in $ROWS; do
        out=$(mktemp)
        strace --seccomp-bpf -f -c -e trace=fsync,fdatasync -o "$out" -p "$PID" 2>/dev/null &
        tracer=$!
        sleep 0.5
        read -r items _ _ <<<"$(measure "$tier" "$COUNT_SECONDS")"
        kill -INT "$tracer"
        wait "$tracer" || true
        calls=$(awk '$NF == "fsync" || $NF == "fdatasync" {n += $4} END {print n + 0}' "$out")
        rm -f "$out"
        per=$(python3 -c "print(f'{$calls / max($items, 1):.3f}')")
        printf 'fsync\t%s\t%s\t%s\t%s\t%s\n' "$m" "$tier" "$calls" "$items" "$per" | tee -a "$TSV"
        echo "   fsyncs, $m $tier: $calls over $items sales ($per a sale)" >&2
    done
done

python3 - "$TSV" "$MODES" <<'PY'
import sys, statistics
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])]
modes = sys.argv[2].split()
rates, fsyncs, tiers = {}, {}, []
for r in rows:
    if r[0] == "rate":
        rates.setdefault((r[3], r[2]), []).append(float(r[4]))
        if r[3] not in tiers:
            tiers.append(r[3])
    elif r[0] == "fsync":
        fsyncs[(r[2], r[1])] = r[5]
print()
print("| tier | " + " | ".join(f"{m} items/s" for m in modes) + " | "
      + " | ".join(f"{m} / everysec" for m in modes if m != "everysec") + " | "
      + " | ".join(f"fsyncs a sale, {m}" for m in modes) + " |")
print("|---" * (1 + 2 * len(modes) + len([m for m in modes if m != "everysec"])) + "|")
for t in tiers:
    mean = {m: statistics.mean(rates.get((t, m), [0])) for m in modes}
    base = mean.get("everysec") or 0
    ratios = [f"{mean[m] / base:.2f}" if base else "-" for m in modes if m != "everysec"]
    print(f"| {t} | " + " | ".join(f"{mean[m]:,.0f}" for m in modes) + " | " + " | ".join(ratios)
          + " | " + " | ".join(fsyncs.get((t, m), "-") for m in modes) + " |")
PY
rm -f "$TSV"
