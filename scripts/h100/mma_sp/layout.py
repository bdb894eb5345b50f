#!/usr/bin/env python3
"""Derives the sparse A layout from the discovery cases (run in the folder where
analyze.py wrote groups.json, with gen/ holding gen.py's output): prints, per variant and
selector, which metadata bits (thread of the group @ first bit) place each chunk's
non-zeros of rows 0 and 8, and what arbitrary (unordered, invalid) nibbles do.
  rRqQiI:TT@B  row R, chunk Q, non-zero I (pair I for s4/u4) <- bits B..B+1 of thread T
  NNNN:xyzw    nibble NNNN put the chunk's non-zeros 0/1 (digits) at positions x, y, z, w
               ('.' nothing, '?' not an exact slot: the sum of two, or split halves)
"""
import sys, os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import json, sys, collections
import gen
G = json.load(open('groups.json'))
VAR = {v[0]: v for v in gen.VARIANTS}
def grp(key):
    g = G.get(key)
    if g is None: return None
    return {tuple(map(int, k.split(','))): s for k, s in g.items()}
def a_pos_hyp(v, sid):
    """Hypothesis: compressed A (16 x K/2) in the dense m16n8k(K/2) A layout."""
    name, shape, d, a, b, c, na, nb, nc, sels, sat = v
    per = 32 // gen.BITS[a]
    l, rest = divmod(sid, na * per); j, s = divmod(rest, per)
    g, t = l // 4, l % 4
    return g + 8 * (j % 2), per * t + s + 4 * per * (j // 2)
res = {}
for v in gen.VARIANTS:
    name = v[0]; K = int(v[1].split('k')[1]); a = v[3]
    per = 32 // gen.BITS[a]
    chunk = {"tf32": 2, "s4": 8, "u4": 8}.get(a, 4)   # dense elements per chunk
    nz = chunk // 2
    unit = 2 if a in ("s4", "u4") else 1               # elements per metadata index
    for sel in v[9]:
        base = grp(f"{name}|{sel}|ord|find|9")
        if base is None: print(name, sel, "no data"); continue
        bad = 0
        for (r, k), sid in base.items():
            if sid is None: continue
            hr, hc = a_pos_hyp(v, sid)
            # baseline: slot i of chunk q at dense unit i (tf32: element 0)
            q, i = divmod(hc, nz)
            if a == "tf32": want_k = q * chunk
            elif unit == 2: want_k = q * chunk + (0 if i // 2 == 0 else 4) + i % 2
            else: want_k = q * chunk + (0 if i == 0 else 2)
            if (hr, want_k) != (r, k): bad += 1
        # fields
        fields = {}
        incons = 0
        for sid in range(32 * v[6] * per):
            hr, hc = a_pos_hyp(v, sid)
            q, i = divmod(hc, nz)
            code = 0
            for t in range(9):
                g = grp(f"{name}|{sel}|ord|find|{t}")
                pos = [kk for (r, kk), s in g.items() if s == sid]
                assert len(pos) == 1 and g and [r for (r, kk), s in g.items() if s == sid][0] == hr, (name, sel, sid, pos)
                within = pos[0] - q * chunk
                if a == "tf32":
                    bit = within  # 0 or 1
                else:
                    u = within // unit
                    ii = i // unit if unit == 2 else i
                    bit = u & 1
                code |= bit << t
            fields[(hr, q, (i // unit) if unit == 2 else i)] = code
        print(name, "sel", sel, "A-layout mismatches:", bad)
        res[(name, sel)] = fields
import pickle, struct, json, collections
for (name, sel), f in res.items():
    # field code = lane*16 + field (tf32: lane*8 + nibble)
    tf = name.startswith('tf32')
    rows = {}
    for (r, q, i), code in sorted(f.items()):
        if tf:
            lane, nib = divmod(code, 8); bits = (4*nib, 4*nib+3)
        else:
            lane, fld = divmod(code, 16); bits = (2*fld, 2*fld+1)
        g = r % 8
        rows.setdefault((name, sel), []).append((r, q, i, lane - 4*g if lane//4 == g else f"L{lane}", bits[0]))
    items = rows[(name, sel)]
    # summarise for group 0 and check others are the same relative
    ok = True
    ref = {(r % 8 == 0 and r, q, i): (tl, b) for r, q, i, tl, b in items if r in (0, 8)}
    for r, q, i, tl, b in items:
        if ref.get((r - r % 8, q, i)) != (tl, b) and ref.get((r if r < 8 else 8) if False else None) is None:
            pass
    same = all((tl, b) == ref[((r // 8) * 8, q, i)] for r, q, i, tl, b in items)
    print(name, "sel", sel, "all groups alike:", same)
    print("   ", " ".join(f"r{r}q{q}i{i}:T{tl}@{b}" for r, q, i, tl, b in items if r in (0, 8)))
metas = json.load(open('gen/cases.json'))
raw = open('gen/cases.bin','rb').read()
def case_E(ci):
    off = 4 + ci * (4 + 4*17*32) + 4
    return [struct.unpack_from('<I', raw, off + 4*(17*l + 12))[0] for l in range(32)]
summary = collections.defaultdict(collections.Counter)
for v in gen.VARIANTS:
    name = v[0]; a = v[3]; per = 32 // gen.BITS[a]
    if (name, 0) not in res: continue
    fields = res[(name, 0)]
    chunk = {"tf32": 2, "s4": 8, "u4": 8}.get(a, 4); nz = chunk // 2; unit = 2 if a in ("s4","u4") else 1
    for form in ("sp", "ord"):
        for mi in range(3):
            g = grp(f"{name}|0|{form}|odd|{mi}")
            if g is None: continue
            ci = next(i for i, m in enumerate(metas) if m["kind"] == "odd" and m["variant"] == name and m["form"] == form and m["meta"] == mi)
            E = case_E(ci)
            for r in range(16):
                for q in range(len([1 for (rr, qq, ii) in fields if rr == r and ii == 0])):
                    code = fields[(r, q, 0)]
                    if a == "tf32":
                        lane, nib = divmod(code, 8); nibble = (E[lane] >> (4*nib)) & 0xF
                    else:
                        lane, fld = divmod(code, 16); nibble = (E[lane] >> (2*fld)) & 0xF
                    # slots of this chunk: compressed cols q*nz .. ; find their sids
                    got = []
                    for k in range(q*chunk, (q+1)*chunk):
                        s = g.get((r, k))
                        if s is None: got.append('.')
                        elif s == '?': got.append('?')
                        else:
                            hr, hc = a_pos_hyp(v, s); got.append(str(hc - q*nz))
                    summary[(name, form)][(nibble, ''.join(got))] += 1
for (name, form), c in summary.items():
    print(name, form)
    byn = collections.defaultdict(set)
    for (nib, got), cnt in c.items(): byn[nib].add(got)
    print("   ", "  ".join(f"{nib:04b}:{'/'.join(sorted(gs))}" for nib, gs in sorted(byn.items())))
