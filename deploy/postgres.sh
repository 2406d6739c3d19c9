#!/bin/sh
# The PostgreSQL server of the compose fleet: Debian's package, set up as `oversell up --postgres`
# sets up its own (src/launch/postgres_server.rs: a cluster made by initdb at the first start,
# trust for the fleet's own network, durability off, room for every instance's sessions), and
# run in the foreground as the member's user.
set -eu
data=/tmp/postgres
bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
if [ ! -f "$data/PG_VERSION" ]; then
  "$bin/initdb" -D "$data" -U oversell -A trust -E UTF8 --locale=C --no-sync >/dev/null
  # The instances connect from their own containers, on the fleet's private network.
  echo "host all oversell 0.0.0.0/0 trust" >> "$data/pg_hba.conf"
fi
exec "$bin/postgres" -D "$data" -p 5432 \
  -c listen_addresses='*' -c unix_socket_directories= -c max_connections=442 \
  -c shared_buffers=32MB -c fsync=off -c synchronous_commit=off -c full_page_writes=off \
  -c log_min_messages=warning -c log_line_prefix=
