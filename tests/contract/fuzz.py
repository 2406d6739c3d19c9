"""The API against its own document: schemathesis fuzzes a live fleet from /openapi.json, with
a room token and then with the admin token, each through nginx (the fleet's front door) and
straight at one instance, in positive mode (requests the document allows) with every check it
has, and the fleet must come out of it whole.

Run by run.sh (which starts `oversell up --lab --class 2` and hands over its address, its
tokens and its instances); prints `N passed, N failed` last.

Operations left out, each for its reason (everything else is fuzzed, in both runs):
- GET /events and GET /poll/events, both runs: endless Server-Sent-Events streams; a client
  that reads the whole answer (as schemathesis does) never returns. Their refusals (bad room,
  bad draw, too many streams) are tested in tests/api/.
- POST /admin/burst, admin run only: the fleet's own load generator, which at its bound (5000
  buyers at once, what the document allows) saturates a small machine: the requests beside it
  meet nginx's 502 while the instances catch up, the lesson of a burst, not a defect. The
  room-token run sends it (refused outside the token's room), and the end of the run checks
  that a burst of 40 sells every item.
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
# Each schemathesis run draws from a seed of its own, the base seed plus the run's place, so
# one contract run tries five seeds' worth of requests; a finding names the seed that made it.
# CONTRACT_SEED=random draws a new base seed (printed) for a run that explores.
SEED = os.environ.get("CONTRACT_SEED", "20261127")
if SEED == "random":
    SEED = str(int.from_bytes(os.urandom(4), "big"))
RUNS = []
REPORTS = os.environ["REPORT_DIR"]

# Every check schemathesis has, on requests the document allows (positive mode): what the
# document allows must be accepted (`positive_data_acceptance`), every `405` must name the
# methods in `Allow` (`unsupported_method`), a secured operation must refuse no token
# (`ignored_auth`), and every answer must be one the document declares.
CHECKS = "all"
# Tiers whose lock keeps mutual exclusion across instances with no fault armed.
SAFE_TIERS = {"lua-release", "reentrant-watchdog", "fenced", "atomic-deduct"}

# Operations whose bodies mean more than a document can say, so that a request the document
# allows may still be refused with a precise 400 (the `message` says why): each with its
# reason. For them `positive_data_acceptance` also takes a 400; every other check holds as
# for every operation.
BEYOND_THE_DOCUMENT = {
    "submit": "a lab's steps are Lua source, which Redis compiles",
    "grade": "a room is graded once it has submitted a lock of its own (PUT /admin/lab)",
    "search": "a room's lock is searched once it has submitted one of its own (PUT /admin/lab), and only if the model runs every command its steps call",
    "config": "settings go together (a wait or a lease some tiers do not take)",
    "tier": "a tier needs the stores it runs on (PostgreSQL, ZooKeeper) in this fleet",
    "configure_store": "a lock store's settings are those of the fleet's kind of lock store",
    "cut": "a partition needs a fleet started with a network per member (--network netns)",
    "heal": "a partition needs a fleet started with a network per member (--network netns)",
    "run": "a scenario's id is one of GET /scenarios",
    "poll_open": "a question's id is one of the workshop's questions",
    "poll_vote": "an option is one of the open question's own (three or four: the document bounds it by the widest)",
    "poll_reveal": "`room` and `every_room` go with `run: true`",
    "poll_call": "an option is one of the polled question's own (three or four: the document bounds it by the widest)",
}
# A 503 is not a server error here: it is the documented answer (with Retry-After) of a store
# that does not answer or a lock not had within its deadline, which the fuzz's own settings
# bring about (a sync to replicas this fleet does not have, a lock held to the wait deadline).
# An answer may take as long as the service's own last-resort request timeout (300 s): a
# sale waits for its lock up to the room's wait deadline (120 s at most) plus its business
# time (60 s at most), both settings the fuzz may choose.
MAX_RESPONSE_TIME = "300"
CONFIG = """[checks.not_a_server_error]
expected-statuses = ["2xx", "3xx", "4xx", "503"]

""" + "".join(
    f'# {why}\n[[operations]]\ninclude-operation-id = "{op}"\n'
    f'checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "400", "401", "403", "404", "409", "429", "5xx"]\n\n'
    for op, why in BEYOND_THE_DOCUMENT.items()
)

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


def schemathesis(name, token, *extra, config="", base=FLEET):
    """One run against `base` (nginx in front, or one instance straight), `config` added to
    the run's configuration file."""
    seed = str(int(SEED) + len(RUNS))
    RUNS.append((name, seed))
    path = f"{REPORTS}/{name}.toml"
    with open(path, "w") as f:
        f.write(CONFIG + config)
    cmd = [
        SCHEMATHESIS, "--config-file", path,
        "run", f"{base}/openapi.json",
        "-H", f"Authorization: Bearer {token}",
        "--checks", CHECKS,
        "--mode", "positive",
        "--max-response-time", MAX_RESPONSE_TIME,
        "--max-examples", EXAMPLES,
        "--seed", seed,
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
    print(f"contract: schemathesis, {name}, at {base} ({EXAMPLES} examples per operation, seed {seed})", flush=True)
    # In the reports folder: schemathesis keeps a cache of its findings in its working directory.
    code = subprocess.run(cmd, cwd=REPORTS).returncode
    check(code == 0, f"schemathesis {name} (seed {seed}): zero failures")


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
    schemathesis("room-token-instance", ROOM_TOKEN, base=INSTANCES[0])
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

    # The admin run: every operation but the process-killing fault (see above). Without the
    # stateful phase: the links are followed in the room-token run, and here they would sell,
    # minute after minute, in a room whose settings the fuzz made slow on purpose (a long
    # business time, a lock held to its 30 s deadline).
    admin = (
        "--exclude-operation-id", "arm_fault", "--exclude-operation-id", "burst",
        "--phases", "examples,coverage,fuzzing",
    )
    schemathesis("admin-token", ADMIN, *admin)
    schemathesis("admin-token-instance", ADMIN, *admin, base=INSTANCES[-1])
    fleet_serves()
    for room in sorted(rooms_in_store()):
        status, _ = call("GET", f"/state?room={room}")
        if status == 200:
            ok, why = consistent(room)
            check(ok, f"room {room} after the admin run: {why}")
    safe_sale_after(OTHER_ROOM)

    seeds = sorted({seed for _, seed in RUNS})
    check(len(seeds) == len(RUNS), f"each schemathesis run had its own seed: {', '.join(seeds)}")
    print(f"{passed} passed, {failed} failed (base seed {SEED}, {len(RUNS)} seeds)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
