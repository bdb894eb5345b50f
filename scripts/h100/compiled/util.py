#!/usr/bin/env python3
"""Helpers of scripts/h100/compiled/measure.sh (run on the device machine; standard library only).

  util.py probe    --metrics LIST --out FILE --dropped FILE -- COMMAND...
        keeps the metrics that ncu accepts (profiles one launch of COMMAND with all of them; drops
        the ones an ==ERROR== line names; if an error names none, tries the metrics one by one)
  util.py collect  --out FILE --metrics LIST --pair MANIFEST NCU_CSV [--pair ...] --header FILE
        joins manifests with ncu CSV results (launch order, matching kernel names) -> compiled.csv
  util.py srcfilter --out FILE --header FILE RAW [RAW...]
        keeps the memory-instruction rows and the memory columns of ncu --page source --csv output
  util.py sassptx  --out FILE --sass SASS_OF_DRIVER --ptx NAME=PTX --cubin-sass NAME=SASS ...
        static memory instructions per kernel, PTX next to SASS
"""
import argparse
import csv
import os
import re
import subprocess
import sys
from collections import Counter, OrderedDict


# ---------------------------------------------------------------------------------------------- probe
def run_ncu(metrics, command):
    cmd = ["ncu", "--clock-control", "none", "--csv", "--metrics", ",".join(metrics), "-c", "1"] + command
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    errs = [l for l in r.stdout.splitlines() if "==ERROR==" in l]
    return r.returncode, errs, r.stdout


def mentions(metric, line):
    base = metric.rsplit(".", 1)[0] if metric.endswith((".sum", ".avg", ".max", ".min")) else metric
    return re.search(re.escape(base) + r"(?![A-Za-z0-9_])", line) is not None


def cmd_probe(a):
    cand = [m for m in a.metrics.split(",") if m]
    cand = list(OrderedDict.fromkeys(cand))
    dropped = []
    log = []
    for attempt in range(3):
        rc, errs, out = run_ncu(cand, a.command)
        log.append(f"attempt {attempt}: rc={rc}, {len(errs)} error lines")
        log += ["  " + e for e in errs[:20]]
        if rc == 0 and not errs:
            break
        bad = [m for m in cand if any(mentions(m, e) for e in errs)]
        if not bad:
            log.append("errors name no metric: trying the metrics one by one")
            bad = []
            for m in cand:
                rc1, errs1, _ = run_ncu([m], a.command)
                if rc1 != 0 or errs1:
                    bad.append(m)
                    log.append(f"  {m}: rejected ({errs1[:1]})")
            if len(bad) == len(cand):
                log.append("every metric failed alone: ncu itself fails; keeping the list unchanged")
                log.append(out[-3000:])
                bad = []
            cand = [m for m in cand if m not in bad]
            dropped += bad
            break
        cand = [m for m in cand if m not in bad]
        dropped += bad
    with open(a.out, "w") as f:
        f.write(",".join(cand) + "\n")
    with open(a.dropped, "w") as f:
        f.write(",".join(dropped) + "\n")
    print("\n".join(log))
    print(f"metrics kept: {len(cand)}; dropped: {dropped}")
    return 0


# ---------------------------------------------------------------------------------------------- collect
def parse_value(text):
    t = text.strip().replace(",", "")
    if t in ("", "n/a", "N/A"):
        return None
    try:
        v = float(t)
    except ValueError:
        return t
    return int(round(v)) if abs(v - round(v)) < 1e-6 else v


def read_ncu(path):
    header = None
    results = {}
    with open(path, newline="", errors="replace") as f:
        for line in f:
            if not line.startswith('"'):
                continue
            row = next(csv.reader([line]))
            if row and row[0] == "ID":
                header = {name: i for i, name in enumerate(row)}
                continue
            if header is None:
                continue
            try:
                rid = int(row[header["ID"]])
            except (ValueError, IndexError):
                continue
            e = results.setdefault(rid, {"name": row[header["Kernel Name"]], "m": {}})
            e["m"][row[header["Metric Name"]]] = parse_value(row[header["Metric Value"]])
    return [(rid, results[rid]["name"], results[rid]["m"]) for rid in sorted(results)]


def read_manifest(path):
    notes, rows = [], []
    with open(path, newline="") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("# "):
                notes.append(line[2:])
            elif line and not line.startswith("launch,"):
                r = next(csv.reader([line]))
                rows.append(dict(zip(["launch", "rep", "file", "kernel", "grid", "block", "args", "shm"], r)))
    return notes, rows


def name_matches(kernel, ncu_name):
    return re.search(r"(?:^|[\s:*&])" + re.escape(kernel) + r"(?:\s*[<(]|$)", ncu_name.strip()) is not None


def cmd_collect(a):
    metrics = [m for m in a.metrics.split(",") if m]
    joined, notes, problems = [], [], []
    for manifest, ncu_csv in a.pair:
        n, launches = read_manifest(manifest)
        notes += n
        results = read_ncu(ncu_csv)
        j = 0
        for L in launches:
            while j < len(results) and not name_matches(L["kernel"], results[j][1]):
                problems.append(f"{ncu_csv}: skipped ncu result {results[j][0]} ({results[j][1][:60]})")
                j += 1
            if j >= len(results):
                problems.append(f"{ncu_csv}: no ncu result for launch {L['launch']} {L['kernel']}")
                break
            joined.append((L, results[j]))
            j += 1
        if j < len(results):
            problems.append(f"{ncu_csv}: {len(results) - j} ncu results left over")
    # rep 0 rows; compare later reps with the rep-0 row of the same configuration
    key = lambda L: (L["file"], L["kernel"], L["grid"], L["block"], L["args"])
    first, diffs = OrderedDict(), {}
    for L, (rid, name, m) in joined:
        k = key(L)
        if k not in first:
            first[k] = (L, name, m)
            diffs[k] = []
        else:
            m0 = first[k][2]
            for x in metrics:
                if m0.get(x) != m.get(x):
                    diffs[k].append(f"{x}: rep{L['rep']}={m.get(x)} vs rep0={m0.get(x)}")
    with open(a.out, "w", newline="") as f:
        for line in open(a.header).read().splitlines():
            f.write("# " + line + "\n" if not line.startswith("#") else line + "\n")
        f.write("# allocations and data:\n")
        for n in OrderedDict.fromkeys(notes):
            f.write(f"#   {n}\n")
        f.write("# columns: grid/block are X;Y;Z; dynamic_smem = dynamic shared bytes passed at launch; args = the\n"
                "#   kernel's non-pointer parameters (Triton rows: fixture name, runtime ints and constexprs); then one\n"
                "#   column per ncu metric (exact ncu names); repeat_equal = every metric identical in the second\n"
                "#   launch of the same configuration (same process, rep 1)\n")
        nd = sum(1 for v in diffs.values() if v)
        f.write(f"# configurations: {len(first)}; with differences between rep 0 and rep 1: {nd}\n")
        for k, v in diffs.items():
            for d in v:
                f.write(f"#   differs: {k[1]} {k[4]}: {d}\n")
        for p in problems:
            f.write(f"# join note: {p}\n")
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["kernel", "file", "grid", "block", "dynamic_smem", "args"] + metrics + ["repeat_equal"])
        for k, (L, name, m) in first.items():
            vals = ["" if m.get(x) is None else m.get(x) for x in metrics]
            w.writerow([L["kernel"], L["file"], L["grid"], L["block"], L["shm"], L["args"]] + vals +
                       ["yes" if not diffs[k] else "no"])
    print(f"joined {len(joined)} launches, {len(first)} configurations")
    for p in problems:
        print("join note:", p)
    # summary table
    short = [("ld_req", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
             ("ld_sec", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
             ("st_req", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
             ("st_sec", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"),
             ("atom_req", "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum"),
             ("red_req", "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"),
             ("red_sec", "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum"),
             ("shld_wf", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
             ("shst_wf", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"),
             ("shat_wf", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum"),
             ("shld_i", "smsp__sass_inst_executed_op_shared_ld.sum"),
             ("ldgsts_i", "smsp__sass_inst_executed_op_ldgsts.sum")]
    print(f"{'kernel':16s} {'args':24s} " + " ".join(f"{s:>9s}" for s, _ in short) + " rep")
    for k, (L, name, m) in first.items():
        print(f"{L['kernel'][:16]:16s} {L['args'][:24]:24s} " +
              " ".join(f"{str(m.get(x, '-')):>9s}" for _, x in short) + (" =" if not diffs[k] else " DIFF"))
    return 0 if not any(p.startswith("no ncu") for p in problems) else 1


# ---------------------------------------------------------------------------------------------- srcfilter
MEM_SASS = re.compile(r"^\s*(?:@!?U?P\w+\s+)?(LDG|STG|LDS|STS|LDSM|STSM|LD|ST|LDL|STL|ATOMS|ATOMG|ATOM|RED|REDG|"
                      r"LDGSTS|LDGDEPBAR|DEPBAR|HGMMA|UTMALDG|UTMASTG|UBLKCP|SYNCS)(?:\.|\s|$)")
KEEP_COLS = ["Instructions Executed", "Thread Instructions Executed", "Predicated-On Thread Instructions Executed",
             "Address Space", "Access Operation", "Access Size", "L1 Tag Requests Global",
             "L1 Conflicts Shared N-Way", "L1 Wavefronts Shared Excessive", "L1 Wavefronts Shared",
             "L1 Wavefronts Shared Ideal", "L2 Theoretical Sectors Global Excessive", "L2 Theoretical Sectors Global",
             "L2 Theoretical Sectors Global Ideal"]


def read_source_blocks(raw):
    """[(kernel name, header dict, [rows])] per "Kernel Name" block of an ncu --page source --csv file."""
    blocks = []
    with open(raw, newline="", errors="replace") as f:
        for line in f:
            if not line.startswith('"'):
                continue
            row = next(csv.reader([line]))
            if row and row[0] == "Kernel Name":
                blocks.append([row[1], None, []])
            elif row and row[0] == "Address" and blocks:
                blocks[-1][1] = {n: i for i, n in enumerate(row)}
            elif blocks and blocks[-1][1] is not None:
                blocks[-1][2].append(row)
    return blocks


def cmd_srcfilter(a):
    labels = {}
    for spec in a.label or []:
        k, v = spec.split("=", 1)
        labels[k] = v.split(",")
    out_rows = []
    for raw in a.raw:
        seen = {}  # kernel base name -> list of distinct block contents
        for kernel, header, rows in read_source_blocks(raw):
            if header is None:
                continue
            base_name = kernel.split("(")[0]
            content = tuple(tuple(r[1:]) for r in rows)  # addresses differ between launches
            distinct = seen.setdefault(base_name, [])
            if content in distinct:
                continue  # ncu prints a launch's source page more than once
            distinct.append(content)
            n = len(distinct)
            if base_name in labels and n <= len(labels[base_name]):
                label = labels[base_name][n - 1]
            else:
                label = base_name if n == 1 else f"{base_name}#{n}"
            base = None
            for row in rows:
                try:
                    addr = int(row[header["Address"]], 16)
                except (ValueError, KeyError, IndexError):
                    continue
                if base is None:
                    base = addr
                src = row[header["Source"]].strip()
                space = row[header["Address Space"]].strip() if "Address Space" in header else "-"
                if space in ("-", "") and not MEM_SASS.match(src):
                    continue
                out_rows.append([label, f"0x{addr - base:04x}", src] +
                                [row[header[c]] if c in header else "" for c in KEEP_COLS])
    with open(a.out, "w", newline="") as f:
        for line in open(a.header).read().splitlines():
            f.write("# " + line + "\n" if not line.startswith("#") else line + "\n")
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["kernel", "offset", "sass"] + KEEP_COLS)
        w.writerows(out_rows)
    print(f"source counters: {len(out_rows)} memory-instruction rows")
    return 0


# ---------------------------------------------------------------------------------------------- sassptx
PTX_MEM = re.compile(r"^(ld|ldu|st|atom|red|cp\.async|cp\.reduce|ldmatrix|stmatrix|wgmma|mbarrier|prefetch|"
                     r"fence\.proxy|multimem)(\.|$)")
BITS = {"b8": 8, "u8": 8, "s8": 8, "b16": 16, "u16": 16, "s16": 16, "f16": 16, "bf16": 16, "f16x2": 32,
        "b32": 32, "u32": 32, "s32": 32, "f32": 32, "b64": 64, "u64": 64, "s64": 64, "f64": 64, "b128": 128}


def ptx_entries(text):
    """{entry name: [(opcode, predicated, operands)]} for every .entry in a PTX file."""
    out = OrderedDict()
    cur = None
    for line in text.splitlines():
        m = re.search(r"\.entry\s+([\w$]+)", line)
        if m:
            cur = m.group(1)
            out[cur] = []
            continue
        if cur is None:
            continue
        if line.strip() == "}" and not line.startswith(("\t", " ")):
            cur = None
            continue
        s = line.split("//")[0].strip()
        s = re.sub(r"^\$?[\w$]+:\s*", "", s) if re.match(r"^\$?[\w$]+:", s) else s
        m = re.match(r"^(@!?%\w+\s+)?([a-z][\w.:]*)\s*(.*?);?$", s)
        if not m:
            continue
        op = m.group(2)
        if not PTX_MEM.match(op) or op.startswith(("ld.param", "st.param")):
            continue
        out[cur].append((op, bool(m.group(1)), m.group(3)))
    return out


def ptx_class(op):
    p = op.split(".")
    if op.startswith("cp.async.bulk"):
        return "bulk copy"
    if op.startswith(("cp.async.commit", "cp.async.wait")):
        return "cp.async sync"
    if op.startswith("cp.async"):
        return "cp.async"
    if p[0] in ("ldmatrix", "stmatrix"):
        return p[0]
    if op.startswith("wgmma.mma_async"):
        return "wgmma"
    if p[0] in ("wgmma", "fence", "mbarrier", "prefetch", "multimem", "cp"):
        return p[0] + " (sync/other)"
    space = next((s for s in ("global", "shared", "local", "const") if any(q.split("::")[0] == s for q in p[1:3])),
                 "generic")
    kind = {"ld": "ld", "ldu": "ld", "st": "st", "atom": "atom", "red": "red"}[p[0]]
    return f"{space} {kind}"


def ptx_bits(op, operands):
    p = op.split(".")
    if op.startswith(("cp.async.ca.", "cp.async.cg.")):
        m = re.search(r"\]\s*,\s*(0x[0-9a-fA-F]+|\d+)", operands)
        return int(m.group(1), 0) * 8 if m else None
    if p[0] in ("ldmatrix", "stmatrix"):
        n = next((int(s[1:]) for s in p if s in ("x1", "x2", "x4")), 1)
        return 32 * n
    if p[0] in ("wgmma", "fence", "mbarrier", "prefetch") or op.startswith("cp.async."):
        return None
    vec = 1
    for s in p:
        if s in ("v2", "v4", "v8"):
            vec = int(s[1:])
    t = next((BITS[s] for s in reversed(p) if s in BITS), None)
    return vec * t if t else None


SASS_CLASS = {"LDG": "global ld", "STG": "global st", "LDS": "shared ld", "STS": "shared st", "LD": "generic ld",
              "ST": "generic st", "LDL": "local ld", "STL": "local st", "ATOMS": "shared atom",
              "ATOMG": "global atom", "ATOM": "generic atom", "RED": "global red", "REDG": "global red",
              "LDGSTS": "cp.async", "LDGDEPBAR": "cp.async sync", "DEPBAR": "cp.async sync", "LDSM": "ldmatrix",
              "STSM": "stmatrix", "HGMMA": "wgmma", "UTMALDG": "bulk copy", "UTMASTG": "bulk copy",
              "UBLKCP": "bulk copy", "SYNCS": "mbarrier (sync/other)", "WARPGROUP": "wgmma (sync/other)",
              "FENCE": "fence (sync/other)"}
SASS_LINE = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)")


def sass_functions(text):
    out = OrderedDict()
    cur = None
    for line in text.splitlines():
        m = re.search(r"Function\s*:\s*(\S+)", line)
        if m:
            cur = m.group(1)
            out[cur] = []
            continue
        if cur is None:
            continue
        m = SASS_LINE.search(line)
        if not m:
            continue
        op = m.group(2)
        base = op.split(".")[0]
        if base in SASS_CLASS:
            pred = (m.group(1) or "").strip()
            out[cur].append((op + (" @!PT" if pred == "@!PT" else ""), bool(pred)))
    return out


def sass_bits(op):
    p = op.split()[0].split(".")
    if p[0] in ("LDSM", "STSM"):
        return 32 * (int(p[-1]) if p[-1] in ("2", "4") else 1)
    if p[0] in ("HGMMA", "WARPGROUP", "FENCE", "LDGDEPBAR", "DEPBAR", "SYNCS", "UTMALDG", "UTMASTG", "UBLKCP"):
        return None
    for s in p[1:]:
        if s in ("128", "64", "32"):
            return int(s)
        if s in ("U8", "S8"):
            return 8
        if s in ("U16", "S16"):
            return 16
    return 32 if p[0] not in ("LDGDEPBAR", "DEPBAR", "HGMMA", "SYNCS", "UTMALDG", "UBLKCP") else None


def collapse(seq):
    out = []
    for x in seq:
        if out and out[-1][0] == x:
            out[-1][1] += 1
        else:
            out.append([x, 1])
    return ", ".join(f"{x} x{n}" if n > 1 else x for x, n in out)


def short_name(mangled):
    m = re.match(r"_Z(\d+)(\w+)", mangled)
    return m.group(2)[: int(m.group(1))] if m else mangled


def cmd_sassptx(a):
    driver_sass = sass_functions(open(a.sass).read()) if a.sass else {}
    lines = []
    for spec in a.ptx:
        label, path = spec.split("=", 1)
        entries = ptx_entries(open(path).read())
        sass_src = driver_sass
        sass_label = "driver SASS"
        for cs in a.cubin_sass or []:
            l2, p2 = cs.split("=", 1)
            if l2 == label and os.path.exists(p2):
                cubin = sass_functions(open(p2).read())
                if not a.sass or not any(e in driver_sass for e in entries):
                    sass_src, sass_label = cubin, "cubin SASS"
                else:
                    for e in entries:
                        same = [o for o, _ in driver_sass.get(e, [])] == [o for o, _ in cubin.get(e, [])]
                        lines.append(f"(check) {short_name(e)}: memory instructions of the per-file cubin "
                                     f"{'identical to' if same else 'DIFFER from'} the measured driver's")
        for e, ptx_ops in entries.items():
            sass_ops = sass_src.get(e)
            lines.append("")
            lines.append(f"== {short_name(e)}   [{label}]   entry {e}")
            if sass_ops is None:
                lines.append(f"   no SASS function {e} found ({sass_label})")
                sass_ops = []
            pc = Counter()
            pb = {}
            for op, pred, opnd in ptx_ops:
                c = ptx_class(op)
                pc[c] += 1
                pb.setdefault(c, Counter())[ptx_bits(op, opnd)] += 1
            sc = Counter()
            sb = {}
            for op, pred in sass_ops:
                c = SASS_CLASS[op.split(".")[0].split()[0]]
                if op.endswith("@!PT"):
                    c += " [@!PT: never executes]"
                sc[c] += 1
                sb.setdefault(c, Counter())[sass_bits(op)] += 1
            lines.append(f"   {'class':36s} {'PTX':>4s} {'(widths, bits)':28s} {'SASS':>4s} {'(widths, bits)':28s}")
            for c in sorted(set(pc) | set(sc)):
                pw = " ".join(f"{b}x{n}" for b, n in sorted(pb.get(c, {}).items(), key=lambda t: str(t[0])))
                sw = " ".join(f"{b}x{n}" for b, n in sorted(sb.get(c, {}).items(), key=lambda t: str(t[0])))
                flag = "" if (pc[c] == sc[c] and pw == sw) or "sync/other" in c or "@!PT" in c else "   <-- differs"
                lines.append(f"   {c:36s} {pc[c]:4d} {pw:28s} {sc[c]:4d} {sw:28s}{flag}")
            lines.append("   PTX  order: " + (collapse([op + ("?" if pred else "") for op, pred, _ in ptx_ops]) or "-"))
            lines.append("   SASS order: " + (collapse([op + ("?" if pred else "") for op, pred in sass_ops]) or "-"))
    with open(a.out, "w") as f:
        for line in open(a.header).read().splitlines() if a.header else []:
            f.write(line + "\n")
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("probe")
    p.add_argument("--metrics", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--dropped", required=True)
    p.add_argument("command", nargs=argparse.REMAINDER)
    p = sub.add_parser("collect")
    p.add_argument("--out", required=True)
    p.add_argument("--metrics", required=True)
    p.add_argument("--header", required=True)
    p.add_argument("--pair", nargs=2, action="append", required=True)
    p = sub.add_parser("srcfilter")
    p.add_argument("--out", required=True)
    p.add_argument("--label", action="append", help="KERNEL=LABEL1,LABEL2: labels of its 1st, 2nd distinct launch")
    p.add_argument("--header", required=True)
    p.add_argument("raw", nargs="+")
    p = sub.add_parser("sassptx")
    p.add_argument("--out", required=True)
    p.add_argument("--header", default=None)
    p.add_argument("--sass", default=None)
    p.add_argument("--ptx", action="append", required=True)
    p.add_argument("--cubin-sass", action="append")
    a = ap.parse_args()
    if a.cmd == "probe":
        if a.command and a.command[0] == "--":
            a.command = a.command[1:]
        return cmd_probe(a)
    return {"collect": cmd_collect, "srcfilter": cmd_srcfilter, "sassptx": cmd_sassptx}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
