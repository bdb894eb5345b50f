//! Shared memory: why a warp access takes more wavefronts than [`contiguous`] would, read
//! from the warp's [`Layout`] and the site's [`crate::LaneStrides`].
//!
//! The fixes in the order a CUDA engineer tries them: on 3.x, 8-byte words in the default
//! 4-byte bank mode first get the 8-byte mode, a call on the host that changes no code [PG5
//! F.5.3]; a stride that doubles from pass to pass (an interleaved tree reduction) gets
//! sequential addressing [Harris, "Optimizing Parallel Reduction in CUDA"]; a stride that
//! shares a factor with the bank count gets padding of each row [PG "Shared Memory"; BPG,
//! the transpose's `[TILE][TILE + 1]` tile] — the least padding (in elements, up to the
//! bank count in words) that brings the access to its minimum on this compute capability,
//! modelled, with one element's figure named when it falls short — and swizzling (XOR of
//! column and row) second.

use crate::layout::Layout;
use crate::{
    affine, contiguous, cost, gcd, plural, relaid, verb, Arch, Cause, Config, Family, Finding, Op,
    SiteFacts, WarpAccess,
};
use warpscope_model::SmemBankMode;

pub(crate) fn shared(
    facts: &SiteFacts,
    arch: &Arch,
    config: &Config,
    a: &WarpAccess,
) -> Vec<Finding> {
    let Some(eight) = eight_byte_mode(arch, config, a) else {
        return rewrites(facts, arch, config, a);
    };
    let before = cost(arch, config, a).wavefronts;
    if cost(arch, &eight, a).wavefronts < before {
        // The mode first; what is still above the minimum in it is fixed on top of it.
        let mut out = vec![Finding {
            cause: Cause::EightByteBanks { width: a.width },
            why: format!(
                "{}: here the lanes' words meet in banks; in 8-byte mode each bank delivers \
                 one aligned 8-byte word a pass",
                four_byte_mode(a.width)
            ),
            fix: format!("{EIGHT_BYTE_MODE}; the kernel's code stays as it is"),
            fixed: Some(*a),
            fixed_config: Some(eight),
        }];
        for mut f in rewrites(facts, arch, &eight, a) {
            f.fix = format!("with 8-byte banks set, also: {}", f.fix);
            f.fixed_config = Some(eight);
            out.push(f);
        }
        return out;
    }
    // The mode alone does not help (a column walk of an unpadded tile), but the rewrite
    // may leave conflicts that the mode removes: then the mode follows it.
    let mut out = rewrites(facts, arch, config, a);
    let fixed = out.first().and_then(|f| f.fixed);
    if let Some(fixed) = fixed {
        let (in_four, in_eight) = (
            cost(arch, config, &fixed).wavefronts,
            cost(arch, &eight, &fixed).wavefronts,
        );
        if in_eight < in_four {
            out.insert(
                1,
                Finding {
                    cause: Cause::EightByteBanks { width: a.width },
                    why: format!(
                        "{}: after the fix above the lanes' words still meet in banks \
                         ({}); in 8-byte mode each bank delivers one aligned 8-byte word a \
                         pass",
                        four_byte_mode(a.width),
                        plural(in_four, "wavefront")
                    ),
                    fix: format!(
                        "{EIGHT_BYTE_MODE}, on top of the fix above — the figures after are \
                         for both"
                    ),
                    fixed: Some(fixed),
                    fixed_config: Some(eight),
                },
            );
        }
    }
    out
}

/// Why `width`-byte words conflict in 3.x's 4-byte bank mode [PG5 F.5.3].
fn four_byte_mode(width: u32) -> String {
    format!(
        "in 3.x's default 4-byte bank mode a bank delivers two 4-byte words in one pass only \
         when they are words i and i + 32 of one 64-word-aligned block, and each lane's \
         {width}-byte word spans {} banks",
        width / 4
    )
}

/// The host call that selects 8-byte banks on 3.x, in words.
const EIGHT_BYTE_MODE: &str = "set 8-byte banks before the launch: \
    cudaDeviceSetSharedMemConfig(cudaSharedMemBankSizeEightByte), or \
    cudaFuncSetSharedMemConfig(kernel, cudaSharedMemBankSizeEightByte) for this kernel alone \
    (only 3.x has the mode; warpscope models it with --smem-bank-size 8)";

/// `config` in 3.x's 8-byte bank mode, when `a` moves 8 or 16 bytes a lane on 3.x in the
/// 4-byte mode [PG5 F.5.3]; `None` otherwise.
fn eight_byte_mode(arch: &Arch, config: &Config, a: &WarpAccess) -> Option<Config> {
    (arch.family == Family::Kepler
        && config.smem_bank_mode == SmemBankMode::FourByte
        && a.width >= 8)
        .then_some(Config {
            smem_bank_mode: SmemBankMode::EightByte,
            ..*config
        })
}

/// The code and layout changes for `a` under `config`: wider words on 1.x, sequential
/// addressing for an interleaved reduction, padding, or consecutive words.
fn rewrites(facts: &SiteFacts, arch: &Arch, config: &Config, a: &WarpAccess) -> Vec<Finding> {
    let before = cost(arch, config, a);
    let w = u64::from(a.width.max(1));
    let tesla = matches!(arch.family, Family::Cc1Strict | Family::Cc1Segment);
    if tesla && w < 4 {
        if let Some((l0, first, _)) = affine(a) {
            let widened = relaid(a, l0, first - first % 128, 4, 4);
            if before.wavefronts > cost(arch, config, &widened).wavefronts {
                return vec![Finding {
                    cause: Cause::NarrowSharedOn1x { width: a.width },
                    why: format!(
                        "{w}-byte elements: on 1.x neighbouring lanes {} different bytes of \
                         one 32-bit word, which is one bank, and only one word per pass is \
                         broadcast",
                        verb(a.op)
                    ),
                    fix: "use 32-bit elements in shared memory (e.g. widen chars to ints, or \
                          have each thread handle 4 consecutive chars as one word)"
                        .into(),
                    fixed: Some(widened),
                    fixed_config: None,
                }];
            }
        }
    }
    let ideal = contiguous(a);
    let least = cost(arch, config, &ideal).wavefronts;
    if before.wavefronts <= least {
        return Vec::new();
    }
    let Some(lay) = Layout::of(a) else {
        return vec![Finding {
            cause: Cause::BankConflicts,
            why: "the lanes hit their banks at no common stride, neither across the warp nor \
                  in rows, and several words fall in one bank"
                .into(),
            fix: "make consecutive lanes access consecutive words, or permute the index (e.g. \
                  XOR the column with the row) so that each bank gets one word per pass"
                .into(),
            fixed: None,
            fixed_config: None,
        }];
    };
    if let Some(f) = interleaved_reduction(facts, a, &lay, ideal) {
        return vec![f];
    }
    let banks = u64::from(arch.shared_banks);
    // Rows of consecutive words collide through the row pitch; a column walk through the
    // stride down the column: either way, the pitch is what padding changes.
    let rows_of_words = lay.rows > 1 && lay.inner == w as i64;
    let pitch = if rows_of_words { lay.outer } else { lay.inner };
    if pitch > 0 && pitch % 4 == 0 {
        let words = pitch as u64 / 4;
        let g = gcd(words, banks);
        if g > 1 {
            let pad = Padding {
                arch,
                config,
                a,
                lay: &lay,
                rows_of_words,
                pitch,
            };
            if let Some(f) = pad.finding(words, g, banks, before.wavefronts, least) {
                return vec![f];
            }
        }
    }
    let why = if lay.rows > 1 {
        format!(
            "each warp covers {} rows of {} threads ({} bytes apart in a row, rows {} bytes \
             apart), and several of their words fall in one bank",
            lay.rows, lay.row_lanes, lay.inner, lay.outer
        )
    } else {
        format!(
            "lanes {} bytes apart put several words in one bank",
            lay.inner
        )
    };
    vec![Finding {
        cause: Cause::BankConflicts,
        why,
        fix: "have consecutive lanes access consecutive 32-bit words".into(),
        fixed: Some(ideal),
        fixed_config: None,
    }]
}

/// The interleaved addressing of a tree reduction (`index = 2*s*tid`, Harris's reduction
/// 2): one row of lanes a power of two of at least two elements apart, at a site whose
/// warps showed two or more such strides (the stride doubles from pass to pass). Padding
/// cannot fix a stride that changes every pass; sequential addressing (Harris's reduction
/// 3) puts the active threads on consecutive elements at every pass. The figures after
/// the fix are this warp's active lanes on consecutive elements.
fn interleaved_reduction(
    facts: &SiteFacts,
    a: &WarpAccess,
    lay: &Layout,
    ideal: WarpAccess,
) -> Option<Finding> {
    let w = u64::from(a.width.max(1));
    let d = u64::try_from(lay.inner).ok()?;
    let strides = facts.strides.powers_at_least(2 * w);
    if lay.rows != 1 || !d.is_power_of_two() || d < 2 * w || strides.len() < 2 {
        return None;
    }
    let seen: Vec<String> = strides.iter().map(|s| (s / w).to_string()).collect();
    let seen = match seen.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => seen.join(""),
    };
    Some(Finding {
        cause: Cause::InterleavedReduction {
            elements: d / w,
            bytes: d,
        },
        why: format!(
            "consecutive lanes are {} apart here, and this site's stride doubles from pass \
             to pass (lanes {seen} elements apart): the interleaved addressing of a tree \
             reduction (index = 2*s*tid), in which lanes 2·s elements apart share banks at \
             every pass",
            plural(d / w, "element")
        ),
        fix: "use sequential addressing (Harris, \"Optimizing Parallel Reduction in CUDA\", \
              reduction 3): for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) { if (tid < s) \
              sdata[tid] += sdata[tid + s]; __syncthreads(); } — at every pass the active \
              threads access consecutive elements, conflict-free, and fill the fewest warps; \
              padding cannot fix a stride that changes every pass"
            .into(),
        fixed: Some(ideal),
        fixed_config: None,
    })
}

/// Padding each row of a shared array whose pitch (`pitch` bytes) puts lanes in the same
/// banks.
struct Padding<'a> {
    arch: &'a Arch,
    config: &'a Config,
    a: &'a WarpAccess,
    lay: &'a Layout,
    /// Each row's lanes read consecutive words (the rows collide), rather than walking down
    /// columns.
    rows_of_words: bool,
    pitch: i64,
}

impl Padding<'_> {
    /// The access with each row padded by `p` elements.
    fn padded(&self, p: u64) -> WarpAccess {
        let w = u64::from(self.a.width.max(1));
        let new_pitch = self.pitch + (p * w) as i64;
        let lay = self.lay;
        if self.rows_of_words {
            lay.relaid(self.a, lay.inner, new_pitch, self.a.width)
        } else {
            // Columns a whole number of rows apart move with the padding; neighbouring
            // columns stay one element apart.
            let outer = if lay.rows > 1 && lay.outer % self.pitch == 0 {
                lay.outer / self.pitch * new_pitch
            } else {
                lay.outer
            };
            lay.relaid(self.a, new_pitch, outer, self.a.width)
        }
    }

    fn wavefronts(&self, p: u64) -> u64 {
        cost(self.arch, self.config, &self.padded(p)).wavefronts
    }

    /// The finding for the least padding that reaches `least` wavefronts (else the one
    /// that comes closest), or `None` when no padding up to `banks` words helps.
    fn finding(&self, words: u64, g: u64, banks: u64, before: u64, least: u64) -> Option<Finding> {
        let w = u64::from(self.a.width.max(1));
        let mut best = (before, 0);
        // Banks repeat every `banks` words: more padding than that changes nothing new.
        for p in 1..=(banks * 4 / w).max(1) {
            let c = self.wavefronts(p);
            if c < best.0 {
                best = (c, p);
            }
            if c <= least {
                break;
            }
        }
        let (_, p) = best;
        if p == 0 {
            return None;
        }
        let lay = self.lay;
        let elements = (self.pitch as u64)
            .is_multiple_of(w)
            .then(|| self.pitch as u64 / w);
        let declare = |extra: u64| match elements {
            Some(m) => format!("declare [N][{}] instead of [N][{m}]", m + extra),
            None => format!("make the row pitch {} bytes", self.pitch as u64 + extra * w),
        };
        let one = self.wavefronts(1);
        let one_note = if p == 1 {
            String::new()
        } else if one < before {
            format!(
                " (one element{} leaves {one} wavefronts here{})",
                elements
                    .map(|m| format!(", [N][{}],", m + 1))
                    .unwrap_or_default(),
                if lay.rows > 1 && !self.rows_of_words {
                    format!(", because each warp reads {} columns", lay.rows)
                } else {
                    String::new()
                }
            )
        } else {
            " (one element does not help here)".to_string()
        };
        let banks_hit = if banks / g == 1 {
            "only one bank".to_string()
        } else {
            format!("only {} banks", banks / g)
        };
        let swizzle = "; or swizzle: XOR the column index with the row (t[r][c ^ r]) so that \
                       each bank gets one word per pass";
        let (why, fix) = if self.rows_of_words {
            (
                format!(
                    "each warp covers {} rows of {} threads, and the row pitch of {words} \
                     words shares the factor {g} with the {banks} banks, so the rows fall on \
                     the same banks",
                    lay.rows, lay.row_lanes
                ),
                format!(
                    "pad each row by {}: {}{one_note}; or make the block 32 threads wide so \
                     that each warp reads within one row",
                    elements_text(p),
                    declare(p)
                ),
            )
        } else if lay.rows > 1 {
            (
                format!(
                    "each warp covers {} columns of {} threads: consecutive threads are \
                     {words} words apart, down a column of a row-major shared array, and \
                     {words} shares the factor {g} with the {banks} banks, so a column's \
                     threads fall on {banks_hit}",
                    lay.rows, lay.row_lanes
                ),
                format!(
                    "pad each row by {}: {}{one_note}{swizzle}",
                    elements_text(p),
                    declare(p)
                ),
            )
        } else if words >= 16 {
            (
                format!(
                    "consecutive lanes are {words} words apart (a column of a row-major \
                     shared array); {words} and the {banks} banks share the factor {g}, so the \
                     lanes fall on {banks_hit}"
                ),
                format!(
                    "pad each row of the shared array by {} (row stride {} words instead of \
                     {words}), e.g. {}{one_note}{swizzle}",
                    elements_text(p),
                    (self.pitch as u64 + p * w) / 4,
                    declare(p)
                ),
            )
        } else {
            let new_words = (self.pitch as u64 + p * w) / 4;
            (
                format!(
                    "consecutive lanes are {words} words apart; {words} and the {banks} banks \
                     share the factor {g}, so the lanes fall on {banks_hit}"
                ),
                format!(
                    "make the stride {}{new_words} words instead of {words} (padding by {}){one_note} \
                     — or have consecutive lanes {} consecutive words",
                    if new_words % 2 == 1 { "odd in words — " } else { "" },
                    elements_text(p),
                    if self.a.op == Op::Load { "read" } else { "write" }
                ),
            )
        };
        Some(Finding {
            cause: Cause::BankStride {
                words,
                common_factor: g,
                banks,
            },
            why,
            fix,
            fixed: Some(self.padded(p)),
            fixed_config: None,
        })
    }
}

/// "one element", "2 elements".
fn elements_text(p: u64) -> String {
    if p == 1 {
        "one element".into()
    } else {
        plural(p, "element")
    }
}
