#!/usr/bin/env python3
"""Counts how often following a sale through the code comes back to a file it had left.

A walk is the project's functions a `POST /sale` enters, in order (a pre-order of the call
tree: std, tokio and redis-rs left out), written down by reading the code, one `file function`
per line. Consecutive functions of one file are one stop; a return is a stop in a file the
walk had already left. The same count by part (a folder of `src/`, such as the sale or the
lock, or a file directly in `src/`) says how often the walk goes back and forth between the
sale and the lock; and the walk's visits to the lock (`src/lock`) that follow a stop in the
sale (`src/sale`), other parts in between left out, how many times the sale goes to the lock.
Run: bench/sale-walk.py bench/sale-walk/*.txt   (--stops: each walk's stops, a return marked R)
"""
import sys


def returns(places):
    stops = [p for i, p in enumerate(places) if i == 0 or places[i - 1] != p]
    back = sum(1 for i, p in enumerate(stops) if p in stops[:i])
    return stops, back


def part(path):
    bits = path.split('/')
    return '/'.join(bits[:2]) if len(bits) > 2 else path


show = '--stops' in sys.argv
for path in [a for a in sys.argv[1:] if a != '--stops']:
    walk = [line.split() for line in open(path) if line.strip() and not line.startswith('#')]
    files = [step[0] for step in walk]
    stops, back = returns(files)
    _, back_parts = returns([part(f) for f in files])
    sale_lock, _ = returns([p for p in map(part, files) if p in ('src/sale', 'src/lock')])
    to_lock = sum(1 for i, p in enumerate(sale_lock) if p == 'src/lock' and i > 0)
    print(f"{path}: {len(files)} functions, {len(stops)} stops in {len(set(files))} files, "
          f"{back} returns to a file left, {back_parts} to a part left, "
          f"{to_lock} times from the sale into the lock")
    if show:
        left = []
        for i, (file, *function) in enumerate(walk):
            if i == 0 or files[i - 1] != file:
                print(f"  {'R' if file in left else ' '} {file} {' '.join(function)}")
                left.append(file)
