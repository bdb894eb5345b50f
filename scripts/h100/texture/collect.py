#!/usr/bin/env python3
"""Joins the probes' manifest (one line per launch, in order) with ncu's `--page raw --csv`
output (a header row, a units row, then one row per profiled launch, in order). Prints CSV:
the manifest's columns, then one column per `.sum` metric (the suffix dropped)."""
import csv, sys

manifest = list(csv.DictReader(open(sys.argv[1])))
lines = [l for l in open(sys.argv[2]) if l.startswith('"')]
rows = list(csv.reader(lines))
head, data = rows[0], rows[2:]
metrics = [i for i, h in enumerate(head) if h.endswith(".sum")]
if len(data) != len(manifest):
    sys.exit(f"{len(data)} ncu rows but {len(manifest)} manifest lines")
out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(list(manifest[0].keys()) + [head[i][: -len(".sum")] for i in metrics])
for m, r in zip(manifest, data):
    out.writerow(list(m.values()) + [r[i].replace(",", "") for i in metrics])
