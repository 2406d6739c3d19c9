"""The API against its own document: schemathesis fuzzes a live fleet from /openapi.json, with
a room token and then with the admin token, and the fleet must come out of it whole.

Run by run.sh (which starts `oversell up --lab --class 2` and hands over its address, its
tokens and its instances); prints `N passed, N failed` last.

Operations left out, each for its reason (everything else is fuzzed, in both runs):
- GET /events and GET /poll/events, both runs: endless Server-Sent-Events streams; a client
  that reads the whole answer (as schemathesis does) never returns. Their refusals (bad room,
  bad draw, too many streams) are tested in tests/api/.
- POST /admin/faults, admin run only: with the admin token it arms the faults that really
  abort or stop a process (a crash, a freeze, a lock-store kill), which then strike the
  fuzzer's own next sale in that room; the 502 nginx answers for a killed instance is the
  lesson, not a defect. The room-token run fuzzes the route whole: those faults are a 403
  there, the room's own faults are armed and fire.
The admin run comes last because it may close the class, rotate tokens and reset any room.
"""

import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request

FLEET = os.environ["FLEET_URL"]
ADMIN = os.environ["ADMIN_TOKEN"]
ROOM = os.environ["ROOM"]
ROOM_TOKEN = os.environ["ROOM_TOKEN"]
OTHER_ROOM = os.environ["OTHER_ROOM"]
INSTANCES = os.environ["INSTANCE_URLS"].split()
REDIS_PORT = os.environ["REDIS_PORT"]
SCHEMATHESIS = os.environ["SCHEMATHESIS"]
EXAMPLES = os.environ.get("CONTRACT_EXAMPLES", "25")
SEED = os.environ.get("CONTRACT_SEED", "20261127")
REPORTS = os.environ["REPORT_DIR"]

CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"
# Tiers whose lock keeps mutual exclusion across instances with no fault armed.
SAFE_TIERS = {"lua-release", "reentrant-watchdog", "fenced", "atomic-deduct"}

passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
        print(f"contract: ok   {what}", flush=True)
    else:
        failed += 1
        print(f"contract: FAIL {what}", flush=True)


def call(method, path, token=ADMIN, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(FLEET + path, data=data, method=method)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


def rooms_in_store():
    """Every room with a key in the resource store: the `{room}` hash tag of each key."""
    out = subprocess.run(
        ["redis-cli", "-p", REDIS_PORT, "--scan"], capture_output=True, text=True, check=True
    ).stdout
    return {m.group(1) for m in re.finditer(r"\{([^}]*)\}", out)}


def fingerprint(room):
    """What a request in the room would change: settings, faults, figures, the ledger."""
    _, state = call("GET", f"/state?room={room}")
    _, ledger = call("GET", f"/ledger?room={room}&limit=10000")
    keep = {k: v for k, v in state.items() if k not in ("instance", "lock", "lock_store")}
    return keep, ledger


def consistent(room):
    """The room's figures agree with its ledger, and a safe tier oversold nothing."""
    status, state = call("GET", f"/state?room={room}")
    if status != 200:
        return False, f"/state {status}: {state}"
    _, page = call("GET", f"/ledger?room={room}&limit=10000")
    orders = page["orders"]
    items = sum(o.get("qty", 1) for o in orders if isinstance(o, dict))
    problems = []
    if len(orders) != state["orders"]:
        problems.append(f"ledger has {len(orders)} orders, /state says {state['orders']}")
    if items != state["items_sold"]:
        problems.append(f"ledger sums {items} items, /state says {state['items_sold']}")
    sold_from_stock = state["initial_stock"] - state["stock"]
    if state["items_sold"] - sold_from_stock != state["lost_updates"]:
        problems.append(f"lost_updates {state['lost_updates']} != items_sold - (initial - stock)")
    if state["tier"] in SAFE_TIERS and state["overlaps"] == 0 and state["oversold"] != 0:
        problems.append(f"oversold {state['oversold']} on {state['tier']}")
    return not problems, "; ".join(problems) or f"tier {state['tier']}, {len(orders)} orders"


def schemathesis(name, token, *extra, config=None):
    cmd = [SCHEMATHESIS]
    if config is not None:
        path = f"{REPORTS}/{name}.toml"
        with open(path, "w") as f:
            f.write(config)
        cmd += ["--config-file", path]
    cmd += [
        "run", f"{FLEET}/openapi.json",
        "-H", f"Authorization: Bearer {token}",
        "--checks", CHECKS,
        "--max-examples", EXAMPLES,
        "--seed", SEED,
        # One worker: hypothesis describes its strategies by parsing their source, which is
        # not thread-safe on Python 3.11 ("AST constructor recursion depth mismatch").
        "--workers", "1",
        "--request-timeout", "60",
        "--generation-database", "none",
        "--no-color",
        "--report", "junit",
        "--report-junit-path", f"{REPORTS}/{name}.xml",
        "--exclude-operation-id", "events",
        "--exclude-operation-id", "poll_events",
        *extra,
    ]
    print(f"contract: schemathesis, {name} ({EXAMPLES} examples per operation, seed {SEED})", flush=True)
    # In the reports folder: schemathesis keeps a cache of its findings in its working directory.
    code = subprocess.run(cmd, cwd=REPORTS).returncode
    check(code == 0, f"schemathesis {name}: zero failures")


def safe_sale_after(room):
    """The fleet still sells, and a safe tier oversells nothing, right after the fuzz."""
    call("DELETE", f"/admin/faults?room={room}")
    status, _ = call("PUT", f"/admin/config?room={room}", body={
        "tier": "lua-release", "ttl_ms": 5000, "business_ms": 0, "wait": "pubsub",
        "wait_deadline_ms": 20000,
    })
    check(status == 200, f"{room}: back to lua-release")
    status, _ = call("POST", f"/admin/reset?room={room}", body={"stock": 20})
    status, report = call("POST", f"/admin/burst?room={room}", body={"buyers": 40})
    check(status == 200 and report["ok"] == 20, f"{room}: a burst of 40 sells the 20 items: {report}")
    ok, why = consistent(room)
    check(ok, f"{room}: ground truth after a safe burst: {why}")
    _, state = call("GET", f"/state?room={room}")
    check(state["oversold"] == 0 and state["stock"] == 0, f"{room}: no oversold, stock 0")


def fleet_serves():
    for url in [FLEET, *INSTANCES]:
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=10) as resp:
                check(resp.status == 200, f"{url}/health answers 200")
        except Exception as err:  # noqa: BLE001 - any failure to answer is the finding
            check(False, f"{url}/health: {err}")


def main():
    status, doc = call("GET", "/openapi.json", token=None)
    check(status == 200 and doc["openapi"].startswith("3.1"), "GET /openapi.json is OpenAPI 3.1")

    # The room-token run: everything the room's holder can send, to every operation.
    rooms_before = rooms_in_store()
    others = {room: fingerprint(room) for room in rooms_before if room != ROOM}
    schemathesis("room-token", ROOM_TOKEN)
    rooms_after = rooms_in_store()
    check(rooms_after <= rooms_before | {ROOM}, f"the room token made no other room: {sorted(rooms_after - rooms_before - {ROOM})}")
    for room, before in sorted(others.items()):
        check(fingerprint(room) == before, f"room {room} untouched by {ROOM}'s token")
    # The links (reset → sale → state) in the token's own room: the run above names random
    # rooms, which the token may not touch.
    schemathesis(
        "room-token-links", ROOM_TOKEN, "--phases", "stateful",
        config=f'[parameters]\n"query.room" = "{ROOM}"\n',
    )
    ok, why = consistent(ROOM)
    check(ok, f"{ROOM} after the room-token runs: {why}")
    fleet_serves()

    # The admin run: every operation but the process-killing fault (see above).
    schemathesis("admin-token", ADMIN, "--exclude-operation-id", "arm_fault")
    fleet_serves()
    for room in sorted(rooms_in_store()):
        status, _ = call("GET", f"/state?room={room}")
        if status == 200:
            ok, why = consistent(room)
            check(ok, f"room {room} after the admin run: {why}")
    safe_sale_after(OTHER_ROOM)

    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
