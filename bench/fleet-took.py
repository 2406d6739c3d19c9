#!/usr/bin/env python3
"""Waits until nginx has shown every instance of a fleet with a tier (and a way of waiting):
settings reach the fleet over pub/sub, so a run started at once could begin on the old ones.

    bench/fleet-took.py URL TIER [WAIT] [INSTANCES=3]

Exits 0 as soon as INSTANCES instances have answered `GET URL/state` with them, 1 with what
each instance showed after 10 s."""
import json
import sys
import time
import urllib.request

url, tier = sys.argv[1:3]
wait = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] else None
instances = int(sys.argv[4]) if len(sys.argv) > 4 else 3
seen, deadline = {}, time.time() + 10
while time.time() < deadline:
    s = json.load(urllib.request.urlopen(url + "/state"))
    seen[s["instance"]] = s["tier"] == tier and wait in (None, s["settings"]["wait"])
    if len(seen) >= instances and all(seen.values()):
        sys.exit(0)
    time.sleep(0.02)
sys.exit(f"the fleet did not take {tier} {wait or ''} within 10 s: {seen}")
