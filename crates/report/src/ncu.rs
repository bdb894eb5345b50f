//! Nsight Compute's names for warpscope's figures: which `ncu` metric each row's requests,
//! sectors, wavefronts and instruction count correspond to, by memory space and operation.
//! The one table both `--format csv` (column names) and `warpscope verify` (what it reads
//! from ncu and compares) use.
//!
//! Metric names are Nsight Compute's (2019.1 and later; the nvprof-to-ncu mapping of its
//! documentation: `gld_transactions` → `l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum`, …).
//! The global load/store requests and sectors and the shared load/store wavefronts were
//! checked equal to warpscope's on an H100 (`tests/data/h100/`). Nsight Compute profiles CC
//! 7.0 and later only ([`profiled`]).

use crate::Counters;
use warpscope_model::{ComputeCapability, Op, Space};

/// Which of a row's figures a metric equals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    /// Warp-level instructions executed ([`Counters::executions`]). Nsight Compute also
    /// counts executions with every lane predicated off, which warpscope does not.
    Instructions,
    /// [`Counters::requests`].
    Requests,
    /// [`Counters::sectors`] (32-byte sectors).
    Sectors,
    /// [`Counters::wavefronts`] (shared memory).
    Wavefronts,
}

/// Nsight Compute's operation of a memory instruction: `op_ld`, `op_st`, `op_atom` (an
/// atomic whose result is used, PTX `atom`) or `op_red` (a reduction, PTX `red`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NcuOp {
    Ld,
    St,
    Atom,
    Red,
    /// A TMA or bulk copy's global side (`cp.async.bulk[.tensor]`): ncu counts it in its own
    /// `…_op_tma_ld` / `…_op_tma_st` metrics, never in the LSU's (measured on H100,
    /// tests/data/h100/verify/modern.out).
    TmaLd,
    TmaSt,
    /// A bulk reduction's destination side (`cp.reduce.async.bulk`, the TMA unit's): ncu's
    /// `…_mem_global_op_tma_red` into global memory, `…_mem_dshared_op_tma_red` into
    /// another block's shared memory (measured on H100, tests/data/h100/bulk/).
    TmaRed,
    /// `st.async` (SASS STAS): its requests and sectors are in ncu's DSMEM store metrics
    /// (`…_mem_dshared_op_st`), its instructions in `…_op_dshared_stas`, not in
    /// `…_op_dshared_st` (measured on H100, tests/data/h100/bulk/).
    Stas,
    /// `red.async` (SASS REDAS): ncu's `…_mem_dshared_op_redas` and `…_op_dshared_redas`,
    /// in no DSMEM atomic metric (measured on H100, tests/data/h100/bulk/).
    Redas,
    /// A `wgmma`'s operand reads from shared memory: ncu's `…_mem_shared_op_gmma` (measured
    /// on H100: 32 wavefronts an m64n64k16 with A and B in shared memory, in every layout,
    /// tests/data/h100/wgmma/).
    Gmma,
}

/// One Nsight Compute metric and the warpscope figure it counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Metric {
    /// warpscope's short name for it (the columns of `tests/data/h100/examples.csv`).
    pub column: &'static str,
    /// The Nsight Compute metric, as `ncu --metrics` takes it.
    pub metric: &'static str,
    /// The memory space it counts.
    pub space: Space,
    /// The operation it counts.
    pub op: NcuOp,
    /// The figure of a row of that space and operation it equals.
    pub figure: Figure,
}

const fn m(
    column: &'static str,
    metric: &'static str,
    space: Space,
    op: NcuOp,
    figure: Figure,
) -> Metric {
    Metric {
        column,
        metric,
        space,
        op,
        figure,
    }
}

use Figure::*;
use NcuOp::*;
use Space::{DistributedShared, Global, Local, Shared, Surface, Texture};

/// Local-memory loads: requests (register spills included).
pub const LOCAL_LD_REQUESTS: Metric = m(
    "local_ld_requests",
    "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum",
    Local,
    Ld,
    Requests,
);
/// Local-memory loads: sectors (register spills included).
pub const LOCAL_LD_SECTORS: Metric = m(
    "local_ld_sectors",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
    Local,
    Ld,
    Sectors,
);
/// Local-memory stores: requests (register spills included).
pub const LOCAL_ST_REQUESTS: Metric = m(
    "local_st_requests",
    "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum",
    Local,
    St,
    Requests,
);
/// Local-memory stores: sectors (register spills included).
pub const LOCAL_ST_SECTORS: Metric = m(
    "local_st_sectors",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
    Local,
    St,
    Sectors,
);
/// Global-load requests.
pub const GLOBAL_LD_REQUESTS: Metric = m(
    "global_ld_requests",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    Global,
    Ld,
    Requests,
);
/// Global-load sectors.
pub const GLOBAL_LD_SECTORS: Metric = m(
    "global_ld_sectors",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    Global,
    Ld,
    Sectors,
);
/// Global-store requests.
pub const GLOBAL_ST_REQUESTS: Metric = m(
    "global_st_requests",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    Global,
    St,
    Requests,
);
/// Global-store sectors.
pub const GLOBAL_ST_SECTORS: Metric = m(
    "global_st_sectors",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    Global,
    St,
    Sectors,
);
/// Shared-load wavefronts.
pub const SHARED_LD_WAVEFRONTS: Metric = m(
    "shared_ld_wavefronts",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    Shared,
    Ld,
    Wavefronts,
);
/// Shared-store wavefronts.
pub const SHARED_ST_WAVEFRONTS: Metric = m(
    "shared_st_wavefronts",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    Shared,
    St,
    Wavefronts,
);
/// Texture-fetch requests (`tex`, `tld4`; one per quad of a fetch from a CUDA array or pitched
/// memory, per 8 lanes of a `tex1Dfetch`: measured on H100, `tests/data/h100/texture/`).
/// Texture metrics carry no operation: a texture is only read.
pub const TEXTURE_LD_REQUESTS: Metric = m(
    "texture_ld_requests",
    "l1tex__t_requests_pipe_tex_mem_texture.sum",
    Texture,
    Ld,
    Requests,
);
/// Texture-fetch sectors (32 bytes).
pub const TEXTURE_LD_SECTORS: Metric = m(
    "texture_ld_sectors",
    "l1tex__t_sectors_pipe_tex_mem_texture.sum",
    Texture,
    Ld,
    Sectors,
);
/// Surface-load requests (`suld`).
pub const SURFACE_LD_REQUESTS: Metric = m(
    "surface_ld_requests",
    "l1tex__t_requests_pipe_tex_mem_surface_op_ld.sum",
    Surface,
    Ld,
    Requests,
);
/// Surface-load sectors.
pub const SURFACE_LD_SECTORS: Metric = m(
    "surface_ld_sectors",
    "l1tex__t_sectors_pipe_tex_mem_surface_op_ld.sum",
    Surface,
    Ld,
    Sectors,
);
/// Surface-store requests (`sust`).
pub const SURFACE_ST_REQUESTS: Metric = m(
    "surface_st_requests",
    "l1tex__t_requests_pipe_tex_mem_surface_op_st.sum",
    Surface,
    St,
    Requests,
);
/// Surface-store sectors.
pub const SURFACE_ST_SECTORS: Metric = m(
    "surface_st_sectors",
    "l1tex__t_sectors_pipe_tex_mem_surface_op_st.sum",
    Surface,
    St,
    Sectors,
);
/// Shared-load instructions.
pub const SHARED_LD_INSTRUCTIONS: Metric = m(
    "shared_ld_instructions",
    "smsp__inst_executed_op_shared_ld.sum",
    Shared,
    Ld,
    Instructions,
);

/// Every metric warpscope predicts, grouped by space and operation.
/// Sectors a TMA or bulk copy reads from global memory (the crossbar's reads for the TMA
/// unit; the copy's bytes in 32-byte sectors; measured on H100).
pub const GLOBAL_TMA_LD_SECTORS: Metric = m(
    "global_tma_ld_sectors",
    "l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum",
    Global,
    TmaLd,
    Sectors,
);

/// Sectors a TMA or bulk copy writes to global memory.
pub const GLOBAL_TMA_ST_SECTORS: Metric = m(
    "global_tma_st_sectors",
    "l1tex__m_l1tex2xbar_write_sectors_mem_global_op_tma_st.sum",
    Global,
    TmaSt,
    Sectors,
);

/// Sectors a bulk copy from the own block's shared memory writes into another block's
/// (`cp.async.bulk.shared::cluster.shared::cta`; measured on H100: 128 for 4 copies of 1 KiB,
/// tests/data/h100/bulk/).
pub const DSMEM_TMA_ST_SECTORS: Metric = m(
    "dsmem_tma_st_sectors",
    "l1tex__m_l1tex2xbar_write_sectors_mem_dshared_op_tma_st.sum",
    DistributedShared,
    TmaSt,
    Sectors,
);

/// Sectors a bulk reduction writes into global memory (`cp.reduce.async.bulk.global`;
/// measured on H100: 128 for 4 reductions of 1 KiB, tests/data/h100/bulk/).
pub const GLOBAL_TMA_RED_SECTORS: Metric = m(
    "global_tma_red_sectors",
    "l1tex__m_l1tex2xbar_write_sectors_mem_global_op_tma_red.sum",
    Global,
    TmaRed,
    Sectors,
);

/// Sectors a bulk reduction into another block's shared memory delivers there
/// (`cp.reduce.async.bulk.shared::cluster`; measured on H100: 128 for 4 reductions of 1 KiB,
/// tests/data/h100/bulk/).
pub const DSMEM_TMA_RED_SECTORS: Metric = m(
    "dsmem_tma_red_sectors",
    "l1tex__m_xbar2l1tex_read_sectors_mem_dshared_op_tma_red.sum",
    DistributedShared,
    TmaRed,
    Sectors,
);

/// Shared-memory wavefronts of `wgmma` operand reads.
pub const SHARED_GMMA_WAVEFRONTS: Metric = m(
    "shared_gmma_wavefronts",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum",
    Shared,
    Gmma,
    Wavefronts,
);

/// Distributed-shared-memory metrics (CC 9.0, Nsight Compute's `mem_dshared` /
/// `op_dshared` names as an H100's `ncu --query-metrics` lists them): the L1TEX t-stage's
/// requests and 32-byte sectors of `ld`/`st` to another block's shared memory, and the SASS
/// instructions. The rows they count are [`Space::DistributedShared`]; the `ld` requests,
/// sectors and instructions equal an H100's (tests/data/h100/cluster/), and so do `st.async`'s
/// and `red.async`'s (tests/data/h100/bulk/: `st.async` in the `op_st` requests and sectors
/// with its own `op_dshared_stas` instructions, `red.async` in the `op_redas` ones). The
/// t-stage's output wavefronts of `ld`, `st` (with `st.async`) and `red.async` equal an
/// H100's for 34 patterns of 1- to 16-byte lanes (tests/data/h100/dsmem/). The `atom`
/// requests, sectors and wavefronts are left out: the model costs `atom.shared::cluster`
/// as a `red.async` (one sector a lane), the H100 merges its lanes (see `warpscope_model`'s
/// cost notes).
pub const DSMEM_METRICS: &[Metric] = &[
    m(
        "dsmem_ld_instructions",
        "smsp__sass_inst_executed_op_dshared_ld.sum",
        DistributedShared,
        Ld,
        Instructions,
    ),
    m(
        "dsmem_ld_requests",
        "l1tex__t_requests_pipe_lsu_mem_dshared_op_ld.sum",
        DistributedShared,
        Ld,
        Requests,
    ),
    m(
        "dsmem_ld_sectors",
        "l1tex__t_sectors_pipe_lsu_mem_dshared_op_ld.sum",
        DistributedShared,
        Ld,
        Sectors,
    ),
    m(
        "dsmem_st_instructions",
        "smsp__sass_inst_executed_op_dshared_st.sum",
        DistributedShared,
        St,
        Instructions,
    ),
    m(
        "dsmem_st_requests",
        "l1tex__t_requests_pipe_lsu_mem_dshared_op_st.sum",
        DistributedShared,
        St,
        Requests,
    ),
    m(
        "dsmem_st_sectors",
        "l1tex__t_sectors_pipe_lsu_mem_dshared_op_st.sum",
        DistributedShared,
        St,
        Sectors,
    ),
    m(
        "dsmem_atom_instructions",
        "smsp__sass_inst_executed_op_dshared_atom.sum",
        DistributedShared,
        Atom,
        Instructions,
    ),
    m(
        "dsmem_stas_instructions",
        "smsp__sass_inst_executed_op_dshared_stas.sum",
        DistributedShared,
        Stas,
        Instructions,
    ),
    m(
        "dsmem_redas_instructions",
        "smsp__sass_inst_executed_op_dshared_redas.sum",
        DistributedShared,
        Redas,
        Instructions,
    ),
    m(
        "dsmem_redas_requests",
        "l1tex__t_requests_pipe_lsu_mem_dshared_op_redas.sum",
        DistributedShared,
        Redas,
        Requests,
    ),
    m(
        "dsmem_redas_sectors",
        "l1tex__t_sectors_pipe_lsu_mem_dshared_op_redas.sum",
        DistributedShared,
        Redas,
        Sectors,
    ),
    m(
        "dsmem_ld_wavefronts",
        "l1tex__t_output_wavefronts_pipe_lsu_mem_dshared_op_ld.sum",
        DistributedShared,
        Ld,
        Wavefronts,
    ),
    m(
        "dsmem_st_wavefronts",
        "l1tex__t_output_wavefronts_pipe_lsu_mem_dshared_op_st.sum",
        DistributedShared,
        St,
        Wavefronts,
    ),
    m(
        "dsmem_redas_wavefronts",
        "l1tex__t_output_wavefronts_pipe_lsu_mem_dshared_op_redas.sum",
        DistributedShared,
        Redas,
        Wavefronts,
    ),
];

pub const METRICS: &[Metric] = &[
    m(
        "global_ld_instructions",
        "smsp__inst_executed_op_global_ld.sum",
        Global,
        Ld,
        Instructions,
    ),
    GLOBAL_LD_REQUESTS,
    GLOBAL_LD_SECTORS,
    m(
        "global_st_instructions",
        "smsp__inst_executed_op_global_st.sum",
        Global,
        St,
        Instructions,
    ),
    GLOBAL_ST_REQUESTS,
    GLOBAL_ST_SECTORS,
    m(
        "global_atom_instructions",
        "smsp__inst_executed_op_global_atom.sum",
        Global,
        Atom,
        Instructions,
    ),
    m(
        "global_atom_requests",
        "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
        Global,
        Atom,
        Requests,
    ),
    m(
        "global_atom_sectors",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum",
        Global,
        Atom,
        Sectors,
    ),
    m(
        "global_red_instructions",
        "smsp__inst_executed_op_global_red.sum",
        Global,
        Red,
        Instructions,
    ),
    m(
        "global_red_requests",
        "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
        Global,
        Red,
        Requests,
    ),
    m(
        "global_red_sectors",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum",
        Global,
        Red,
        Sectors,
    ),
    m(
        "local_ld_instructions",
        "smsp__inst_executed_op_local_ld.sum",
        Local,
        Ld,
        Instructions,
    ),
    LOCAL_LD_REQUESTS,
    LOCAL_LD_SECTORS,
    m(
        "local_st_instructions",
        "smsp__inst_executed_op_local_st.sum",
        Local,
        St,
        Instructions,
    ),
    LOCAL_ST_REQUESTS,
    LOCAL_ST_SECTORS,
    SHARED_LD_INSTRUCTIONS,
    SHARED_LD_WAVEFRONTS,
    m(
        "shared_st_instructions",
        "smsp__inst_executed_op_shared_st.sum",
        Shared,
        St,
        Instructions,
    ),
    SHARED_ST_WAVEFRONTS,
    m(
        "shared_atom_instructions",
        "smsp__inst_executed_op_shared_atom.sum",
        Shared,
        Atom,
        Instructions,
    ),
    m(
        "shared_atom_wavefronts",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum",
        Shared,
        Atom,
        Wavefronts,
    ),
    m(
        "texture_ld_instructions",
        "smsp__inst_executed_op_texture.sum",
        Texture,
        Ld,
        Instructions,
    ),
    TEXTURE_LD_REQUESTS,
    TEXTURE_LD_SECTORS,
    m(
        "surface_ld_instructions",
        "smsp__inst_executed_op_surface_ld.sum",
        Surface,
        Ld,
        Instructions,
    ),
    SURFACE_LD_REQUESTS,
    SURFACE_LD_SECTORS,
    m(
        "surface_st_instructions",
        "smsp__inst_executed_op_surface_st.sum",
        Surface,
        St,
        Instructions,
    ),
    SURFACE_ST_REQUESTS,
    SURFACE_ST_SECTORS,
    GLOBAL_TMA_LD_SECTORS,
    GLOBAL_TMA_ST_SECTORS,
    SHARED_GMMA_WAVEFRONTS,
    DSMEM_METRICS[0],
    DSMEM_METRICS[1],
    DSMEM_METRICS[2],
    DSMEM_METRICS[3],
    DSMEM_METRICS[4],
    DSMEM_METRICS[5],
    DSMEM_METRICS[6],
    DSMEM_METRICS[7],
    DSMEM_METRICS[8],
    DSMEM_METRICS[9],
    DSMEM_METRICS[10],
    DSMEM_METRICS[11],
    DSMEM_METRICS[12],
    DSMEM_METRICS[13],
    DSMEM_TMA_ST_SECTORS,
    GLOBAL_TMA_RED_SECTORS,
    DSMEM_TMA_RED_SECTORS,
];

/// Whether Nsight Compute profiles `cc` (7.0 and later), so that its metrics name a figure.
pub fn profiled(cc: ComputeCapability) -> bool {
    cc.at_least(7, 0)
}

/// Nsight Compute's operation for a row of `space` and `op`: loads `op_ld`, stores `op_st`;
/// shared-memory atomics `op_atom` (ATOMS; measured on H100, the histogram of
/// `tests/data/h100/compiled/`); a global atomic `op_red` when its PTX instruction is `red.…`,
/// else `None`: ptxas turns an `atom.global` whose result is unused into a reduction (RED,
/// ncu's `op_red`; measured on H100, the same histogram) and one whose result is used into
/// ATOM (`op_atom`), which the instruction's name does not tell, and the source interpreter's
/// sites have no instruction at all.
pub fn ncu_op(space: Space, op: Op, ptx: Option<&str>) -> Option<NcuOp> {
    // A bulk or tensor copy: its global side is the TMA unit's; ncu counts its own block's
    // shared side in no shared-memory metric (measured on H100: 0 shared-store wavefronts
    // for a cp.async.bulk of 16 MiB into shared memory), a multicast's delivery into every
    // destination block likewise (warpscope's shared rows; 0 in every dshared metric), and
    // a copy from the own block's shared memory into another's in `…_mem_dshared_op_tma_st`
    // (measured on H100, tests/data/h100/bulk/).
    // A bulk or tensor reduction (cp.reduce.async.bulk[.tensor]): its destination side in
    // `…_mem_global_op_tma_red` or `…_mem_dshared_op_tma_red`, its shared read nowhere
    // (measured on H100, tests/data/h100/bulk/).
    if ptx.is_some_and(|p| p.starts_with("cp.reduce.async.bulk")) {
        return match (space, op) {
            (Global | DistributedShared, Op::Atomic) => Some(TmaRed),
            _ => None,
        };
    }
    if ptx.is_some_and(|p| p.starts_with("cp.async.bulk")) {
        return match (space, op) {
            (Global, Op::Load) => Some(TmaLd),
            (Global | DistributedShared, Op::Store) => Some(TmaSt),
            _ => None,
        };
    }
    if space == DistributedShared && ptx.is_some_and(|p| p.starts_with("st.async")) {
        return Some(Stas);
    }
    if space == DistributedShared && ptx.is_some_and(|p| p.starts_with("red.async")) {
        return Some(Redas);
    }
    if space == Shared && ptx.is_some_and(|p| p.starts_with("wgmma")) {
        return Some(Gmma);
    }
    // cp.async's shared side (LDGSTS) is in no shared load/store metric; its global side is
    // a global load (measured on H100, tests/data/h100/compiled/).
    if space == Shared && ptx.is_some_and(|p| p.starts_with("cp.async")) {
        return None;
    }
    match (op, space) {
        (Op::Load, _) => Some(Ld),
        (Op::Store, _) => Some(St),
        (Op::Atomic, Shared | DistributedShared) => Some(Atom),
        (Op::Atomic, _) => ptx.filter(|p| p.starts_with("red.")).map(|_| Red),
        // An L2 prefetch: in L2's `lts__t_sectors_srcunit_tex` with every other access of
        // the SMs, in no metric of its own (gh100 has none whose name says prefetch;
        // tests/data/h100/prefetch/).
        (Op::Prefetch, _) => None,
    }
}

/// The value of `figure` in `c`.
pub fn figure(c: &Counters, figure: Figure) -> u64 {
    match figure {
        Instructions => c.executions,
        Requests => c.requests,
        Sectors => c.sectors,
        Wavefronts => c.wavefronts,
    }
}

/// The metrics a row (an access of `space` and `op`, PTX instruction `ptx` when compiled)
/// adds to, each with warpscope's value from `c`, in [`METRICS`] order. Empty for constant
/// memory and for a global atomic of unknown kind (see [`ncu_op`]).
pub fn row_metrics(
    space: Space,
    op: Op,
    ptx: Option<&str>,
    c: &Counters,
) -> Vec<(&'static Metric, u64)> {
    let Some(nop) = ncu_op(space, op, ptx) else {
        return Vec::new();
    };
    // ldmatrix/stmatrix (LDSM/STSM) are no shared load/store instructions to ncu, but their
    // wavefronts are in the shared wavefront counts (measured on H100: mma_sync.cu's 192
    // LDSM wavefronts, tests/data/h100/verify/modern.out).
    let matrix = ptx.is_some_and(|p| p.starts_with("ldmatrix") || p.starts_with("stmatrix"));
    METRICS
        .iter()
        .filter(|x| {
            x.space == space
                && (x.op == nop
                    // st.async's requests and sectors are the DSMEM store ones; its
                    // instructions its own (see [`NcuOp::Stas`]).
                    || (nop == Stas && x.op == St && x.figure != Instructions))
        })
        .filter(|x| !(matrix && x.figure == Instructions))
        .map(|x| (x, figure(c, x.figure)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_follow_ncu_conventions() {
        for (i, a) in METRICS.iter().enumerate() {
            for b in &METRICS[i + 1..] {
                assert_ne!(a.metric, b.metric);
                assert_ne!(a.column, b.column);
            }
            if matches!(a.op, TmaLd | TmaSt | TmaRed) {
                // The TMA unit's crossbar traffic: its own naming, by the memory it reaches.
                let op = match a.op {
                    TmaLd => "ld",
                    TmaSt => "st",
                    _ => "red",
                };
                let (mem, col) = match a.space {
                    Global => ("global", "global"),
                    DistributedShared => ("dshared", "dsmem"),
                    s => panic!("{s:?}"),
                };
                assert!(
                    a.metric.contains(&format!("_mem_{mem}_op_tma_{op}."))
                        && a.column == format!("{col}_tma_{op}_sectors")
                        && a.figure == Sectors,
                    "{}",
                    a.metric
                );
                continue;
            }
            if a.space == DistributedShared {
                // Hopper's own naming: `mem_dshared_op_ld`, `op_dshared_ld`.
                let op = format!("{:?}", a.op).to_lowercase();
                assert!(
                    a.metric.contains(&format!("mem_dshared_op_{op}."))
                        || a.metric == format!("smsp__sass_inst_executed_op_dshared_{op}.sum"),
                    "{}",
                    a.metric
                );
                assert!(a.column.starts_with(&format!("dsmem_{op}_")));
                continue;
            }
            if a.op == Gmma {
                assert!(
                    a.metric.contains("mem_shared_op_gmma") && a.column.starts_with("shared_gmma_")
                );
                continue;
            }
            assert!(a.metric.ends_with(".sum"), "{}", a.metric);
            let space = format!("{:?}", a.space).to_lowercase();
            let op = format!("{:?}", a.op).to_lowercase();
            // l1tex__…_mem_global_op_ld, smsp__inst_executed_op_global_ld; a texture is only
            // read, so its metrics name no operation (…_mem_texture, …_op_texture).
            let (unit, inst) = if a.space == Space::Texture {
                (
                    "mem_texture.".to_string(),
                    "smsp__inst_executed_op_texture.sum".to_string(),
                )
            } else {
                (
                    format!("mem_{space}_op_{op}."),
                    format!("smsp__inst_executed_op_{space}_{op}.sum"),
                )
            };
            let memory_unit = a.metric.contains(&unit);
            let instructions = a.metric == inst;
            assert!(memory_unit != instructions, "{}", a.metric);
            assert_eq!(
                instructions,
                a.figure == Figure::Instructions,
                "{}",
                a.metric
            );
            assert!(
                a.column.starts_with(&format!("{space}_{op}_")),
                "{}",
                a.column
            );
        }
    }

    #[test]
    fn a_global_load_row_maps_to_its_instructions_requests_and_sectors() {
        let c = Counters {
            executions: 8,
            requests: 8,
            sectors: 40,
            transactions: 40,
            ..Counters::default()
        };
        let got: Vec<(&str, u64)> = row_metrics(Space::Global, Op::Load, None, &c)
            .into_iter()
            .map(|(m, v)| (m.metric, v))
            .collect();
        assert_eq!(
            got,
            [
                ("smsp__inst_executed_op_global_ld.sum", 8),
                ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 8),
                ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 40)
            ]
        );
        let shared = row_metrics(Space::Shared, Op::Store, None, &c);
        assert_eq!(shared.len(), 2);
        assert_eq!(shared[1].0, &SHARED_ST_WAVEFRONTS);
        assert!(row_metrics(Space::Constant, Op::Load, None, &c).is_empty());
        // Atomics: by the PTX instruction, unknown without it.
        assert!(row_metrics(Space::Global, Op::Atomic, None, &c).is_empty());
        let red = row_metrics(Space::Global, Op::Atomic, Some("red.global.add.u32"), &c);
        assert_eq!(
            red[2].0.metric,
            "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum"
        );
        let atom = row_metrics(Space::Shared, Op::Atomic, Some("atom.shared.add.u32"), &c);
        assert_eq!(
            atom[1].0.metric,
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum"
        );
        // A texture fetch and a surface store by their own pipe's metrics.
        let tex = row_metrics(Space::Texture, Op::Load, Some("tex.2d.v4.f32.f32"), &c);
        assert_eq!(
            tex.iter().map(|(m, v)| (m.metric, *v)).collect::<Vec<_>>(),
            [
                ("smsp__inst_executed_op_texture.sum", 8),
                ("l1tex__t_requests_pipe_tex_mem_texture.sum", 8),
                ("l1tex__t_sectors_pipe_tex_mem_texture.sum", 40)
            ]
        );
        let sust = row_metrics(Space::Surface, Op::Store, Some("sust.b.2d.b32.trap"), &c);
        assert_eq!(sust[2].0, &SURFACE_ST_SECTORS);
        assert!(profiled(ComputeCapability::new(7, 0)));
        assert!(!profiled(ComputeCapability::new(6, 2)));
    }

    #[test]
    fn bulk_and_async_rows_map_to_the_measured_tma_and_dshared_metrics() {
        let c = Counters {
            executions: 8,
            requests: 8,
            sectors: 128,
            wavefronts: 32,
            ..Counters::default()
        };
        let names = |space, op, ptx: &str| -> Vec<&str> {
            row_metrics(space, op, Some(ptx), &c)
                .into_iter()
                .map(|(m, _)| m.metric)
                .collect()
        };
        let copy = "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes";
        assert_eq!(
            names(DistributedShared, Op::Store, copy),
            ["l1tex__m_l1tex2xbar_write_sectors_mem_dshared_op_tma_st.sum"]
        );
        // The multicast's shared rows and a copy's own-block side: no metric.
        assert!(names(Shared, Op::Store, copy).is_empty());
        let red = "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32";
        assert_eq!(
            names(Global, Op::Atomic, red),
            ["l1tex__m_l1tex2xbar_write_sectors_mem_global_op_tma_red.sum"]
        );
        assert!(names(Shared, Op::Load, red).is_empty());
        assert_eq!(
            names(DistributedShared, Op::Atomic, "cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.add.u32"),
            ["l1tex__m_xbar2l1tex_read_sectors_mem_dshared_op_tma_red.sum"]
        );
        assert_eq!(
            names(
                DistributedShared,
                Op::Store,
                "st.async.weak.shared::cluster.mbarrier::complete_tx::bytes.b32"
            ),
            [
                "l1tex__t_requests_pipe_lsu_mem_dshared_op_st.sum",
                "l1tex__t_sectors_pipe_lsu_mem_dshared_op_st.sum",
                "smsp__sass_inst_executed_op_dshared_stas.sum",
                "l1tex__t_output_wavefronts_pipe_lsu_mem_dshared_op_st.sum"
            ]
        );
        assert_eq!(
            names(
                DistributedShared,
                Op::Atomic,
                "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32"
            ),
            [
                "smsp__sass_inst_executed_op_dshared_redas.sum",
                "l1tex__t_requests_pipe_lsu_mem_dshared_op_redas.sum",
                "l1tex__t_sectors_pipe_lsu_mem_dshared_op_redas.sum",
                "l1tex__t_output_wavefronts_pipe_lsu_mem_dshared_op_redas.sum"
            ]
        );
        // A plain DSMEM store keeps its own instructions.
        assert_eq!(
            names(DistributedShared, Op::Store, "st.shared::cluster.u32").len(),
            4
        );
    }
}
