#!/usr/bin/env bash
# Every chapter on docker compose beside the same chapter on `oversell up`, in one run, and the
# selling rate of lua-release on both.
#
#   bench/compose-chapters.sh [REPEAT] [SETUPS…]     (REPEAT default 10; SETUPS default: all)
#
# A setup is a fleet both paths can start: the compose profile (with its LOCK_PERSISTENCE) and
# the `oversell up` flags of the same fleet. For each, the script starts the compose fleet
# (deploy/compose.sh), runs `loadtest scenario ID --repeat REPEAT` for every chapter whose
# needs that fleet meets exactly, takes it down, then does the same on `oversell up`.
# Last, bench/selling-rate.sh (lua-release and none, loadtest only, 64 connections, 5 s) on
# the shared compose fleet and on `oversell up`, one after the other.
#
# Prints TSV lines (BENCHMARKS.md quotes them):
#   chapter  SETUP  CHAPTER  PATH(compose|up)  HELD  RUNS  SECONDS
#   rate     PATH   TIER     ITEMS_PER_S  P99_MS
# and the seconds each part took. Needs Docker with Compose, the base images
# (deploy/base-images.sh), and root (`oversell up --network netns`, so that the partition
# chapters run on both paths). Not part of CI: it takes long (minutes a setup).
set -euo pipefail
cd "$(dirname "$0")/.."
REPEAT=${1:-10}
shift || true
ALL_SETUPS="shared lock-single:none lock-single:rdb lock-single:always sentinel redlock redlock:always zookeeper zookeeper3"
SETUPS=${*:-$ALL_SETUPS}

cargo build --release --quiet --workspace --bins
export ADMIN_TOKEN
ADMIN_TOKEN=$(python3 -c 'import uuid; print(uuid.uuid4().hex)')
export COMPOSE_PROJECT_NAME="oversell-bench-$$"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
LOADTEST=target/release/loadtest
UP_PID=""
UP_LOG=$(mktemp)
stop_up() { [ -n "$UP_PID" ] && kill -TERM "$UP_PID" 2>/dev/null && wait "$UP_PID" 2>/dev/null; UP_PID=""; }
trap 'stop_up; bash deploy/compose.sh down >/dev/null 2>&1 || true; rm -rf "$UP_LOG" "$UP_LOG.class"' EXIT

# setup → "PROFILE LOCK_PERSISTENCE" and → the `oversell up` flags of the same fleet.
profile_of() { case "${1%%:*}" in shared) echo "";; *) echo "${1%%:*}";; esac; }
persistence_of() { case "$1" in *:*) echo "${1#*:}";; *) echo none;; esac; }
# Every `up` fleet gets a network of its own (root), so the partition chapters run on both
# paths: a compose fleet always has one.
up_flags() {
  local p; p=$(persistence_of "$1")
  echo -n "--network netns "
  case "${1%%:*}" in
    shared) echo "";;
    lock-single) echo "--lock-store single --lock-persistence $p";;
    sentinel) echo "--lock-store sentinel";;
    redlock) echo "--lock-store redlock --lock-persistence $p";;
    zookeeper) echo "--zookeeper";;
    zookeeper3) echo "--zookeeper-nodes 3";;
  esac
}

# The chapters each setup runs: those whose needs (the catalog's StoreSetup) it meets exactly,
# so every chapter runs once per path.
chapters_of() {
  case "$1" in
    shared) echo none-race local-one-instance local-three-instances setnx-crash \
      setnx-expire-crash-between setnx-expire-crash-after atomic-expiry-slow-business \
      uuid-owner-release-gap lua-release-slow-business lua-release-normal \
      reentrant-watchdog-slow-business reentrant-fixed-lease-slow-business reentrant-nested \
      reentrant-watchdog-crash-holding reentrant-watchdog-freeze fenced-freeze atomic-deduct ;;
    lock-single:none) echo redis-down restart-loses-lock watchdog-holder-cut-off fenced-holder-cut-off ;;
    lock-single:rdb) echo restart-rdb-loses-recent-lock ;;
    lock-single:always) echo restart-aof-keeps-lock ;;
    sentinel) echo failover-loses-lock failover-sync-replicas sentinel-split-brain sentinel-min-replicas ;;
    redlock) echo redlock-minority-down redlock-majority-down redlock-restart-no-fsync \
      redlock-clock-jump redlock-freeze redlock-validity-runs-out redlock-minority-partition \
      redlock-majority-partition redlock-holder-cut-off ;;
    redlock:always) echo redlock-restart-fsync-always ;;
    zookeeper) echo zookeeper-normal zookeeper-crash-holding zookeeper-session-expiry \
      zookeeper-fenced zookeeper-client-partitioned zookeeper-fenced-partitioned ;;
    zookeeper3) echo zookeeper-node-down zookeeper-quorum-lost zookeeper-server-cut-off ;;
  esac
}

# Runs the setup's chapters against URL; prints `chapter SETUP ID PATH HELD RUNS SECONDS`.
chapters() { # setup path url
  local id out held t0
  for id in $(chapters_of "$1"); do
    t0=$SECONDS
    out=$("$LOADTEST" scenario "$id" --url "$3" --token "$ADMIN_TOKEN" --repeat "$REPEAT" --lang en 2>&1 >/dev/null || true)
    held=$(printf '%s\n' "$out" | awk -v id="$id" '$1 == id && $2 == "held" { print $3 }')
    # A chapter that could not run at all: 0 of REPEAT, and why.
    [ -n "$held" ] || { held="0/$REPEAT"; printf '# %s %s %s: %s\n' "$2" "$1" "$id" "$(printf '%s' "$out" | tail -n 1)"; }
    printf 'chapter\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$id" "$2" "${held%/*}" "${held#*/}" "$((SECONDS - t0))"
  done
}

start_up() { # flags…
  local port; port=$(free_port)
  # shellcheck disable=SC2068
  # A fresh class dir each fleet: every setup starts from nothing, as its compose twin does.
  rm -rf "$UP_LOG.class"
  RUST_LOG=oversell=error target/release/oversell up --instances 3 --port "$port" --admin-token "$ADMIN_TOKEN" --class-dir "$UP_LOG.class" $@ >"$UP_LOG" 2>&1 &
  UP_PID=$!
  for _ in $(seq 300); do grep -q '^ready:' "$UP_LOG" && break; sleep 0.2; done
  grep -q '^ready:' "$UP_LOG" || { tail -n 20 "$UP_LOG" >&2; echo "oversell up $* did not become ready" >&2; exit 1; }
  UP_URL="http://127.0.0.1:$port"
}

for setup in $SETUPS; do
  t0=$SECONDS
  profile=$(profile_of "$setup")
  port=$(free_port)
  # shellcheck disable=SC2086
  OVERSELL_PORT=$port LOCK_PERSISTENCE=$(persistence_of "$setup") bash deploy/compose.sh up $profile >&2
  chapters "$setup" compose "http://127.0.0.1:$port"
  bash deploy/compose.sh down >/dev/null 2>&1
  t1=$SECONDS
  # shellcheck disable=SC2046
  start_up $(up_flags "$setup")
  chapters "$setup" up "$UP_URL"
  stop_up
  echo "# $setup: compose $((t1 - t0)) s, up $((SECONDS - t1)) s"
done

# The selling rate on both paths, one after the other, on the same machine.
port=$(free_port)
OVERSELL_PORT=$port bash deploy/compose.sh up >&2
compose_url="http://127.0.0.1:$port"
# The resource store of the compose fleet is not published: read figures through the service.
ROWS="none lua-release none" TOOLS=loadtest REDIS_URL= FLOOR_SECONDS=0 \
  bash bench/selling-rate.sh "$compose_url" "$ADMIN_TOKEN" 0 64 5 2>/dev/null \
  | awk -F'\t' '$1 == "sale" { printf "rate\tcompose\t%s\t%s\t%s\n", $3, $7, $9 }'
bash deploy/compose.sh down >/dev/null 2>&1
start_up
ROWS="none lua-release none" TOOLS=loadtest FLOOR_SECONDS=0 \
  bash bench/selling-rate.sh "$UP_URL" "$ADMIN_TOKEN" 0 64 5 2>/dev/null \
  | awk -F'\t' '$1 == "sale" { printf "rate\tup\t%s\t%s\t%s\n", $3, $7, $9 }'
stop_up
