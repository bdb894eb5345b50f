//! `warpscope explain`: one warp-level execution of one access, for each compute capability,
//! as a picture (terminal text, SVG, HTML) and a paragraph generated from what the model
//! did, with computed advice.
//!
//! [`Explanation`] is built by the pipeline (the `warpscope` crate's `explain`) from the
//! front end's access and the model's [`Breakdown`]; this module only renders it.

use serde::Serialize;
use warpscope_advice::Cause;
use warpscope_model::detail::Breakdown;
use warpscope_model::{Op, Space};

use crate::{Analysis, Counters};

/// The fix of one finding, costed on one compute capability.
#[derive(Clone, Debug, Serialize)]
pub struct FixOutcome {
    pub cc: String,
    /// Cost of the representative warp access as it is.
    pub before: Counters,
    /// Cost of the same warp after the fix; absent when the fix cannot be modelled.
    pub after: Option<Counters>,
}

/// One cause found for a site, with its fix, over the compute capabilities where it applies.
#[derive(Clone, Debug, Serialize)]
pub struct Advice {
    pub cause: Cause,
    /// Why, in words (from the first compute capability where it was found).
    pub why: String,
    /// The fix the seeds teach.
    pub fix: String,
    /// Before/after per compute capability where the cause was found.
    pub outcomes: Vec<FixOutcome>,
}

/// The advice for one row of the analysis (a site, its space and width).
#[derive(Clone, Debug, Serialize)]
pub struct SiteAdvice {
    /// The row's number in the analysis table (1-based).
    pub row: usize,
    pub line: u32,
    pub column: u32,
    pub text: String,
    pub space: Space,
    pub width: u32,
    pub advice: Vec<Advice>,
}

/// The explained access on one compute capability.
#[derive(Clone, Debug, Serialize)]
pub struct ExplainedArch {
    pub cc: String,
    /// Architecture name ("Hopper").
    pub name: String,
    /// The rule applied, in words ("32-byte sectors", "128-byte L1 lines", "1.2/1.3
    /// segments of 32/64/128 bytes", "32 banks of 4 bytes", …).
    pub rule: String,
    /// The cost of this one warp access.
    pub cost: Counters,
    /// What the model did: requests and transactions, or phases and bank slots.
    pub breakdown: Breakdown,
    /// The generated explanation, one paragraph.
    pub paragraph: String,
    /// Advice for this access on this compute capability (`outcomes` holds this CC only).
    pub advice: Vec<Advice>,
}

/// One warp-level execution of one access site, explained for several compute
/// capabilities.
#[derive(Clone, Debug, Serialize)]
pub struct Explanation {
    pub kernel: String,
    /// Source file (or the `-e` expression).
    pub source: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub line: u32,
    pub column: u32,
    /// The access's source text.
    pub text: String,
    pub space: Space,
    pub op: Op,
    /// Bytes per lane.
    pub width: u32,
    pub read_only: bool,
    /// 0-based index of this execution among the site's warp-level executions.
    pub execution: u64,
    /// How many warp-level executions the site had in the launch.
    pub executions: u64,
    /// Why this execution: "the costliest" or "--warp N".
    pub chosen: String,
    /// Block of the warp (x, y, z) and the warp's index in the block.
    pub block_of_warp: [u32; 3],
    pub warp: u32,
    /// Active lanes (bit *l* = lane *l*).
    pub mask: u32,
    /// Byte address of each of the 32 lanes (meaningful for active lanes only): offsets in
    /// the block's shared window, the constant bank, or the global address space.
    pub addrs: Vec<u64>,
    pub architectures: Vec<ExplainedArch>,
    /// The whole kernel's analysis (the HTML page shows its table).
    pub analysis: Analysis,
}

mod common;
mod html;
mod paragraph;
mod svg;
mod text;

pub use html::render_html;
pub use paragraph::paragraph;
pub use svg::{render_svg, render_svg_all};
pub use text::render_text;
