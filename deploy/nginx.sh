#!/bin/sh
# nginx of the compose fleet: Debian's package. deploy/nginx.conf (the template rendered with
# the compose values) still holds the per-client limits as ${CLIENT_RATE} …; they are filled
# in here from the environment, and only they: nginx's own $variables stay as they are.
set -eu
envsubst '${CLIENT_RATE} ${CLIENT_BURST} ${CLIENT_CONNS} ${CLIENT_EXEMPT}' \
  < /etc/oversell/nginx.conf > /tmp/nginx.conf
exec nginx -c /tmp/nginx.conf -g 'daemon off;'
