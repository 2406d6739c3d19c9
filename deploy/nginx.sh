#!/bin/bash
# nginx of the compose fleet: Debian's package. deploy/nginx.conf (the template rendered with
# the compose values) still holds the per-client limits as ${CLIENT_RATE} …; they are filled
# in here from the environment, and only they: nginx's own $variables stay as they are.
#
# CLIENT_EXEMPT: the networks never limited, one CIDR or several, comma-separated (one line
# each in the template's geo block). Empty (the default): the compose network's own subnet,
# read from this container's routing table at start. Docker picks that subnet (172.x, or
# 192.168.x once its 172 pool is used up), and through it come the instances' server-side
# bursts and, via Docker's port publishing, whatever runs on the host (the instructor's
# loadtest). The swarm entrypoint (deploy/swarm/nginx.sh) renders through this script too,
# with its own list.
#
# CLIENT_RATE=0: no per-client limits, as `oversell up --client-rate 0` and the instances'
# own 0 (nginx refuses `rate=0r/s`: it would not start). Every limit_req / limit_conn
# directive goes, and nginx names no client to the instances (X-Real-IP empty).
#
# Arguments are passed on to nginx; tests/compose/nginx-limits.sh runs this with `-t` (check
# the configuration and stop) on a rendering of its own (OVERSELL_NGINX_SRC, _CONF).
set -euo pipefail
src="${OVERSELL_NGINX_SRC:-/etc/oversell/nginx.conf}"
conf="${OVERSELL_NGINX_CONF:-/tmp/nginx.conf}"

own_subnet() {
  local iface dest gw _flags _ref _use _metric mask d m bits i
  while read -r iface dest gw _flags _ref _use _metric mask _; do
    [ "$iface" = eth0 ] && [ "$gw" = 00000000 ] && [ "$dest" != 00000000 ] || continue
    # /proc/net/route holds addresses as little-endian hex.
    d=$((16#$dest)) m=$((16#$mask)) bits=0
    for ((i = 0; i < 32; i++)); do (((m >> i) & 1)) && bits=$((bits + 1)); done
    printf '%d.%d.%d.%d/%d\n' $((d & 255)) $(((d >> 8) & 255)) $(((d >> 16) & 255)) \
      $(((d >> 24) & 255)) "$bits"
    return 0
  done </proc/net/route
  return 1
}

if [ -z "${CLIENT_EXEMPT:-}" ]; then
  CLIENT_EXEMPT="$(own_subnet)" || { echo "nginx.sh: no subnet on eth0 to exempt" >&2; exit 1; }
  export CLIENT_EXEMPT
  echo "nginx.sh: never limited: $CLIENT_EXEMPT (the compose network)"
fi
# The template has one `${CLIENT_EXEMPT} 0;` line in its geo block: one such line per CIDR.
exempt_lines="$(printf '%s' "$CLIENT_EXEMPT" | tr ',' '\n' | sed 's/[[:space:]]//g; /^$/d; s/.*/        & 0;/')"
[ -n "$exempt_lines" ] || { echo "nginx.sh: CLIENT_EXEMPT names no network: '$CLIENT_EXEMPT'" >&2; exit 1; }
limits() {
  if [[ "${CLIENT_RATE:-}" =~ ^0+$ ]]; then
    echo "nginx.sh: no per-client limits (CLIENT_RATE=0)" >&2
    sed -e '/^[[:space:]]*limit_\(req\|conn\)\(_zone\|_status\|_log_level\)\?[[:space:]]/d' \
      -e 's/^\([[:space:]]*proxy_set_header X-Real-IP\) \$oversell_real_ip;$/\1 "";/'
  else
    cat
  fi
}
grep -q '^        \${CLIENT_EXEMPT} 0;$' "$src" || { echo "nginx.sh: $src has no '\${CLIENT_EXEMPT} 0;' line in its geo block" >&2; exit 1; }
awk -v lines="$exempt_lines" '$0 ~ /^        \$\{CLIENT_EXEMPT\} 0;$/ { print lines; next } { print }' "$src" \
  | limits \
  | envsubst '${CLIENT_RATE} ${CLIENT_BURST} ${CLIENT_CONNS} ${CLIENT_EXEMPT}' >"$conf"
exec nginx -c "$conf" -g 'daemon off;' "$@"
