#!/usr/bin/env bash
# The fleet on Docker's swarm mode, for real, on a one-node swarm: the image pushed to a
# registry from Debian's `docker-registry` package, the stack deployed by deploy/swarm.sh,
# sales through nginx read back from the resource store (exact on safe tiers, oversold on
# `none`), a chapter of each kind of fault (an instance's, and a store's through its
# supervisor), the instances scaled from 3 to 6 while buyers run, and nothing left behind.
#
#   bash tests/swarm/run.sh         (CI runs it after the compose test, on the image it built)
#
# Needs Docker with swarm mode and Debian's docker-registry. Makes the swarm if this Docker is
# in none (and leaves it at the end); uses a swarm it finds as it is (the stack gets a name of
# its own). Ports: nginx on OVERSELL_PORT (18190), the registry on REGISTRY (127.0.0.1:5055).
# Prints one line per check and `swarm: N passed, M failed` at the end.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

export STACK="oversell-test"
export ADMIN_TOKEN="swarm-test-$RANDOM$RANDOM"
export OVERSELL_PORT="${OVERSELL_PORT:-18190}"
export REGISTRY="${REGISTRY:-127.0.0.1:5055}"
url="http://127.0.0.1:$OVERSELL_PORT"
auth=(-H "Authorization: Bearer $ADMIN_TOKEN")
passed=0
failed=0
started=$SECONDS
made_swarm=false
had_gwbridge=true

pass() { passed=$((passed + 1)); echo "swarm: PASS $* ($((SECONDS - started))s)"; }
flunk() { failed=$((failed + 1)); echo "swarm: FAIL $*" >&2; }
ours() { # everything of the stack's still there, one id a line
  local kind
  docker ps -aq --filter "label=com.docker.stack.namespace=$STACK"
  for kind in service network config; do
    docker "$kind" ls -q --filter "label=com.docker.stack.namespace=$STACK" 2>/dev/null || true
  done
  docker volume ls -q --filter "label=com.docker.stack.namespace=$STACK"
}
cleanup() {
  bash deploy/swarm.sh down >/dev/null 2>&1 || true
  bash deploy/swarm.sh registry-down >/dev/null 2>&1 || true
  if $made_swarm; then
    docker swarm leave --force >/dev/null 2>&1 || true
    $had_gwbridge || docker network rm docker_gwbridge >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT

# --- the swarm, the image, the registry ---
if [ "$(docker info -f '{{.Swarm.LocalNodeState}}')" != active ]; then
  docker network inspect docker_gwbridge >/dev/null 2>&1 || had_gwbridge=false
  docker swarm init --advertise-addr 127.0.0.1 >/dev/null
  made_swarm=true
  pass "a one-node swarm made (docker swarm init)"
fi
if ! docker image inspect oversell:local >/dev/null 2>&1; then
  echo "swarm: no oversell:local (CI's compose test builds it): building it"
  bash deploy/base-images.sh
  nice -n 15 docker build -q -t oversell:local . >/dev/null
fi
# LOADTEST: a loadtest binary to use instead of building this tree's (e.g. the image's own).
loadtest="${LOADTEST:-}"
if [ -z "$loadtest" ]; then
  cargo build --quiet -p workshop --bin loadtest
  loadtest="$root/target/debug/loadtest"
fi

ss -Hltn "sport = :$OVERSELL_PORT" | grep -q . && { echo "swarm: port $OVERSELL_PORT is taken" >&2; exit 1; }
if bash deploy/swarm.sh registry-up >/dev/null; then pass "registry from Debian's docker-registry on $REGISTRY"; else flunk "registry"; exit 1; fi

# --- bad input: refused in one line, nothing deployed ---
if out="$(env -u ADMIN_TOKEN bash deploy/swarm.sh up 2>&1)"; then
  flunk "up without ADMIN_TOKEN started"
elif [ "$(printf '%s\n' "$out" | grep -c .)" = 1 ] && [ -z "$(ours)" ]; then
  pass "up without ADMIN_TOKEN: $out"
else
  flunk "up without ADMIN_TOKEN: want one line and nothing deployed, got: $out"
fi

# --- up ---
t0=$SECONDS
if ! bash deploy/swarm.sh up; then
  flunk "up"
  echo "swarm: $passed passed, $failed failed"
  exit 1
fi
pass "up: every service running and nginx answering in $((SECONDS - t0))s"

pulled="$(docker service inspect -f '{{.Spec.TaskTemplate.ContainerSpec.Image}}' "${STACK}_app")"
case "$pulled" in
  "$REGISTRY"/oversell:*) pass "the instances run the image pushed to the registry: ${pulled%@*}" ;;
  *) flunk "the instances run $pulled, not an image from $REGISTRY" ;;
esac
# No container of the stack has the Docker socket; only the lock store's supervisor has a
# capability beyond Docker's defaults (NET_ADMIN, for its cuts).
privileged=""
for id in $(docker ps -q --filter "label=com.docker.stack.namespace=$STACK"); do
  service="$(docker inspect -f '{{index .Config.Labels "com.docker.swarm.service.name"}}' "$id")"
  docker inspect -f '{{range .Mounts}}{{.Source}} {{end}}' "$id" | grep -q docker.sock \
    && privileged="$privileged $service:docker.sock"
  caps="$(docker inspect -f '{{.HostConfig.CapAdd}}{{.HostConfig.Privileged}}' "$id")"
  case "$service:$caps" in
    "${STACK}_lock:[CAP_NET_ADMIN]false" | *":[]false") ;;
    *) privileged="$privileged $service:$caps" ;;
  esac
done
if [ -z "$privileged" ]; then pass "no Docker socket in any container; NET_ADMIN for the lock store's supervisor alone"; else flunk "privileges:$privileged"; fi

# nginx round-robins over the instances it finds by DNS: every replica answers through it.
upstreams() { # how many instances answer through nginx in 60 requests
  for _ in $(seq 60); do curl -s -D - -o /dev/null "$url/health" | tr -d '\r' | sed -n 's/^X-Upstream: //p'; done | sort -u | grep -c .
}
instances() { curl -s "$url/instances" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["instances"]))'; }
seen="$(upstreams)"
if [ "$seen" = 3 ] && [ "$(instances)" = 3 ]; then pass "nginx reaches the 3 replicas through Swarm's DNS (3 upstream addresses, 3 instances live)"; else flunk "3 replicas: nginx reached $seen, /instances lists $(instances)"; fi

# --- ground truth through nginx ---
matrix="$("$loadtest" matrix --url "$url" --token "$ADMIN_TOKEN" --tiers none,lua-release,fenced,atomic-deduct --stock 100 --buyers 1000 --business-ms 5 --json)"
if verdict="$(printf '%s' "$matrix" | python3 tests/compose/ground_truth.py)"; then
  pass "ground truth through nginx on Swarm: $verdict"
else
  flunk "ground truth through nginx on Swarm: $verdict"
fi

# --- a chapter of each kind of fault ---
chapter() { # scenario…
  local id out
  for id in "$@"; do
    if out="$("$loadtest" scenario "$id" --url "$url" --token "$ADMIN_TOKEN" --quiet 2>&1)"; then
      pass "chapter $id on Swarm"
    else
      flunk "chapter $id on Swarm: $(printf '%s' "$out" | tail -n 5)"
    fi
  done
}
all_running() { # the instances back to 3 running tasks, every one answering through nginx
  local deadline=$((SECONDS + 90))
  until [ "$(docker service ls -f "name=${STACK}_app" --format '{{.Replicas}}')" = "$1/$1" ] \
    && [ "$(instances)" = "$1" ]; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 1
  done
}
# An instance's faults: it crashes holding the lock (Swarm starts its slot again), and it
# freezes whole inside the critical section (SIGSTOP under the service's init).
chapter setnx-crash
if all_running 3; then pass "the crashed instance's slot is back: 3/3 running"; else flunk "3 instances after the crash: $(docker service ls -f "name=${STACK}_app" --format '{{.Replicas}}')"; fi
chapter reentrant-watchdog-freeze
# A store's faults, done by its supervisor (`oversell member`) over the stack's network.
chapter restart-loses-lock redis-down

# --- 3 → 6 instances while buyers run: nothing lost, nothing oversold ---
room=scale
# The chapter just before (`redis-down`) leaves the lock store coming back: the room is
# stocked only once every instance reaches both stores, each call's answer is checked, and
# the buyers start once every instance sees the room stocked and on its tier.
through_nginx() { # cmd…: true when it holds for 9 answers in a row (3 rounds of nginx's 3)
  local i
  for i in $(seq 9); do "$@" || return 1; done
}
until_deadline() { # seconds cmd…: waits for the condition, false at the deadline
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.5
  done
}
healthy() { curl -sf -o /dev/null --max-time 5 "$url/health"; }
admin_call() { # method path body: prints the status and the answer on one line
  curl -s --max-time 10 -w ' %{http_code}' "${auth[@]}" -H 'content-type: application/json' -X "$1" "$url$2" -d "$3"
}
stocked() {
  [ "$(curl -sf --max-time 5 "$url/state?room=$room" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d.get("orders"), d.get("stock"), d.get("initial_stock"), d.get("tier"))' 2>/dev/null)" = "0 1000000 1000000 lua-release" ]
}
prepared=false
if ! until_deadline 60 through_nginx healthy; then
  flunk "scale: the stores were not back on every instance within 60 s of the redis-down chapter: $(curl -s "$url/health")"
elif ! reset="$(admin_call POST "/admin/reset?room=$room" '{"stock":1000000}')" \
  || [ "$(printf '%s' "${reset% *}" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("room"), d.get("stock"))' 2>/dev/null) ${reset##* }" != "$room 1000000 200" ]; then
  flunk "scale: the room's reset was refused: $reset"
elif ! tier="$(admin_call PUT "/admin/tier?room=$room" '{"tier":"lua-release"}')" || [ "${tier##* }" != 200 ]; then
  flunk "scale: the room's tier was refused: $tier"
elif ! until_deadline 30 through_nginx stocked; then
  flunk "scale: the reset and the tier answered 200 but not every instance showed room $room stocked and on lua-release within 30 s: $(curl -s "$url/state?room=$room" | head -c 300)"
else
  prepared=true
fi
# The step's body stays at the left margin: its Python snippets are indentation-sensitive.
if $prepared; then
"$loadtest" run --url "$url" --room "$room" -c 32 -z 25s --json --quiet >"$root/target/swarm-scale.json" &
buyers=$!
sleep 5
bash deploy/swarm.sh scale 6 >/dev/null
scaled=false
all_running 6 && scaled=true
wait "$buyers" || true
read -r ok statuses per_instance < <(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = d["stats"]
per = d.get("fairness", {}).get("per_instance", {})
print(s["ok"], ",".join(f"{k}:{v}" for k, v in sorted(s["statuses"].items())), len(per))' "$root/target/swarm-scale.json")
# Read until the resource store answers with the room's figures (a deadline, not a guess).
truth=""
read_truth() {
  truth="$(curl -sf --max-time 5 "$url/state?room=$room" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["orders"], d["initial_stock"] - d["stock"], d["oversold"], d["lost_updates"], d["overlaps"])' 2>/dev/null)"
  [ -n "$truth" ]
}
until_deadline 30 read_truth || truth="unread unread unread unread unread"
read -r orders sold oversold lost overlaps <<<"$truth"
if $scaled && [ "$ok" = "$orders" ] && [ "$orders" = "$sold" ] && [ "$oversold$lost$overlaps" = 000 ] \
  && [ "$statuses" = "200:$ok" ] && [ "$per_instance" = 6 ]; then
  pass "scaled 3 → 6 during 25 s of buyers: $ok sold, every one in the ledger and off the stock, 0 oversold, 0 lost, 0 overlaps, all 200, sold by 6 instances"
else
  flunk "scale during a run: scaled=$scaled, buyers told sold $ok, ledger $orders, stock down $sold, oversold/lost/overlaps $oversold/$lost/$overlaps, statuses $statuses, instances that sold $per_instance"
fi
else
  # No buyers (flunked above), but the replicas are still scaled for the checks below.
  bash deploy/swarm.sh scale 6 >/dev/null
  all_running 6 || flunk "scale 3 → 6 without buyers: $(docker service ls -f "name=${STACK}_app" --format '{{.Replicas}}')"
fi
seen="$(upstreams)"
if [ "$seen" = 6 ]; then pass "nginx reaches the 6 replicas without a restart"; else flunk "6 replicas: nginx reached $seen"; fi
nginx_restarts="$(docker service ps -q "${STACK}_nginx" | grep -c .)"
if [ "$nginx_restarts" = 1 ]; then pass "nginx ran as one task throughout (never restarted)"; else flunk "nginx had $nginx_restarts tasks"; fi

# --- the resource store killed: Swarm's new container reads every order back from the volume ---
redis_task() { docker ps -q --filter "label=com.docker.swarm.service.name=${STACK}_redis"; }
killed="$(redis_task)"
if [ -n "$killed" ] && [ "${orders:-unread}" != unread ] && docker kill "$killed" >/dev/null; then
  replaced() { [ -n "$(redis_task)" ] && [ "$(redis_task)" != "$killed" ] && read_truth; }
  if until_deadline 90 replaced; then
    read -r after _ <<<"$truth"
    if [ "$after" = "$orders" ]; then
      pass "the resource store SIGKILLed: Swarm's new container has all $orders orders from the volume"
    else
      flunk "the resource store SIGKILLed: $orders orders before, $after in the new container"
    fi
  else
    flunk "the resource store SIGKILLed: no new container answering within 90 s ($(docker service ps --no-trunc "${STACK}_redis" | tail -n 3))"
  fi
else
  flunk "the resource store could not be struck (task ${killed:-none}, orders ${orders:-unread})"
fi

# --- the Kubernetes stores' privileges, tried on this Docker ---
# deploy/k8s gives a store's supervisor root, every capability dropped but the ones it lists,
# no privilege escalation. No cluster runs here, but the same container can: each act of the
# supervisor must work with exactly that set (Sentinel's config is written the same way).
k8s_caps="$(python3 -c '
import re, sys
text = open("deploy/k8s/components/lock-single/lock.yaml").read()
print(" ".join(re.search(r"add: \[(.*?)\]", text).group(1).replace("\"", "").replace(",", " ").split()))')"
cap_args=(--cap-drop ALL)
for cap in $k8s_caps; do cap_args+=(--cap-add "$cap"); done
store="$(docker run -d --rm "${cap_args[@]}" --security-opt no-new-privileges --user 0 \
  -e ADMIN_TOKEN="$ADMIN_TOKEN" -p 127.0.0.1::7070 --entrypoint oversell oversell:local \
  member --clock-shim --child-uid 10001 --id lock -- redis-server --save "" --appendonly no --dir /tmp)"
member_url="http://$(docker port "$store" 7070/tcp | head -n 1)"
member() { curl -sf -X "$1" "${auth[@]}" -H 'content-type: application/json' "$member_url$2" ${3:+-d "$3"}; }
pinged() { for _ in $(seq 50); do docker exec "$store" redis-cli ping 2>/dev/null | grep -q PONG && return 0; sleep 0.2; done; return 1; }
acts=""
pinged && acts="$acts up"
member POST /member/kill '{"down_ms":0}' >/dev/null && pinged \
  && [ "$(member GET /member | python3 -c 'import json,sys; print(json.load(sys.stdin)["restarts"])')" -ge 1 ] && acts="$acts kill"
member POST /member/pause '{"ms":300}' >/dev/null && pinged && acts="$acts pause"
[ "$(member POST /member/clock '{"add_ms":5000}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["clock_offset_ms"])')" = 5000 ] && acts="$acts clock"
member POST /member/cut '{"drop":["10.99.0.1"],"ms":1000}' >/dev/null && member DELETE /member/cut >/dev/null && acts="$acts cut"
owner="$(docker exec "$store" sh -c 'stat -c %u /proc/$(pgrep -x redis-server)')"
docker rm -f "$store" >/dev/null
if [ "$acts" = " up kill pause clock cut" ] && [ "$owner" = 10001 ]; then
  pass "a store under its supervisor with deploy/k8s's privileges only (root, $k8s_caps, no escalation): kill, pause, clock, cut all work; the store runs as 10001"
else
  flunk "deploy/k8s's store privileges ($k8s_caps): worked:$acts; the store's uid $owner"
fi
setpriv_ok="$(docker run --rm "${cap_args[@]}" --security-opt no-new-privileges --user 0 --entrypoint sh oversell:local -c \
  "setpriv --reuid 10001 --regid 10001 --clear-groups sh -c 'mkdir -p /tmp/sentinel && echo x > /tmp/sentinel/c && stat -c %u /tmp/sentinel/c'" 2>&1)"
if [ "$setpriv_ok" = 10001 ]; then pass "deploy/k8s's Sentinel writes its config as the store's user with the same privileges"; else flunk "setpriv under deploy/k8s's privileges: $setpriv_ok"; fi

# --- down: nothing of ours left ---
bash deploy/swarm.sh down >/dev/null
bash deploy/swarm.sh registry-down >/dev/null
left="$(ours | grep -c . || true)"
registry_left="$( { pgrep -f "docker-registry serve ${TMPDIR:-/tmp}/oversell-registry-" || true; ls -d "${TMPDIR:-/tmp}/oversell-registry-${REGISTRY##*:}" 2>/dev/null || true; docker image ls -q "$REGISTRY/oversell"; } | grep -c . || true)"
if [ "$left" = 0 ] && [ "$registry_left" = 0 ]; then
  pass "down: no container, service, network, config or volume of the stack; the registry stopped, its storage and the pushed tag gone"
else
  flunk "down: $left objects of the stack and $registry_left of the registry left"
fi
if $made_swarm; then
  docker swarm leave --force >/dev/null
  $had_gwbridge || docker network rm docker_gwbridge >/dev/null 2>&1 || true
  made_swarm=false
  if [ "$(docker info -f '{{.Swarm.LocalNodeState}}')" = inactive ]; then pass "the swarm this test made is left"; else flunk "still in a swarm"; fi
fi
trap - EXIT

echo "swarm: $passed passed, $failed failed ($((SECONDS - started))s)"
[ "$failed" = 0 ]
