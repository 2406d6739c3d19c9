#!/usr/bin/env python3
"""How steady this machine's cores are: a fixed loop on every core at once for a few seconds,
counted per 100 ms window. Run it with nothing else running, before a benchmark whose tail
depends on the pace of a serial path (a lock that serves in order: every buyer waits a full
turn of the queue, so a window in which the cores ran slower is a tail in its latency).

    python3 bench/steadiness.py [SECONDS=3]

Prints one line: per core, the work done in the slowest 1 % of windows, the median window and
the fastest, and over all cores the median window's work over the slowest 1 %'s (1.00: a
steady machine; a shared host whose other tenants take the cores' caches, or their time, shows
more). Only the standard library: it must run before anything is built.
"""
import math
import multiprocessing
import os
import sys
import time

WINDOW = 0.1


def spin(seconds, out):
    """Counts fixed chunks of work per window on this process's core."""
    counts = [0] * int(seconds / WINDOW)
    start = time.perf_counter()
    while True:
        i = int((time.perf_counter() - start) / WINDOW)
        if i >= len(counts):
            break
        x = 0
        for j in range(2000):
            x += j * j
        counts[i] += 1
    out.put(counts)


def nearest_rank(sorted_values, q):
    return sorted_values[max(1, math.ceil(len(sorted_values) * q)) - 1]


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    if not 0.5 <= seconds <= 60:
        sys.exit("usage: steadiness.py [SECONDS, 0.5..60]")
    cores = os.cpu_count() or 1
    out = multiprocessing.Queue()
    workers = [multiprocessing.Process(target=spin, args=(seconds, out)) for _ in range(cores)]
    for w in workers:
        w.start()
    per_core = [sorted(out.get()) for _ in workers]
    for w in workers:
        w.join()
    cells = []
    for counts in per_core:
        cells.append(f"{nearest_rank(counts, 0.01)} / {nearest_rank(counts, 0.5)} / {counts[-1]}")
    every = sorted(c for counts in per_core for c in counts)
    slowest = nearest_rank(every, 0.01)
    ratio = nearest_rank(every, 0.5) / slowest if slowest else float("inf")
    fastest = every[-1] / slowest if slowest else float("inf")
    print(
        f"Machine steadiness ({cores} cores, a fixed loop on each, {seconds:g} s): work per 100 ms, "
        f"slowest 1 % / median / fastest: {'; '.join(cells)}; the median window did "
        f"{ratio:.2f}x the slowest 1 %'s work, the fastest {fastest:.2f}x."
    )


if __name__ == "__main__":
    main()
