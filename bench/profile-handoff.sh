#!/usr/bin/env bash
# Where a lock hand-off's time goes: for a few configurations, on ONE fleet (`oversell up
# --instances 3`, one Redis, nginx), a closed loop of buyers (`loadtest run`, business step 0, a
# stock that never runs out) while three things are measured:
#   a. CPU per process group, from /proc: the generator, nginx (master + workers), the three
#      instances, redis-server, `oversell up` itself, perf, and the rest of the machine
#      (/proc/stat minus the groups), with idle; as CPU seconds, share of the cores and CPU µs
#      per item sold (items from the ledger: GET /state's items_sold). Also per item: the time
#      the group's threads spent runnable but waiting for a CPU (run-queue wait, schedstat) and
#      how many time slices they ran (≈ wake-ups);
#   b. perf (`perf record -a -g -e cpu-clock`, all CPUs): share of samples per group and how
#      much of it is in the kernel, the instances' samples by crate and their top user-space
#      functions, the kernel's samples by activity (wake-ups and switches, TCP send, loopback
#      receive, …) and by system call, redis-server's top functions;
#   c. Redis's own view: INFO commandstats and INFO cpu before/after (commands and µs of
#      execution per item).
# Then a summary table across the configurations. Bounded: ROWS × (SECONDS + ~2 s) plus
# perf's post-processing (a few seconds per row). Loopback only.
#
#   bench/profile-handoff.sh [SECONDS=5] [CONNECTIONS=64]
#
# Needs the release binaries (`cargo build --release -p oversell --bin oversell -p workshop
# --bin loadtest`, and for the closing serial floor `-p oversell-bench --bin serial-floor`),
# found in $CARGO_TARGET_DIR/release or target/release (or set OVERSELL, LOADTEST,
# SERIAL_FLOOR); nginx, redis-server, redis-cli, python3, curl, /usr/bin/time; and perf unless
# PERF=0, run as root (perf_event_paranoid 2 lets a user see only their own processes, not -a).
# Environment: ROWS ("none lua-release lua-release@cohort:32"; `tier` waits `pubsub`,
# `tier@wait` sets the wait), PERF (1), PERF_FREQ (499 Hz per CPU), TOP (15 functions),
# FLOOR_SECONDS (1 s per chain of the serial floor), INSTANCE_THREADS (tokio worker threads per
# instance, TOKIO_WORKER_THREADS; default one per core), KEEP (a directory to keep the perf
# data, snapshots and Redis INFO in).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_=${1:-5} CONNECTIONS=${2:-64}
BIN=${CARGO_TARGET_DIR:-target}/release
OVERSELL=${OVERSELL:-$BIN/oversell} LOADTEST=${LOADTEST:-$BIN/loadtest}
SERIAL_FLOOR=${SERIAL_FLOOR:-$BIN/serial-floor} FLOOR_SECONDS=${FLOOR_SECONDS:-1}
ROWS=${ROWS:-none lua-release lua-release@cohort:32}
PERF=${PERF:-1} PERF_FREQ=${PERF_FREQ:-499}
export TOP=${TOP:-15}
TOKEN=bench-profile REPEAT=1
HELPER=bench/profile-handoff.py

fail() { echo "error: $*" >&2; exit 1; }
for tool in nginx redis-server redis-cli python3 curl /usr/bin/time; do
    command -v "$tool" >/dev/null || fail "$tool is not installed"
done
[ -x "$OVERSELL" ] || fail "no release binary $OVERSELL (cargo build --release -p oversell --bin oversell)"
[ -x "$LOADTEST" ] || fail "no release binary $LOADTEST (cargo build --release -p workshop --bin loadtest)"

WORK=${KEEP:-$(mktemp -d)}
mkdir -p "$WORK"
rm -f "$WORK/rows.jsonl"
if [ "$PERF" = 1 ]; then
    command -v perf >/dev/null || fail "perf is not installed (or run with PERF=0)"
    if ! perf record -q -a -e cpu-clock -o "$WORK/probe.data" -- true 2>"$WORK/probe.err"; then
        fail "perf cannot record here (PERF=0 skips it): $(grep -v '^$' "$WORK/probe.err" | head -1)"
    fi
    rm -f "$WORK/probe.data" "$WORK/probe.err"
fi

. bench/fleet.sh
trap 'fleet_down; rm -f "$log"; [ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT
# INSTANCE_THREADS: tokio worker threads per instance (TOKIO_WORKER_THREADS; default one per core).
[ -n "${INSTANCE_THREADS:-}" ] && export TOKIO_WORKER_THREADS=$INSTANCE_THREADS
fleet_up --instances 3
unset TOKIO_WORKER_THREADS
field() { state | python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }
# The fleet's processes, from the banner `oversell up` printed (its children's own output is
# prefixed `app1  | `, so `^app1: ` is the banner's line).
pid_of() { grep -o "^$1: .* pid=[0-9]*" "$log" | grep -o '[0-9]*$' | paste -sd, -; }
NGINX=$(pid_of nginx) APPS=$(pid_of 'app[0-9]*') REDIS_PID=$(pid_of redis)
[ -n "$NGINX" ] && [ -n "$APPS" ] && [ -n "$REDIS_PID" ] || fail "could not read the fleet's pids from its banner"
groups() {
    echo "nginx=$NGINX,$(pgrep -P "$NGINX" | paste -sd, -)" "instances=$APPS" "redis=$REDIS_PID" "up=$up" \
        ${perf_pid:+"perf=$perf_pid"}
}
redis_info() { redis-cli -p "$REDIS_PORT" INFO commandstats >"$1"; redis-cli -p "$REDIS_PORT" INFO cpu >>"$1"; }

echo "## Where a hand-off's time goes"
echo
echo "\`bench/profile-handoff.sh $SECONDS_ $CONNECTIONS\`: one fleet (\`oversell up --instances 3\`, nginx $URL, Redis :$REDIS_PORT);"
echo "per configuration a closed loop \`loadtest run --url URL -c $CONNECTIONS -z ${SECONDS_}s\`, business 0 ms, stock 1,000,000."
[ -n "${INSTANCE_THREADS:-}" ] && echo "Instances started with TOKIO_WORKER_THREADS=$INSTANCE_THREADS."
echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), clock tick $(getconf CLK_TCK) Hz."
echo "Load average (1, 5, 15 min) before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

i=0
for row in $ROWS; do
    i=$((i + 1))
    tier=${row%%@*} wait=pubsub
    [ "$row" != "$tier" ] && wait=${row#*@}
    admin PUT /admin/config "{\"tier\":\"$tier\",\"business_ms\":0,\"ttl_ms\":3000,\"wait\":\"$wait\",\"wait_deadline_ms\":20000}" ||
        fail "the fleet refused tier $tier wait $wait"
    admin POST /admin/reset '{"stock":1000000}'
    # Settings reach every instance over pub/sub; wait until nginx's picks agree.
    for _ in $(seq 20); do
        [ "$(field "['settings']['wait']")" = "$wait" ] && [ "$(field "['tier']")" = "$tier" ] && break
        sleep 0.05
    done
    sold_before=$(field "['items_sold']")

    perf_pid=
    if [ "$PERF" = 1 ]; then
        # Started before the window and stopped after it, so its start-up and its writing out
        # stay outside; its CPU inside the window is measured like any group's.
        perf record -q -a -g -F "$PERF_FREQ" -e cpu-clock -o "$WORK/$i.perf.data" 2>"$WORK/$i.perf.err" &
        perf_pid=$!
        sleep 0.5
        kill -0 "$perf_pid" 2>/dev/null || fail "perf record stopped: $(head -1 "$WORK/$i.perf.err")"
    fi
    redis_info "$WORK/$i.redis.before"
    python3 "$HELPER" snap $(groups) >"$WORK/$i.before.json"
    start=$(date +%s.%N)
    /usr/bin/time -f '%e %U %S' -o "$WORK/$i.loadtest.time" \
        "$LOADTEST" run --url "$URL" -c "$CONNECTIONS" -z "${SECONDS_}s" --quiet --json --no-hand-off >"$WORK/$i.lt.json" &
    timer=$!
    for _ in $(seq 50); do
        lt=$(pgrep -P "$timer" || true)
        [ -n "$lt" ] && break
        sleep 0.02
    done
    echo "${lt:-}" >"$WORK/$i.loadtest.pid"
    wait "$timer" || fail "loadtest run failed: $(head -3 "$WORK/$i.lt.json")"
    end=$(date +%s.%N)
    python3 "$HELPER" snap $(groups) >"$WORK/$i.after.json"
    redis_info "$WORK/$i.redis.after"
    if [ -n "$perf_pid" ]; then
        kill -INT "$perf_pid"
        wait "$perf_pid" || true
        perf script -i "$WORK/$i.perf.data" -F comm,pid,tid,ip,sym,dso >"$WORK/$i.perf.txt" 2>/dev/null ||
            fail "perf script failed on $WORK/$i.perf.data"
    fi
    sold=$(( $(field "['items_sold']") - sold_before ))
    python3 "$HELPER" row "$WORK" "$i" "$tier (wait $wait)" "$sold" \
        "$(python3 -c "print(f'{$end - $start:.3f}')")"
    echo "   profiled $row: $sold items" >&2
done

python3 "$HELPER" summary "$WORK"
if [ -x "$SERIAL_FLOOR" ]; then
    echo "The serial floor on this machine, for scale: one client doing a chain's round trips back to back"
    echo "against the fleet's Redis, no HTTP, no other load (\`serial-floor --seconds $FLOOR_SECONDS\`):"
    echo
    python3 "$HELPER" snap "redis=$REDIS_PID" >"$WORK/floor.before.json"
    /usr/bin/time -f '%e %U %S' -o "$WORK/floor.time" \
        "$SERIAL_FLOOR" --redis "redis://127.0.0.1:$REDIS_PORT" --seconds "$FLOOR_SECONDS" >"$WORK/floor.tsv"
    python3 "$HELPER" snap "redis=$REDIS_PID" >"$WORK/floor.after.json"
    FLOOR_SECONDS=$FLOOR_SECONDS python3 "$HELPER" floor "$WORK"
else
    echo "(no serial floor: $SERIAL_FLOOR is not built; cargo build --release -p oversell-bench --bin serial-floor)" >&2
fi
echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
[ -n "${KEEP:-}" ] && echo "Raw data (perf.data, snapshots, Redis INFO) kept in $KEEP."
# Every instance still the one we measured (the supervisor restarts a dead one under a new pid).
for pid in ${APPS//,/ } $REDIS_PID $NGINX; do
    kill -0 "$pid" 2>/dev/null || fail "process $pid of the fleet died during the run"
done
