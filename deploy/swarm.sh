#!/usr/bin/env bash
# The fleet on Docker's swarm mode (deploy/swarm/stack.yml), whole or not at all:
#   deploy/swarm.sh registry-up        a registry from Debian's `docker-registry` package, on
#                                      REGISTRY (default 127.0.0.1:5055), no auth, its storage
#                                      in a temp dir: where every node pulls the image from
#   deploy/swarm.sh up [sentinel]      checks (ADMIN_TOKEN, a swarm, the image, the registry),
#                                      pushes oversell:local, labels the nodes for the stores,
#                                      deploys, waits until every service runs and nginx answers
#   deploy/swarm.sh scale N            the instances to N replicas (nginx finds them by DNS)
#   deploy/swarm.sh status             the stack's services and tasks
#   deploy/swarm.sh down               removes the stack and waits until its containers,
#                                      network and configs are gone; takes the node labels off
#   deploy/swarm.sh registry-down      stops the registry and deletes its storage
# Environment: ADMIN_TOKEN (required for up), STACK (default oversell), OVERSELL_PORT (default
# 18190, published in host mode on the node that runs nginx), REGISTRY, IMAGE (default
# oversell:local: `docker build -t oversell:local .` or deploy/compose.sh builds it), LOCK_TIER,
# INSTANCES (default 3), CLIENT_RATE/BURST/CONNS/EXEMPT, UP_DEADLINE (seconds, default 180).
# On a swarm of several nodes REGISTRY must be an address every node reaches (and, when it
# is not on loopback, listed in each daemon's insecure-registries or served over TLS).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here/.."

fail() { echo "swarm: error: $*" >&2; exit 1; }
say() { echo "swarm: $*"; }

stack="${STACK:-oversell}"
registry="${REGISTRY:-127.0.0.1:5055}"
registry_dir="${TMPDIR:-/tmp}/oversell-registry-${registry##*:}"
image="${IMAGE:-oversell:local}"
export OVERSELL_PORT="${OVERSELL_PORT:-18190}"

# The stores, in the order their node labels are dealt over the nodes: consecutive ones (a
# primary and its replica, the three Sentinels) land on different nodes whenever there are
# nodes enough; on one node, each label is on that node.
stores=(redis nginx lock lock1 lock2 sentinel1 sentinel2 sentinel3)

stack_files() {
  local files=(-c deploy/swarm/stack.yml) p
  for p in "$@"; do
    case "$p" in
      sentinel) files+=(-c deploy/swarm/stack.sentinel.yml) ;;
      *) fail "no profile '$p' (profiles: sentinel)" ;;
    esac
  done
  printf '%s\n' "${files[@]}"
}

ours() { # kind: what of this stack is still there
  case "$1" in
    services) docker service ls -q --filter "label=com.docker.stack.namespace=$stack" ;;
    containers) docker ps -aq --filter "label=com.docker.stack.namespace=$stack" ;;
    networks) docker network ls -q --filter "label=com.docker.stack.namespace=$stack" ;;
    configs) docker config ls -q --filter "label=com.docker.stack.namespace=$stack" ;;
    volumes) docker volume ls -q --filter "label=com.docker.stack.namespace=$stack" ;;
  esac
}

registry_answers() { curl -sf -o /dev/null --max-time 2 "http://$registry/v2/"; }

registry_up() {
  registry_answers && { say "registry: already answering on $registry"; return 0; }
  command -v docker-registry >/dev/null \
    || fail "no docker-registry: apt-get install docker-registry (Debian's package)"
  mkdir -p "$registry_dir/storage"
  # The package's own config asks for htpasswd credentials and listens on every address;
  # this one is loopback (or REGISTRY's address), no auth, storage that `registry-down` deletes.
  cat >"$registry_dir/config.yml" <<CONFIG
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $registry_dir/storage
  delete:
    enabled: true
http:
  addr: $registry
CONFIG
  setsid docker-registry serve "$registry_dir/config.yml" >"$registry_dir/log" 2>&1 </dev/null &
  echo $! >"$registry_dir/pid"
  for _ in $(seq 100); do
    registry_answers && { say "registry: up on $registry (pid $(cat "$registry_dir/pid"))"; return 0; }
    kill -0 "$(cat "$registry_dir/pid")" 2>/dev/null || break
    sleep 0.1
  done
  tail -n 5 "$registry_dir/log" >&2
  fail "the registry did not answer on $registry (log above)"
}

registry_down() {
  if [ -f "$registry_dir/pid" ]; then
    local pid
    pid="$(cat "$registry_dir/pid")"
    if kill "$pid" 2>/dev/null; then
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
    fi
  fi
  rm -rf "$registry_dir"
  say "registry: stopped, storage deleted"
}

label_nodes() { # add | rm
  local nodes i=0 store node
  mapfile -t nodes < <(docker node ls -q)
  for store in "${stores[@]}"; do
    node="${nodes[$((i % ${#nodes[@]}))]}"
    i=$((i + 1))
    if [ "$1" = add ]; then
      docker node update --label-add "oversell.$store=true" "$node" >/dev/null
    else
      for node in "${nodes[@]}"; do
        docker node update --label-rm "oversell.$store" "$node" >/dev/null 2>&1 || true
      done
    fi
  done
}

# Every service of the stack with all its replicas running (a task with a healthcheck counts
# once healthy), and nginx answering /health on the published port.
wait_ready() {
  local deadline=$((SECONDS + ${UP_DEADLINE:-180})) lines bad
  while :; do
    lines="$(docker service ls --filter "label=com.docker.stack.namespace=$stack" --format '{{.Name}} {{.Replicas}}')"
    bad="$(printf '%s\n' "$lines" | awk '{ split($2, r, "/"); if (r[1] != r[2]) print $1 "(" $2 ")" }' | tr '\n' ' ')"
    if [ -n "$lines" ] && [ -z "$bad" ] \
      && curl -sf -o /dev/null --max-time 2 "http://127.0.0.1:$OVERSELL_PORT/health"; then
      return 0
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "not ready after ${UP_DEADLINE:-180}s: ${bad:-nginx does not answer on :$OVERSELL_PORT}"
      return 1
    fi
    sleep 1
  done
}

down() {
  if [ -n "$(ours services)" ]; then docker stack rm "$stack" >/dev/null; fi
  # `stack rm` returns at once; its containers, then its network, go in the background.
  local deadline=$((SECONDS + 60)) left
  while :; do
    left="$(ours containers; ours networks; ours configs)"
    [ -z "$left" ] && break
    [ "$SECONDS" -lt "$deadline" ] || fail "after 60 s, still there: $(echo "$left" | tr '\n' ' ')"
    sleep 1
  done
  # The resource store's volume, once no container holds it: `up` starts with an empty store.
  ours volumes | xargs -r docker volume rm >/dev/null
  if [ "$(docker info -f '{{.Swarm.LocalNodeState}}' 2>/dev/null)" = active ]; then label_nodes rm; fi
  # By tag: an id would take oversell:local with it (the pushed tag is the same image).
  docker image ls --format '{{.Repository}}:{{.Tag}}' "$registry/oversell" | xargs -r docker rmi >/dev/null 2>&1 || true
  say "down: stack $stack removed"
}

verb="${1:-}"
[ -n "$verb" ] || fail "usage: deploy/swarm.sh registry-up | up [sentinel] | scale N | status | down | registry-down"
shift
case "$verb" in
  registry-up) registry_up ;;
  registry-down) registry_down ;;
  up)
    mapfile -t files < <(stack_files "$@")
    [ -n "${ADMIN_TOKEN:-}" ] || fail "ADMIN_TOKEN is not set: ADMIN_TOKEN=my-secret deploy/swarm.sh up"
    docker info >/dev/null 2>&1 || fail "cannot reach the Docker engine"
    [ "$(docker info -f '{{.Swarm.LocalNodeState}}')" = active ] \
      || fail "this Docker is not in a swarm: docker swarm init --advertise-addr 127.0.0.1 (one node), or join one"
    [ "$(docker info -f '{{.Swarm.ControlAvailable}}')" = true ] || fail "this node is not a swarm manager"
    docker image inspect "$image" >/dev/null 2>&1 \
      || fail "image $image is missing: docker build -t $image . (bash deploy/base-images.sh first where no registry answers)"
    registry_answers || fail "no registry answers on $registry: deploy/swarm.sh registry-up"
    # Tagged by the image's own id, so a rebuilt image is a new tag every node pulls.
    tag="$registry/oversell:$(docker image inspect -f '{{.Id}}' "$image" | cut -d: -f2 | cut -c1-12)"
    docker tag "$image" "$tag"
    docker push -q "$tag" >/dev/null || fail "pushing $tag failed"
    export OVERSELL_IMAGE="$tag" STACK="$stack"
    NGINX_CONF_SUM="$(cksum <deploy/nginx.conf | cut -d' ' -f1)"
    NGINX_SWARM_SUM="$(cksum <deploy/swarm/nginx.sh | cut -d' ' -f1)"
    export NGINX_CONF_SUM NGINX_SWARM_SUM
    label_nodes add
    say "deploying stack $stack from $tag ($(docker node ls -q | wc -l) node(s))"
    docker stack deploy --prune "${files[@]}" "$stack" >/dev/null \
      || { down >/dev/null 2>&1 || true; fail "docker stack deploy failed"; }
    if ! why="$(wait_ready)"; then
      docker service ls --filter "label=com.docker.stack.namespace=$stack" >&2 || true
      down >/dev/null 2>&1 || true
      fail "the stack did not come up ($why); everything it started is removed"
    fi
    say "ready: http://127.0.0.1:$OVERSELL_PORT/ (stack $stack, profiles: ${*:-none})"
    ;;
  scale)
    [[ "${1:-}" =~ ^[1-9][0-9]*$ ]] || fail "usage: deploy/swarm.sh scale N (N ≥ 1)"
    docker service scale -d "${stack}_app=$1" >/dev/null
    say "app: scaling to $1 replicas"
    ;;
  status)
    docker stack services "$stack"
    docker stack ps --no-trunc --filter desired-state=running "$stack"
    ;;
  down) down ;;
  *) fail "no command '$verb' (registry-up, up, scale, status, down, registry-down)" ;;
esac
