#!/usr/bin/env bash
# The compose fleet, started whole or not at all:
#   deploy/compose.sh up [PROFILE…]     checks first (ADMIN_TOKEN, the port, the images), then
#                                       `up --build`, waiting until every member is healthy
#   deploy/compose.sh down              stops and removes every container, network and volume
#                                       of the project, whatever profiles it ran
#   deploy/compose.sh ps | logs …       anything else goes to compose as it is
# A check that fails prints one line and starts nothing; a start that fails (a member never
# healthy) takes down what it had started and says which member failed.
#
# The same as `docker compose --profile P up --build --wait`, plus the checks, and it also
# runs on Compose v1.29 (`docker-compose`, which has no --wait). Environment as for compose:
# ADMIN_TOKEN (required), OVERSELL_BIND, OVERSELL_PORT (default 8080), LOCK_TIER, CLASS,
# CLASS_OUT (where the class profile's room tokens and slips are copied: default class/ in
# the repository, whose root a relative path is read from),
# PUBLIC_URL, LOCK_PERSISTENCE (none, rdb, everysec, always, written), and LOCK_STORE, LOCK_CLUSTER,
# ZOOKEEPER and POSTGRES (set from the profiles when not given); COMPOSE_PROJECT_NAME to run two fleets side by side.
# UP_DEADLINE: seconds to wait for health (default 300: the first build compiles oversell).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here/.."

fail() { echo "compose: error: $*" >&2; exit 1; }

if docker compose version >/dev/null 2>&1; then
  compose=(docker compose)
elif command -v docker-compose >/dev/null; then
  compose=(docker-compose)
else
  fail "neither 'docker compose' nor 'docker-compose' is installed"
fi

verb="${1:-}"
[ -n "$verb" ] || fail "usage: deploy/compose.sh up [PROFILE…] | down | <any compose command>"
shift

# Every profile, so that `down` finds the members of whichever ones ran.
all_profiles=(lock-single sentinel redlock cluster zookeeper zookeeper3 postgres class loadtest)

port_taken() {
  # A listener on the port, on any address: docker would fail to publish it halfway.
  if command -v ss >/dev/null; then
    ss -Hltn "sport = :$1" | grep -q .
  else
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
  fi
}

# The cluster profile's six nodes made one Redis Cluster, three masters with a replica each,
# unless they already are one: once every node answers, by their addresses on the compose
# network (`CLUSTER MEET` takes addresses, not names). Until then the instances answer 503.
form_cluster() {
  local deadline=$((SECONDS + 60)) n addrs
  for n in 1 2 3 4 5 6; do
    until "${compose[@]}" "${profile_args[@]}" exec -T "cluster$n" redis-cli ping 2>/dev/null | grep -q PONG; do
      [ "$SECONDS" -lt "$deadline" ] || { echo "cluster$n does not answer"; return 1; }
      sleep 1
    done
  done
  "${compose[@]}" "${profile_args[@]}" exec -T cluster1 redis-cli cluster info | grep -q 'cluster_known_nodes:1' || return 0
  addrs="$("${compose[@]}" "${profile_args[@]}" exec -T cluster1 sh -c \
    'for n in 1 2 3 4 5 6; do getent hosts "cluster$n" | cut -d" " -f1; done' | sed 's/$/:6379/' | tr '\n' ' ')"
  # shellcheck disable=SC2086 # one address a word
  "${compose[@]}" "${profile_args[@]}" exec -T cluster1 redis-cli --cluster create $addrs \
    --cluster-replicas 1 --cluster-yes >/dev/null || { echo "redis-cli --cluster create failed"; return 1; }
  until "${compose[@]}" "${profile_args[@]}" exec -T cluster1 redis-cli cluster info | grep -q 'cluster_state:ok'; do
    [ "$SECONDS" -lt "$deadline" ] || { echo "the cluster is not ok after 60 s"; return 1; }
    sleep 1
  done
}

# `docker compose up --wait` for both versions: every container of the project healthy, or
# running where it has no healthcheck, or exited 0 where it is a one-shot (class).
wait_healthy() {
  local deadline=$((SECONDS + ${UP_DEADLINE:-300})) ids line bad
  while :; do
    ids="$("${compose[@]}" "${profile_args[@]}" ps -q)"
    bad=""
    for id in $ids; do
      line="$(docker inspect -f '{{.Name}} {{.State.Status}} {{.State.ExitCode}} {{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}} {{index .Config.Labels "com.docker.compose.service"}}' "$id")"
      set -- $line
      case "$2/$4" in
        running/healthy | running/none) ;;
        exited/none) [ "$3" = 0 ] || { echo "${5} exited with $3" ; return 1; } ;;
        */unhealthy) echo "${5} is unhealthy"; return 1 ;;
        *) bad="$bad ${5}($2/$4)" ;;
      esac
    done
    [ -n "$ids" ] && [ -z "$bad" ] && return 0
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "not healthy after ${UP_DEADLINE:-300}s:${bad:- no container}"
      return 1
    fi
    sleep 1
  done
}

case "$verb" in
  up)
    profile_args=()
    for p in "$@"; do
      case " ${all_profiles[*]} " in
        *" $p "*) profile_args+=(--profile "$p") ;;
        *) fail "no profile '$p' (profiles: ${all_profiles[*]})" ;;
      esac
    done
    # What the profiles imply, unless said otherwise: where the instances keep their locks,
    # and where their ZooKeeper is.
    for p in "$@"; do
      case "$p" in
        lock-single) export LOCK_STORE="${LOCK_STORE:-single}" ;;
        sentinel) export LOCK_STORE="${LOCK_STORE:-sentinel}" ;;
        redlock) export LOCK_STORE="${LOCK_STORE:-redlock}" ;;
        cluster)
          export LOCK_STORE="${LOCK_STORE:-cluster}"
          export LOCK_CLUSTER="${LOCK_CLUSTER:-cluster1:6379,cluster2:6379,cluster3:6379,cluster4:6379,cluster5:6379,cluster6:6379}"
          ;;
        zookeeper) export ZOOKEEPER="${ZOOKEEPER:-zk:2181}" ;;
        zookeeper3) export ZOOKEEPER="${ZOOKEEPER:-zk1:2181,zk2:2181,zk3:2181}" ;;
        postgres) export POSTGRES="${POSTGRES:-postgres://oversell@postgres:5432/postgres}" ;;
      esac
    done
    # The lock stores' persistence, as `oversell up --lock-persistence` sets it.
    case "${LOCK_PERSISTENCE:-none}" in
      none) export LOCK_SAVE="" LOCK_APPENDONLY=no LOCK_APPENDFSYNC=everysec ;;
      rdb) export LOCK_SAVE="900 1 300 10 60 10000" LOCK_APPENDONLY=no LOCK_APPENDFSYNC=everysec ;;
      everysec | always) export LOCK_SAVE="" LOCK_APPENDONLY=yes LOCK_APPENDFSYNC="$LOCK_PERSISTENCE" ;;
      written) export LOCK_SAVE="" LOCK_APPENDONLY=yes LOCK_APPENDFSYNC=no ;;
      *) fail "LOCK_PERSISTENCE is '$LOCK_PERSISTENCE': one of none, rdb, everysec, always, written" ;;
    esac
    [ -n "${ADMIN_TOKEN:-}" ] || fail "ADMIN_TOKEN is not set: ADMIN_TOKEN=my-secret deploy/compose.sh up"
    port="${OVERSELL_PORT:-8080}"
    docker info >/dev/null 2>&1 || fail "cannot reach the Docker engine (is it running, and may $(id -un) use it?)"
    # A fleet of this project already up is replaced whole (members of other profiles too),
    # so its own nginx is no conflict for the port.
    if [ -n "$("${compose[@]}" "${all_profiles[@]/#/--profile=}" ps -q 2>/dev/null)" ]; then
      "${compose[@]}" "${all_profiles[@]/#/--profile=}" down -v --remove-orphans >/dev/null 2>&1
    fi
    port_taken "$port" && fail "port $port is already taken: stop what listens there, or choose another with OVERSELL_PORT=8081"
    for image in debian:bookworm-slim rust:1-bookworm; do
      docker image inspect "$image" >/dev/null 2>&1 || timeout 60 docker pull -q "$image" >/dev/null 2>&1 \
        || fail "image $image is missing and cannot be pulled: make it from Debian's packages with bash deploy/base-images.sh"
    done
    "${compose[@]}" "${profile_args[@]}" build -q >/dev/null 2>"${TMPDIR:-/tmp}/oversell-compose-build.log" \
      || { tail -n 20 "${TMPDIR:-/tmp}/oversell-compose-build.log" >&2; fail "the image did not build (log above)"; }
    # The cluster's nodes are made one cluster while compose brings the rest up: the
    # instances (and nginx, which waits for them) are healthy only once it is one.
    forming="" formed_log="${TMPDIR:-/tmp}/oversell-compose-cluster.log"
    case " $* " in
      *" cluster "*) form_cluster >"$formed_log" 2>&1 & forming=$! ;;
    esac
    up_ok=true
    "${compose[@]}" "${profile_args[@]}" up -d --no-build --remove-orphans >/dev/null 2>"${TMPDIR:-/tmp}/oversell-compose-up.log" || up_ok=false
    if [ -n "$forming" ] && ! wait "$forming"; then
      up_ok=false why="$(tail -n 1 "$formed_log")"
    fi
    if ! $up_ok || ! why="$(wait_healthy)"; then
      [ -n "${why:-}" ] || why="$(grep -iE 'error|cannot|failed' "${TMPDIR:-/tmp}/oversell-compose-up.log" | tail -n 1)"
      "${compose[@]}" "${all_profiles[@]/#/--profile=}" down -v --remove-orphans >/dev/null 2>&1 || true
      fail "the fleet did not come up (${why:-see docker compose logs}); everything it started is removed"
    fi
    echo "compose: ready: http://${OVERSELL_BIND:-127.0.0.1}:$port/ (profiles: ${*:-none})"
    # The class's files, out of its volume to where the teacher prints them: docker cp writes
    # them as the caller, keeping their mode (0600), into a directory the caller's alone.
    case " $* " in
      *" class "*)
        out="${CLASS_OUT:-class}"
        id="$("${compose[@]}" "${profile_args[@]}" ps -aq class | head -n 1)"
        install -d -m 0700 "$out" && docker cp "$id:/class/." "$out/" >/dev/null \
          || fail "the class is made, but its files could not be copied to $out: docker cp $id:/class/. $out/"
        chmod 0700 "$out"
        echo "compose: the class's room tokens and slips, readable by you alone: $out/room-tokens, $out/slips.html (print it: each student gets their own slip)"
        ;;
    esac
    ;;
  down)
    # Compose reads the whole file first, ADMIN_TOKEN's `:?` included, even to stop.
    ADMIN_TOKEN="${ADMIN_TOKEN:-not-needed-to-stop}" \
      "${compose[@]}" "${all_profiles[@]/#/--profile=}" down -v --remove-orphans "$@"
    ;;
  *)
    "${compose[@]}" "$verb" "$@"
    ;;
esac
