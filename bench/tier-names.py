#!/usr/bin/env python3
"""Counts `Tier::X` (a variant; `Tier::ALL` aside) in the workspace's Rust sources at a commit,
outside the tier table (api/src/tier.rs) and the tier files (src/lock/tiers/*.rs; at the base,
src/lock/<tier>.rs). Test code (from `#[cfg(test)]` + `mod tests`, and files whose module is declared under
`#[cfg(test)]`) is left out, and so is
the scenario catalog (each scenario names the tier it runs: data), unless --all."""
import re, subprocess, sys
# Run from the repository root: bench/tier-names.py HEAD [--all]
rev = sys.argv[1]
every = '--all' in sys.argv
tier_files = re.compile(r'^src/lock/(tiers/.*|(none|local|setnx|setnx_expire|atomic_expiry|uuid_owner|lua_release|reentrant_watchdog|fair|fenced|redlock|zookeeper|postgres|custom)\.rs)$')
files = subprocess.run(['git', 'ls-tree', '-r', '--name-only', rev, '--', 'src', 'api/src', 'loadtest/src', 'workshop/src', 'bench/src'], capture_output=True, text=True).stdout.split()
def test_only(f):
    """Whether the module of file `f` is declared under `#[cfg(test)]` by its parent."""
    parts = f[:-3].split('/')
    name, folder = parts[-1], '/'.join(parts[:-1])
    for parent in (folder + '/mod.rs', folder + '.rs', folder + '/lib.rs', folder + '/main.rs'):
        text = subprocess.run(['git', 'show', f'{rev}:{parent}'], capture_output=True, text=True).stdout
        if re.search(r'#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod ' + name + ';', text):
            return True
    return False

total = 0
for f in files:
    if not f.endswith('.rs') or f == 'api/src/tier.rs' or tier_files.match(f):
        continue
    if not every and f.startswith('workshop/src/scenario/catalog/'):
        continue
    text = subprocess.run(['git', 'show', f'{rev}:{f}'], capture_output=True, text=True).stdout
    if not every:
        if test_only(f):
            continue
        text = re.split(r'#\[cfg\(test\)\]\s*mod tests', text)[0]
    n = len([m for m in re.findall(r'Tier::[A-Z]\w*', text) if m != 'Tier::ALL'])
    if n:
        print(n, f); total += n
print('total', total)
