#!/usr/bin/env python3
"""Reads the probe's cases (gen.py) and the H100's outputs (res/out_*.bin from run.sh)
and derives the sparse A layout: for each variant and selector, which metadata field
(lane, bits) places each compressed slot of A, and where.

usage: analyze.py GEN_DIR RES_DIR
"""
import json, struct, sys, os, glob, collections
sys.path.insert(0, os.path.dirname(__file__))
import gen

gdir, rdir = sys.argv[1], sys.argv[2]
metas = json.load(open(os.path.join(gdir, "cases.json")))
raw = open(os.path.join(gdir, "cases.bin"), "rb").read()
n = struct.unpack_from("<I", raw)[0]
W = gen.WORDS
inputs = []
off = 4
for c in range(n):
    off += 4
    inputs.append([list(struct.unpack_from(f"<{W}I", raw, off + 4 * W * l)) for l in range(32)])
    off += 4 * W * 32
outs = {}
for p in glob.glob(os.path.join(rdir, "out_*.bin")):
    b = open(p, "rb").read()
    for o in range(0, len(b), 4 * 129):
        c = struct.unpack_from("<I", b, o)[0]
        outs[c] = [list(struct.unpack_from("<4I", b, o + 4 + 16 * l)) for l in range(32)]
print(f"{len(outs)} of {n} cases have outputs")
VAR = {v[0]: v for v in gen.VARIANTS}


def dmatrix(v, d):
    """16x8 D from the lanes' registers."""
    dt = v[2]
    m = [[None] * 8 for _ in range(16)]
    for l in range(32):
        if dt == "f16":
            for j in range(2):
                for s in range(2):
                    r, c = gen.c_pos(l, 2 * j + s)
                    m[r][c] = struct.unpack("<e", struct.pack("<H", (d[l][j] >> (16 * s)) & 0xFFFF))[0]
        else:
            for i in range(4):
                r, c = gen.c_pos(l, i)
                x = d[l][i]
                m[r][c] = struct.unpack("<f", struct.pack("<I", x))[0] if dt == "f32" else (x - (1 << 32) if x >> 31 else x)
    return m


# Dense positions of each slot: (variant, sel, form, kind, meta) -> {(r, k): slot id}
groups = collections.defaultdict(dict)
for c, m in enumerate(metas):
    if m["kind"] not in ("find", "odd") or c not in outs:
        continue
    v = VAR[m["variant"]]
    dm = dmatrix(v, outs[c])
    key = (m["variant"], m["sel"], m["form"], m["kind"], m["meta"])
    g = groups[key]
    for r in range(16):
        for nn in range(8):
            x = dm[r][nn]
            kk = 8 * m["window"] + nn
            if x != 0:
                dig = int(round(x)) - 1
                ok = dig + 1 == x and 0 <= dig < m["base"]
                assert ok or m["kind"] == "odd", (key, r, kk, x)
                if not ok or g.get((r, kk)) == "?":
                    g[(r, kk)] = "?"
                    continue
                g.setdefault((r, kk), 0)
                g[(r, kk)] += dig * m["base"] ** m["digit"]
            else:
                g.setdefault((r, kk), None)
json.dump({"|".join(map(str, k)): {f"{r},{kk}": s for (r, kk), s in g.items()} for k, g in groups.items()},
          open("groups.json", "w"))
print(len(groups), "groups")


# The checks, for crates/simt/tests/mma.rs: each case's instruction and per lane the
# registers in and the H100's D out.
def export_checks(path):
    lines = ["# Sparse mma (mma.sp) on an H100 (scripts/h100/mma_sp: gen.py made the inputs, probe.cu",
             "# ran them, analyze.py wrote this). Per case a header: the instruction, its sparsity",
             "# selector, the A/B/C register counts and how the operands were drawn (exact: small",
             "# integers whose sums are exact; float: arbitrary values); then per lane 0..31 the hex",
             "# registers A…, B…, C…, E and the D the H100 wrote."]
    count = 0
    for c, m in enumerate(metas):
        if m["kind"] != "check" or c not in outs:
            continue
        v = VAR[m["variant"]]
        na, nb, nc = v[6], v[7], v[8]
        lines.append(f"case {m['instr']} sel={m['sel']} na={na} nb={nb} nc={nc} mode={m['mode']}")
        for l in range(32):
            w = inputs[c][l]
            regs = w[0:na] + w[4:4 + nb] + w[8:8 + nc] + [w[12]] + outs[c][l][:nc]
            lines.append(" ".join(f"{x:08x}" for x in regs))
        count += 1
    open(path, "w").write("\n".join(lines) + "\n")
    print(count, "checks written to", path)


if len(sys.argv) > 3:
    export_checks(sys.argv[3])
