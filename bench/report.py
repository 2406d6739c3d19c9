#!/usr/bin/env python3
"""Writes BENCHMARKS.md (to stdout) from one bench/run.sh run.

Usage: report.py RESULTS_TSV MATRIX_JSON SELLING_TSV   (see bench/run.sh for the environment)
       report.py --selling SELLING_TSV                  (section 3 alone, from bench/selling-rate.sh)
"""

import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
from collections import defaultdict


def sh(*cmd):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
        return (out.stdout + out.stderr).strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "unknown"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def shares(per_instance):
    """"app1:10,app2:30" -> "25 / 75 %": each instance's share of the sales."""
    counts = [int(p.split(":")[1]) for p in per_instance.split(",") if ":" in p]
    total = sum(counts)
    if not total:
        return "–"
    return " / ".join(f"{100 * c / total:.0f}" for c in counts) + " %"


def selling_section(path, command=None):
    """Section 3 from bench/selling-rate.sh's TSV: rows per tier and wait, one column group
    per tool, the ratio to `none` within each tool, and the serial floor."""
    sales, floor, load = [], [], {}
    for line in open(path).read().splitlines():
        cells = line.split("\t")
        if cells[0] == "sale":
            sales.append(cells[1:])
        elif cells[0] == "floor":
            floor.append(cells[1:])
        elif cells[0] == "load":
            load[cells[1]] = cells[2]
    tools = [t for t in ("loadtest", "wrk") if any(r[0] == t for r in sales)]
    rows, nones = {}, {}
    for tool, tier, wait, items, secs, rate, p50, p99, mx, failed, *truth in sales:
        key = (tier, wait)
        # A row run twice (`none`, first and last) is shown twice.
        while tool in rows.get(key, {}):
            key = (key[0] + " (again)", wait)
        rows.setdefault(key, {})[tool] = dict(
            rate=int(rate), p50=float(p50), p99=float(p99), max=float(mx), failed=int(failed),
            truth=truth[:4], per_instance=truth[4] if len(truth) > 4 else "-",
            longest_run=truth[5] if len(truth) > 5 else "-",
        )
        if tier == "none":
            nones.setdefault(tool, []).append(int(rate))
    # The machine drifts during a run: the ratios are to the mean of every `none` row.
    base = {tool: statistics.mean(rates) for tool, rates in nones.items()}
    out = []
    w = out.append
    w("## 3. Sustained selling rate per tier")
    w("")
    w("A closed loop of 64 connections through nginx (`oversell up --instances 3`, one Redis) for")
    w("each tier, business step 0 ms and a stock that never runs out, so what is measured is the")
    w("lock itself. Each row runs once per tool, the project's generator (`loadtest run`) then")
    w("`wrk -t1` (`bench/wrk-sale.lua`), one after the other on the same fleet; items/s are")
    w("counted from the ledger in Redis, latencies are what the tool saw, `vs none` compares")
    w("within one tool, to the mean of the `none` rows (run first and again last, since the")
    w("machine drifts during a run). A row `tier` waits `pubsub` (the default); `cohort:N` is")
    w("lock cohorting (`src/lock/cohort.rs`), never the default.")
    w("")
    if command:
        w("```")
        w(command)
        w("```")
        w("")
    if load:
        w(f"Load average (1, 5, 15 min) before the rows: {load.get('before', '?')}; after: "
          f"{load.get('after', '?')}")
        w("(the bench's own processes included). The cores are shared with other work: compare")
        w("rows within one run.")
        w("")
    head = "| tier | wait |"
    rule = "|---|---|"
    for tool in tools:
        head += f" {tool} items/s | vs none | p50 / p99 / max ms |"
        rule += "---|---|---|"
    w(head + " oversold / lost / overlaps / foreign | sales per instance (loadtest) | longest run of one instance (loadtest) |")
    w(rule + "---|---|---|")
    for (tier, wait), by_tool in rows.items():
        cells = f"| {tier} | {wait} |"
        for tool in tools:
            r = by_tool.get(tool)
            if not r:
                cells += " – | – | – |"
                continue
            vs = f"{r['rate'] / base[tool]:.2f}×" if base.get(tool) else "–"
            failed = f" ({r['failed']} failed)" if r["failed"] else ""
            cells += f" {r['rate']:,}{failed} | {vs} | {r['p50']:.1f} / {r['p99']:.1f} / {r['max']:.0f} |"
        truths = {tool: r["truth"] for tool, r in by_tool.items()}
        if all(v == "0" for t in truths.values() for v in t):
            truth = "all 0"
        else:
            truth = "; ".join(f"{tool}: {' / '.join(t)}" for tool, t in truths.items())
        first = next(iter(by_tool.values()))
        w(f"{cells} {truth} | {shares(first['per_instance'])} | {first['longest_run']} |")
    w("")
    if floor:
        w("The serial floor: one client doing a chain's round trips back to back against the")
        w("same Redis, with the service's own scripts and client stack (`serial-floor`), no HTTP")
        w("and no other buyer. It is the fastest the lock can go from sale to sale through that")
        w("Redis on this machine without the HTTP load; under the load above every round trip also")
        w("waits for CPU.")
        w("")
        w("| chain | round trips | chains/s | µs per chain |")
        w("|---|---|---|---|")
        for chain, trips, per_s, us in floor:
            w(f"| {chain} | {trips} | {int(float(per_s)):,} | {float(us):.1f} |")
        w("")
    w("Reading it: a lock serializes the sale, so a locked row sells one sale per hand-off.")
    w("With `pubsub` a hand-off is the holder's write + release (one round trip when the lock")
    w("lives in the resource store), the release message to every instance, and the next")
    w("buyer's acquire with its read riding behind it (one more); one woken waiter per instance")
    w("races, the losers wait again behind newcomers, hence the tail. With `cohort:N` most")
    w("hand-offs stay in the instance and cost one round trip (the next buyer's read rides")
    w("behind the holder's write), and an instance's buyers are served first come first")
    w("served. `none` and `atomic-deduct` are not serialized: they are bound by the machine's")
    w("CPU instead. Sales per instance are equal by construction here (a closed loop through")
    w("nginx's round robin);")
    w("cohorting's unfairness across instances shows in the longest run, the most sales one")
    w("instance made in a row (in the ledger's order) while the others' buyers waited: one")
    w("acquire sells at most passes + 1 under `cohort:N`, and the same instance may win the")
    w("lock again after its release. It shows in p99 and max too.")
    w("")
    return out


def main():
    if sys.argv[1] == "--selling":
        # Only section 3, from a standalone bench/selling-rate.sh run.
        section = selling_section(sys.argv[2], os.environ.get("SELLING_CMD"))
        section[1:1] = [
            "",
            f"Generated on {datetime.date.today().isoformat()} by `bench/selling-rate.sh` on its own"
            " (`report.py --selling`),",
            "not in the run of sections 1–2; `bench/run.sh` regenerates the three together.",
        ]
        print("\n".join(section))
        return
    results_path, matrix_path, selling_path = sys.argv[1], sys.argv[2], sys.argv[3]
    rounds, duration, conns = (os.environ[k] for k in ("ROUNDS", "DURATION", "CONNECTIONS"))
    runs = defaultdict(lambda: defaultdict(list))
    cpu_us = defaultdict(lambda: defaultdict(list))
    order = []
    with open(results_path) as f:
        for line in f:
            label, tool, _round, rps, cpu = line.rstrip("\n").split("\t")
            if label not in order:
                order.append(label)
            runs[label][tool].append(float(rps))
            # CPU time the tool itself used (user + system) per request it completed.
            cpu_us[label][tool].append(float(cpu) * 1e6 / (float(rps) * float(duration)))
    with open(matrix_path) as f:
        matrix = json.load(f)

    out = []
    w = out.append
    w("# Benchmarks")
    w("")
    w(f"Sections 1–3 are generated by `bench/run.sh` on {datetime.date.today().isoformat()}; every figure in them comes from")
    w("that one run (do not edit by hand, run `bench/run.sh` again: it keeps section 3b and sections 4 and on).")
    w("")
    w("## Machine")
    w("")
    w(f"- CPU: {cpu_model()}, **{os.cpu_count()} cores** (the generator, the server and nginx share them)")
    w(f"- Kernel: {platform.system()} {platform.release()}")
    w(f"- {sh('nginx', '-v')}; {sh('wrk', '-v')}; {sh('redis-server', '--version')}")
    w(f"- Load average (1, 5, 15 min) when the run started: {os.environ.get('LOAD_BEFORE', 'unknown')}. The")
    w("  machine may be shared: other work adds noise, which is why the tools take turns and the")
    w("  figures are medians.")
    w(f"- {sh('rustc', '-V')}; {open(os.path.join(os.path.dirname(matrix_path), 'version')).read().strip()} (release build)")
    w("")
    w("## 1. The generator against wrk")
    w("")
    w(f"The tools take turns, {rounds} rounds of {duration} s each, {conns} keep-alive connections,")
    w("2 threads each, against the same endpoint; the figure is the median of the rounds. The paired")
    w("ratio compares the two tools within each round, which cancels slow drifts in what else the")
    w("machine is doing.")
    w("")
    w("```")
    w(f"wrk -t2 -c{conns} -d{duration}s URL")
    w(f"loadtest run --url BASE -m GET --path PATH -c {conns} -z {duration}s --json")
    w("```")
    w("")
    tools = ["wrk", "loadtest"] + (["oha"] if any("oha" in runs[l] for l in order) else [])
    head = "| endpoint | " + " | ".join(f"{t} req/s" for t in tools)
    w(head + " | loadtest / wrk (medians) | loadtest / wrk (median of paired rounds) |")
    w("|" + "---|" * (len(tools) + 3))
    for label in order:
        med = {t: statistics.median(runs[label][t]) for t in tools if runs[label][t]}
        ratio = med["loadtest"] / med["wrk"] if med.get("wrk") else float("nan")
        paired = statistics.median(
            lt / wrk for lt, wrk in zip(runs[label]["loadtest"], runs[label]["wrk"]) if wrk
        )
        cells = " | ".join(f"{med[t]:,.0f}" for t in tools)
        w(f"| {label} | {cells} | **{ratio:.2f}×** | {paired:.2f}× |")
    w("")
    w("CPU time each tool used per request (user + system, median over the rounds; lower leaves")
    w("more of the machine to the server):")
    w("")
    w("| endpoint | " + " | ".join(f"{t} µs/request" for t in tools) + " |")
    w("|" + "---|" * (len(tools) + 1))
    for label in order:
        cells = " | ".join(f"{statistics.median(cpu_us[label][t]):.1f}" for t in tools)
        w(f"| {label} | {cells} |")
    w("")
    w("Every round (requests/s; rounds alternate which tool goes first):")
    w("")
    for label in order:
        for t in tools:
            values = ", ".join(f"{v:,.0f}" for v in runs[label][t])
            w(f"- {label}, {t}: {values}")
    w("")
    w("`nginx return 200` is the minimal endpoint (`bench/ping-nginx.conf.in`, `worker_processes auto`,")
    w("no access log): the work per request is so small that the load generator's own cost decides")
    w("how much of the 2 cores is left for nginx, so the ratio compares the generators.")
    w("")
    w("Not measured against a static file of the service: with `TCP_NODELAY` off on the service's")
    w("accepted sockets, an answer written in two parts (head, then a body of a few KiB) waits")
    w("about 40 ms for the client's delayed ACK (Nagle's algorithm). `GET /app.css` straight from one")
    w("instance, 8 connections, measured by hand on this machine: loadtest p50 43 ms, 315 req/s;")
    w("`wrk -t1 -c8` p50 25 ms, 449 req/s. That endpoint measures the stall, not the tools.")
    w("")
    w("## 2. The tier matrix through nginx, 3 instances")
    w("")
    rows = matrix["rows"]
    none = next((r for r in rows if r["tier"] == "none"), None)
    s = matrix["settings"]
    w(f"`oversell up --instances 3` (nginx round robin, one Redis); for each tier: reset to {matrix['stock']}")
    w(f"items, switch the fleet, release {matrix['buyers']} buyers at once, read `GET /state`. Business step")
    w(f"{s.get('business_ms')} ms, lease {s.get('ttl_ms')} ms, wait `{s.get('wait')}` (deadline {s.get('wait_deadline_ms')} ms).")
    w("")
    w("```")
    w(os.environ["MATRIX_CMD"])
    w("```")
    w("")
    w("| tier | 200 | 409 | 503 | err | ledger | oversold | lost upd | overlaps | req/s | vs none | p50 ms | p99 ms |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        vs = f"{r['throughput_rps'] / none['throughput_rps']:.2f}×" if none and none["throughput_rps"] else "–"
        w(
            f"| {r['tier']} | {r['ok']} | {r['sold_out']} | {r['unavailable']} | {r['errors']} | {r['ledger_orders']} "
            f"| **{r['oversold']}** | {r['lost_updates']} | {r['overlaps']} | {r['throughput_rps']:,.0f} | {vs} "
            f"| {r['p50_ms']:.1f} | {r['p99_ms']:.1f} |"
        )
    w("")
    w("`oversold`, `lost upd`, `overlaps` and `ledger` are read from Redis; `200`..`err`, `req/s`")
    w("(answers per second from the release to the last answer) and the percentiles are what the")
    w("buyers saw. `vs none` is each tier's throughput over the unlocked tier's.")
    w("")
    w("![oversold and throughput per tier](bench/matrix.svg)")
    w("")
    out.extend(selling_section(selling_path, os.environ.get("SELLING_CMD")))
    print("\n".join(out))


if __name__ == "__main__":
    main()
