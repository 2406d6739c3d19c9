#!/usr/bin/env python3
"""The reading half of bench/profile-handoff.sh: /proc snapshots, Redis INFO, perf samples.

  profile-handoff.py snap NAME=PID[,PID…] …        one JSON line: the machine's and each
                                                    group's CPU, run-queue wait and time slices
  profile-handoff.py row DIR ID ROW ITEMS SECONDS    the tables of one configuration (stdout),
                                                    and its figures appended to DIR/rows.jsonl
  profile-handoff.py summary DIR                     the tables across configurations

A group is a set of processes: CPU is utime + stime of each process (every thread, live or
gone, in clock ticks), run-queue wait and time slices are summed over its live threads
(/proc/PID/task/TID/schedstat: ns on a CPU, ns runnable but waiting for one, slices).
"""

import json
import os
import re
import sys
import time
from collections import Counter, defaultdict

TICK = os.sysconf("SC_CLK_TCK")
# The groups, in the order they are printed; `rest` is the machine minus the groups.
ORDER = ["loadtest", "nginx", "instances", "redis", "up", "perf", "rest"]
LABEL = {
    "loadtest": "loadtest (the generator)",
    "nginx": "nginx (master + workers)",
    "instances": "3 oversell instances",
    "redis": "redis-server",
    "up": "oversell up (supervisor)",
    "perf": "perf record",
    "rest": "rest of the machine",
}


def proc_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)


def proc_sched(pid):
    run = wait = slices = threads = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                r, w, s = map(int, f.read().split())
        except OSError:
            continue  # the thread ended in between
        run, wait, slices, threads = run + r, wait + w, slices + s, threads + 1
    return run, wait, slices, threads


def snap(args):
    with open("/proc/stat") as f:
        cpu = [int(x) for x in f.readline().split()[1:]]
    groups = {}
    for arg in args:
        name, pids = arg.split("=", 1)
        g = {"ticks": 0, "run_ns": 0, "wait_ns": 0, "slices": 0, "threads": 0, "pids": []}
        for pid in filter(None, pids.split(",")):
            try:
                ticks = proc_ticks(pid)
                run, wait, slices, threads = proc_sched(pid)
            except OSError:
                continue  # not there (yet, or any more): the caller checks the pids it needs
            g["ticks"] += ticks
            g["run_ns"] += run
            g["wait_ns"] += wait
            g["slices"] += slices
            g["threads"] += threads
            g["pids"].append(int(pid))
        groups[name] = g
    print(json.dumps({"t": time.monotonic(), "cpu": cpu, "groups": groups}))


def redis_info(path):
    """{"cmd": (calls, usec)} and the server's own CPU seconds, from `INFO commandstats` + `INFO cpu`."""
    cmds, cpu = {}, {}
    with open(path) as f:
        for line in f:
            m = re.match(r"cmdstat_([^:]+):calls=(\d+),usec=(\d+)", line)
            if m:
                cmds[m[1]] = (int(m[2]), int(m[3]))
            m = re.match(r"(used_cpu_\w+):([\d.]+)", line)
            if m:
                cpu[m[1]] = float(m[2])
    return cmds, cpu


def fmt(x, digits=0):
    return f"{x:,.{digits}f}"


# --- perf -----------------------------------------------------------------------------------

def crate_of(sym, dso):
    """Where a user-space sample's leaf function lives: a Rust crate, or the library."""
    if dso.endswith(".so") or ".so." in dso:
        lib = os.path.basename(dso).split(".so")[0]
        if lib == "libc":
            if re.search(r"malloc|free|realloc|calloc|_int_|unlink_chunk|tcache", sym):
                return "libc malloc/free"
            if re.match(r"__mem|mem", sym):
                return "libc memmove/memcpy"
            return "libc other"
        return lib
    if sym.startswith("[unknown]"):
        return "[unknown]"
    s = sym.lstrip("<&*")
    s = re.sub(r"^(dyn |mut |const )+", "", s)
    head = re.split(r"::|<| ", s, 1)[0]
    return head or "[unknown]"


# The instances' samples by layer: crates (and libraries) put together by what they do.
LAYERS = [
    ("kernel", ["kernel"]),
    ("tokio (scheduler, I/O driver, timers)", ["tokio"]),
    ("glibc malloc/free", ["libc malloc/free"]),
    ("glibc memmove/memcpy", ["libc memmove/memcpy"]),
    ("Redis client (redis, combine, tokio_util)", ["redis", "combine", "tokio_util"]),
    ("HTTP (hyper, hyper_util, http, axum, tower)", ["hyper", "hyper_util", "http", "axum", "tower",
                                                     "tower_http", "http_body", "http_body_util", "httparse"]),
    ("the oversell crate", ["oversell"]),
    ("tracing, tracing_subscriber", ["tracing", "tracing_subscriber", "tracing_core"]),
    ("serde, serde_json", ["serde", "serde_json"]),
    ("bb8 (the connection pool)", ["bb8"]),
    ("core, alloc, std", ["core", "alloc", "std"]),
]


# What a kernel sample was doing, first match wins (a wake-up done from the network receive
# path counts as a wake-up: that is what a hand-off pays for).
ACTIVITIES = [
    ("wake-ups and context switches", re.compile(
        r"^(__schedule|schedule|finish_task_switch.*|try_to_wake_up|wake_up_q|sock_def_readable|"
        r"ep_poll_callback|__wake_up.*|futex_wake|futex_wait.*|__futex_wait|pick_next_task.*|"
        r"ttwu_.*|enqueue_task.*|dequeue_task.*)$")),
    ("TCP/IP receive (loopback softirq)", re.compile(r"^(net_rx_action|process_backlog)$")),
    ("TCP send (tcp_sendmsg to loopback_xmit)", re.compile(r"^(tcp_sendmsg.*|tcp_write_xmit|__tcp_push_pending_frames)$")),
    ("TCP read by the receiver (tcp_recvmsg)", re.compile(r"^(tcp_recvmsg.*|tcp_read_sock)$")),
    ("file writes (Redis's AOF, nginx's access log)", re.compile(r"^(ext4_.*|generic_perform_write)$")),
    ("epoll (not sleeping)", re.compile(r"^(do_epoll_wait|ep_.*|__x64_sys_epoll_wait)$")),
    ("page faults", re.compile(r"^(asm_exc_page_fault|exc_page_fault|handle_mm_fault)$")),
    ("timer and reschedule interrupts", re.compile(r"^(asm_sysvec_.*)$")),
    ("system call entry and exit", re.compile(r"^(do_syscall_64|entry_SYSCALL_64.*|syscall_exit.*|exit_to_user_mode.*|irqentry_exit.*)$")),
]


def kernel_activity(frames):
    for name, pattern in ACTIVITIES:
        if any(pattern.match(sym) for sym, _ in frames):
            return name
    return "other kernel"


def syscall_of(frames):
    """The system call a kernel sample is in: the frame just under do_syscall_64."""
    for i, (sym, _) in enumerate(frames):
        if sym == "do_syscall_64" and i > 0:
            name = frames[i - 1][0]
            if name.startswith("exit_to_user_mode"):
                return "(back to user space: preempted)"
            return re.sub(r"^(__x64_sys_|__do_sys_|ksys_|__sys_|do_)", "", name)
    return None


def perf_samples(path, pid_group):
    """Parses `perf script -F comm,pid,tid,ip,sym,dso` (with call chains): yields (group,
    comm, leaf sym, leaf dso, frames)."""
    with open(path, errors="replace") as f:
        block = []
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                if block:
                    yield parse_block(block, pid_group)
                block = []
            else:
                block.append(line)
        if block:
            yield parse_block(block, pid_group)


def parse_block(block, pid_group):
    head = block[0]
    m = re.match(r"\s*(.*?)\s+(\d+)/(\d+)\s*$", head)
    comm, pid = (m[1], int(m[2])) if m else (head.strip(), -1)
    frames = []
    for line in block[1:]:
        m = re.match(r"\s*[0-9a-f]+\s+(.*)\s+\((.*)\)\s*$", line)
        if m:
            sym = re.sub(r"\+0x[0-9a-f]+$", "", m[1])
            frames.append((sym, m[2]))
    if pid == 0:
        group = "idle"
    elif pid in pid_group:
        group = pid_group[pid]
    elif comm.startswith("loadtest"):
        group = "loadtest"
    elif comm == "perf":
        group = "perf"
    else:
        group = "rest"
    sym, dso = frames[0] if frames else ("[unknown]", "[unknown]")
    return group, comm, sym, dso, frames


def perf_tables(path, pid_group, top):
    samples = list(perf_samples(path, pid_group))
    busy = [s for s in samples if s[0] != "idle"]
    out = []
    if not busy:
        return ["perf: no samples"], {}, {}
    n = len(busy)
    by_group = Counter(s[0] for s in busy)
    kernel = Counter(s[0] for s in busy if s[3] == "[kernel.kallsyms]")
    out.append(f"perf: {len(samples)} samples, {n} not idle (idle is undersampled by "
               "cpu-clock: the idle share comes from /proc/stat above)")
    out.append("")
    out.append("| group | % of busy samples | of which in the kernel | top comm, dso of the group |")
    out.append("|---|---|---|---|")
    shares = {}
    for g in ORDER:
        if not by_group[g]:
            continue
        shares[g] = by_group[g] / n
        cd = Counter((s[1], os.path.basename(s[3])) for s in busy if s[0] == g)
        tops = ", ".join(f"{c} {d} {100 * k / by_group[g]:.0f}%" for (c, d), k in cd.most_common(3))
        out.append(f"| {LABEL[g]} | {100 * by_group[g] / n:.1f} | "
                   f"{100 * kernel[g] / by_group[g]:.0f} % | {tops} |")
    out.append("")

    activity = {}
    inst = [s for s in busy if s[0] == "instances"]
    if inst:
        k = len(inst)
        crates = Counter("kernel" if s[3] == "[kernel.kallsyms]" else crate_of(s[2], s[3]) for s in inst)
        for name, members in LAYERS:
            activity["layer: " + name] = sum(crates[c] for c in members) / k
        activity["layer: everything else"] = 1 - sum(
            activity["layer: " + name] for name, _ in LAYERS)
        activity["layer: functions named oversell::lock::*"] = sum(
            1 for s in inst if "oversell::lock::" in s[2]) / k
        out.append(f"The instances' samples ({k}) by where the leaf function lives "
                   "(Rust crate or library; generic code is named after the crate that defines it):")
        out.append("")
        out.append(" | ".join(f"{c} {100 * v / k:.1f} %" for c, v in crates.most_common(14)))
        out.append("")
        syms = Counter((s[2], os.path.basename(s[3])) for s in inst if s[3] != "[kernel.kallsyms]")
        out.append(f"The instances' top {top} user-space functions (self time, % of the instances' "
                   "samples; their kernel time is in the next table):")
        out.append("")
        out.append("| % | function | dso |")
        out.append("|---|---|---|")
        for (sym, dso), v in syms.most_common(top):
            sym = sym if len(sym) <= 110 else sym[:107] + "..."
            out.append(f"| {100 * v / k:.1f} | `{sym}` | {dso} |")
        out.append("")

    kern = [s for s in busy if s[3] == "[kernel.kallsyms]"]
    activity["user space (all groups)"] = (n - len(kern)) / n
    for s in kern:
        name = kernel_activity(s[4])
        activity[name] = activity.get(name, 0) + 1 / n
    if kern:
        act = defaultdict(Counter)
        for s in kern:
            act[kernel_activity(s[4])][s[0]] += 1
        groups = [g for g in ORDER if kernel[g]]
        out.append(f"Kernel samples ({len(kern)}, {100 * len(kern) / n:.0f} % of busy) by what "
                   "the kernel was doing (from the call chain; first match in this order), "
                   "% of all busy samples:")
        out.append("")
        out.append("| kernel activity | all | " + " | ".join(groups) + " |")
        out.append("|---|---|" + "---|" * len(groups))
        for name, _ in ACTIVITIES + [("other kernel", None)]:
            c = act.get(name)
            if c:
                out.append(f"| {name} | {100 * sum(c.values()) / n:.1f} | "
                           + " | ".join(f"{100 * c[g] / n:.1f}" for g in groups) + " |")
        out.append("")
        calls = Counter(syscall_of(s[4]) or "(not in a system call)" for s in kern)
        out.append("The same samples by system call: " + ", ".join(
            f"{c} {100 * v / n:.1f} %" for c, v in calls.most_common(10)) + ".")
        out.append("")

    red = [s for s in busy if s[0] == "redis"]
    if red:
        k = len(red)
        syms = Counter((s[2], os.path.basename(s[3])) for s in red)
        out.append("redis-server's top functions (% of its samples; the binary, /usr/bin/redis-check-rdb "
                   "to perf, has dynamic symbols only): " + ", ".join(
                       f"`{sym}` ({dso}) {100 * v / k:.0f}%" for (sym, dso), v in syms.most_common(8)))
        out.append("")
    return out, shares, activity


# --- one configuration --------------------------------------------------------------------------

def row(d, rid, name, items, seconds):
    b = json.load(open(f"{d}/{rid}.before.json"))
    a = json.load(open(f"{d}/{rid}.after.json"))
    wall = a["t"] - b["t"]
    dcpu = [x - y for x, y in zip(a["cpu"], b["cpu"])]
    # user nice system idle iowait irq softirq steal …
    total = sum(dcpu[:8])
    idle = dcpu[3] + dcpu[4]
    irq = dcpu[5] + dcpu[6]
    cores = os.cpu_count()
    lt = json.load(open(f"{d}/{rid}.lt.json"))["stats"]
    lat = lt["latency_ms"]

    cpu = {}
    sched = {}
    for g, ga in a["groups"].items():
        gb = b["groups"].get(g, {"ticks": 0, "run_ns": 0, "wait_ns": 0, "slices": 0})
        cpu[g] = (ga["ticks"] - gb["ticks"]) / TICK
        sched[g] = (ga["wait_ns"] - gb["wait_ns"], ga["slices"] - gb["slices"])
    # The generator and perf ended inside the window: their whole life, from /usr/bin/time.
    for g in ("loadtest", "perf"):
        p = f"{d}/{rid}.{g}.time"
        if os.path.exists(p):
            words = open(p).read().split()
            cpu[g] = float(words[-2]) + float(words[-1])
    busy = (total - idle) / TICK
    cpu["rest"] = busy - sum(v for g, v in cpu.items() if g != "rest")
    # The cores' time from the wall clock: /proc/stat's counters (ticks) come up short by a
    # few %, and what they miss is idle time.
    capacity = cores * wall
    idle = capacity * TICK - (total - idle)

    rate = items / seconds if seconds else 0
    print(f"### {name}: {fmt(items)} items sold in {seconds:.2f} s = **{fmt(rate)} items/s**")
    print()
    print(f"loadtest saw {fmt(lt['ok'])} answers 200 of {fmt(lt['sent'])}, p50 {lat['p50']:.1f} ms, "
          f"p99 {lat['p99']:.1f} ms, max {lat['max']:.0f} ms. Window {wall:.2f} s, "
          f"{cores} cores = {capacity:.2f} CPU-s; busy {busy:.2f} CPU-s "
          f"({100 * busy / capacity:.0f} %), idle {idle / TICK:.2f} CPU-s (the rest of the cores' time); "
          f"irq + softirq {irq / TICK:.2f} CPU-s (charged to whichever group it interrupted).")
    print()
    threads = ", ".join(f"{g} {a['groups'][g]['threads']}" for g in ORDER if g in a["groups"])
    print(f"Threads at the end of the window: {threads} (the generator: 1 per core + its main thread).")
    print()
    print("| group | CPU s | share of the cores | CPU µs per item | run-queue wait µs per item "
          "| threads waiting for a CPU, on average | time slices per item |")
    print("|---|---|---|---|---|---|---|")
    for g in ORDER:
        if g not in cpu:
            continue
        w, s = sched.get(g, (None, None))
        wq = f"{w / 1000 / items:.0f}" if w is not None and items else "-"
        wp = f"{w / 1e9 / wall:.2f}" if w is not None else "-"
        sl = f"{s / items:.1f}" if s is not None and items else "-"
        per = f"{1e6 * cpu[g] / items:.0f}" if items else "-"
        print(f"| {LABEL[g]} | {cpu[g]:.2f} | {100 * cpu[g] / capacity:.1f} % | {per} | {wq} | {wp} | {sl} |")
    per = f"{1e6 * busy / items:.0f}" if items else "-"
    print(f"| **busy (all)** | {busy:.2f} | {100 * busy / capacity:.1f} % | {per} | | | |")
    print(f"| idle | {idle / TICK:.2f} | {100 * idle / TICK / capacity:.1f} % | | | | |")
    print()

    redis = {}
    rb, ra = f"{d}/{rid}.redis.before", f"{d}/{rid}.redis.after"
    if os.path.exists(rb) and os.path.exists(ra) and items:
        cb, ub = redis_info(rb)
        ca, ua = redis_info(ra)
        rows = []
        for cmd, (calls, usec) in ca.items():
            c0, u0 = cb.get(cmd, (0, 0))
            if calls - c0 > 0:
                rows.append((cmd, calls - c0, usec - u0))
        rows.sort(key=lambda r: -r[2])
        tot_calls = sum(r[1] for r in rows)
        scripts = [r for r in rows if r[0] in ("eval", "evalsha", "eval_ro", "evalsha_ro", "fcall")]
        s_calls = sum(r[1] for r in scripts)
        s_usec = sum(r[2] for r in scripts)
        own = sum(ua.get(k, 0) - ub.get(k, 0) for k in ("used_cpu_user", "used_cpu_sys"))
        main = sum(ua.get(k, 0) - ub.get(k, 0) for k in ("used_cpu_user_main_thread", "used_cpu_sys_main_thread"))
        print(f"Redis's own view (INFO commandstats, INFO cpu): the server used {own:.2f} CPU-s "
              f"({1e6 * own / items:.0f} µs per item; main thread {main:.2f} s); it ran "
              f"{s_calls / items:.2f} scripts per item for {s_usec / items:.1f} µs per item "
              f"(wall time inside the script, preemption included). A command a script calls is "
              f"counted again on its own line below, so the lines do not add up: "
              f"{tot_calls / items:.1f} counted commands per item.")
        print()
        print("| command | calls per item | µs per call | µs per item |")
        print("|---|---|---|---|")
        for cmd, calls, usec in rows[:10]:
            print(f"| {cmd} | {calls / items:.2f} | {usec / calls:.1f} | {usec / items:.1f} |")
        print()
        redis = {"scripts_per_item": s_calls / items, "script_us_per_item": s_usec / items,
                 "cpu_us_per_item": 1e6 * own / items,
                 "per_item": {cmd: calls / items for cmd, calls, _ in rows}}

    shares, activity = {}, {}
    pf = f"{d}/{rid}.perf.txt"
    if os.path.exists(pf):
        pid_group = {}
        for g, ga in a["groups"].items():
            for pid in ga["pids"]:
                pid_group[pid] = g
        for pid in open(f"{d}/{rid}.loadtest.pid").read().split() if os.path.exists(f"{d}/{rid}.loadtest.pid") else []:
            pid_group[int(pid)] = "loadtest"
        lines, shares, activity = perf_tables(pf, pid_group, int(os.environ.get("TOP", "15")))
        print("\n".join(lines))

    with open(f"{d}/rows.jsonl", "a") as f:
        f.write(json.dumps({
            "name": name, "items": items, "seconds": seconds, "rate": rate,
            "p50": lat["p50"], "p99": lat["p99"], "busy": busy, "capacity": capacity,
            "idle": idle / TICK,
            "us_per_item": {g: 1e6 * v / items for g, v in cpu.items()} if items else {},
            "wait_per_item": {g: w / 1000 / items for g, (w, s) in sched.items()} if items else {},
            "slices_per_item": {g: s / items for g, (w, s) in sched.items()} if items else {},
            "busy_us_per_item": 1e6 * busy / items if items else 0,
            "redis": redis, "perf": shares, "activity": activity,
        }) + "\n")


def summary(d):
    rows = [json.loads(line) for line in open(f"{d}/rows.jsonl")]
    if not rows:
        return
    names = [r["name"] for r in rows]
    print("### Summary: CPU µs per item sold, per group and configuration")
    print()
    print("| group | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(rows))
    print("| items/s | " + " | ".join(fmt(r["rate"]) for r in rows) + " |")
    print("| p50 / p99 ms | " + " | ".join(f"{r['p50']:.1f} / {r['p99']:.0f}" for r in rows) + " |")
    print("| busy % of the cores | " + " | ".join(f"{100 * r['busy'] / r['capacity']:.0f} %" for r in rows) + " |")
    for g in ORDER:
        if any(g in r["us_per_item"] for r in rows):
            print(f"| {LABEL[g]} | " + " | ".join(
                f"{r['us_per_item'].get(g, 0):.0f}" for r in rows) + " |")
    print("| **all busy CPU** | " + " | ".join(f"**{r['busy_us_per_item']:.0f}**" for r in rows) + " |")
    print("| wall µs per item (1/rate) | " + " | ".join(
        f"{1e6 / r['rate']:.0f}" if r["rate"] else "-" for r in rows) + " |")
    if all(r["redis"] for r in rows):
        print("| Redis: scripts per item | " + " | ".join(f"{r['redis']['scripts_per_item']:.2f}" for r in rows) + " |")
        print("| Redis: µs inside scripts per item | " + " | ".join(
            f"{r['redis']['script_us_per_item']:.1f}" for r in rows) + " |")
        for cmd in ("set", "publish"):
            print(f"| Redis: {cmd.upper()} per item | " + " | ".join(
                f"{r['redis']['per_item'].get(cmd, 0):.2f}" for r in rows) + " |")
    for g in ("redis", "instances", "nginx"):
        print(f"| run-queue wait per item, {g} (µs) | " + " | ".join(
            f"{r['wait_per_item'].get(g, 0):.0f}" for r in rows) + " |")
    for g in ("redis", "instances", "nginx"):
        print(f"| time slices per item, {g} | " + " | ".join(
            f"{r['slices_per_item'].get(g, 0):.1f}" for r in rows) + " |")
    if all(r["perf"] for r in rows):
        print()
        print("perf, % of busy samples per group:")
        print()
        print("| group | " + " | ".join(names) + " |")
        print("|---|" + "---|" * len(rows))
        for g in ORDER:
            if any(g in r["perf"] for r in rows):
                print(f"| {LABEL[g]} | " + " | ".join(f"{100 * r['perf'].get(g, 0):.1f}" for r in rows) + " |")
        print()
        print("perf, % of busy samples by activity (every group; kernel activities as in the tables above):")
        print()
        print("| activity | " + " | ".join(names) + " |")
        print("|---|" + "---|" * len(rows))
        for a in ["user space (all groups)"] + [name for name, _ in ACTIVITIES] + ["other kernel"]:
            if any(a in r["activity"] for r in rows):
                print(f"| {a} | " + " | ".join(f"{100 * r['activity'].get(a, 0):.1f}" for r in rows) + " |")
        print()
        print("perf, the three instances' samples by layer (self time, % of the instances' samples):")
        print()
        print("| layer | " + " | ".join(names) + " |")
        print("|---|" + "---|" * len(rows))
        for a in [name for name, _ in LAYERS] + ["everything else", "functions named oversell::lock::*"]:
            if any("layer: " + a in r["activity"] for r in rows):
                print(f"| {a} | " + " | ".join(
                    f"{100 * r['activity'].get('layer: ' + a, 0):.1f}" for r in rows) + " |")
    print()


def floor(d):
    """The serial floor's table, with the CPU it took: the client's (/usr/bin/time) and Redis's
    (/proc), per round trip, and Redis's time slices per round trip."""
    rows = [line.rstrip("\n").split("\t") for line in open(f"{d}/floor.tsv")][1:]
    seconds = float(os.environ.get("FLOOR_SECONDS", "1"))
    b = json.load(open(f"{d}/floor.before.json"))["groups"]["redis"]
    a = json.load(open(f"{d}/floor.after.json"))["groups"]["redis"]
    words = open(f"{d}/floor.time").read().split()
    wall, client = float(words[-3]), float(words[-2]) + float(words[-1])
    redis = (a["ticks"] - b["ticks"]) / TICK
    slices = a["slices"] - b["slices"]
    trips = sum(float(r[2]) * seconds * int(r[1]) for r in rows)
    print("| chain | round trips | chains/s | µs per chain |")
    print("|---|---|---|---|")
    for chain, n, per_s, us in rows:
        print(f"| {chain} | {n} | {fmt(float(per_s))} | {float(us):.1f} |")
    print()
    print(f"All four chains: {fmt(trips)} round trips in {wall:.2f} s ({1e6 * wall / trips:.0f} µs each); "
          f"CPU per round trip: the client (tokio + redis-rs) {1e6 * client / trips:.0f} µs, "
          f"redis-server {1e6 * redis / trips:.0f} µs; Redis ran {slices / trips:.2f} time slices "
          f"per round trip (it sleeps in epoll_wait between commands and is woken for each).")
    print()


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "snap":
        snap(sys.argv[2:])
    elif cmd == "row":
        row(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), float(sys.argv[6]))
    elif cmd == "floor":
        floor(sys.argv[2])
    elif cmd == "summary":
        summary(sys.argv[2])
    else:
        sys.exit(f"unknown command {cmd}")
