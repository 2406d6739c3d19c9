#!/usr/bin/env bash
# The API as a contract: /openapi.json validated by openapi-spec-validator, then fuzzed by
# schemathesis (positive mode, every check, through nginx and at an instance) against a live
# `oversell up --lab --class 2` fleet that this script starts and stops (fuzz.py says what
# runs, with which token, and what must hold afterwards); then every
# instance's /metrics, after the fuzz, through `promtool check metrics`, and the observe
# profile's Prometheus configuration and rules through `promtool check config`.
#
# Both tools come from PyPI, pinned, into a virtualenv under target/. CONTRACT_EXAMPLES
# (examples per operation, default 25) and CONTRACT_SEED (the base seed: each of the five runs
# adds its place to it; `random` draws one) change the fuzz; reports (JUnit) go
# to artifacts/contract/.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
schemathesis_version=4.32.5
validator_version=0.9.0

missing=()
command -v redis-server >/dev/null || missing+=(redis-server)
command -v redis-cli >/dev/null || missing+=(redis-tools)
command -v nginx >/dev/null || missing+=(nginx)
# promtool (Debian's prometheus package) checks /metrics and the observe profile's rules.
command -v promtool >/dev/null || missing+=(prometheus)
python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
if [ ${#missing[@]} -gt 0 ]; then
  echo "contract: installing ${missing[*]}"
  as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
  as_root apt-get update -qq >/dev/null || true
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

venv="$root/target/contract-venv"
if ! "$venv/bin/python" - <<EOF 2>/dev/null
import sys
from importlib.metadata import version
sys.exit(version("schemathesis") != "$schemathesis_version"
         or version("openapi-spec-validator") != "$validator_version")
EOF
then
  echo "contract: installing schemathesis $schemathesis_version, openapi-spec-validator $validator_version (PyPI) into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    "schemathesis==$schemathesis_version" "openapi-spec-validator==$validator_version"
fi

bin="${OVERSELL_BIN:-$root/target/debug/oversell}"
if [ -z "${OVERSELL_BIN:-}" ]; then
  (cd "$root" && cargo build --quiet --bin oversell)
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port="${CONTRACT_PORT:-$(free_port)}"
redis_port="${CONTRACT_REDIS_PORT:-$(free_port)}"
admin_token="contract-$(python3 -c 'import uuid; print(uuid.uuid4().hex)')"
work="$(mktemp -d)"
reports="$root/artifacts/contract"
mkdir -p "$reports"

# Started outside the repository, as a student would: the dashboard is the embedded one.
(cd "$work" && exec "$bin" up --lab --class 2 --port "$port" --redis-port "$redis_port" \
  --admin-token "$admin_token" --class-dir "$work/class" >"$work/fleet.log" 2>&1) &
fleet=$!
stop_fleet() {
  kill -INT "$fleet" 2>/dev/null || true
  wait "$fleet" 2>/dev/null || true
  cp "$work/fleet.log" "$reports/fleet.log" 2>/dev/null || true
  rm -rf "$work"
}
trap stop_fleet EXIT

for _ in $(seq 1 240); do
  grep -q '^ready:' "$work/fleet.log" && break
  kill -0 "$fleet" 2>/dev/null || { cat "$work/fleet.log"; echo "contract: the fleet did not start"; exit 1; }
  sleep 0.5
done
grep -q '^ready:' "$work/fleet.log" || { tail -n 40 "$work/fleet.log"; echo "contract: the fleet was not ready"; exit 1; }

echo "contract: openapi-spec-validator on /openapi.json"
curl -sf "http://127.0.0.1:$port/openapi.json" -o "$reports/openapi.json"
"$venv/bin/openapi-spec-validator" "$reports/openapi.json"

# The class table, in the file `up` named (it prints no token): `student-01  room-…  http://…`.
rooms_file="$(sed -n 's/^room tokens file: \([^ ]*\).*/\1/p' "$work/fleet.log" | head -n 1)"
read -r room room_token < <(awk '/^student-01 / {print $1, $2}' "$rooms_file")
other_room="$(awk '/^student-02 / {print $1}' "$rooms_file")"
instances="$(awk '/^app[0-9]+: http/ {print $2}' "$work/fleet.log" | tr '\n' ' ')"

started=$(date +%s)
FLEET_URL="http://127.0.0.1:$port" ADMIN_TOKEN="$admin_token" ROOM="$room" ROOM_TOKEN="$room_token" \
  OTHER_ROOM="$other_room" INSTANCE_URLS="$instances" REDIS_PORT="$redis_port" \
  SCHEMATHESIS="$venv/bin/schemathesis" REPORT_DIR="$reports" \
  "$venv/bin/python" "$here/fuzz.py"
echo "contract: the fuzz took $(( $(date +%s) - started )) s"

echo "contract: promtool check metrics on every instance's /metrics"
for url in $instances; do
  curl -sf "$url/metrics" | promtool check metrics
  echo "contract: $url/metrics: ok"
done
promtool check config "$root/deploy/prometheus/prometheus.yml"
