//! Computed advice: why a warp access costs more than it must, named in the seeds' terms,
//! and the fix they teach, re-modelled per compute capability where the fix is a layout
//! change warpscope can model (padding, pitch, structure of arrays, vector width).
//!
//! [`diagnose`] looks at one representative warp access of a site (the costliest one the
//! launch produced on that compute capability) and at what the front end knows about the
//! site ([`SiteFacts`]). It returns [`Finding`]s; each carries the access as it would be
//! after the fix, so callers can cost it with [`warpscope_model::cost`] on every compute
//! capability. Pure: no I/O.
//!
//! Sources of the causes and fixes: Best Practices Guide, "Coalesced Access to Global
//! Memory" (misaligned and strided access, the coalesced transpose); Programming Guide,
//! "Device Memory Accesses" (size and alignment, built-in vector types, 2-D arrays and
//! `cudaMallocPitch`, shared-memory banks, constant memory); Harris, "How to Access Global
//! Memory Efficiently" (offset and stride).

use schemars::JsonSchema;
use serde::Serialize;
use warpscope_model::arch::Family;
use warpscope_model::{cost, Arch, Config, Cost, Op, Space, WarpAccess};

/// What the front end knows about a site besides its addresses.
#[derive(Clone, Debug, Default)]
pub struct SiteFacts<'a> {
    /// The access's source text, e.g. `p[i].x` or `t[threadIdx.x][threadIdx.y]`.
    pub text: &'a str,
    /// Distinct values of (first active lane's address mod 128) over the site's warps, as a
    /// bit set (bit *k* = some warp started *k* bytes into a 128-byte line). Tells a constant
    /// misalignment (one bit) from rows of varying alignment (several bits: a pitch problem).
    pub start_offsets: u128,
}

/// The cause of a cost above the ideal, in the guides' terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Cause {
    /// Consecutive lanes read consecutive elements, but the warp's range starts
    /// `offset_bytes` into a 128-byte line [BPG "A Sequential but Misaligned Access
    /// Pattern"; Harris, offset].
    MisalignedStart { offset_bytes: u64 },
    /// Rows of a 2-D array start at different alignments because the row width is not a
    /// multiple of 32 elements [PG "Two-Dimensional Arrays", `cudaMallocPitch`].
    RowPitch,
    /// `elements` elements (`bytes` bytes) between consecutive lanes [BPG "Strided
    /// Accesses"; Harris, stride].
    Stride { elements: u64, bytes: u64 },
    /// Each lane reads one field of a `struct_bytes`-byte structure: an array of structures.
    ArrayOfStructures { struct_bytes: u64 },
    /// Consecutive lanes walk down a column of a row-major 2-D array (`row_bytes` apart)
    /// [BPG "Shared Memory in Matrix Multiplication", the transpose].
    ColumnWalk { row_bytes: u64 },
    /// Each lane reads its own `elements` neighbouring elements one at a time where one
    /// `vector_bytes`-byte vector load would do [PG "Size and Alignment Requirement",
    /// built-in vector types].
    VectorWidth { elements: u64, vector_bytes: u64 },
    /// Lanes scattered over memory with no constant stride.
    Scattered,
    /// Shared memory: a stride of `words` 4-byte words between lanes shares the factor
    /// `common_factor` with the bank count, so lanes pile onto `banks / common_factor`
    /// banks [PG "Shared Memory", strided access].
    BankStride {
        words: u64,
        common_factor: u64,
        banks: u64,
    },
    /// 1.x: 8- or 16-bit shared-memory accesses; lanes on different bytes of one 32-bit
    /// word are in the same bank [PG5 F.3.3 "8-Bit and 16-Bit Access"].
    NarrowSharedOn1x { width: u32 },
    /// Shared memory: conflicts with no constant stride.
    BankConflicts,
    /// Constant memory: the warp's lanes read `addresses` distinct addresses, served one
    /// after the other [PG "Constant Memory"].
    DivergentConstant { addresses: u64 },
}

/// One diagnosis for one compute capability.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    pub cause: Cause,
    /// Why, in words, from what the model saw.
    pub why: String,
    /// The fix the seeds teach.
    pub fix: String,
    /// The access after the fix, when the fix is a layout change warpscope can model.
    #[serde(skip)]
    pub fixed: Option<WarpAccess>,
}

/// The active lanes' addresses as (first lane, first address, stride in bytes) when they are
/// affine in the lane index (`addr = first + (lane − lane0)·stride`), else `None`. A warp
/// with one active lane has stride 0.
pub fn affine(a: &WarpAccess) -> Option<(usize, u64, i64)> {
    let mut it = a.active();
    let (l0, a0) = it.next()?;
    let Some((l1, a1)) = it.next() else {
        return Some((l0, a0, 0));
    };
    let dl = (l1 - l0) as i64;
    let da = a1 as i64 - a0 as i64;
    if da % dl != 0 {
        return None;
    }
    let d = da / dl;
    a.active()
        .all(|(l, x)| x as i64 == a0 as i64 + (l as i64 - l0 as i64) * d)
        .then_some((l0, a0, d))
}

/// `a` with each active lane *l* moved to `base + (l − l0)·stride`, width `width`.
fn relaid(a: &WarpAccess, l0: usize, base: u64, stride: u64, width: u32) -> WarpAccess {
    let mut b = *a;
    b.width = width;
    for (l, x) in b.addrs.iter_mut().enumerate() {
        *x = base + (l as u64).wrapping_sub(l0 as u64).wrapping_mul(stride);
    }
    b
}

/// "1 element", "3 elements".
fn plural(n: u64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Whether the text reads a field of a structure element (`p[i].x`, `p[i]->x`).
fn reads_field(text: &str) -> bool {
    text.rfind(']')
        .map(|i| {
            let rest = &text[i + 1..];
            rest.starts_with('.') || rest.starts_with("->")
        })
        .unwrap_or(false)
}

/// Whether the text indexes in two dimensions (`a[y][x]`) or multiplies in its index
/// (`a[y * width + x]`).
fn two_dimensional(text: &str) -> bool {
    text.contains("][") || text.contains('*')
}

/// What the access costs in the units that matter for its space: transaction bytes (global,
/// local), wavefronts (shared), requests (constant).
pub fn weight(c: &Cost, space: Space) -> u64 {
    match space {
        Space::Global | Space::Local => c.transaction_bytes,
        Space::Shared => c.wavefronts,
        Space::Constant => c.requests,
    }
}

/// Diagnoses `a` (one warp access of the site described by `facts`) on `arch` under
/// `config`. Returns nothing when the access already costs what an ideal access of the same
/// lanes and width costs (contiguous, aligned; conflict-free; one address). The findings
/// name the cause; [`Finding::fixed`] is the access after the fix when it can be modelled.
pub fn diagnose(facts: &SiteFacts, arch: &Arch, config: &Config, a: &WarpAccess) -> Vec<Finding> {
    if a.mask == 0 {
        return Vec::new();
    }
    match a.space {
        Space::Global | Space::Local => memory(facts, arch, config, a),
        Space::Shared => shared(arch, config, a),
        Space::Constant => constant(arch, a),
    }
}

fn memory(facts: &SiteFacts, arch: &Arch, config: &Config, a: &WarpAccess) -> Vec<Finding> {
    let w = u64::from(a.width.max(1));
    let before = cost(arch, config, a);
    let Some((l0, first, d)) = affine(a) else {
        let lines: std::collections::BTreeSet<u64> = a.active().map(|(_, x)| x >> 7).collect();
        return vec![Finding {
            cause: Cause::Scattered,
            why: format!(
                "the {} active lanes read addresses with no common stride, spread over {} \
                 128-byte lines",
                a.active_lanes(),
                lines.len()
            ),
            fix: "reorder the data or the index so that consecutive threads read consecutive \
                  elements (sort or bin the indices); for read-only data on 3.5+, load it \
                  with __ldg to use the 32-byte read-only cache"
                .into(),
            fixed: None,
        }];
    };
    let ideal = relaid(a, l0, first - first % 128, w, a.width);
    if before.transaction_bytes <= cost(arch, config, &ideal).transaction_bytes {
        return Vec::new();
    }
    let elem = |bytes: u64| bytes / w;
    if d == w as i64 {
        let offset = first % 128;
        let varying = facts.start_offsets.count_ones() > 1;
        if varying && two_dimensional(facts.text) {
            return vec![Finding {
                cause: Cause::RowPitch,
                why: format!(
                    "consecutive lanes read consecutive {w}-byte elements, but warps start at \
                     {} different offsets within a 128-byte line (this one {offset} bytes in): \
                     the rows of the 2-D array are not aligned, because its row width is not a \
                     multiple of 32 elements",
                    facts.start_offsets.count_ones()
                ),
                fix: "allocate the array with cudaMallocPitch (or pad each row to a multiple \
                      of 32 elements) and index rows with the pitch"
                    .into(),
                fixed: Some(ideal),
            }];
        }
        return vec![Finding {
            cause: Cause::MisalignedStart {
                offset_bytes: offset,
            },
            why: format!(
                "consecutive lanes read consecutive {w}-byte elements, but the warp's range \
                 starts {offset} bytes ({}) into a 128-byte line, so it straddles one more \
                 segment than it fills",
                plural(elem(offset), "element")
            ),
            fix: format!(
                "align the range: start each warp on a multiple of {} elements (shift the \
                 index by {}, or pad the array's front)",
                128 / w,
                plural(elem(offset), "element")
            ),
            fixed: Some(ideal),
        }];
    }
    if d <= 0 || d % w as i64 != 0 {
        let why = if d == 0 {
            "every active lane reads the same address".to_string()
        } else {
            format!("lanes are {d} bytes apart, not a multiple of the {w}-byte width")
        };
        return vec![Finding {
            cause: Cause::Scattered,
            why,
            fix: "have consecutive threads read consecutive elements".into(),
            fixed: Some(ideal),
        }];
    }
    let d = d as u64;
    let useful = 100 * w / d.min(32).max(w);
    let k = d / w;
    // Lanes whose own neighbouring elements fill a 8- or 16-byte vector: one vector load can
    // replace this access and its siblings.
    let vector = ((d == 8 || d == 16) && reads_field(facts.text)).then(|| Finding {
        cause: Cause::VectorWidth {
            elements: k,
            vector_bytes: d,
        },
        why: format!(
            "the lane's whole {d}-byte structure could come in one access; it is read {w} \
             bytes at a time"
        ),
        fix: format!(
            "when the thread uses every field, load the structure with one {d}-byte access \
             (a built-in vector type such as {}, or a struct declared __align__({d})) — the \
             figures after the fix are for that one access, which replaces one access per \
             field",
            vector_names(w, d)
        ),
        fixed: Some(relaid(a, l0, first - first % 128, d, d as u32)),
    });
    let mut out = Vec::new();
    if reads_field(facts.text) {
        out.push(Finding {
            cause: Cause::ArrayOfStructures { struct_bytes: d },
            why: format!(
                "each lane reads one {w}-byte field of a {d}-byte structure: an array of \
                 structures, so only {useful}% of the bytes fetched belong to this field"
            ),
            fix: "store the field in its own array (structure of arrays) so consecutive \
                  threads read consecutive elements"
                .into(),
            fixed: Some(ideal),
        });
    } else if d >= 128 && two_dimensional(facts.text) {
        out.push(Finding {
            cause: Cause::ColumnWalk { row_bytes: d },
            why: format!(
                "consecutive lanes are {d} bytes ({k} elements) apart: the warp walks down a \
                 column of a row-major 2-D array, one 128-byte line per lane"
            ),
            fix: "swap the roles of the indices so threadIdx.x runs along a row, or stage \
                  the tile through shared memory (the coalesced transpose: read rows, write \
                  rows, transpose in shared memory padded by one word)"
                .into(),
            fixed: Some(ideal),
        });
    } else {
        out.push(Finding {
            cause: Cause::Stride {
                elements: k,
                bytes: d,
            },
            why: format!(
                "consecutive lanes are {k} elements ({d} bytes) apart, so only {useful}% of \
                 the bytes fetched are used"
            ),
            fix: "have consecutive threads read consecutive elements (change the index or \
                  the layout); if the stride comes from a loop over a tile, stage it through \
                  shared memory"
                .into(),
            fixed: Some(ideal),
        });
    }
    out.extend(vector);
    out
}

/// Built-in vector types of `d` bytes with `w`-byte components [PG "Built-in Vector Types"].
fn vector_names(w: u64, d: u64) -> &'static str {
    match (w, d) {
        (4, 8) => "float2/int2",
        (4, 16) => "float4/int4",
        (8, 16) => "double2/longlong2",
        (2, 8) => "short4",
        (1, 8) => "char8 is not built in: use int2",
        (2, 16) => "short8 is not built in: use int4",
        _ => "int2/int4",
    }
}

fn shared(arch: &Arch, config: &Config, a: &WarpAccess) -> Vec<Finding> {
    let before = cost(arch, config, a);
    let Some((l0, first, d)) = affine(a) else {
        let ideal = relaid(a, 0, 0, u64::from(a.width), a.width);
        if before.wavefronts <= cost(arch, config, &ideal).wavefronts {
            return Vec::new();
        }
        return vec![Finding {
            cause: Cause::BankConflicts,
            why: format!(
                "lanes hit their banks at no common stride; the busiest bank needs {} passes",
                before.wavefronts
            ),
            fix: "make consecutive lanes read consecutive words, or permute the index (e.g. XOR \
                  the column with the row) so each bank gets one word per pass"
                .into(),
            fixed: None,
        }];
    };
    let base = first - first % 128;
    let w = u64::from(a.width.max(1));
    let tesla = matches!(arch.family, Family::Cc1Strict | Family::Cc1Segment);
    if tesla && w < 4 {
        let widened = relaid(a, l0, base, 4, 4);
        if before.wavefronts > cost(arch, config, &widened).wavefronts {
            return vec![Finding {
                cause: Cause::NarrowSharedOn1x { width: a.width },
                why: format!(
                    "{w}-byte elements: on 1.x neighbouring lanes {} different bytes of one \
                     32-bit word, which is one bank, and only one word per pass is broadcast",
                    if a.op == Op::Load { "read" } else { "write" }
                ),
                fix: "use 32-bit elements in shared memory (e.g. widen chars to ints, or have \
                      each thread handle 4 consecutive chars as one word)"
                    .into(),
                fixed: Some(widened),
            }];
        }
    }
    let ideal = relaid(a, l0, base, w, a.width);
    if before.wavefronts <= cost(arch, config, &ideal).wavefronts {
        return Vec::new();
    }
    let banks = u64::from(arch.shared_banks);
    let dd = d.unsigned_abs();
    if d > 0 && dd % 4 == 0 {
        let words = dd / 4;
        let g = gcd(words, banks);
        if g > 1 {
            let padded = dd + w;
            return vec![Finding {
                cause: Cause::BankStride {
                    words,
                    common_factor: g,
                    banks,
                },
                why: format!(
                    "consecutive lanes are {words} words apart; {words} and the {banks} banks \
                     share the factor {g}, so the lanes fall on only {}: {} wavefronts where a \
                     conflict-free access takes {}",
                    if banks / g == 1 {
                        "one bank".to_string()
                    } else {
                        format!("{} banks", banks / g)
                    },
                    before.wavefronts,
                    cost(arch, config, &ideal).wavefronts
                ),
                fix: if words >= 16 {
                    format!(
                        "pad each row of the shared array by one element (row stride {} words \
                         instead of {words}), e.g. declare [N][{}] instead of [N][{}]",
                        padded / 4,
                        padded / w,
                        dd / w
                    )
                } else {
                    format!(
                        "make the stride odd in words — {} words instead of {words} (padding by \
                         one element) — or have consecutive lanes read consecutive words",
                        padded / 4
                    )
                },
                fixed: Some(relaid(a, l0, base, padded, a.width)),
            }];
        }
    }
    vec![Finding {
        cause: Cause::BankConflicts,
        why: format!(
            "lanes {d} bytes apart put several words in one bank; the busiest bank needs {} \
             passes",
            before.wavefronts
        ),
        fix: "have consecutive lanes read consecutive 32-bit words".into(),
        fixed: Some(ideal),
    }]
}

fn constant(arch: &Arch, a: &WarpAccess) -> Vec<Finding> {
    let mut addrs: Vec<u64> = a.active().map(|(_, x)| x).collect();
    addrs.sort_unstable();
    addrs.dedup();
    let per_group = cost(arch, &Config::default(), a).requests;
    let groups = if matches!(arch.family, Family::Cc1Strict | Family::Cc1Segment) {
        u64::from(a.mask & 0xFFFF != 0) + u64::from(a.mask >> 16 != 0)
    } else {
        1
    };
    if per_group <= groups {
        return Vec::new();
    }
    let mut fixed = *a;
    fixed.space = Space::Global;
    fixed.read_only = true;
    fixed.op = Op::Load;
    vec![Finding {
        cause: Cause::DivergentConstant {
            addresses: addrs.len() as u64,
        },
        why: format!(
            "the lanes read {} different constant addresses; constant memory serves one \
             address at a time, so the request splits into {per_group}",
            addrs.len()
        ),
        fix: "keep constant memory for values every lane of a warp reads at once; for data \
              indexed per thread use a global array read with __ldg (read-only cache) or \
              staged in shared memory — the figures after the fix are for that global load"
            .into(),
        fixed: Some(fixed),
    }]
}

#[cfg(test)]
mod tests;
