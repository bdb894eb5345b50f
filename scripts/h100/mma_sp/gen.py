#!/usr/bin/env python3
"""Sparse mma (mma.sp / mma.sp::ordered_metadata) probe for the H100: generates the
kernels (kernels.inc, one per variant, selector and form) and the cases (cases.bin,
cases.json) that probe.cu runs, one warp per case.

Two kinds of cases:
- "find": discovery. A's registers hold slot ids (lane, register, element) as small
  exact values (one digit of the id per case), B is a one-hot window (B[k][n] = 1 iff
  k == 8w + n) and C = 0, so D[r][n] = A_dense[r][8w + n]: the dense position each
  compressed slot lands on. The metadata register encodes, bit by bit over 9 trials, the
  id of each 2-bit field (lane·16 + field), so where a slot lands spells which field
  placed it. Extra "odd" trials put arbitrary 32-bit metadata (unordered and invalid
  nibbles too).
- "check": random operands (exact small integers, or full floats), valid ordered
  metadata in every lane: the D the H100 computes is what warpscope must compute.

No numpy: struct only.
"""
import json, random, struct, sys, os

# name, shape, dtype, atype, btype, ctype, nA, nB, nC(=nD), selectors, satfinite
VARIANTS = [
    ("f16_k16_f32", "m16n8k16", "f32", "f16", "f16", "f32", 2, 2, 4, [0, 1, 2, 3], False),
    ("f16_k16_f16", "m16n8k16", "f16", "f16", "f16", "f16", 2, 2, 2, [0, 1, 2, 3], False),
    ("f16_k32_f32", "m16n8k32", "f32", "f16", "f16", "f32", 4, 4, 4, [0, 1, 2, 3], False),
    ("f16_k32_f16", "m16n8k32", "f16", "f16", "f16", "f16", 4, 4, 2, [0, 1], False),
    ("bf16_k16", "m16n8k16", "f32", "bf16", "bf16", "f32", 2, 2, 4, [0, 1, 2, 3], False),
    ("bf16_k32", "m16n8k32", "f32", "bf16", "bf16", "f32", 4, 4, 4, [0, 1], False),
    ("tf32_k8", "m16n8k8", "f32", "tf32", "tf32", "f32", 2, 2, 4, [0, 1, 2, 3], False),
    ("tf32_k16", "m16n8k16", "f32", "tf32", "tf32", "f32", 4, 4, 4, [0, 1], False),
    ("s8_k32", "m16n8k32", "s32", "s8", "s8", "s32", 2, 2, 4, [0, 1], False),
    ("u8s8_k32_sat", "m16n8k32", "s32", "u8", "s8", "s32", 2, 2, 4, [0], True),
    ("u8s8_k64", "m16n8k64", "s32", "u8", "s8", "s32", 4, 4, 4, [0], False),
    ("e4m3e5m2_k64", "m16n8k64", "f32", "e4m3", "e5m2", "f32", 4, 4, 4, [0], False),
    ("e5m2e4m3_k64", "m16n8k64", "f32", "e5m2", "e4m3", "f32", 4, 4, 4, [0], False),
    ("s4u4_k64", "m16n8k64", "s32", "s4", "u4", "s32", 2, 2, 4, [0, 1], False),
    ("u4s4_k128", "m16n8k128", "s32", "u4", "s4", "s32", 4, 4, 4, [0], False),
]
BITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8, "s4": 4, "u4": 4,
        "f32": 32, "s32": 32}
# Largest n with 1..n exact in the type (digit base for slot ids).
BASE = {"f16": 2048, "bf16": 256, "tf32": 2048, "e4m3": 16, "e5m2": 8, "s8": 127, "u8": 255, "s4": 7,
        "u4": 15}
WORDS = 17  # per lane: A0-3, B0-3, C0-3, E, pad


def fp8_decode(code, fmt):
    e_bits, m_bits, bias = (4, 3, 7) if fmt == "e4m3" else (5, 2, 15)
    s = -1.0 if code & 0x80 else 1.0
    e = (code >> m_bits) & ((1 << e_bits) - 1)
    m = code & ((1 << m_bits) - 1)
    if fmt == "e4m3" and e == 15 and m == 7:
        return float("nan")
    if fmt == "e5m2" and e == 31:
        return float("nan") if m else s * float("inf")
    if e == 0:
        return s * m / (1 << m_bits) * 2.0 ** (1 - bias)
    return s * (1 + m / (1 << m_bits)) * 2.0 ** (e - bias)


FP8 = {f: {c: fp8_decode(c, f) for c in range(256)} for f in ("e4m3", "e5m2")}


def encode(ty, x):
    """Bits of value x (exactly representable) in type ty."""
    if ty == "f16":
        return struct.unpack("<H", struct.pack("<e", x))[0]
    if ty == "bf16":
        return struct.unpack("<I", struct.pack("<f", x))[0] >> 16
    if ty in ("tf32", "f32"):
        return struct.unpack("<I", struct.pack("<f", x))[0]
    if ty in ("e4m3", "e5m2"):
        for c, v in FP8[ty].items():
            if v == x and not (x == 0 and c):
                return c
        raise ValueError((ty, x))
    if ty in ("s8", "u8"):
        return int(x) & 0xFF
    if ty in ("s4", "u4"):
        return int(x) & 0xF
    if ty == "s32":
        return int(x) & 0xFFFFFFFF
    raise ValueError(ty)


def pack(ty, elems):
    b = BITS[ty]
    w = 0
    for s, v in enumerate(elems):
        w |= (v & ((1 << b) - 1)) << (s * b)
    return w


def b_pos(e, l, j, s):
    """Dense m16n8kK B fragment: element s of register j of lane l → (k, n)."""
    g, t = l // 4, l % 4
    return e * t + s + 4 * e * j, g


def kernel_name(v, sel, form):
    return f"k_{v[0]}_s{sel}_{form}"


def instr(v, sel, form):
    name, shape, d, a, b, c, na, nb, nc, sels, sat = v
    sp = "mma.sp::ordered_metadata" if form == "ord" else "mma.sp"
    return f"{sp}.sync.aligned.{shape}.row.col{'.satfinite' if sat else ''}.{d}.{a}.{b}.{c}"


def kernels_inc(out):
    lines = []
    table = []
    for v in VARIANTS:
        na, nb, nc = v[6], v[7], v[8]
        for sel in v[9]:
            for form in ("sp", "ord"):
                n = 0
                ops = []
                for cnt in (nc, na, nb, nc):
                    ops.append("{" + ", ".join(f"%{n + i}" for i in range(cnt)) + "}")
                    n += cnt
                text = f"{instr(v, sel, form)} {ops[0]}, {ops[1]}, {ops[2]}, {ops[3]}, %{n}, {sel};"
                outs = ", ".join(f'"=r"(d[{i}])' for i in range(nc))
                ins = ", ".join([f'"r"(p[{i}])' for i in range(na)] + [f'"r"(p[{4 + i}])' for i in range(nb)]
                                + [f'"r"(p[{8 + i}])' for i in range(nc)] + ['"r"(p[12])'])
                kn = kernel_name(v, sel, form)
                lines.append(
                    f"__global__ void {kn}(const uint32_t* in, uint32_t* out) {{\n"
                    f"  const uint32_t* p = in + (blockIdx.x * 32 + threadIdx.x) * {WORDS};\n"
                    f"  uint32_t d[4] = {{0, 0, 0, 0}};\n"
                    f"  asm volatile(\"{text}\" : {outs} : {ins});\n"
                    f"  uint32_t* q = out + (blockIdx.x * 32 + threadIdx.x) * 4;\n"
                    f"  for (int i = 0; i < 4; ++i) q[i] = d[i];\n}}\n")
                table.append((kn, instr(v, sel, form)))
    lines.append("struct KernelEntry { void (*fn)(const uint32_t*, uint32_t*); const char* name; };\n")
    lines.append("static const KernelEntry KERNELS[] = {\n" + "".join(f'  {{{k}, "{t}"}},\n' for k, t in table) + "};\n")
    open(out, "w").write("// Generated by gen.py: one kernel per sparse mma variant, selector and form.\n" + "".join(lines))
    return [k for k, _ in table]


def c_pos(l, i):
    g, t = l // 4, l % 4
    return g + 8 * (i // 2), 2 * t + i % 2


def meta_code(v, l, trial):
    """Metadata register of lane l for discovery trial (0..8: bit `trial` of each field's
    id; 9: baseline)."""
    tf32 = v[3] == "tf32"
    w = 0
    for p in range(8):
        if tf32:
            bit = ((l * 8 + p) >> trial) & 1 if trial < 9 else 0
            nib = 0xE if bit else 0x4
        else:
            i0 = ((l * 16 + 2 * p) >> trial) & 1 if trial < 9 else 0
            i1 = ((l * 16 + 2 * p + 1) >> trial) & 1 if trial < 9 else 0
            nib = i0 | ((2 + i1) << 2)
        w |= nib << (4 * p)
    return w


def find_cases(v, sel, form, metas, tag):
    """Discovery cases for each metadata set in metas (a list of 32 words each)."""
    name, shape, d, a, b, c, na, nb, nc, sels, sat = v
    k = int(shape.split("k")[1])
    per_a = 32 // BITS[a]
    per_b = 32 // BITS[b]
    slots = 32 * na * per_a
    base = BASE[a]
    digits = 1
    while base ** digits < slots:
        digits += 1
    one_b = encode(b, 1)
    cases = []
    for mi, meta in enumerate(metas):
        for w in range(k // 8):
            for dg in range(digits):
                lanes = []
                for l in range(32):
                    words = [0] * WORDS
                    for j in range(na):
                        vals = []
                        for s in range(per_a):
                            sid = (l * na + j) * per_a + s
                            vals.append(encode(a, (sid // base ** dg) % base + 1))
                        words[j] = pack(a, vals)
                    for j in range(nb):
                        vals = []
                        for s in range(per_b):
                            kk, n = b_pos(per_b, l, j, s)
                            vals.append(one_b if kk == 8 * w + n else 0)
                        words[4 + j] = pack(b, vals)
                    words[12] = meta[l]
                    lanes.append(words)
                cases.append(({"kind": tag, "variant": name, "sel": sel, "form": form, "meta": mi,
                               "window": w, "digit": dg, "digits": digits, "base": base}, lanes))
    return cases


def rand_elem(ty, rng, mode):
    if mode == "exact":
        if ty in ("f16", "bf16", "tf32", "e4m3", "e5m2"):
            return encode(ty, rng.randint(-3, 3))
        if ty == "s8":
            return rng.randint(0, 255)
        if ty == "u8":
            return rng.randint(0, 255)
        if ty in ("s4", "u4"):
            return rng.randint(0, 15)
    # "float": arbitrary finite values of moderate size
    if ty == "f16":
        return encode("f16", rng.uniform(-2, 2))
    if ty == "bf16":
        return encode("f32", rng.uniform(-2, 2)) >> 16
    if ty == "tf32":
        return encode("f32", rng.uniform(-2, 2)) ^ rng.getrandbits(13)  # low bits: ignored
    if ty in ("e4m3", "e5m2"):
        while True:
            c = rng.randint(0, 255)
            x = FP8[ty][c]
            if x == x and abs(x) <= 64:
                return c
    raise ValueError(ty)


def valid_meta(v, rng):
    w = 0
    for p in range(8):
        if v[3] == "tf32":
            nib = rng.choice([0x4, 0xE])
        else:
            i0, i1 = sorted(rng.sample(range(4), 2))
            nib = i0 | (i1 << 2)
        w |= nib << (4 * p)
    return w


def check_case(v, sel, form, mode, rng):
    name, shape, d, a, b, c, na, nb, nc, sels, sat = v
    lanes = []
    for l in range(32):
        words = [0] * WORDS
        for j in range(na):
            words[j] = pack(a, [rand_elem(a, rng, mode) for _ in range(32 // BITS[a])])
        for j in range(nb):
            words[4 + j] = pack(b, [rand_elem(b, rng, mode) for _ in range(32 // BITS[b])])
        for j in range(nc):
            if c == "s32":
                words[8 + j] = rng.choice([rng.getrandbits(32), 0x7FFFFF00 + rng.randint(0, 255),
                                           0x80000000 + rng.randint(0, 255)]) if sat else rng.getrandbits(32)
            elif c == "f32":
                words[8 + j] = encode("f32", rng.randint(-64, 64) if mode == "exact" else rng.uniform(-4, 4))
            else:  # f16 pairs
                words[8 + j] = pack("f16", [encode("f16", rng.randint(-64, 64) if mode == "exact"
                                                   else rng.uniform(-4, 4)) for _ in range(2)])
        words[12] = valid_meta(v, rng)
        lanes.append(words)
    return {"kind": "check", "variant": name, "sel": sel, "form": form, "mode": mode}, lanes


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    knames = kernels_inc(os.path.join(outdir, "kernels.inc"))
    rng = random.Random(20240611)
    cases = []
    for v in VARIANTS:
        # Discovery: ordered form, every selector; 9 bit trials + baseline.
        bit_metas = [[meta_code(v, l, t) for l in range(32)] for t in range(10)]
        for sel in v[9]:
            cases += find_cases(v, sel, "ord", bit_metas, "find")
        # Arbitrary metadata (unordered, invalid nibbles) in both forms, selector 0.
        if v[0] in ("f16_k16_f32", "f16_k32_f32", "tf32_k8", "s8_k32", "u8s8_k64", "s4u4_k64", "u4s4_k128",
                    "e4m3e5m2_k64"):
            odd = [[rng.getrandbits(32) for _ in range(32)] for _ in range(3)]
            for form in ("sp", "ord"):
                cases += find_cases(v, 0, form, odd, "odd")
        # Checks.
        floaty = v[3] in ("f16", "bf16", "tf32", "e4m3", "e5m2")
        for sel in v[9]:
            cases.append(check_case(v, sel, "ord", "exact", rng))
            if sel == 0:
                cases.append(check_case(v, sel, "sp", "exact", rng))
                if floaty:
                    cases.append(check_case(v, sel, "ord", "float", rng))
                    cases.append(check_case(v, sel, "sp", "float", rng))
    with open(os.path.join(outdir, "cases.bin"), "wb") as f:
        f.write(struct.pack("<I", len(cases)))
        for meta, lanes in cases:
            vv = next(x for x in VARIANTS if x[0] == meta["variant"])
            meta["kernel"] = knames.index(kernel_name(vv, meta["sel"], meta["form"]))
            meta["instr"] = instr(vv, meta["sel"], meta["form"])
            f.write(struct.pack("<I", meta["kernel"] | (0x80000000 if meta["kind"] == "odd" else 0)))
            for words in lanes:
                f.write(struct.pack(f"<{WORDS}I", *words))
    json.dump([m for m, _ in cases], open(os.path.join(outdir, "cases.json"), "w"))
    print(len(cases), "cases,", len(knames), "kernels")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
