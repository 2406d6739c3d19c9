#!/usr/bin/env python3
"""Counts how often following a sale through the code comes back to a file it had left.

A walk is the project's functions a `POST /sale` enters, in order (a pre-order of the call
tree: std, tokio and redis-rs left out), written down by reading the code, one `file function`
per line. Consecutive functions of one file are one stop; a return is a stop in a file the
walk had already left. Run: bench/sale-walk.py bench/sale-walk/*.txt
"""
import sys

for path in sys.argv[1:]:
    files = [line.split()[0] for line in open(path) if line.strip() and not line.startswith('#')]
    stops = [f for i, f in enumerate(files) if i == 0 or files[i - 1] != f]
    returns = sum(1 for i, f in enumerate(stops) if f in stops[:i])
    print(f"{path}: {len(files)} functions, {len(stops)} stops in {len(set(files))} files, "
          f"{returns} returns to a file left")
