#!/usr/bin/env python3
# The class of BENCHMARKS §8 "A class pressing Attack my lock at once": N rooms on a running
# `oversell up --lab`, odd rooms SETNX, even rooms compare-and-delete (static/locks/), every grading
# pressed at once, each student polling GET /admin/lab/grade every 2 s. Run from the repository root:
#   python3 bench/lab-class.py http://127.0.0.1:PORT ADMIN_TOKEN 100
import json, os, sys, threading, time, urllib.request, subprocess, statistics
url, token, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
LADDER = {"setnx": ["held","deadlock","not-applicable","held","not-applicable","held"],
          "lua-release": ["held","held","not-applicable","overlap","not-applicable","overlap"]}
def lock(tier):
    d = f"static/locks/{tier}"
    steps = lambda w: [open(f"{d}/{w}-{i}.lua").read() for i in range(1,4) if os.path.exists(f"{d}/{w}-{i}.lua")]
    l = {"acquire": steps("acquire"), "release": steps("release")}
    if os.path.exists(f"{d}/renew.lua"): l["renew"] = open(f"{d}/renew.lua").read()
    return l
def call(method, path, body=None):
    req = urllib.request.Request(url + path, method=method, data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=600) as r: return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e: return e.code, json.loads(e.read() or b"null")
rooms = []
for k in range(1, n+1):
    tier = "setnx" if k % 2 else "lua-release"
    room = f"student-{k:03}"
    s, b = call("PUT", f"/admin/lab?room={room}", lock(tier)); assert s == 200, (s, b)
    rooms.append((room, tier))
results = {}
go = threading.Event()
def student(room, tier):
    go.wait(); t0 = time.time(); first = None
    s, b = call("POST", f"/admin/lab/grade?room={room}")
    while s == 202:
        first = first or b.get("place"); time.sleep(2); s, b = call("GET", f"/admin/lab/grade?room={room}")
    got = [a["outcome"] for a in b.get("attacks", [])][:6] if s == 200 else None
    results[room] = (time.time() - t0, s, got == LADDER[tier], first, None if got == LADDER[tier] else (s, got or b))
ts = [threading.Thread(target=student, args=r) for r in rooms]
for t in ts: t.start()
time.sleep(0.5); t0 = time.time(); go.set()
for t in ts: t.join()
waits = sorted(r[0] for r in results.values())
right = sum(1 for r in results.values() if r[2])
print(f"{n} students: {right}/{n} cards right; statuses {sorted(set(r[1] for r in results.values()))}; all back in {time.time()-t0:.0f} s; wait p50 {statistics.median(waits):.0f} s, longest {waits[-1]:.0f} s; furthest back {max((r[3] or 0) for r in results.values())}")
for room, r in results.items():
    if not r[2]: print("  not right:", room, r[4])
