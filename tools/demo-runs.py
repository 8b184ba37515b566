#!/usr/bin/env python3
"""tools/demo-runs.py [N] [DEMO [ARGUMENT...]]: run clgc-demo N times
(default 5; DEMO defaults to _build/release/demo/clgc-demo, which
`./run demo` builds) and print, for each adapter and each timed row, the
median of the N runs and their range, then the table of the typical run:
the one whose rows lie nearest the medians. README's and docs/demo.md's
sample output is that run, with these ranges beside it; run it on a quiet
machine.

Every run's output is kept in _build/demo-runs/run-K.txt."""

import math
import os
import re
import statistics
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# "  build a program    381 ms    209 ms" (through clgc, raw) and
# "    clgc_wait_for_events    25 us   0.95x   ..." (the time, its ratio
# to the raw wait's): a row's name, then its two figures.
ROW = re.compile(r"^ +(\S.*?) {2,}(\d+(?:\.\d+)?) (ms|us)"
                 r"(?: +(\d+(?:\.\d+)?)(?: ms|x))?")


def rows(text):
    """{(adapter, row): (clgc or only value, raw value or None)}"""
    out, adapter = {}, None
    for line in text.splitlines():
        if line.startswith("== "):
            adapter = line[3:].strip()
            continue
        m = ROW.match(line)
        if m and adapter is not None:
            name = f"{m.group(1)} ({m.group(3)})"
            raw = float(m.group(4)) if m.group(4) else None
            out[(adapter, name)] = (float(m.group(2)), raw)
    return out


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    demo = sys.argv[2:] or [os.path.join(TOP, "_build/release/demo/clgc-demo")]
    keep = os.path.join(TOP, "_build/demo-runs")
    os.makedirs(keep, exist_ok=True)
    runs = []
    for k in range(1, n + 1):
        text = subprocess.run(demo, check=True, capture_output=True,
                              text=True).stdout
        with open(os.path.join(keep, f"run-{k}.txt"), "w") as f:
            f.write(text)
        runs.append((text, rows(text)))
    keys = [key for key in runs[0][1] if all(key in r for _, r in runs)]
    median = {}
    print(f"clgc-demo, {n} runs: median (range)")
    adapter = None
    for key in keys:
        if key[0] != adapter:
            adapter = key[0]
            print(f"== {adapter}")
        cols = []
        name, unit = key[1].rsplit(" (", 1)
        unit = unit.rstrip(")")
        for side in (0, 1):
            vals = [r[key][side] for _, r in runs if r[key][side] is not None]
            if not vals:
                continue
            med = statistics.median(vals)
            median[key + (side,)] = med
            if side == 1 and unit == "us":
                cols.append(f"{med:.2f}x ({min(vals):.2f}x to "
                            f"{max(vals):.2f}x)")
            else:
                cols.append(f"{med:g} {unit} ({min(vals):g} to "
                            f"{max(vals):g})")
        print(f"  {name:<40} " + "   ".join(cols))

    def distance(r):
        return sum(abs(math.log((r[k[:2]][k[2]] + 1) / (med + 1)))
                   for k, med in median.items())

    best = min(range(n), key=lambda i: distance(runs[i][1]))
    print(f"\nThe typical run, run {best + 1} "
          f"({os.path.join(keep, f'run-{best + 1}.txt')}):\n")
    sys.stdout.write(runs[best][0])


if __name__ == "__main__":
    main()
