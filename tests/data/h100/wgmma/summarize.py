#!/usr/bin/env python3
"""Summarizes ncu-wgmma.csv: for each counter that moves, per layout, the value of the REPS=1
kernel and what one wgmma adds ((REPS=9 - REPS=1) / 8)."""
import csv
import sys
from collections import defaultdict

LAYOUTS = ["none", "sw32", "sw64", "sw128", "samebank", "mn128", "rs"]


def load(path):
    vals = defaultdict(dict)
    with open(path) as f:
        lines = [l for l in f if l.startswith('"')]
    for row in csv.DictReader(lines):
        name = row["Kernel Name"].split("(")[0].strip()
        v = row["Metric Value"].replace(",", "")
        try:
            vals[name][row["Metric Name"]] = float(v)
        except ValueError:
            pass
    return vals


def main():
    vals = load(sys.argv[1])
    metrics = sorted({m for k in vals.values() for m in k})
    print("counter: per layout, value at REPS=1 / added by one wgmma")
    for m in metrics:
        cells = []
        moved = False
        for l in LAYOUTS:
            r1 = vals.get(f"wg_{l}_r1", {}).get(m)
            r9 = vals.get(f"wg_{l}_r9", {}).get(m)
            if r1 is None or r9 is None:
                cells.append(f"{l}=?")
                continue
            per = (r9 - r1) / 8
            moved |= r1 != 0 or r9 != 0
            cells.append(f"{l}={r1:g}/{per:g}")
        if moved:
            print(f"{m}: " + " ".join(cells))


if __name__ == "__main__":
    main()
