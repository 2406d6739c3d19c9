#!/usr/bin/env bash
# Every chapter on docker compose beside the same chapter on `oversell up`, in one run, and the
# selling rate of lua-release on both.
#
#   bench/compose-chapters.sh [REPEAT] [SETUPS…]     (REPEAT default 10; SETUPS default: all)
#
# A setup is a fleet both paths can start: the compose profile (with its LOCK_PERSISTENCE) and
# the `oversell up` flags of the same fleet. For each, the script starts the compose fleet
# (deploy/compose.sh), runs `loadtest curriculum --repeat REPEAT` (every chapter that fits that
# fleet; the rest are another setup's), takes it down, then does the same on `oversell up`.
# Last, bench/selling-rate.sh (lua-release and none, loadtest only, 64 connections, 5 s) on
# the shared compose fleet and on `oversell up`, one after the other.
#
# Prints TSV lines (BENCHMARKS.md quotes them):
#   chapter  SETUP  CHAPTER  PATH(compose|up)  HELD  RUNS
#   rate     PATH   TIER     ITEMS_PER_S
# and the seconds each part took. Needs Docker with Compose, the base images
# (deploy/base-images.sh), root for nothing. Not part of CI: it takes long (minutes a setup).
set -euo pipefail
cd "$(dirname "$0")/.."
REPEAT=${1:-10}
shift || true
ALL_SETUPS="shared lock-single:none lock-single:rdb lock-single:always sentinel redlock redlock:always zookeeper zookeeper3"
SETUPS=${*:-$ALL_SETUPS}

cargo build --release --quiet --bins
export ADMIN_TOKEN
ADMIN_TOKEN=$(python3 -c 'import uuid; print(uuid.uuid4().hex)')
export COMPOSE_PROJECT_NAME="oversell-bench-$$"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
LOADTEST=target/release/loadtest
UP_PID=""
UP_LOG=$(mktemp)
stop_up() { [ -n "$UP_PID" ] && kill -TERM "$UP_PID" 2>/dev/null && wait "$UP_PID" 2>/dev/null; UP_PID=""; }
trap 'stop_up; bash deploy/compose.sh down >/dev/null 2>&1 || true; rm -f "$UP_LOG"' EXIT

# setup → "PROFILE LOCK_PERSISTENCE" and → the `oversell up` flags of the same fleet.
profile_of() { case "${1%%:*}" in shared) echo "";; *) echo "${1%%:*}";; esac; }
persistence_of() { case "$1" in *:*) echo "${1#*:}";; *) echo none;; esac; }
up_flags() {
  local p; p=$(persistence_of "$1")
  case "${1%%:*}" in
    shared) echo "";;
    lock-single) echo "--lock-store single --lock-persistence $p";;
    sentinel) echo "--lock-store sentinel";;
    redlock) echo "--lock-store redlock --lock-persistence $p";;
    zookeeper) echo "--zookeeper";;
    zookeeper3) echo "--zookeeper-nodes 3";;
  esac
}

# Runs the curriculum against URL; prints `chapter SETUP ID PATH HELD RUNS` per chapter run.
curriculum() { # setup path url
  local out
  out=$("$LOADTEST" curriculum --url "$3" --token "$ADMIN_TOKEN" --repeat "$REPEAT" --lang en 2>&1 >/dev/null || true)
  printf '%s\n' "$out" | awk -v setup="$1" -v path="$2" '$2 == "held" { split($3, f, "/"); printf "chapter\t%s\t%s\t%s\t%s\t%s\n", setup, $1, path, f[1], f[2] }'
  # A chapter that could not run at all ends the curriculum: say which.
  printf '%s\n' "$out" | grep -E '^error' | sed "s/^/# $2 $1: /" || true
}

start_up() { # flags…
  local port; port=$(free_port)
  # shellcheck disable=SC2068
  RUST_LOG=oversell=error target/release/oversell up --instances 3 --port "$port" --admin-token "$ADMIN_TOKEN" $@ >"$UP_LOG" 2>&1 &
  UP_PID=$!
  for _ in $(seq 300); do grep -q '^ready:' "$UP_LOG" && break; sleep 0.2; done
  grep -q '^ready:' "$UP_LOG" || { tail -n 20 "$UP_LOG" >&2; echo "oversell up $* did not become ready" >&2; exit 1; }
  UP_URL="http://127.0.0.1:$port"
}

for setup in $SETUPS; do
  t0=$SECONDS
  profile=$(profile_of "$setup")
  OVERSELL_PORT=$(free_port) LOCK_PERSISTENCE=$(persistence_of "$setup") bash deploy/compose.sh up $profile >&2
  port=$(docker ps --filter "label=com.docker.compose.project=$COMPOSE_PROJECT_NAME" --filter "label=com.docker.compose.service=nginx" --format '{{.Ports}}' | sed -E 's/.*:([0-9]+)->.*/\1/')
  curriculum "$setup" compose "http://127.0.0.1:$port"
  bash deploy/compose.sh down >/dev/null 2>&1
  t1=$SECONDS
  # shellcheck disable=SC2046
  start_up $(up_flags "$setup")
  curriculum "$setup" up "$UP_URL"
  stop_up
  echo "# $setup: compose $((t1 - t0)) s, up $((SECONDS - t1)) s"
done

# The selling rate on both paths, one after the other, on the same machine.
OVERSELL_PORT=$(free_port) bash deploy/compose.sh up >&2
port=$(docker ps --filter "label=com.docker.compose.project=$COMPOSE_PROJECT_NAME" --filter "label=com.docker.compose.service=nginx" --format '{{.Ports}}' | sed -E 's/.*:([0-9]+)->.*/\1/')
compose_url="http://127.0.0.1:$port"
# The resource store of the compose fleet is not published: read figures through the service.
ROWS="none lua-release none" TOOLS=loadtest REDIS_URL= FLOOR_SECONDS=0 \
  bash bench/selling-rate.sh "$compose_url" "$ADMIN_TOKEN" 0 64 5 2>/dev/null \
  | awk -F'\t' '$1 == "sale" { printf "rate\tcompose\t%s\t%s\n", $4, $8 }'
bash deploy/compose.sh down >/dev/null 2>&1
start_up
ROWS="none lua-release none" TOOLS=loadtest FLOOR_SECONDS=0 \
  bash bench/selling-rate.sh "$UP_URL" "$ADMIN_TOKEN" 0 64 5 2>/dev/null \
  | awk -F'\t' '$1 == "sale" { printf "rate\tup\t%s\t%s\n", $4, $8 }'
stop_up
