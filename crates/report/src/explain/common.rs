//! Helpers shared by the explain renderers: names of lane groups, number and address
//! formatting, text wrapping, XML escaping, and the cell model of global/local pictures.

pub(crate) use crate::table::num;
use warpscope_advice::Cause;
use warpscope_model::arch::Family;
use warpscope_model::detail::{lane_ranges, Request};
use warpscope_model::{ComputeCapability, Space};

use super::{ExplainedArch, Explanation};
use crate::Counters;

/// Lanes set in `mask`, lowest first.
pub(crate) fn lanes(mask: u32) -> impl Iterator<Item = usize> {
    (0..32).filter(move |l| mask & (1u32 << l) != 0)
}

/// The family of rules of a compute capability written as in [`ExplainedArch::cc`].
pub(crate) fn family(cc: &str) -> Option<Family> {
    cc.parse::<ComputeCapability>().ok().map(Family::of)
}

/// "the warp", "half-warp 1", "quarter-warp 2", or "lanes 3–9" for an odd group.
pub(crate) fn group_name(group: u32) -> String {
    let n = group.count_ones();
    let first = group.trailing_zeros();
    match n {
        32 => "the warp".into(),
        16 if group == 0xFFFF << first => format!("half-warp {}", first / 16),
        8 if group == 0xFF << first => format!("quarter-warp {}", first / 8),
        0 => "no lanes".into(),
        _ => format!("lanes {}", lane_ranges(group)),
    }
}

/// Short label for a request or phase, for picture margins: "warp", "half-warp 0", "q-warp 3".
pub(crate) fn group_label(group: u32) -> String {
    let n = group.count_ones();
    let first = group.trailing_zeros();
    match n {
        32 => "warp".into(),
        16 if group == 0xFFFF << first => format!("half-warp {}", first / 16),
        8 if group == 0xFF << first => format!("q-warp {}", first / 8),
        _ => lane_ranges(group),
    }
}

/// Capitalizes the first letter.
pub(crate) fn cap(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// "lane 5" or "lanes 0–15, 17".
pub(crate) fn lanes_phrase(mask: u32) -> String {
    if mask.count_ones() == 1 {
        format!("lane {}", mask.trailing_zeros())
    } else {
        format!("lanes {}", lane_ranges(mask))
    }
}

/// A fraction as "57.1%": the format of the analysis table's `eff` column (table.rs), so
/// that an explanation and its advice name the figures the table shows.
pub(crate) fn pct(f: f64) -> String {
    format!("{:.1}%", 100.0 * f)
}

pub(crate) fn hex(addr: u64) -> String {
    format!("0x{addr:x}")
}

/// "1 request", "2 requests".
pub(crate) fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", num(n), if n == 1 { one } else { many })
}

/// Escapes text for XML/HTML content and attribute values.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters other than tab/newline are not allowed in XML 1.0.
            c if (c as u32) < 0x20 && c != '\t' && c != '\n' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Splits `text` into lines of at most `width` characters at spaces (a longer word gets a
/// line of its own).
pub(crate) fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut cur = String::new();
    for word in text.split_whitespace() {
        let n = cur.chars().count();
        if n > 0 && n + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

/// The cause's name in words ("misaligned start", "bank stride"), from its serde tag so that
/// causes added later need no change here.
pub(crate) fn cause_name(c: &Cause) -> String {
    serde_json::to_value(c)
        .ok()
        .and_then(|v| v.get("kind").and_then(|k| k.as_str()).map(str::to_string))
        .unwrap_or_else(|| "finding".into())
        .replace('_', " ")
}

/// The counters that matter for the space, in a few words: "3 transactions, 224 B, 57.1%"
/// (global/local), "32 wavefronts" (shared), "4 requests" (constant).
pub(crate) fn counters_short(space: Space, c: &Counters) -> String {
    match space {
        Space::Global | Space::Local | Space::Texture | Space::Surface => {
            let mut s = format!(
                "{}, {} B",
                plural(c.transactions, "transaction", "transactions"),
                num(c.transaction_bytes)
            );
            if let Some(e) = c.efficiency {
                s.push_str(&format!(", {}", pct(e)));
            }
            s
        }
        Space::Shared | Space::DistributedShared => plural(c.wavefronts, "wavefront", "wavefronts"),
        Space::Constant => plural(c.requests, "request", "requests"),
    }
}

/// The counters of this warp, in one line, per space.
pub(crate) fn counters_line(space: Space, c: &Counters) -> String {
    match space {
        Space::Global | Space::Local | Space::Texture | Space::Surface => {
            let mut s = format!(
                "{} · {} · {} B moved ({}) · {} B requested",
                plural(c.requests, "request", "requests"),
                plural(c.transactions, "transaction", "transactions"),
                num(c.transaction_bytes),
                plural(c.sectors, "sector", "sectors"),
                num(c.bytes_requested)
            );
            if let Some(e) = c.efficiency {
                s.push_str(&format!(" · {} efficiency", pct(e)));
            }
            s
        }
        Space::Shared | Space::DistributedShared => format!(
            "{} · {} · {} B requested",
            plural(c.requests, "request", "requests"),
            plural(c.wavefronts, "wavefront", "wavefronts"),
            num(c.bytes_requested)
        ),
        Space::Constant => format!(
            "{} (one per distinct address) · {} B requested",
            plural(c.requests, "request", "requests"),
            num(c.bytes_requested)
        ),
    }
}

/// "load", "store" and the space in lower case.
pub(crate) fn space_name(space: Space) -> &'static str {
    match space {
        Space::Global => "global",
        Space::Shared => "shared",
        Space::Local => "local",
        Space::Constant => "constant",
        Space::Texture => "texture",
        Space::Surface => "surface",
        Space::DistributedShared => "distributed shared",
    }
}

pub(crate) fn op_name(op: warpscope_model::Op) -> &'static str {
    match op {
        warpscope_model::Op::Load => "load",
        warpscope_model::Op::Store => "store",
        warpscope_model::Op::Atomic => "atomic",
        warpscope_model::Op::Prefetch => "prefetch",
    }
}

/// One line describing which execution was chosen (0-based, as `--warp` takes it).
pub(crate) fn execution_line(e: &Explanation) -> String {
    format!(
        "execution {} of {} ({}) · block ({},{},{}) warp {} · active {}",
        num(e.execution),
        num(e.executions),
        e.chosen,
        e.block_of_warp[0],
        e.block_of_warp[1],
        e.block_of_warp[2],
        e.warp,
        lanes_phrase(e.mask)
    )
}

/// What ptxas made of the explained instruction, when the SASS check changed it: "ptxas
/// merged 4 PTX loads (from PTX line 93) into this 16-byte load", "a register spill ptxas
/// added (STL, not in the PTX), tied to PTX line 56"; `None` otherwise.
pub(crate) fn sass_line(e: &Explanation) -> Option<String> {
    let ptx = e.ptx.as_deref()?;
    let line = e
        .ptx_line
        .map_or(String::new(), |l| format!(" PTX line {l}"));
    if let Some((_, n)) = ptx.rsplit_once(" ×") {
        let what = match e.op {
            warpscope_model::Op::Store => "stores",
            _ => "loads",
        };
        return Some(format!(
            "ptxas merged {n} PTX {what} (from{line}) into this {}-byte one (SASS checked)",
            e.width
        ));
    }
    let kind = if ptx.ends_with("(spill)") {
        "spill (STL"
    } else if ptx.ends_with("(refill)") {
        "refill (LDL"
    } else {
        return None;
    };
    Some(format!(
        "a register {kind}, not in the PTX) ptxas added, tied to{line} (SASS checked)"
    ))
}

/// "CC 9.0 (Hopper)".
pub(crate) fn arch_title(a: &ExplainedArch) -> String {
    if a.name.is_empty() {
        format!("CC {}", a.cc)
    } else {
        format!("CC {} ({})", a.cc, a.name)
    }
}

/// "4 bytes per lane", or for a wide local access "8 bytes per lane, 2 words of 4 bytes".
pub(crate) fn per_lane(e: &Explanation) -> String {
    match e.further_words.len() {
        0 => format!("{} bytes per lane", e.width),
        n => format!(
            "{} bytes per lane, {} words of {} bytes",
            e.width as usize * (n + 1),
            n + 1,
            e.width
        ),
    }
}

/// Bytes per lane as the model costs them (0 → 1, over 16 → 16).
pub(crate) fn width_of(e: &Explanation) -> u64 {
    u64::from(e.width.clamp(1, 16))
}

/// Address of active lane `l` (0 when the explanation carries fewer than 32 addresses).
pub(crate) fn addr_of(e: &Explanation, l: usize) -> u64 {
    e.addrs.get(l).copied().unwrap_or(0)
}

/// The global/local picture's model: the touched 128-byte lines and, per byte range, which
/// lanes asked for it and which requests fetched it.
pub(crate) struct MemModel<'a> {
    pub width: u64,
    /// Active lanes.
    pub mask: u32,
    /// Each lane's address of every word it accesses: one entry per part of the access
    /// (several for a wide local access, [`Explanation::further_words`]).
    pub words: Vec<[u64; 32]>,
    pub requests: &'a [Request],
    /// Line indexes (address / 128) touched by a lane or a transaction, ascending.
    pub lines: Vec<u64>,
}

impl<'a> MemModel<'a> {
    pub fn new(e: &Explanation, requests: &'a [Request]) -> Self {
        let width = width_of(e);
        let mut words: Vec<[u64; 32]> = vec![std::array::from_fn(|l| addr_of(e, l))];
        for w in &e.further_words {
            words.push(std::array::from_fn(|l| w.get(l).copied().unwrap_or(0)));
        }
        let mut lines: Vec<u64> = Vec::new();
        for word in &words {
            for l in lanes(e.mask) {
                let a = word[l];
                let last = a.saturating_add(width - 1);
                lines.extend((a >> 7)..=(last >> 7));
            }
        }
        for r in requests {
            for t in &r.transactions {
                let last = t.addr.saturating_add(t.bytes.max(1) - 1);
                lines.extend((t.addr >> 7)..=(last >> 7));
            }
        }
        lines.sort_unstable();
        lines.dedup();
        MemModel {
            width,
            mask: e.mask,
            words,
            requests,
            lines,
        }
    }

    /// (lane, address) of every active lane's every word, word by word.
    pub fn ranges(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.words
            .iter()
            .flat_map(move |w| lanes(self.mask).map(move |l| (l, w[l])))
    }

    /// Where lane `l`'s word holding byte `at` starts (its first word when none holds it).
    pub fn start_of(&self, l: usize, at: u64) -> u64 {
        self.words
            .iter()
            .map(|w| w[l])
            .find(|&a| a <= at && at < a.saturating_add(self.width))
            .unwrap_or(self.words[0][l])
    }

    /// Lanes with at least one byte in `[lo, hi)`.
    pub fn lanes_in(&self, lo: u64, hi: u64) -> u32 {
        self.ranges()
            .filter(|&(_, a)| a < hi && a.saturating_add(self.width) > lo)
            .fold(0, |m, (l, _)| m | 1 << l)
    }

    /// Requests (bit *i* = request *i*, up to 32) with a transaction overlapping `[lo, hi)`.
    pub fn fetched_by(&self, lo: u64, hi: u64) -> u32 {
        let mut m = 0;
        for (i, r) in self.requests.iter().enumerate().take(32) {
            if r.transactions
                .iter()
                .any(|t| t.addr < hi && t.addr.saturating_add(t.bytes) > lo)
            {
                m |= 1 << i;
            }
        }
        m
    }

    /// Index of the request serving lane `l`'s first word.
    pub fn request_of(&self, l: usize) -> Option<usize> {
        self.request_at(l, self.words[0][l])
    }

    /// Index of the request serving lane `l`'s bytes at `at`: the one whose lanes hold `l`
    /// and whose transactions cover `at` (each word of a wide local access has its own),
    /// else the first holding `l`.
    pub fn request_at(&self, l: usize, at: u64) -> Option<usize> {
        let holds = |r: &Request| r.lanes & (1 << l) != 0 || r.group & (1 << l) != 0;
        self.requests
            .iter()
            .position(|r| {
                holds(r)
                    && r.transactions
                        .iter()
                        .any(|t| t.addr <= at && at < t.addr.saturating_add(t.bytes))
            })
            .or_else(|| self.requests.iter().position(|r| r.lanes & (1 << l) != 0))
            .or_else(|| self.requests.iter().position(holds))
    }

    /// The transactions of request `r` inside line `line`, duplicates (same address and size,
    /// as 1.0/1.1 issues per lane) merged: (addr, bytes, count, lanes).
    pub fn transactions_in(&self, r: usize, line: u64) -> Vec<(u64, u64, usize, u32)> {
        let mut out: Vec<(u64, u64, usize, u32)> = Vec::new();
        if let Some(req) = self.requests.get(r) {
            for t in &req.transactions {
                if t.addr >> 7 != line {
                    continue;
                }
                match out.iter_mut().find(|x| x.0 == t.addr && x.1 == t.bytes) {
                    Some(x) => {
                        x.2 += 1;
                        x.3 |= t.lanes;
                    }
                    None => out.push((t.addr, t.bytes, 1, t.lanes)),
                }
            }
        }
        out.sort_by_key(|x| (x.0, x.1));
        out
    }
}

/// Label of a (possibly merged) transaction: "128 B", "32 B ×8".
pub(crate) fn tx_label(bytes: u64, count: usize) -> String {
    if count > 1 {
        format!("{bytes} B ×{count}")
    } else {
        format!("{bytes} B")
    }
}

/// What bank `b` (of `nb`) serves in pass `pass` of phase `p`: the lanes (a mask) and the
/// distinct words, in slot order.
pub(crate) fn bank_cell(
    p: &warpscope_model::detail::Phase,
    pass: usize,
    b: usize,
    nb: usize,
) -> (u32, Vec<u64>) {
    let mut lanes = 0u32;
    let mut words: Vec<u64> = Vec::new();
    for s in p
        .slots
        .iter()
        .filter(|s| s.pass as usize == pass && s.bank as usize % nb == b)
    {
        lanes |= 1u32.checked_shl(u32::from(s.lane)).unwrap_or(0);
        if !words.contains(&s.word) {
            words.push(s.word);
        }
    }
    (lanes, words)
}
