#!/usr/bin/env bash
# Regenerates BENCHMARKS.md, every figure from this one run:
#
#   1. the generator's own speed: `loadtest run` and wrk (and oha, when installed) take turns
#      (the order swapped every round), requests/s and CPU time per request,
#      against the same minimal endpoint (nginx answering a constant; optionally also a path of
#      the service through `oversell up`'s nginx, SERVICE_PATH); medians, ratio loadtest/wrk;
#   2. the tier matrix through nginx with 3 instances (`oversell up`): throughput per tier and
#      each safe tier's ratio to `none`, plus bench/matrix.svg;
#   3. the sustained selling rate per tier and wait (bench/selling-rate.sh: loadtest and wrk,
#      ratios to `none`, p50/p99/max, ground truth, and the serial floor).
#
# Everything runs against 127.0.0.1, for a bounded time. Needs: cargo, nginx, wrk,
# redis-server, python3, curl. Knobs (environment): ROUNDS (8), DURATION seconds per round (4),
# CONNECTIONS (64), BUYERS (1000), STOCK (100), BUSINESS_MS (5), OUT (BENCHMARKS.md),
# SERVICE_PATH (empty).
set -euo pipefail

cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-8}
DURATION=${DURATION:-4}
CONNECTIONS=${CONNECTIONS:-64}
BUYERS=${BUYERS:-1000}
STOCK=${STOCK:-100}
BUSINESS_MS=${BUSINESS_MS:-5}
OUT=${OUT:-BENCHMARKS.md}
# A path of the service to benchmark the tools against as well, through nginx (e.g. /ping once
# it exists). Empty: only nginx's own constant answer. Not a static file: those answers are
# currently held ~40 ms by Nagle's algorithm meeting delayed ACKs (see BENCHMARKS.md).
SERVICE_PATH=${SERVICE_PATH:-}
TOKEN=bench-token

for tool in nginx wrk redis-server python3 curl /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "error: $tool is not installed" >&2; exit 1; }
done

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
echo "== building release binaries" >&2
cargo build --release --quiet -p workshop --bin loadtest
cargo build --release --quiet -p oversell --bin oversell
cargo build --release --quiet -p oversell-bench --bin serial-floor
LOADTEST=$PWD/target/release/loadtest
OVERSELL=$PWD/target/release/oversell

WORK=$(mktemp -d)
PIDS=()
cleanup() {
    # SIGTERM lets `oversell up` stop nginx, its instances and redis, and remove its run dir.
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Polls a URL until it answers 200, for at most 30 s.
wait_for() {
    for _ in $(seq 300); do
        curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "error: $1 did not come up within 30 s" >&2
    exit 1
}

# bench URL LABEL: ROUNDS rounds of wrk and loadtest (and oha), the order swapped every round;
# one line per measurement in $WORK/results.tsv: label, tool, round, requests/s, CPU seconds.
bench() {
    local url=$1 label=$2
    local base=${url%/*} path=/${url##*/}
    for round in $(seq "$ROUNDS"); do
        local tools=(wrk loadtest)
        if [ $((round % 2)) -eq 0 ]; then tools=(loadtest wrk); fi
        if command -v oha >/dev/null; then tools+=(oha); fi
        local line="   $label round $round:"
        for tool in "${tools[@]}"; do
            case $tool in
            wrk)
                rps=$(/usr/bin/time -f '%U %S' -o "$WORK/cpu" wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" "$url" |
                    awk '/^Requests\/sec:/ {print $2}') ;;
            loadtest)
                rps=$(/usr/bin/time -f '%U %S' -o "$WORK/cpu" "$LOADTEST" run --url "$base" -m GET --path "$path" \
                    -c "$CONNECTIONS" -z "${DURATION}s" --json |
                    python3 -c 'import json,sys; s=json.load(sys.stdin)["stats"]; assert s["ok"] == s["sent"], s; print(s["throughput_rps"])') ;;
            oha)
                rps=$(/usr/bin/time -f '%U %S' -o "$WORK/cpu" oha --no-tui -j -c "$CONNECTIONS" -z "${DURATION}s" "$url" |
                    python3 -c 'import json,sys; print(json.load(sys.stdin)["summary"]["requestsPerSec"])') ;;
            esac
            cpu=$(awk '{print $1 + $2}' "$WORK/cpu")
            printf '%s\t%s\t%s\t%s\t%s\n' "$label" "$tool" "$round" "$rps" "$cpu" >>"$WORK/results.tsv"
            line+=" $tool $rps req/s ($cpu s CPU)"
        done
        echo "$line" >&2
    done
}

echo "== 1a. minimal endpoint: nginx return 200" >&2
PING_PORT=$(free_port)
mkdir -p "$WORK/ping/tmp"
sed "s#@PORT@#$PING_PORT#; s#@DIR@#$WORK/ping#g; s#@WORKERS@#auto#" bench/ping-nginx.conf.in >"$WORK/ping/nginx.conf"
nginx -p "$WORK/ping" -c "$WORK/ping/nginx.conf" -e stderr &
PIDS+=($!)
wait_for "http://127.0.0.1:$PING_PORT/ping"
bench "http://127.0.0.1:$PING_PORT/ping" "nginx return 200 (/ping)"

echo "== starting oversell up: nginx + 3 instances + redis" >&2
UP_PORT=$(free_port)
# A class dir of its own: a bench run starts from nothing and keeps nothing in the home dir.
"$OVERSELL" up --instances 3 --port "$UP_PORT" --admin-token "$TOKEN" --class-dir "$WORK/class" >"$WORK/up.log" 2>&1 &
PIDS+=($!)
wait_for "http://127.0.0.1:$UP_PORT/health"

if [ -n "$SERVICE_PATH" ]; then
    echo "== 1b. $SERVICE_PATH of the service through nginx (3 instances)" >&2
    bench "http://127.0.0.1:$UP_PORT$SERVICE_PATH" "service $SERVICE_PATH via nginx, 3 instances"
fi

echo "== 2. the tier matrix through nginx" >&2
MATRIX_CMD="loadtest matrix --url http://127.0.0.1:$UP_PORT --instances 3 --token \$TOKEN --tiers all --stock $STOCK --buyers $BUYERS --business-ms $BUSINESS_MS --json --chart bench/matrix.svg"
"$LOADTEST" matrix --url "http://127.0.0.1:$UP_PORT" --instances 3 --token "$TOKEN" \
    --tiers all --stock "$STOCK" --buyers "$BUYERS" --business-ms "$BUSINESS_MS" \
    --json --chart bench/matrix.svg >"$WORK/matrix.json"
"$LOADTEST" --version >"$WORK/version"

echo "== 3. sustained selling rate per tier (closed loop, stock that never runs out)" >&2
SELLING_CMD="bench/selling-rate.sh http://127.0.0.1:$UP_PORT \$TOKEN 0 64 5"
LOADTEST="$LOADTEST" SERIAL_FLOOR="$PWD/target/release/serial-floor" \
    bench/selling-rate.sh "http://127.0.0.1:$UP_PORT" "$TOKEN" 0 64 5 >"$WORK/selling.tsv"

echo "== writing $OUT (sections 1-3; 3b and sections 4 and on come from their own benches and are kept)" >&2
kept="$WORK/kept.md"
if [ -f "$OUT" ]; then sed -n '/^## \(3b\|4\)\. /,$p' "$OUT" >"$kept"; else : >"$kept"; fi
ROUNDS=$ROUNDS DURATION=$DURATION CONNECTIONS=$CONNECTIONS MATRIX_CMD=$MATRIX_CMD LOAD_BEFORE=$LOAD_BEFORE SELLING_CMD=$SELLING_CMD \
    python3 -B bench/report.py "$WORK/results.tsv" "$WORK/matrix.json" "$WORK/selling.tsv" >"$WORK/generated.md"
{ cat "$WORK/generated.md"; [ -s "$kept" ] && { echo; cat "$kept"; }; } >"$OUT"
cat "$OUT"
