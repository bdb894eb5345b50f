//! Global and local memory: why a warp access moves more bytes than [`contiguous`] would,
//! read from the warp's [`Layout`].

use std::collections::BTreeSet;

use warpscope_model::arch::GlobalPath;

use crate::layout::Layout;
use crate::{
    contiguous, cost, plural, reads_field, two_dimensional, vector_names, verb, Arch, Cause,
    Config, Cost, Finding, LaneForm, Op, SiteFacts, Space, WarpAccess,
};

/// The findings of [`by_layout`], then, for a global load whose lanes walk a 2-D array (a
/// column walk, or several rows of a 2-D block), the texture path when the texture model
/// fetches the same footprint in fewer sectors ([`texture_path`]).
pub(crate) fn memory(
    facts: &SiteFacts,
    arch: &Arch,
    config: &Config,
    a: &WarpAccess,
) -> Vec<Finding> {
    let mut found = by_layout(facts, arch, config, a);
    let two_d = found.iter().any(|f| {
        matches!(
            f.cause,
            Cause::ColumnWalk { .. } | Cause::NarrowRows { .. } | Cause::RowPitch
        )
    });
    let rows = Layout::of(a).filter(|l| l.rows > 1);
    if a.op == Op::Load && a.space == Space::Global && (two_d || rows.is_some()) {
        let pitch = match (
            found.iter().find_map(|f| match f.cause {
                Cause::ColumnWalk { row_bytes } => Some(row_bytes),
                _ => None,
            }),
            rows,
        ) {
            (Some(p), _) => p,
            (None, Some(l)) => l.outer.unsigned_abs(),
            (None, None) => 0,
        };
        if let Some(f) = texture_path(arch, config, a, pitch) {
            found.push(f);
        }
    }
    found
}

/// The texture alternative of global load `a` over a row-major 2-D array of `pitch`-byte
/// rows: lane addresses become texels (`y = addr / pitch`, `x = (addr % pitch) / width`:
/// the array is assumed to start at a multiple of its pitch, which fixes where 2-row
/// sectors begin), fetched nearest-point from a CUDA array of that width
/// (`warpscope_model::texture::warp_requests` and `cost`: one request per quad, 16 B × 2-row
/// sectors; measured on H100, applied to every CC). `None` unless the texture fetches fewer
/// sectors than the global load (and so, at one sector or more a request, issues fewer
/// requests than the load fetches sectors): a texture hit saves bandwidth, not latency [PG],
/// and each request is a pass through the texture pipe — on H100 `conv_texture` (8
/// requests a warp, ~1.8 sectors each) was slower than `conv_global` (1 request, ~4.8
/// sectors), which this rule does not advise.
pub(crate) fn texture_path(
    arch: &Arch,
    config: &Config,
    a: &WarpAccess,
    pitch: u64,
) -> Option<Finding> {
    use warpscope_model::texture::{self, Footprint, TextureDesc};
    let w = u64::from(a.width);
    if !matches!(w, 1 | 2 | 4 | 8 | 16) || pitch < w || !pitch.is_multiple_of(w) {
        return None;
    }
    let global = cost(arch, config, a);
    let max_y = a.active().map(|(_, x)| x / pitch).max()?;
    let format = match w {
        1 => "uchar",
        2 => "ushort",
        4 => "float",
        8 => "float2",
        _ => "float4",
    };
    let spec = format!("g=array:{}x{}:{format}", pitch / w, max_y + 1);
    let t: TextureDesc = spec.parse().ok()?;
    let lanes: Vec<(usize, Footprint)> = a
        .active()
        .map(|(l, x)| {
            let mut f = Footprint::default();
            f.texels[0] = [(x % pitch) / w, x / pitch, 0];
            f.len = 1;
            (l, f)
        })
        .collect();
    let requests = texture::warp_requests(&t, 0, &lanes, 1, false, Op::Load);
    let texture_requests = requests.len() as u64;
    let texture_sectors: u64 = requests.iter().map(|r| texture::cost(r).sectors).sum();
    if texture_sectors >= global.sectors {
        return None;
    }
    let mut ro = *a;
    ro.read_only = true;
    let ldg = cost(arch, config, &ro);
    Some(Finding {
        cause: Cause::TexturePath {
            global_requests: global.requests,
            global_sectors: global.sectors,
            texture_requests,
            texture_sectors,
        },
        why: format!(
            "the warp reads a 2-D block of a row-major array ({pitch}-byte rows): as a global load that is {} of 32 bytes in {}; through a 2-D texture (a CUDA array, laid out in 16-byte × 2-row sectors) the same texels take {texture_sectors} sectors in {texture_requests} requests (one per 4 lanes){}",
            plural(global.sectors, "sector"),
            plural(global.requests, "request"),
            if ldg.sectors < global.sectors {
                format!("; through __ldg, {}", plural(ldg.sectors, "sector"))
            } else {
                format!(
                    "; __ldg does not help here ({} on the read-only path too)",
                    plural(ldg.sectors, "sector")
                )
            }
        ),
        fix: "if the array is only read, copy it into a CUDA array (cudaMallocArray, cudaMemcpy2DToArray) and read it with tex2D through a cudaTextureObject_t — fewer sectors, but more requests: worth it when bandwidth, not the texture pipe's request rate, bounds the kernel (the figures are the texture model's, no after-fix access is costed)"
            .into(),
        fixed: None,
        fixed_config: None,
    })
}

/// Why a global/local access moves more than [`contiguous`], from its [`Layout`].
fn by_layout(facts: &SiteFacts, arch: &Arch, config: &Config, a: &WarpAccess) -> Vec<Finding> {
    let w = u64::from(a.width.max(1));
    let before = cost(arch, config, a);
    let ideal = contiguous(a);
    let least = cost(arch, config, &ideal);
    // At the minimum for these lanes, or at 100 % efficiency: nothing to fix.
    if before.transaction_bytes <= least.transaction_bytes.max(before.bytes_requested) {
        return Vec::new();
    }
    let Some(lay) = Layout::of(a) else {
        return scattered(arch, config, a, &before);
    };
    let d = lay.inner;
    if d == w as i64 {
        return if lay.rows == 1 {
            one_row(facts, a, ideal)
        } else {
            rows(arch, config, a, &lay, &before, &least, ideal)
        };
    }
    if d > 0 && d % w as i64 == 0 {
        let found = strided(facts, a, &lay, ideal);
        return if lay.rows > 1 {
            with_narrow_rows(arch, config, a, &lay, &before, found)
        } else {
            found
        };
    }
    let (why, fix, fixed) = if d == 0 {
        (
            format!(
                "the active lanes of each row {} one and the same address",
                verb(a.op)
            ),
            if a.op == Op::Load {
                "read the value once per block (into shared memory) or keep it in constant \
                 memory, which broadcasts one address to the whole warp"
            } else {
                "let one thread of each row write the address (the others' values are lost \
                 anyway), or give each thread its own element"
            }
            .to_string(),
            None,
        )
    } else if d < 0 {
        (
            format!(
                "consecutive lanes {} descending addresses, {} bytes apart",
                verb(a.op),
                d.unsigned_abs()
            ),
            "reverse the index so that consecutive threads access ascending consecutive \
             elements"
                .to_string(),
            Some(ideal),
        )
    } else {
        (
            format!("lanes are {d} bytes apart, not a multiple of the {w}-byte width"),
            "have consecutive threads access consecutive elements".to_string(),
            Some(ideal),
        )
    };
    vec![Finding {
        cause: Cause::Scattered,
        why,
        fix,
        fixed,
        fixed_config: None,
    }]
}

/// No row pattern: the addresses of one warp follow no stride. Sorting is the fix (not
/// modelled); for a load that is not on the read-only path, the read-only data cache is
/// offered too when it costs less on this CC (32-byte lines on 3.5/3.7 where loads through
/// L1 fetch 128-byte lines) — never for a store or atomic.
fn scattered(arch: &Arch, config: &Config, a: &WarpAccess, before: &Cost) -> Vec<Finding> {
    let w = u64::from(a.width.max(1));
    let blocks: BTreeSet<u64> = a
        .active()
        .flat_map(|(_, x)| (x >> 5)..=(x.saturating_add(w - 1) >> 5))
        .collect();
    let bytes = u64::from(a.active_lanes()) * w;
    let why = format!(
        "the {} active lanes follow no stride, neither across the warp nor in rows: they \
         touch {} blocks of 32 bytes where {} would hold the {bytes} bytes {}",
        a.active_lanes(),
        blocks.len(),
        bytes.div_ceil(32),
        if a.op == Op::Load { "read" } else { "written" }
    );
    let mut out = vec![Finding {
        cause: Cause::Scattered,
        why: why.clone(),
        fix: format!(
            "reorder the data or the index so that neighbouring threads {} neighbouring \
             elements (sort or bin the indices, or stage the data through shared memory)",
            verb(a.op)
        ),
        fixed: None,
        fixed_config: None,
    }];
    if a.op == Op::Load && !a.read_only && a.space == Space::Global {
        let mut ro = *a;
        ro.read_only = true;
        if cost(arch, config, &ro).transaction_bytes < before.transaction_bytes {
            out.push(Finding {
                cause: Cause::Scattered,
                why,
                fix: "the data is only read: load it through the read-only data cache \
                      (__ldg, or a const __restrict__ pointer), which fetches 32-byte lines \
                      where loads through L1 fetch 128-byte ones"
                    .into(),
                fixed: Some(ro),
                fixed_config: None,
            });
        }
    }
    out
}

/// One row of consecutive elements: a misaligned start, or rows of varying alignment over
/// the site's warps (a pitch problem).
fn one_row(facts: &SiteFacts, a: &WarpAccess, ideal: WarpAccess) -> Vec<Finding> {
    let w = u64::from(a.width.max(1));
    let first = a.active().next().map(|(_, x)| x).unwrap_or(0);
    let offset = first % 128;
    let varying = facts.start_offsets.count_ones() > 1;
    if varying && two_dimensional(facts.text) {
        return vec![Finding {
            cause: Cause::RowPitch,
            why: format!(
                "consecutive lanes {} consecutive {w}-byte elements, but warps start at {} \
                 different offsets within a 128-byte line (this one {offset} bytes in): the \
                 rows of the 2-D array are not aligned, because its row width is not a \
                 multiple of 32 elements",
                verb(a.op),
                facts.start_offsets.count_ones()
            ),
            fix: "allocate the array with cudaMallocPitch (or pad each row to a multiple of \
                  32 elements) and index rows with the pitch"
                .into(),
            fixed: Some(ideal),
            fixed_config: None,
        }];
    }
    vec![Finding {
        cause: Cause::MisalignedStart {
            offset_bytes: offset,
        },
        why: format!(
            "consecutive lanes {} consecutive {w}-byte elements, but the warp's range starts \
             {offset} bytes ({}) into a 128-byte line, so it straddles one more segment than \
             it fills",
            verb(a.op),
            plural(offset / w, "element")
        ),
        fix: format!(
            "align the range: start each warp on a multiple of {} elements (shift the index \
             by {}, or pad the array's front)",
            128 / w,
            plural(offset / w, "element")
        ),
        fixed: Some(ideal),
        fixed_config: None,
    }]
}

/// Several rows of consecutive elements (a 2-D block narrower than a warp): at the minimum
/// when each row's piece is aligned and fills its transactions; otherwise the rows are
/// misaligned (all alike: a start offset; differently: the pitch), or narrower than the
/// transactions that fetch them.
fn rows(
    arch: &Arch,
    config: &Config,
    a: &WarpAccess,
    lay: &Layout,
    before: &Cost,
    least: &Cost,
    ideal: WarpAccess,
) -> Vec<Finding> {
    let w = u64::from(a.width.max(1));
    let n = lay.row_lanes;
    let row_bytes = lay.row_bytes(a.width);
    let shape = format!(
        "each warp covers {} rows of {n} threads ({row_bytes} bytes of each row; the rows are \
         {} bytes apart)",
        lay.rows, lay.outer
    );
    // Each row moved down to the boundary its piece would fill: its size rounded up to a
    // power of two, at most a 128-byte line.
    let grain = row_bytes.next_power_of_two().min(128);
    let offset_of = |j: u64| lay.row_start(j).rem_euclid(i128::from(grain)) as u64;
    let mut aligned = *a;
    aligned.lanes = LaneForm::Unknown;
    let mut offsets = BTreeSet::new();
    for (l, x) in a.active() {
        let off = offset_of(lay.coords(l).1);
        offsets.insert(off);
        aligned.addrs[l] = x.saturating_sub(off);
    }
    let mut out = Vec::new();
    let mut after = before.transaction_bytes;
    let aligned_bytes = cost(arch, config, &aligned).transaction_bytes;
    if aligned_bytes < before.transaction_bytes {
        after = aligned_bytes;
        if let [off] = offsets.iter().copied().collect::<Vec<_>>()[..] {
            out.push(Finding {
                cause: Cause::MisalignedStart { offset_bytes: off },
                why: format!(
                    "{shape}, and every row starts {off} bytes ({}) past a {grain}-byte \
                     boundary, so each row straddles more blocks than it fills",
                    plural(off / w, "element")
                ),
                fix: format!(
                    "start the rows on a multiple of {} elements: shift the index by {} (or \
                     pad the array's front)",
                    grain / w,
                    plural(off / w, "element")
                ),
                fixed: Some(aligned),
                fixed_config: None,
            });
        } else {
            let list: Vec<String> = offsets.iter().map(|o| o.to_string()).collect();
            out.push(Finding {
                cause: Cause::RowPitch,
                why: format!(
                    "{shape}, and the rows start at different offsets within a {grain}-byte \
                     block ({} bytes): the row pitch of {} bytes is not a multiple of {grain}",
                    list.join(", "),
                    lay.outer
                ),
                fix: "pad each row to a multiple of 32 elements (allocate the array with \
                      cudaMallocPitch) and index rows with the pitch"
                    .into(),
                fixed: Some(aligned),
                fixed_config: None,
            });
        }
    }
    if after > least.transaction_bytes {
        let l1_lines = a.space == Space::Global
            && a.op == Op::Load
            && arch.global_path(config, a.op, a.read_only, false) == GlobalPath::L1Lines;
        out.push(Finding {
            cause: Cause::NarrowRows {
                rows: lay.rows,
                row_lanes: n,
            },
            why: format!(
                "{shape}: each row's {row_bytes}-byte piece is fetched by transactions of its \
                 own, which it does not fill"
            ),
            fix: format!(
                "make the block 32 threads wide (blockDim.x a multiple of 32, and blockDim.y \
                 smaller for as many threads: 32×8 instead of 16×16) so that each warp {} 32 \
                 consecutive elements of one row{}",
                if a.op == Op::Load { "reads" } else { "writes" },
                if l1_lines {
                    "; or compile with -Xptxas -dlcm=cg so that global loads are cached in L2 \
                     only (32-byte segments instead of 128-byte lines)"
                } else {
                    ""
                }
            ),
            fixed: Some(ideal),
            fixed_config: None,
        });
    }
    out
}

/// Lanes (of one row, or of each row) a positive multiple of the width apart: an array of
/// structures, a column walk, or a plain stride.
///
/// A column walk is told from a 1-D strided read (`a[i * stride]`) by evidence that the
/// array is 2-D, never by the stride alone (the two give the same addresses in one warp):
/// a 2-D block whose warps cover neighbouring columns, two subscripts in the source
/// (`a[r][c]`), or — for lanes a row (128 bytes or more) apart — the site's warps starting
/// at several offsets within one stride ([`crate::LaneStrides::starts_vary`]): a loop
/// over the columns reads the elements between the lanes too, where a strided read only
/// ever touches every stride-th one.
fn strided(facts: &SiteFacts, a: &WarpAccess, lay: &Layout, ideal: WarpAccess) -> Vec<Finding> {
    let w = u64::from(a.width.max(1));
    let d = lay.inner as u64;
    let k = d / w;
    let field = reads_field(facts.text);
    // A stride of 3, 5, 6 or 7 elements is a structure's size (float3, RGB pixels), not a
    // step anyone chooses.
    let structure = field || (!d.is_power_of_two() && k <= 8);
    let in_rows = if lay.rows > 1 {
        format!(
            " (each warp covers {} rows of {} threads)",
            lay.rows, lay.row_lanes
        )
    } else {
        String::new()
    };
    // The row pitch after changing the element from `d` to `e` bytes, when it is a whole
    // number of elements.
    let outer_for = |e: u64| {
        if lay.rows > 1 && lay.outer % lay.inner == 0 {
            lay.outer / lay.inner * e as i64
        } else {
            lay.outer
        }
    };
    let mut out = Vec::new();
    if structure {
        out.push(Finding {
            cause: Cause::ArrayOfStructures { struct_bytes: d },
            why: format!(
                "each lane {}s one {w}-byte field of a {d}-byte structure{}{in_rows}: an \
                 array of structures, so the transactions also move the other fields, \
                 which no lane asked for",
                verb(a.op),
                element_name(w, d)
            ),
            fix: format!(
                "keep the field in its own array (structure of arrays) so consecutive \
                 threads {} consecutive elements",
                verb(a.op)
            ),
            fixed: Some(lay.relaid(a, w as i64, outer_for(w), a.width)),
            fixed_config: None,
        });
        let padded = d.next_power_of_two();
        if !d.is_power_of_two() && padded <= 16 {
            out.push(Finding {
                cause: Cause::PadStructure {
                    struct_bytes: d,
                    padded_bytes: padded,
                },
                why: format!(
                    "no single access moves {d} bytes, so a thread that uses its whole \
                     element {}s it in {} accesses of {w} bytes, each fetching the same \
                     blocks",
                    verb(a.op),
                    k
                ),
                fix: format!(
                    "pad the element to {padded} bytes ({}, or a struct declared \
                     __align__({padded}) with a spare field) and {} each element with one \
                     {padded}-byte access — the figures after the fix are for that one \
                     access, which replaces the {k} accesses of {w} bytes: compare them with \
                     {k} × the figures before (the padding is moved too)",
                    vector_names(w, padded),
                    if a.op == Op::Load { "load" } else { "store" }
                ),
                fixed: Some(lay.relaid(a, padded as i64, outer_for(padded), padded as u32)),
                fixed_config: None,
            });
        }
        if (d == 8 || d == 16) && field {
            out.push(Finding {
                cause: Cause::VectorWidth {
                    elements: k,
                    vector_bytes: d,
                },
                why: format!(
                    "the lane's whole {d}-byte structure could come in one access; it is \
                     {} {w} bytes at a time",
                    if a.op == Op::Load { "read" } else { "written" }
                ),
                fix: format!(
                    "when the thread uses every field, {} the structure with one {d}-byte \
                     access (a built-in vector type such as {}, or a struct declared \
                     __align__({d})) — the figures after the fix are for that one access, \
                     which replaces one access per field",
                    if a.op == Op::Load { "load" } else { "store" },
                    vector_names(w, d)
                ),
                fixed: Some(lay.relaid(a, d as i64, lay.outer, d as u32)),
                fixed_config: None,
            });
        }
        return out;
    }
    let adjacent_columns = lay.rows > 1 && lay.outer.unsigned_abs() == w;
    let other_columns_read = facts.strides.starts_vary(d) == Some(true);
    if adjacent_columns || (d >= 128 && (facts.text.contains("][") || other_columns_read)) {
        let (why, fixed) = if adjacent_columns {
            (
                format!(
                    "each warp covers {} neighbouring columns of {} threads: consecutive \
                     threads are {d} bytes ({k} elements) apart, walking down a column of a \
                     row-major 2-D array",
                    lay.rows, lay.row_lanes
                ),
                // Swapped indices: the threads of a column run along a row, and the
                // warp's columns become rows `d` bytes apart.
                lay.relaid(a, w as i64, d as i64, a.width),
            )
        } else {
            (
                format!(
                    "consecutive lanes are {d} bytes ({k} elements) apart{in_rows}: the warp \
                     walks down a column of a row-major 2-D array, one row per lane{}",
                    if other_columns_read {
                        " (the site's warps start at several offsets within a row: they \
                         read the other columns too)"
                    } else {
                        ""
                    }
                ),
                ideal,
            )
        };
        out.push(Finding {
            cause: Cause::ColumnWalk { row_bytes: d },
            why,
            fix: "swap the roles of the indices so that threadIdx.x runs along a row (the \
                  figures after the fix are for that), or stage the tile through shared \
                  memory (the coalesced transpose: whole rows in and out of global memory, \
                  transposed in a shared tile padded by one element, [N][N+1])"
                .into(),
            fixed: Some(fixed),
            fixed_config: None,
        });
        return out;
    }
    out.push(Finding {
        cause: Cause::Stride {
            elements: k,
            bytes: d,
        },
        why: format!(
            "consecutive lanes are {k} elements ({d} bytes) apart{in_rows}, so the \
             transactions also move the elements between them, which no lane asked for"
        ),
        fix: format!(
            "restructure so that consecutive threads {} consecutive elements (change the \
             index or the data layout), or stage the data through shared memory: move it \
             between global and shared memory with consecutive threads on consecutive \
             elements, and do the strided accesses in shared memory",
            verb(a.op)
        ),
        fixed: Some(if lay.rows > 1 {
            lay.relaid(a, w as i64, lay.outer, a.width)
        } else {
            ideal
        }),
        fixed_config: None,
    });
    out
}

/// Fixes of a strided access that keep a 2-D block's rows: where the rows alone still cost
/// more than one row of 32 would (1.x half-warps, 2.x lines), a fix that then does not help
/// at all is modelled together with a 32-wide block (and says so), and a fix that helps is
/// followed by [`Cause::NarrowRows`].
fn with_narrow_rows(
    arch: &Arch,
    config: &Config,
    a: &WarpAccess,
    lay: &Layout,
    before: &Cost,
    mut found: Vec<Finding>,
) -> Vec<Finding> {
    let bytes = |x: &WarpAccess| cost(arch, config, x).transaction_bytes;
    let mut narrow = false;
    for f in &mut found {
        let Some(fixed) = f.fixed else { continue };
        let wide = contiguous(&fixed);
        if bytes(&fixed) <= bytes(&wide) {
            continue;
        }
        let replaces = match f.cause {
            Cause::PadStructure { struct_bytes, .. } => struct_bytes / u64::from(a.width.max(1)),
            Cause::VectorWidth { elements, .. } => elements,
            _ => 1,
        };
        if bytes(&fixed) < replaces * before.transaction_bytes {
            narrow = true;
        } else {
            f.fixed = Some(wide);
            f.fix.push_str(&format!(
                "; on this CC only together with a block 32 threads wide, as rows of {} \
                 threads cost as much on their own (the figures after the fix are for both)",
                lay.row_lanes
            ));
        }
    }
    if narrow {
        let ideal = contiguous(a);
        found.push(Finding {
            cause: Cause::NarrowRows {
                rows: lay.rows,
                row_lanes: lay.row_lanes,
            },
            why: format!(
                "each warp covers {} rows of {} threads: even after the fix, each row's piece \
                 is fetched by transactions of its own, which it does not fill",
                lay.rows, lay.row_lanes
            ),
            fix: format!(
                "also make the block 32 threads wide (blockDim.x a multiple of 32) so that \
                 each warp {} 32 consecutive elements of one row",
                if a.op == Op::Load { "reads" } else { "writes" }
            ),
            fixed: Some(ideal),
            fixed_config: None,
        });
    }
    found
}

/// What a `d`-byte structure of `w`-byte fields usually is, when its size says so: ""
/// for sizes that are a power of two (any structure).
fn element_name(w: u64, d: u64) -> &'static str {
    match (w, d) {
        (4, 12) => " (a float3, or three 4-byte fields)",
        (8, 24) => " (a double3, or three 8-byte fields)",
        (2, 6) => " (a short3, or three 2-byte fields)",
        (1, 3) => " (a uchar3 such as an RGB pixel)",
        _ => "",
    }
}
