#!/usr/bin/env bash
# nginx's configuration as the compose and swarm entrypoints render it (deploy/nginx.sh,
# deploy/swarm/nginx.sh) from deploy/nginx.conf, checked by Debian's nginx (`nginx -t`), with
# the per-client limits on (CLIENT_RATE=20) and off (CLIENT_RATE=0: nginx refuses
# `rate=0r/s`, so the limits must go altogether, as `oversell up --client-rate 0` leaves them
# out). No Docker, no image: seconds.
#
#   bash tests/compose/nginx-limits.sh       (tests/compose/run.sh runs it first)
#
# What the host cannot have is replaced in the rendering given to the entrypoints: compose's
# service names (app1…, which `nginx -t` resolves) by 127.0.0.1, and /tmp by a directory of
# the check's own (the pid file, nginx's temp paths). Prints one line per check and exits 1
# if any failed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
for tool in nginx envsubst; do
  command -v "$tool" >/dev/null || { echo "nginx-limits: needs $tool (apt-get install nginx gettext-base)" >&2; exit 1; }
done
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
sed -e 's/\bapp[0-9]*:3000\b/127.0.0.1:3000/' -e "s|/tmp/|$dir/|" \
  "$root/deploy/nginx.conf" >"$dir/src.conf"
grep -q 'server 127.0.0.1:3000' "$dir/src.conf" || { echo "nginx-limits: no compose upstream to replace in deploy/nginx.conf" >&2; exit 1; }

failed=0
check() { # what, condition…
  local what="$1"
  shift
  if "$@"; then echo "nginx-limits: PASS $what"; else echo "nginx-limits: FAIL $what" >&2; failed=1; fi
}
has() { grep -Eq -- "$1" "$conf"; }
lacks() { ! grep -Eq -- "$1" "$conf"; }

# CLIENT_EXEMPT, a list on both: one CIDR (compose's default) is a list of one. The swarm
# entrypoint renders through the compose one (in the image as oversell-nginx).
for script in deploy/nginx.sh deploy/swarm/nginx.sh; do
  exempt="172.18.0.0/16, 10.0.0.0/8"
  [ "$script" = deploy/nginx.sh ] || exempt=172.18.0.0/16,10.0.0.0/8
  for rate in 20 0; do
    conf="$dir/$(basename "$(dirname "$script")")-$rate.conf"
    what="$script, CLIENT_RATE=$rate"
    if out="$(env CLIENT_RATE="$rate" CLIENT_BURST=100 CLIENT_CONNS=20 \
      CLIENT_EXEMPT="$exempt" \
      OVERSELL_NGINX_SRC="$dir/src.conf" OVERSELL_NGINX_CONF="$conf" \
      OVERSELL_NGINX_RENDER="$root/deploy/nginx.sh" \
      bash "$root/$script" -t -q -e stderr -p "$dir/" 2>&1)"; then
      echo "nginx-limits: PASS $what: nginx -t accepts it"
    else
      echo "nginx-limits: FAIL $what: nginx -t: $out" >&2
      failed=1
      continue
    fi
    # envsubst must leave nginx's own variables alone: the refusal's hold reads two.
    check "$what: a refusal held for a second after a connection's first request" \
      has '^[[:space:]]*limit_rate \$oversell_refusal_rate;$'
    check "$what: the hold keyed by the connection's requests" \
      has '^[[:space:]]*map \$connection_requests \$oversell_refusal_rate \{$'
    if [ "$rate" = 0 ]; then
      check "$what: no limit_req or limit_conn left" lacks '^[[:space:]]*limit_(req|conn)'
      check "$what: no client named to the instances" has '^[[:space:]]*proxy_set_header X-Real-IP "";$'
    else
      check "$what: 20 requests/s a client" has 'limit_req_zone .* rate=20r/s;'
      check "$what: bursts of 100" has '^[[:space:]]*limit_req zone=oversell_rate burst=100 nodelay;$'
      check "$what: 20 connections" has '^[[:space:]]*limit_conn oversell_conns 20;$'
      check "$what: the exempt networks, one line each" \
        has '^[[:space:]]*172\.18\.0\.0/16 0;$' && check "$what: and the second" has '^[[:space:]]*10\.0\.0\.0/8 0;$'
    fi
  done
done
exit "$failed"
