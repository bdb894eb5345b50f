//! Special registers [PTX ISA §10]: the first registers of every warp's file, filled when a
//! warp starts.

use crate::instr::Reg;

/// The special registers warpscope gives values to, in register order.
pub const SPECIALS: &[&str] = &[
    "%tid.x",
    "%tid.y",
    "%tid.z",
    "%ntid.x",
    "%ntid.y",
    "%ntid.z",
    "%ctaid.x",
    "%ctaid.y",
    "%ctaid.z",
    "%nctaid.x",
    "%nctaid.y",
    "%nctaid.z",
    "%laneid",
    "%warpid",
    "%nwarpid",
    "%lanemask_eq",
    "%lanemask_le",
    "%lanemask_lt",
    "%lanemask_ge",
    "%lanemask_gt",
    "%smid",
    "%nsmid",
    "%gridid",
    "%clock",
    "%clock64",
    "%globaltimer",
    "%dynamic_smem_size",
    "%total_smem_size",
    "%clusterid.x",
    "%clusterid.y",
    "%clusterid.z",
    "%nclusterid.x",
    "%cluster_ctarank",
    "%cluster_nctarank",
    "%is_explicit_cluster",
    "%envreg0",
    "%nclusterid.y",
    "%nclusterid.z",
    "%cluster_ctaid.x",
    "%cluster_ctaid.y",
    "%cluster_ctaid.z",
    "%cluster_nctaid.x",
    "%cluster_nctaid.y",
    "%cluster_nctaid.z",
];

/// Register index of a special register, if `name` is one. `%tid` without a component is
/// `%tid.x`, as in `mov.u32 %r, %tid.x`.
pub fn special_index(name: &str) -> Option<Reg> {
    if !name.starts_with('%') {
        return None;
    }
    SPECIALS.iter().position(|s| *s == name).map(|i| i as Reg)
}

/// Index constants for the executor.
pub mod idx {
    use crate::instr::Reg;
    pub const TID: Reg = 0;
    pub const NTID: Reg = 3;
    pub const CTAID: Reg = 6;
    pub const NCTAID: Reg = 9;
    pub const LANEID: Reg = 12;
    pub const WARPID: Reg = 13;
    pub const NWARPID: Reg = 14;
    pub const LANEMASK_EQ: Reg = 15;
    pub const SMID: Reg = 20;
    pub const NSMID: Reg = 21;
    pub const DYN_SMEM: Reg = 26;
    pub const TOTAL_SMEM: Reg = 27;
    /// `%clusterid.x` (y, z follow).
    pub const CLUSTERID: Reg = 28;
    pub const NCLUSTERID_X: Reg = 31;
    pub const CLUSTER_CTARANK: Reg = 32;
    pub const CLUSTER_NCTARANK: Reg = 33;
    pub const IS_EXPLICIT_CLUSTER: Reg = 34;
    /// `%nclusterid.y` (z follows).
    pub const NCLUSTERID_Y: Reg = 36;
    /// `%cluster_ctaid.x` (y, z follow).
    pub const CLUSTER_CTAID: Reg = 38;
    /// `%cluster_nctaid.x` (y, z follow).
    pub const CLUSTER_NCTAID: Reg = 41;
}
