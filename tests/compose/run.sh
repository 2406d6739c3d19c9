#!/usr/bin/env bash
# The fleet on Docker Compose, for real: nginx's configuration as its entrypoints render it
# with the per-client limits on and off (nginx-limits.sh, no Docker), images made from
# Debian's packages (offline where no registry answers), every profile brought up healthy,
# sales through nginx read back from the resource store, a catalog chapter or more per kind
# of fault (the stores' faults done by their supervisors, `oversell member`), the bad inputs
# of deploy/compose.sh, and nothing left behind.
#
#   bash tests/compose/run.sh            (CI runs it after the Rust and browser tests)
#
# Runs as its own compose project on a free port, so a fleet the user has up is untouched.
# Needs Docker with Compose (v2 or v1.29), and root or sudo for debootstrap where the base
# images must be made. Prints one line per check and `compose: N passed, M failed` at the end.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

export COMPOSE_PROJECT_NAME="oversell-test-$$"
export ADMIN_TOKEN="compose-test-$RANDOM$RANDOM"
export OVERSELL_PORT
OVERSELL_PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
url="http://127.0.0.1:$OVERSELL_PORT"
passed=0
failed=0
started=$SECONDS

pass() { passed=$((passed + 1)); echo "compose: PASS $* ($((SECONDS - started))s)"; }
flunk() { failed=$((failed + 1)); echo "compose: FAIL $*" >&2; }
project_containers() { docker ps -aq --filter "label=com.docker.compose.project=$COMPOSE_PROJECT_NAME"; }
project_leftovers() {
  {
    project_containers
    docker network ls -q --filter "label=com.docker.compose.project=$COMPOSE_PROJECT_NAME"
    docker volume ls -q --filter "label=com.docker.compose.project=$COMPOSE_PROJECT_NAME"
  } | grep -c . || true
}
cleanup() { bash deploy/compose.sh down >/dev/null 2>&1 || true; }
trap cleanup EXIT

# --- nginx's configuration as the entrypoints render it, limits on and off: no Docker ---
if out="$(bash "$here/nginx-limits.sh" 2>&1)"; then
  pass "nginx -t accepts deploy/nginx.sh's and deploy/swarm/nginx.sh's rendering with CLIENT_RATE=20, and with 0 (no limit directive left)"
else
  flunk "nginx's configuration as the entrypoints render it: $(printf '%s\n' "$out" | grep FAIL)"
fi

echo "compose: base images"
bash deploy/base-images.sh
cargo build --quiet -p workshop --bin loadtest
loadtest="$root/target/debug/loadtest"

# --- bad input: one line each, nothing started ---
expect_refusal() { # name, expected text, command…
  local name="$1" want="$2" out lines
  shift 2
  if out="$("$@" 2>&1)"; then
    flunk "$name: started where it must refuse"
    cleanup
    return
  fi
  lines="$(printf '%s\n' "$out" | grep -c .)"
  if [ "$lines" = 1 ] && printf '%s' "$out" | grep -q "$want" && [ "$(project_leftovers)" = 0 ]; then
    pass "$name: $out"
  else
    flunk "$name: want one line with '$want' and nothing started, got ($lines lines, $(project_leftovers) objects left): $out"
    cleanup
  fi
}
expect_refusal "ADMIN_TOKEN unset" "ADMIN_TOKEN is not set" env -u ADMIN_TOKEN bash deploy/compose.sh up
python3 -c 'import socket,sys,time; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); time.sleep(60)' "$OVERSELL_PORT" &
holder=$!
for _ in $(seq 100); do ss -Hltn "sport = :$OVERSELL_PORT" | grep -q . && break; sleep 0.1; done
expect_refusal "port taken" "port $OVERSELL_PORT is already taken" bash deploy/compose.sh up
kill "$holder"; wait "$holder" 2>/dev/null || true
docker tag rust:1-bookworm oversell-test-keep/rust:1-bookworm
docker rmi -f rust:1-bookworm >/dev/null
expect_refusal "image missing" "image rust:1-bookworm is missing" bash deploy/compose.sh up
docker tag oversell-test-keep/rust:1-bookworm rust:1-bookworm
docker rmi oversell-test-keep/rust:1-bookworm >/dev/null
expect_refusal "unknown profile" "no profile 'sentinels'" bash deploy/compose.sh up sentinels

# --- up, sell, read back ---
up() { # profiles…
  local t0=$SECONDS
  if bash deploy/compose.sh up "$@"; then
    pass "up ${*:-shared}: healthy in $((SECONDS - t0))s"
  else
    flunk "up ${*:-shared}"
    return 1
  fi
}

members() { docker ps --filter "label=com.docker.compose.project=$COMPOSE_PROJECT_NAME" --format '{{.Label "com.docker.compose.service"}}' | sort | tr '\n' ' '; }

chapter() { # scenario…
  local id
  for id in "$@"; do
    if out="$("$loadtest" scenario "$id" --url "$url" --token "$ADMIN_TOKEN" --quiet 2>&1)"; then
      pass "chapter $id on compose"
    else
      flunk "chapter $id on compose: $(printf '%s' "$out" | tail -n 5)"
    fi
  done
}

if up; then
  # Ground truth through compose: `none` oversells, every safe tier sells exactly the stock.
  matrix="$("$loadtest" matrix --url "$url" --token "$ADMIN_TOKEN" --tiers none,setnx,setnx-expire,atomic-expiry,uuid-owner,lua-release,reentrant-watchdog,fair,fenced,atomic-deduct --stock 100 --buyers 1000 --business-ms 5 --json)"
  if verdict="$(printf '%s' "$matrix" | python3 "$here/ground_truth.py")"; then
    pass "ground truth through nginx: $verdict"
  else
    flunk "ground truth through nginx: $verdict"
  fi
  # The dashboard's fleet panel: every member of the profile with its compose address.
  seen="$(curl -sf "$url/state" | python3 -c 'import json,sys; print(" ".join(sorted(m["id"] for m in json.load(sys.stdin)["containers"]["members"])))' 2>&1 || true)"
  if [ "$seen" = "app1 app2 app3 nginx redis" ]; then pass "/state shows the compose members: $seen"; else flunk "/state's containers: '$seen'"; fi
  chapter none-race setnx-crash setnx-expire-crash-between uuid-owner-release-gap reentrant-watchdog-freeze fenced-freeze
  # A teacher without Rust runs a demo as the book types it: the loadtest service of the
  # image, the fleet's address from the service's environment, no flag but the chapter.
  if docker compose version >/dev/null 2>&1; then typed=(docker compose); else typed=(docker-compose); fi
  if out="$("${typed[@]}" run --rm loadtest scenario none-race 2>&1)" \
    && printf '%s' "$out" | grep -q "1/1 scenarios PASS"; then
    pass "\`${typed[*]} run --rm loadtest scenario none-race\` as typed: $(printf '%s' "$out" | tail -n 1)"
  else
    flunk "\`${typed[*]} run --rm loadtest scenario none-race\` as typed: $(printf '%s' "$out" | tail -n 5)"
  fi
fi

# One chapter or more per kind of fault that acts on a store (its process, its clock), each
# done by the member's supervisor on the compose network.
# Partitions are nft drops each store's supervisor makes inside its own network namespace.
if up lock-single; then
  chapter restart-loses-lock redis-down watchdog-holder-cut-off fenced-holder-cut-off
  # The lab on compose: a student's lock (here the lua-release rung's own steps) runs on the
  # lock store apart, as a Redis ACL user of the room's, and the grader names its rung.
  lab=(--url "$url" --token "$ADMIN_TOKEN" --quiet)
  if "$loadtest" lab submit "${lab[@]}" --from static/locks/lua-release >/dev/null 2>&1 \
    && card="$("$loadtest" lab grade "${lab[@]}" --lang en 2>&1)" \
    && printf '%s' "$card" | grep -q "Matches the ladder's rung: lua-release"; then
    pass "lab: the lua-release steps graded on compose match their rung"
  else
    flunk "lab on compose: $(printf '%s' "${card:-submit failed}" | tail -n 5)"
  fi
fi
LOCK_PERSISTENCE=always up lock-single && chapter restart-aof-keeps-lock
up sentinel && chapter failover-loses-lock failover-sync-replicas sentinel-split-brain
up cluster && chapter cluster-failover-loses-lock cluster-failover-sync-replicas
up redlock && chapter redlock-freeze redlock-majority-down redlock-restart-no-fsync redlock-clock-jump redlock-validity-runs-out redlock-minority-partition
up zookeeper && chapter zookeeper-normal zookeeper-crash-holding zookeeper-client-partitioned
up zookeeper3 && chapter zookeeper-fenced zookeeper-node-down zookeeper-server-cut-off
up postgres && chapter postgres-normal postgres-crash-holding postgres-freeze postgres-fenced
export CLASS=3
export CLASS_OUT
CLASS_OUT="$(mktemp -d)/class"
if up lock-single class; then
  # The log names the files in the class volume and holds no token; deploy/compose.sh copied
  # them out, the caller's alone, with the class in them.
  log="$(bash deploy/compose.sh logs --no-color class 2>&1)"
  rooms="$(grep -cE '^student-0[1-3] ' "$CLASS_OUT/room-tokens" 2>/dev/null || true)"
  slips="$(grep -o '<section class="slip"' "$CLASS_OUT/slips.html" 2>/dev/null | grep -c . || true)"
  modes="$(stat -c %a "$CLASS_OUT" "$CLASS_OUT/room-tokens" "$CLASS_OUT/slips.html" 2>/dev/null | tr '\n' ' ')"
  leaked=0
  for token in $(awk '!/^#/ {print $2}' "$CLASS_OUT/room-tokens" 2>/dev/null); do
    case "$log" in *"$token"*) leaked=$((leaked + 1)) ;; esac
  done
  if [ "$rooms" = 3 ] && [ "$slips" = 3 ] && [ "$leaked" = 0 ] && [ "$modes" = "700 600 600 " ] \
    && printf '%s' "$log" | grep -q 'room tokens file: /class/room-tokens' \
    && printf '%s' "$log" | grep -q 'slips file: /class/slips.html'; then
    pass "class of 3: the log names /class/room-tokens and /class/slips.html and holds no token; copied out ($modes): 3 rooms, 3 slips"
  else
    flunk "class of 3: $rooms rooms, $slips slips copied out (modes $modes), $leaked tokens in the log: $log"
  fi
fi
rm -rf "$(dirname "$CLASS_OUT")"
echo "compose: members seen last: $(members)"

bash deploy/compose.sh down >/dev/null 2>&1
left="$(project_leftovers)"
if [ "$left" = 0 ]; then pass "down: no container, network or volume left"; else flunk "down: $left objects left"; fi
trap - EXIT

echo "compose: $passed passed, $failed failed ($((SECONDS - started))s)"
[ "$failed" = 0 ]
