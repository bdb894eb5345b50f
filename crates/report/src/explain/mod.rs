//! `warpscope explain`: one warp-level execution of one access, for each compute capability,
//! as a picture (terminal text, SVG, HTML) and a paragraph generated from what the model
//! did, with computed advice.
//!
//! [`Explanation`] is built by the pipeline (the `warpscope` crate's `explain`) from the
//! front end's access and the model's [`Breakdown`]; this module only renders it.

use schemars::JsonSchema;
use serde::Serialize;
use warpscope_advice::Cause;
use warpscope_model::detail::Breakdown;
use warpscope_model::{Op, Space};

use crate::{Analysis, Counters};

/// The fix of one finding, costed on one compute capability.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct FixOutcome {
    /// The compute capability, major.minor.
    pub cc: String,
    /// Cost of the representative warp access as it is.
    pub before: Counters,
    /// Cost of the same warp after the fix; absent when the fix cannot be modelled.
    pub after: Option<Counters>,
}

/// One cause found for the accesses of one source line, with its fix, over the compute
/// capabilities where it applies.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Advice {
    /// The cause, in the guides' terms (`kind`), with its figures on the first compute
    /// capability in `outcomes`.
    pub cause: Cause,
    /// Why, in words; where the words differ by compute capability (a bank count), each
    /// group of compute capabilities gets its own: "on 1.0–1.3: …; on 2.0–12.1: …" (the
    /// groups are in `why_by_cc`).
    pub why: String,
    /// The groups of `why` when the words differ by compute capability; else empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub why_by_cc: Vec<CcWords>,
    /// The fix the CUDA guides teach, in words, grouped by compute capability like `why`.
    pub fix: String,
    /// The groups of `fix` when the words differ by compute capability (a padding); else
    /// empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fix_by_cc: Vec<CcWords>,
    /// Before/after per compute capability where the cause was found: the costliest warp of
    /// the costliest of `rows` there.
    pub outcomes: Vec<FixOutcome>,
    /// The analysis rows (`#`) of the line that have this cause: several when accesses of
    /// one line share it (an unrolled loop's copies of one load, shown `×N`); empty in an
    /// explanation (one access).
    pub rows: Vec<usize>,
}

/// Words of an [`Advice`] that hold on some of its compute capabilities.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CcWords {
    /// The compute capabilities, major.minor, in the analysis's order.
    pub ccs: Vec<String>,
    /// The words.
    pub text: String,
}

/// The advice for the accesses of one source line in one memory space and width (the
/// rows of the analysis on that line).
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct SiteAdvice {
    /// The first row's number in the analysis table (`#`, 0-based: `explain --site N` takes
    /// it); each advice names all of its rows.
    pub row: usize,
    /// 1-based source line.
    pub line: u32,
    /// 1-based source column of the first row.
    pub column: u32,
    /// The first row's source text.
    pub text: String,
    /// The source file of the line, as the first row's site names it: the analyzed file, a
    /// header it includes, or for a `.ptx` the CUDA source its `.loc` names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The memory space.
    pub space: Space,
    /// Width of the access in bytes per lane.
    pub width: u32,
    /// One entry per cause found.
    pub advice: Vec<Advice>,
}

/// The explained access on one compute capability.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ExplainedArch {
    /// The compute capability, major.minor.
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
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Explanation {
    /// The kernel's name.
    pub kernel: String,
    /// Source file (or the `-e` expression).
    pub source: String,
    /// Grid dimensions in blocks (x, y, z).
    pub grid: [u32; 3],
    /// Block dimensions in threads (x, y, z).
    pub block: [u32; 3],
    /// 1-based source line of the access.
    pub line: u32,
    /// 1-based source column.
    pub column: u32,
    /// The access's source text.
    pub text: String,
    /// The memory space.
    pub space: Space,
    /// Load, store or atomic.
    pub op: Op,
    /// Width of the access in bytes per lane.
    pub width: u32,
    /// Loads through the read-only (texture) path.
    pub read_only: bool,
    /// The compiled path's PTX instruction, as the analysis table names it
    /// (`ld.shared.f32 ×4`: ptxas merged 4 PTX loads into this one; `STL (spill)`: a
    /// register spill ptxas added); absent for the source path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ptx: Option<String>,
    /// The 1-based line of that PTX instruction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ptx_line: Option<u32>,
    /// 0-based index of this execution among the site's warp-level executions, in launch
    /// order (what `--warp` takes).
    pub execution: u64,
    /// How many warp-level executions the site had in the launch.
    pub executions: u64,
    /// Why this execution: "the costliest" or "--warp N".
    pub chosen: String,
    /// Block of the warp (x, y, z), 0-based.
    pub block_of_warp: [u32; 3],
    /// The warp's 0-based index in its block.
    pub warp: u32,
    /// Active lanes (bit *l* = lane *l*), as a hexadecimal string.
    #[serde(with = "warpscope_model::mask")]
    #[schemars(with = "warpscope_model::mask::LaneMask")]
    pub mask: u32,
    /// Byte address of each of the 32 lanes (meaningful for active lanes only): offsets in
    /// the block's shared window, the constant bank, or the global address space.
    pub addrs: Vec<u64>,
    /// A wide local access (8 or 16 bytes a lane) is one request per 4-byte word, the
    /// words interleaved across the block's threads: the lanes' addresses of words 1, 2, …
    /// (`addrs` holds word 0's; `width` is then 4). Empty for any other access.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub further_words: Vec<Vec<u64>>,
    /// A texture or surface access of a 2-D or 3-D texture: every request of the warp's
    /// fetch, its texels on the texture's grid (drawn instead of the address picture).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub texels: Option<TexelGrid>,
    /// The access explained on each compute capability, in the order asked for.
    pub architectures: Vec<ExplainedArch>,
    /// The whole kernel's analysis (the HTML page shows its table).
    pub analysis: Analysis,
}

mod common;
mod html;
mod paragraph;
mod svg;
mod texels;
mod text;

pub(crate) use common::{esc, space_name, wrap};
pub use html::render_html;
pub use paragraph::paragraph;
pub(crate) use svg::figure_svg;
pub use svg::{render_svg, render_svg_all};
pub use texels::{Cell, TexelGrid, TexelRead};
pub use text::render_text;
