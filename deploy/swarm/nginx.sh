#!/bin/bash
# nginx of the swarm fleet: the compose rendering of the template (deploy/nginx.conf, given
# as a swarm config), with the instances found through Swarm's DNS rather than listed.
#
# Debian's nginx (1.22) resolves an `upstream` block's servers once, at start; the `resolve`
# flag that re-resolves them is in nginx 1.27.3 and later. So the two upstream blocks go, and
# every `proxy_pass` names the instances through a variable: nginx then asks the resolver
# (Docker's, 127.0.0.11) at most every DNS_VALID, gets every running task's address
# (`tasks.app`) and round-robins over them. A replica `docker service scale` adds is in the
# rotation within DNS_VALID, without a reload. What that costs: no keep-alive to the instances
# (an implicit upstream has none), and the event streams are round-robin, not per room.
#
# The rest is the compose entrypoint's (deploy/nginx.sh, in the image as oversell-nginx; the
# same image runs here): the per-client limits, CLIENT_RATE=0 dropping them all, and the
# exempt networks, which are by default every subnet this container is attached to.
# Arguments are passed on to nginx (tests/compose/nginx-limits.sh: `-t` on a rendering of its
# own, OVERSELL_NGINX_SRC, _CONF, and deploy/nginx.sh as OVERSELL_NGINX_RENDER).
set -euo pipefail
src="${OVERSELL_NGINX_SRC:-/etc/oversell/nginx.conf}"
conf="${OVERSELL_NGINX_CONF:-/tmp/nginx.conf}"
render="${OVERSELL_NGINX_RENDER:-/usr/local/bin/oversell-nginx}"
instances="${INSTANCES:-tasks.app:3000}"
valid="${DNS_VALID:-2s}"

die() { echo "swarm-nginx: $*" >&2; exit 1; }

# Every subnet directly attached (a route with no gateway), from /proc/net/route's
# little-endian hex: the stack's overlay network and the node's docker_gwbridge.
attached_subnets() {
  local iface dest gw _flags _ref _use _metric mask d m bits i
  while read -r iface dest gw _flags _ref _use _metric mask _; do
    [ "$iface" != Iface ] && [ "$gw" = 00000000 ] && [ "$dest" != 00000000 ] || continue
    d=$((16#$dest)) m=$((16#$mask)) bits=0
    for ((i = 0; i < 32; i++)); do (((m >> i) & 1)) && bits=$((bits + 1)); done
    printf '%d.%d.%d.%d/%d\n' $((d & 255)) $(((d >> 8) & 255)) $(((d >> 16) & 255)) \
      $(((d >> 24) & 255)) "$bits"
  done </proc/net/route
}

if [ -z "${CLIENT_EXEMPT:-}" ]; then
  CLIENT_EXEMPT="$(attached_subnets | paste -sd, -)"
  [ -n "$CLIENT_EXEMPT" ] || die "no attached subnet to exempt"
  echo "swarm-nginx: never limited: $CLIENT_EXEMPT (the nodes and the stack's network)"
fi
export CLIENT_EXEMPT

# The rewrite, checked: a template that no longer has what is rewritten fails here, loudly,
# rather than running with a fixed list of instances that do not exist on Swarm.
grep -q '^    upstream oversell {$' "$src" || die "$src has no 'upstream oversell' block"
grep -q 'proxy_pass http://oversell;' "$src" || die "$src has no 'proxy_pass http://oversell;'"
sed -e '/^    upstream oversell\(_events\)\? {$/,/^    }$/d' \
  -e 's|^http {$|http {\n    # Swarm'"'"'s DNS, asked again every '"$valid"': new replicas join the rotation.\n    resolver 127.0.0.11 valid='"$valid"' ipv6=off;\n    resolver_timeout 2s;|' \
  -e 's|^\(        listen .*;\)$|\1\n        set $oversell_instances '"$instances"';|' \
  -e 's|proxy_pass http://oversell\(_events\)\?;|proxy_pass http://$oversell_instances;|' \
  "$src" >"$conf.swarm"
grep -q 'upstream oversell' "$conf.swarm" && die "an upstream block is left in the rewrite"
[ "$(grep -c 'proxy_pass http://\$oversell_instances;' "$conf.swarm")" -ge 3 ] \
  || die "fewer than three proxy_pass lines rewritten"

OVERSELL_NGINX_SRC="$conf.swarm" OVERSELL_NGINX_CONF="$conf" exec bash "$render" "$@"
