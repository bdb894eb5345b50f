//! The generated paragraph: what the model did with one warp access on one compute
//! capability, in the guides' words, computed from the [`Breakdown`].

use warpscope_model::arch::{Family, GlobalPath};
use warpscope_model::detail::{Breakdown, ConstantGroup, Phase, Request};

use super::common::{
    addr_of, cap, family, group_name, hex, lanes, lanes_phrase, num, pct, plural, width_of,
    MemModel,
};
use super::{ExplainedArch, Explanation};

/// One paragraph (2–5 sentences) explaining how the warp access of `e` turns into requests
/// and transactions (global/local: which lanes fall in which segment, line or sector, the
/// sizes, and bytes moved against bytes requested), bank wavefronts (shared: the phases, the
/// busiest bank and its n-way conflict, multicast words) or serialized requests (constant:
/// the distinct addresses) on the compute capability `a`. Lanes are grouped into ranges;
/// addresses are given relative to the first 128-byte boundary at or below the access.
pub fn paragraph(e: &Explanation, a: &ExplainedArch) -> String {
    let (req, _, _, wf) = a.breakdown.totals();
    if e.mask == 0 || (req == 0 && wf == 0) {
        return format!(
            "On {} no lane of this warp is active, so the access issues no request and costs \
             nothing.",
            a.cc
        );
    }
    match &a.breakdown {
        Breakdown::Memory { path, requests } => memory(e, a, *path, requests),
        Breakdown::Shared {
            requests,
            banks,
            bank_bytes,
            phases,
        } => shared(e, a, *requests, *banks, *bank_bytes, phases),
        Breakdown::Constant { groups } => constant(e, a, groups),
    }
}

/// The active lanes' stride in bytes when their addresses are affine in the lane index.
fn stride(e: &Explanation) -> Option<i64> {
    let act: Vec<usize> = lanes(e.mask).collect();
    let (&l0, rest) = act.split_first()?;
    let Some(&l1) = rest.first() else {
        return Some(0);
    };
    let a0 = addr_of(e, l0) as i128;
    let da = addr_of(e, l1) as i128 - a0;
    let dl = (l1 - l0) as i128;
    if da % dl != 0 {
        return None;
    }
    let d = da / dl;
    act.iter()
        .all(|&l| addr_of(e, l) as i128 == a0 + (l as i128 - l0 as i128) * d)
        .then_some(d as i64)
}

/// The unit a transaction of `bytes` bytes is on this path.
fn unit(path: GlobalPath, bytes: u64) -> &'static str {
    match path {
        GlobalPath::Uncached => "segment",
        GlobalPath::L1Lines => "line",
        GlobalPath::Sectors => "sector",
        GlobalPath::L2Segments | GlobalPath::ReadOnly => {
            if bytes == 32 {
                "segment"
            } else {
                "block"
            }
        }
    }
}

fn memory(e: &Explanation, a: &ExplainedArch, path: GlobalPath, requests: &[Request]) -> String {
    let w = width_of(e);
    let fam = family(&a.cc);
    let m = MemModel::new(e, requests);
    let base = m.lines.first().copied().unwrap_or(0) << 7;
    let rel = |x: u64| format!("+{}", num(x - base));
    let mut s: Vec<String> = Vec::new();

    // The rule, in one sentence.
    let split = match requests.first().map(|r| r.group.count_ones()) {
        Some(32) | None => "the warp is one request".to_string(),
        Some(16) => "each half-warp is one request".to_string(),
        Some(8) => "each quarter-warp is one request".to_string(),
        Some(_) => "each group of lanes is one request".to_string(),
    };
    if !e.further_words.is_empty() {
        let threads: u64 = e.block.iter().map(|&d| u64::from(d)).product();
        let words = e.further_words.len() as u64 + 1;
        s.push(format!(
            "Each lane's {}-byte {} is {} of one 4-byte word: local memory interleaves a \
             thread's 4-byte words across the block's {} threads, word j at +4·j·{} bytes \
             (measured on H100), and each word is costed on its own",
            words * w,
            super::common::op_name(e.op),
            plural(words, "access", "accesses"),
            num(threads),
            num(threads)
        ));
    }
    let seg = match w {
        1 => 32,
        2 => 64,
        _ => 128,
    };
    s.push(match (fam, path) {
        (Some(Family::Cc1Strict), _) => format!(
            "On {} {split}; it coalesces into {} only when lane k reads word k of a \
             segment aligned to {} bytes, otherwise every active lane takes its own 32-byte \
             transaction",
            a.cc,
            match w {
                4 => "one 64-byte transaction",
                8 => "one 128-byte transaction",
                _ => "128-byte transactions",
            },
            16 * w
        ),
        (_, GlobalPath::Uncached) => format!(
            "On {} {split}, and each {seg}-byte segment it touches is one transaction, halved \
             (down to 32 bytes) while only one half holds requested bytes",
            a.cc
        ),
        (_, GlobalPath::L1Lines) => format!(
            "On {} the access goes through L1: {split}, and every 128-byte line it touches is \
             one 128-byte transaction",
            a.cc
        ),
        (_, GlobalPath::L2Segments) => format!(
            "On {} the access bypasses L1: {split}, and every 32-byte segment it touches is \
             one transaction",
            a.cc
        ),
        (_, GlobalPath::ReadOnly) => format!(
            "On {} the load goes through the read-only cache: {split}, and every 32-byte \
             block it touches is one transaction",
            a.cc
        ),
        (_, GlobalPath::Sectors) => format!(
            "On {} {split}, and every 32-byte sector its lanes touch is one transaction",
            a.cc
        ),
    });

    // The pattern of the addresses, relative to an aligned boundary.
    let n = e.mask.count_ones();
    let verb = lanes_verb(e.op);
    let first = lanes(e.mask).next().map(|l| addr_of(e, l)).unwrap_or(0);
    s.push(match stride(e) {
        Some(d) if d == w as i64 && n > 1 => {
            let off = first % 128;
            let where_ = if off == 0 {
                "on a 128-byte boundary".to_string()
            } else {
                format!("{off} bytes past a 128-byte boundary")
            };
            format!(
                "The {n} active lanes {verb} consecutive {w}-byte words, {} bytes starting {where_}",
                num(u64::from(n) * w)
            )
        }
        Some(0) if n > 1 => format!(
            "All {n} active lanes {} the same {w}-byte word",
            lanes_verb(e.op)
        ),
        Some(d) if d > 0 && n > 1 => format!(
            "Consecutive lanes are {} ({}) apart, starting {} bytes past a 128-byte boundary",
            plural(d as u64, "byte", "bytes"),
            plural(d as u64 / w, "word", "words"),
            first % 128
        ),
        Some(_) if n == 1 => format!(
            "Only lane {} is active; its {w} bytes start {} bytes past a 128-byte boundary",
            e.mask.trailing_zeros(),
            first % 128
        ),
        _ => {
            let lines: std::collections::BTreeSet<u64> =
                lanes(e.mask).map(|l| addr_of(e, l) >> 7).collect();
            format!(
                "The {n} active lanes' addresses have no common stride and spread over {}",
                plural(lines.len() as u64, "128-byte line", "128-byte lines")
            )
        }
    });

    // Per request: which lanes fall in which transaction. `predicate` says it without the
    // subject, so that requests doing the same can share a sentence.
    let predicate = |r: &Request| -> String {
        let mut tx: Vec<(u64, u64, usize, u32)> = Vec::new();
        for t in &r.transactions {
            match tx.iter_mut().find(|x| x.0 == t.addr && x.1 == t.bytes) {
                Some(x) => {
                    x.2 += 1;
                    x.3 |= t.lanes;
                }
                None => tx.push((t.addr, t.bytes, 1, t.lanes)),
            }
        }
        tx.sort_by_key(|x| x.0);
        let total: usize = tx.iter().map(|x| x.2).sum();
        let bytes: u64 = r.transactions.iter().map(|t| t.bytes).sum();
        if fam == Some(Family::Cc1Strict) && !r.strictly_coalesced {
            return format!(
                "breaks those conditions, so it takes {total} separate 32-byte transactions \
                 ({} bytes) although its lanes touch only {}",
                num(bytes),
                plural(
                    tx.len() as u64,
                    "distinct 32-byte segment",
                    "distinct 32-byte segments"
                )
            );
        }
        match tx.as_slice() {
            [] => "takes no transaction".to_string(),
            [(addr, b, _, _)] => {
                let lo = m.lanes_in(*addr, addr + b) & r.lanes;
                let (rlo, rhi) = requested_span(&m, lo, *addr, addr + b);
                let fill = if rlo == 0 && rhi == *b {
                    "fills it".to_string()
                } else {
                    format!("uses bytes {rlo}–{} of it", rhi.saturating_sub(1))
                };
                format!(
                    "falls in one {b}-byte {} at {} and {fill}: one {b}-byte transaction",
                    unit(path, *b),
                    rel(*addr)
                )
            }
            v if v.len() <= 5 => {
                let parts: Vec<String> = v
                    .iter()
                    .map(|(addr, b, _, l)| {
                        format!("{} in {b} B at {}", lanes_phrase(*l), rel(*addr))
                    })
                    .collect();
                let u = unit(path, v[0].1);
                format!(
                    "touches {} {u}s: {}, so it needs {}",
                    v.len(),
                    parts.join(", "),
                    sum_of(v.iter().map(|x| x.1))
                )
            }
            v => {
                let one_each = v.iter().all(|x| x.3.count_ones() <= 1);
                let u = unit(path, v[0].1);
                format!(
                    "touches {} {u}s{}, from {} to {}: {}",
                    v.len(),
                    if one_each { ", one per lane" } else { "" },
                    rel(v[0].0),
                    rel(v[v.len() - 1].0),
                    sum_of(v.iter().map(|x| x.1))
                )
            }
        }
    };
    let subject =
        |r: &Request| format!("{} ({})", cap(&group_name(r.group)), lanes_phrase(r.lanes));
    let preds: Vec<String> = requests.iter().map(predicate).collect();
    match requests {
        [] => {}
        [r] => s.push(format!("{} {}", subject(r), preds[0])),
        _ if preds.iter().all(|p| *p == preds[0]) => {
            let kind = match requests[0].group.count_ones() {
                16 => "half-warps",
                8 => "quarter-warps",
                _ => "requests",
            };
            s.push(format!(
                "Each of the {} {kind} {}",
                requests.len(),
                preds[0]
            ));
        }
        [r0, r1] => {
            s.push(format!("{} {}", subject(r0), preds[0]));
            s.push(format!("{} {}", subject(r1), preds[1]));
        }
        [r0, rest @ ..] => {
            s.push(format!("{} {}", subject(r0), preds[0]));
            let shape = |r: &Request| {
                let mut v: Vec<u64> = r.transactions.iter().map(|t| t.bytes).collect();
                v.sort_unstable();
                v
            };
            let tx: usize = rest.iter().map(|r| r.transactions.len()).sum();
            let bytes: u64 = rest
                .iter()
                .flat_map(|r| &r.transactions)
                .map(|t| t.bytes)
                .sum();
            if rest.iter().all(|r| shape(r) == shape(r0)) {
                s.push(format!(
                    "The other {} requests take as many transactions of the same sizes",
                    rest.len()
                ));
            } else {
                s.push(format!(
                    "The other {} requests take {} ({} bytes)",
                    rest.len(),
                    plural(tx as u64, "transaction", "transactions"),
                    num(bytes)
                ));
            }
        }
    }

    // Bytes moved against bytes requested.
    let c = &a.cost;
    let moved = c.transaction_bytes;
    let asked = c.bytes_requested;
    let verb = if e.op.writes() {
        "written"
    } else {
        "requested"
    };
    let mut last = format!("In all {} bytes move for {} {verb}", num(moved), num(asked));
    if let Some(eff) = c.efficiency {
        last.push_str(&format!(": {} efficiency", pct(eff)));
        if moved > asked {
            last.push_str(&format!(
                ", {} bytes fetched and not used",
                num(moved - asked)
            ));
        }
    }
    s.push(last);
    finish(s)
}

/// Transaction sizes added up: "64 + 32 bytes", "5 × 32 = 160 bytes".
fn sum_of(sizes: impl Iterator<Item = u64>) -> String {
    let v: Vec<u64> = sizes.collect();
    let total: u64 = v.iter().sum();
    match v.as_slice() {
        [] => "no bytes".into(),
        [one] => format!("{one} bytes"),
        [a, rest @ ..] if rest.iter().all(|x| x == a) && v.len() > 2 => {
            format!("{} × {a} = {} bytes", v.len(), num(total))
        }
        _ if v.len() <= 4 => {
            let parts: Vec<String> = v.iter().map(|x| x.to_string()).collect();
            format!("{} bytes", parts.join(" + "))
        }
        _ => format!("{} bytes", num(total)),
    }
}

/// The first and one-past-last byte (relative to `lo`) requested by `lanes` in `[lo, hi)`.
fn requested_span(m: &MemModel, lanes_in: u32, lo: u64, hi: u64) -> (u64, u64) {
    let mut a = hi;
    let mut b = lo;
    for (_, x) in m.ranges().filter(|&(l, _)| lanes_in & (1 << l) != 0) {
        let s = x.max(lo);
        let t = x.saturating_add(m.width).min(hi);
        a = a.min(s);
        b = b.max(t);
    }
    if b <= a {
        (0, 0)
    } else {
        (a - lo, b - lo)
    }
}

/// Joins sentences, each ending with a full stop.
fn finish(s: Vec<String>) -> String {
    s.into_iter()
        .filter(|x| !x.is_empty())
        .map(|x| if x.ends_with('.') { x } else { format!("{x}.") })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Per bank of a phase: (distinct passes, distinct words, lanes).
fn bank_load(p: &Phase, banks: u32) -> Vec<(u32, u32, u32)> {
    let nb = banks.clamp(1, 64) as usize;
    let mut passes: Vec<Vec<u32>> = vec![Vec::new(); nb];
    let mut words: Vec<Vec<u64>> = vec![Vec::new(); nb];
    let mut lanes_on: Vec<u32> = vec![0; nb];
    for s in &p.slots {
        let b = s.bank as usize % nb;
        if !passes[b].contains(&s.pass) {
            passes[b].push(s.pass);
        }
        if !words[b].contains(&s.word) {
            words[b].push(s.word);
        }
        lanes_on[b] |= 1u32.checked_shl(u32::from(s.lane)).unwrap_or(0);
    }
    (0..nb)
        .map(|b| (passes[b].len() as u32, words[b].len() as u32, lanes_on[b]))
        .collect()
}

/// Banks as "bank 3" or "banks 0, 2, 4 and 6" (at most 4 named, then "…").
fn banks_phrase(v: &[usize]) -> String {
    match v {
        [b] => format!("bank {b}"),
        _ if v.len() <= 4 => {
            let (last, head) = v.split_last().unwrap_or((&0, &[]));
            let head: Vec<String> = head.iter().map(|b| b.to_string()).collect();
            format!("banks {} and {last}", head.join(", "))
        }
        _ => {
            let head: Vec<String> = v[..3].iter().map(|b| b.to_string()).collect();
            format!("{} banks ({}, …)", v.len(), head.join(", "))
        }
    }
}

fn shared(
    e: &Explanation,
    a: &ExplainedArch,
    _requests: u64,
    banks: u32,
    bank_bytes: u32,
    phases: &[Phase],
) -> String {
    let mut s: Vec<String> = Vec::new();
    let bank_bytes = u64::from(bank_bytes.max(1));
    let phase_kind = match phases.first().map(|p| p.group.count_ones()) {
        Some(32) | None => "the warp is served in one phase".to_string(),
        Some(16) => format!(
            "each half-warp is served on its own ({})",
            plural(phases.len() as u64, "phase", "phases")
        ),
        Some(8) => format!(
            "each quarter-warp is served on its own ({})",
            plural(phases.len() as u64, "phase", "phases")
        ),
        Some(_) => plural(phases.len() as u64, "phase", "phases"),
    };
    s.push(format!(
        "On {} shared memory has {banks} banks of {bank_bytes} bytes; {phase_kind}",
        a.cc
    ));
    let n = e.mask.count_ones();
    let w = width_of(e);
    s.push(match stride(e) {
        Some(0) if n > 1 => format!(
            "All {n} active lanes {} the same {w}-byte word",
            lanes_verb(e.op)
        ),
        Some(d) if d > 0 && n > 1 => {
            let d = d as u64;
            if d.is_multiple_of(bank_bytes) {
                format!(
                    "Consecutive lanes are {} apart: a stride of {} {}-byte {}",
                    plural(d, "byte", "bytes"),
                    num(d / bank_bytes),
                    bank_bytes,
                    if d / bank_bytes == 1 { "word" } else { "words" }
                )
            } else {
                format!("Consecutive lanes are {} apart", plural(d, "byte", "bytes"))
            }
        }
        Some(_) if n == 1 => format!("Only lane {} is active", e.mask.trailing_zeros()),
        Some(_) | None => format!("The {n} active lanes' addresses have no common stride"),
    });

    // The worst phase: its busiest bank.
    let loads: Vec<Vec<(u32, u32, u32)>> = phases.iter().map(|p| bank_load(p, banks)).collect();
    let worst = loads
        .iter()
        .enumerate()
        .max_by_key(|(i, l)| (l.iter().map(|x| x.0).max().unwrap_or(0), usize::MAX - i))
        .map(|(i, _)| i);
    if let Some(pi) = worst {
        let l = &loads[pi];
        let ways = l.iter().map(|x| x.0).max().unwrap_or(0);
        let busiest: Vec<usize> = (0..l.len()).filter(|&b| l[b].0 == ways).collect();
        let where_ = if phases.len() > 1 {
            format!(
                " in {} ({})",
                group_name(phases[pi].group),
                lanes_phrase(phases[pi].lanes)
            )
        } else {
            String::new()
        };
        if ways > 1 {
            let b0 = busiest[0];
            let (_, words0, lanes0) = l[b0];
            let who = if busiest.len() == 1 && lanes0 == phases[pi].lanes {
                format!("every lane{where_} lands in bank {b0}")
            } else if busiest.len() == 1 {
                format!(
                    "bank {b0} holds {} distinct words{where_} ({})",
                    words0,
                    lanes_phrase(lanes0)
                )
            } else {
                format!(
                    "{} each hold {} distinct words{where_}",
                    banks_phrase(&busiest),
                    words0
                )
            };
            let mut t = format!("{} — a {ways}-way bank conflict", cap(&who));
            if words0 > ways {
                t.push_str(&format!(
                    " (words {} apart share one 64-bit delivery of the bank)",
                    banks
                ));
            }
            s.push(t);
        } else {
            let used = l.iter().filter(|x| x.0 > 0).count();
            s.push(if phases.len() > 1 {
                "In every phase each bank holds at most one distinct word: no bank conflict"
                    .to_string()
            } else {
                format!(
                    "The lanes fall on {} with at most one distinct word each: no bank conflict",
                    plural(used as u64, "bank", "banks")
                )
            });
        }
    }

    // Words read (or written) by several lanes: served together.
    let mut shared_words: Vec<u32> = Vec::new();
    for p in phases {
        let mut words: Vec<(u64, u32)> = Vec::new();
        for sl in &p.slots {
            let bit = 1u32.checked_shl(u32::from(sl.lane)).unwrap_or(0);
            match words.iter_mut().find(|x| x.0 == sl.word) {
                Some(x) => x.1 |= bit,
                None => words.push((sl.word, bit)),
            }
        }
        shared_words.extend(words.iter().filter(|x| x.1.count_ones() > 1).map(|x| x.1));
    }
    if !shared_words.is_empty() {
        let how = if e.op.writes() {
            "written by several lanes (one write wins)"
        } else {
            "read by several lanes at once (multicast)"
        };
        let example = lanes_phrase(shared_words[0]);
        s.push(if shared_words.len() == 1 {
            format!("One word is {how}: {example}")
        } else {
            format!(
                "{} words are {how}, e.g. {example} on one word",
                shared_words.len()
            )
        });
    }

    let wf = a.cost.wavefronts;
    let drawn: Vec<u64> = phases
        .iter()
        .map(|p| {
            p.slots
                .iter()
                .map(|x| u64::from(x.pass) + 1)
                .max()
                .unwrap_or(0)
        })
        .collect();
    let exact = phases.iter().zip(&drawn).all(|(p, d)| p.wavefronts == *d);
    let ideal = phases.len() as u64;
    let drawn_total: u64 = drawn.iter().sum();
    s.push(if exact && wf > ideal {
        format!(
            "The access takes {} instead of {}",
            plural(wf, "wavefront", "wavefronts"),
            ideal
        )
    } else if !exact && wf != drawn_total {
        // The rule charges passes the bank grid does not show; say which rule.
        let why = match family(&a.cc) {
            Some(Family::Cc1Strict | Family::Cc1Segment) if w > 4 => format!(
                "1.x serves each 32-bit part of {} {w}-byte word as an access of its own, so \
                 every pass counts {} times",
                if w == 8 { "an" } else { "a" },
                w / 4
            ),
            Some(Family::Cc1Strict | Family::Cc1Segment) => "on 1.x lanes on different bytes \
                 of one 32-bit word conflict unless it is the pass's broadcast word"
                .to_string(),
            Some(Family::Fermi) if w == 16 => {
                "2.x adds one pass per half-warp for 16-byte words".to_string()
            }
            _ => "the rule adds passes of its own".to_string(),
        };
        format!(
            "The access takes {} where the grid shows {drawn_total} passes: {why}",
            plural(wf, "wavefront", "wavefronts")
        )
    } else {
        format!("The access takes {}", plural(wf, "wavefront", "wavefronts"))
    });
    finish(s)
}

fn constant(e: &Explanation, a: &ExplainedArch, groups: &[ConstantGroup]) -> String {
    let mut s: Vec<String> = Vec::new();
    let who = if groups.first().map(|g| g.group.count_ones()) == Some(16) {
        "each half-warp"
    } else {
        "the warp"
    };
    s.push(format!(
        "On {} the constant cache serves one address per request: {who} is split into as \
         many requests as it has distinct addresses",
        a.cc
    ));
    let _ = e;
    for ConstantGroup { group, reads } in groups.iter().take(2) {
        let name = if groups.len() > 1 {
            cap(&group_name(*group))
        } else {
            "The warp".into()
        };
        let active: u32 = reads.iter().fold(0, |m, r| m | r.lanes);
        if reads.len() == 1 {
            s.push(format!(
                "{name} ({}) reads one address, {}: a broadcast, one request",
                lanes_phrase(active),
                hex(reads[0].addr)
            ));
            continue;
        }
        let list: Vec<String> = reads
            .iter()
            .take(4)
            .map(|r| format!("{} ({})", hex(r.addr), lanes_phrase(r.lanes)))
            .collect();
        let list = match list.split_last() {
            Some((last, head)) if reads.len() <= 4 => format!("{} and {last}", head.join(", ")),
            _ => format!("{}, … {} more", list.join(", "), reads.len() - 4),
        };
        s.push(format!(
            "{name} ({}) reads {} distinct addresses, {list}, served one after the other",
            lanes_phrase(active),
            reads.len()
        ));
    }
    if groups.len() > 2 {
        s.push(format!("{} more groups follow", groups.len() - 2));
    }
    let req = a.cost.requests;
    let ideal = groups.len() as u64;
    if req > ideal {
        s.push(format!(
            "In all {} instead of {ideal}",
            plural(req, "request", "requests")
        ));
    }
    finish(s)
}

/// What lanes do to memory: "read", "write", "update".
fn lanes_verb(op: warpscope_model::Op) -> &'static str {
    match op {
        warpscope_model::Op::Load => "read",
        warpscope_model::Op::Store => "write",
        warpscope_model::Op::Atomic => "update",
        warpscope_model::Op::Prefetch => "prefetch",
    }
}
