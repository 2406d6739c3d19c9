#!/usr/bin/env bash
# The sustained selling rate of each tier: a closed loop of buyers against a stock too large to
# run out, through the fleet's URL; items sold per second are counted from the ledger (Redis),
# not from the answers. Prints TSV: tier, business_ms, items_sold, seconds, items_per_s.
#
#   bench/selling-rate.sh URL TOKEN [BUSINESS_MS] [CONNECTIONS] [SECONDS]
set -euo pipefail
URL=$1 TOKEN=$2 BUSINESS_MS=${3:-0} CONNECTIONS=${4:-64} SECONDS_=${5:-5}
LOADTEST=${LOADTEST:-target/release/loadtest}
TIERS=${TIERS:-none local setnx setnx-expire atomic-expiry uuid-owner lua-release reentrant-watchdog fenced redlock zookeeper zookeeper-fenced atomic-deduct}

admin() { curl -sf -X "$1" "$URL$2" -H "Authorization: Bearer $TOKEN" -d "$3" >/dev/null; }
field() { curl -sf "$URL/state" | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }

STORE=$(curl -sf "$URL/state" | python3 -c "import json,sys; s=json.load(sys.stdin)['lock_store']; print(s['kind'], 'zookeeper' if s.get('zookeeper') else '')")
for tier in $TIERS; do
    if [ "$tier" = redlock ] && [[ "$STORE" != redlock* ]]; then
        echo "skipped redlock: needs a fleet started with \`oversell up --lock-store redlock\`" >&2
        continue
    fi
    if [[ "$tier" = zookeeper* ]] && [[ "$STORE" != *zookeeper ]]; then
        echo "skipped $tier: needs a fleet started with \`oversell up --zookeeper\`" >&2
        continue
    fi
    admin PUT /admin/config "{\"tier\":\"$tier\",\"business_ms\":$BUSINESS_MS,\"wait\":\"pubsub\",\"wait_deadline_ms\":20000}"
    admin POST /admin/reset '{"stock":1000000}'
    # Settings reach every instance over pub/sub in a few ms; wait until nginx's picks agree.
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        [ "$(field tier)" = "$tier" ] && break
        sleep 0.05
    done
    start=$(date +%s.%N)
    "$LOADTEST" run --url "$URL" -c "$CONNECTIONS" -z "${SECONDS_}s" --quiet --json >/dev/null
    end=$(date +%s.%N)
    items=$(field items_sold)
    python3 -c "import sys; t,b,i,s=sys.argv[1:]; s=float(s); print(f'{t}\t{b}\t{i}\t{s:.2f}\t{int(i)/s:.0f}')" \
        "$tier" "$BUSINESS_MS" "$items" "$(python3 -c "print($end-$start)")"
done
