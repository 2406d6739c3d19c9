#!/usr/bin/env python3
"""Where a turn of an in-order lock's queue goes: read from a room's ledger after a run, every
sold section split into four legs, and the legs summed over the run's median turns and over its
slowest 1 % of turns (a turn: as many sections in a row as there were buyers, the time a buyer
of a lock that serves in order waits).

    python3 bench/turn-split.py URL ADMIN_TOKEN BUYERS [LABEL]

The legs of a section and the hand-off after it, from the ledger entry's times (`enter_us` and
`exit_us` on the resource store's clock, `read_us` and `write_us` on the instance's: one clock
on one host, so run it against a fleet on one machine):
  - store -> instance: from the read in the store to the sale holding its reply;
  - instance: from there to its write built;
  - instance -> store: from there to the write in the store;
  - hand-off: from the write (and the release behind it) to the next section's read.
Prints one markdown row: LABEL, sections, the turn's p50 / p99 ms (p99/p50), each leg's median
per section in µs, each leg's sum over the median turns -> over the slowest 1 % (ms), and where
the slowest 1 % fall: how many of them end in the run's first 300 ms (when all the buyers
arrive at once), and the turn's p99/p50 over the turns that end after it.
Needs a server whose ledger carries `read_us` (sections without it are left out, and said).
"""
import json
import math
import statistics
import sys
import urllib.request

# The run's start: the turns ending this soon after its first section carry the arrival burst.
START_US = 300_000

LEGS = ("store -> instance", "instance", "instance -> store", "hand-off")


def ledger(url, token):
    sections, offset = [], 0
    while True:
        request = urllib.request.Request(
            f"{url}/ledger?offset={offset}&limit=10000",
            headers={"Authorization": f"Bearer {token}"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            orders = json.load(answer)["orders"]
        if not orders:
            return sections
        sections += orders
        offset += len(orders)


def nearest_rank(sorted_values, q):
    return sorted_values[max(1, math.ceil(len(sorted_values) * q)) - 1]


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__.split("\n\n")[1].strip())
    url, token, buyers = sys.argv[1], sys.argv[2], int(sys.argv[3])
    label = sys.argv[4] if len(sys.argv) == 5 else ""
    orders = sorted(ledger(url, token), key=lambda o: o.get("enter_us", 0))
    timed = [o for o in orders if "read_us" in o and "write_us" in o]
    if len(timed) <= buyers:
        sys.exit(f"error: {len(timed)} of {len(orders)} sold sections carry the instance's times; "
                 f"a turn needs more than {buyers}")
    if len(timed) < len(orders):
        print(f"note: {len(orders) - len(timed)} sections without the instance's times left out",
              file=sys.stderr)
    # legs[i]: section i's four legs in µs, the hand-off the one to section i + 1.
    legs = [
        (o["read_us"] - o["enter_us"], o["write_us"] - o["read_us"],
         o["exit_us"] - o["write_us"], nxt["enter_us"] - o["exit_us"])
        for o, nxt in zip(timed, timed[1:])
    ]
    turns = sorted(
        (timed[i + buyers]["enter_us"] - timed[i]["enter_us"], i)
        for i in range(len(timed) - buyers)
    )
    # A closed loop's buyers all arrive at the first instant: the first turns carry that burst.
    start = timed[0]["enter_us"] + START_US
    settled = sorted(t for t, i in turns if timed[i + buyers]["enter_us"] > start)
    p50 = nearest_rank([t for t, _ in turns], 0.5)
    p99 = nearest_rank([t for t, _ in turns], 0.99)
    slowest = [i for t, i in turns if t >= p99]
    median = [i for t, i in turns if abs(t - p50) <= p50 * 0.02]

    def summed(starts, leg):
        return statistics.mean(sum(row[leg] for row in legs[i:i + buyers]) for i in starts) / 1000

    cells = [label, f"{len(timed):,}", f"{p50 / 1000:.1f} / {p99 / 1000:.1f} ({p99 / p50:.2f})"]
    cells += [f"{statistics.median(row[leg] for row in legs):.0f}" for leg in range(4)]
    cells += [f"{summed(median, leg):.1f} → {summed(slowest, leg):.1f}" for leg in range(4)]
    early = sum(1 for i in slowest if timed[i + buyers]["enter_us"] <= start)
    cells.append(f"{early} of {len(slowest)}")
    cells.append(f"{nearest_rank(settled, 0.99) / nearest_rank(settled, 0.5):.2f}" if settled else "-")
    print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
