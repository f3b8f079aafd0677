#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Compare two spinnic-bench binaries in one sitting.

usage: tools/bench-ab.py ROUNDS BIN_A BIN_B -- SUBCOMMAND [OPTIONS...]

Runs the same spinnic-bench command with each binary in turn, ROUNDS
times, alternating which goes first (A B, B A, ...) so that drift of the
shared machine falls on both; each run at nice -10 (when allowed). Prints
the median Gbit/s of every row (type, strategy, HPUs, block bytes) for
both binaries and their ratio B/A, the geometric mean of the ratios per
strategy, and, for `apps`, the best NIC strategy over host-ddt per type
and its geometric mean for each binary. The CSVs stay in a temporary
folder, named in the first line.
"""
import csv
import math
import os
import statistics
import subprocess
import sys
import tempfile

NIC = ('specialized', 'hpu-local', 'ro-cp', 'rw-cp', 'iovec')


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float('nan')


def main(argv):
    if len(argv) < 6 or argv[4] != '--':
        sys.exit(__doc__)
    rounds, bins, args = int(argv[1]), argv[2:4], argv[5:]
    tmp = tempfile.mkdtemp(prefix='bench-ab-')
    print(f'# CSVs in {tmp}')
    res = [{}, {}]
    for r in range(rounds):
        order = (0, 1) if r % 2 == 0 else (1, 0)
        for b in order:
            out = os.path.join(tmp, f'{"AB"[b]}{r}.csv')
            cmd = [bins[b]] + args + ['--csv', out]
            if os.geteuid() == 0:
                cmd = ['nice', '-n', '-10'] + cmd
            subprocess.run(cmd, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=True)
            with open(out) as f:
                for row in csv.DictReader(f):
                    if not row.get('gbit_s'):
                        continue
                    key = (row.get('type', '-'), row['strategy'],
                           row.get('hpus', '-'), row.get('block_bytes', '-'))
                    res[b].setdefault(key, []).append(float(row['gbit_s']))
    med = [{k: statistics.median(v) for k, v in d.items()} for d in res]
    print('type strategy hpus block_bytes | A | B | B/A')
    by_strat = {}
    for k in sorted(med[0]):
        if k in med[1]:
            q = med[1][k] / med[0][k]
            by_strat.setdefault(k[1], []).append(q)
            print(' '.join(k), f'| {med[0][k]:.1f} | {med[1][k]:.1f} | {q:.3f}')
    for s, qs in sorted(by_strat.items()):
        print(f'geomean B/A {s}: {geomean(qs):.3f} '
              f'({min(qs):.2f}-{max(qs):.2f}, {len(qs)} rows)')
    for b in (0, 1):
        best = []
        for t in sorted({k[0] for k in med[b]}):
            host = [v for k, v in med[b].items()
                    if k[0] == t and k[1] == 'host-ddt']
            nic = [v for k, v in med[b].items()
                   if k[0] == t and k[1] in NIC]
            if host and nic:
                best.append((t, max(nic) / host[0]))
        if best:
            print(f'{"AB"[b]}: best NIC / host-ddt geomean '
                  f'{geomean([x for _, x in best]):.3f}: ' +
                  ' '.join(f'{t}={x:.2f}' for t, x in best))


if __name__ == '__main__':
    main(sys.argv)
