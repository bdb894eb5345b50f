//! `warpscope archs` and `warpscope gpus`: the compute capabilities and GPUs warpscope knows,
//! in people's names, each row with its source.

use super::emit;
use anyhow::Result;
use warpscope::model::arch;

/// `text` after `label`, wrapped to `width` characters when known (a terminal, COLUMNS),
/// the lines after the first indented under it.
fn indented(label: &str, text: &str, width: Option<usize>) -> String {
    let n = label.chars().count();
    let lines = match width {
        Some(w) => warpscope::report::wrap(text, w.saturating_sub(n).max(20)),
        None => vec![text.to_string()],
    };
    let pad = " ".repeat(n);
    lines
        .iter()
        .enumerate()
        .map(|(i, l)| format!("{}{l}\n", if i == 0 { label } else { &pad }))
        .collect()
}

/// `warpscope gpus`: one line per GPU (name, CC, SMs, L2, DRAM bandwidth and bus, the names
/// --gpu takes), then the datasheets its figures come from.
pub fn gpus() -> Result<()> {
    let width = warpscope::report::table_width();
    let all = warpscope::traffic::gpus::all();
    let cc = |g: &warpscope::traffic::Gpu| format!("{} {}", g.cc, g.arch().name);
    let w_name = all.iter().map(|g| g.name.len()).max().unwrap_or(0);
    let w_cc = all.iter().map(|g| cc(g).len()).max().unwrap_or(0);
    let mut out = format!(
        "{:w_name$}  {:w_cc$}  {:>4}  {:>8}  {:>9}  {:16}  {}\n",
        "GPU", "CC", "SMs", "L2 KiB", "DRAM GB/s", "bus", "--gpu names"
    );
    for g in all {
        out.push_str(&format!(
            "{:w_name$}  {:w_cc$}  {:>4}  {:>8}  {:>9.1}  {:16}  {}\n",
            g.name,
            cc(g),
            g.sms,
            g.l2_bytes / 1024,
            g.dram_gbps,
            format!("{}-bit {}", g.bus_bits, g.memory),
            g.aliases.join(", ")
        ));
        out.push_str(&indented("    source: ", g.source, width));
    }
    emit(None, &out)
}

/// `warpscope archs`: one line per compute capability (its architecture, chips and
/// products, the rules of global memory it follows), then where its rules come from, and
/// what `--cc` takes.
pub fn archs() -> Result<()> {
    let width = warpscope::report::table_width();
    let rows = arch::all();
    let w_name = rows.iter().map(|a| a.name.len()).max().unwrap_or(0);
    let w_ex = rows.iter().map(|a| a.example.len()).max().unwrap_or(0);
    let mut out = format!(
        "{:5} {:w_name$}  {:w_ex$}  {}\n",
        "CC", "architecture", "chips and products", "global memory"
    );
    for a in rows {
        out.push_str(&format!(
            "{:5} {:w_name$}  {:w_ex$}  {}\n",
            a.cc.to_string(),
            a.name,
            a.example,
            arch::rules_in_words(a.family)
        ));
        out.push_str(&indented("      source: ", a.source, width));
    }
    let guide: Vec<String> = arch::guide_set().iter().map(|a| a.cc.to_string()).collect();
    let cc_help = format!(
        "--cc takes 9.0, 90, sm_90 or compute_90; an architecture name for its first CC ({}); lists of these; 'all'; 'guide' ({}: the Programming Guide's classic comparison, then one per later generation). Default: {}{}.",
        arch::names_list(),
        guide.join(","),
        arch::DEFAULT_CC,
        if cfg!(feature = "cuda") {
            ", or the GPU at hand's CC"
        } else {
            ""
        }
    );
    out.push('\n');
    out.push_str(&indented("", &cc_help, width));
    out.push_str("Sources: PG = CUDA C++ Programming Guide; PG5 = CUDA C Programming Guide v5.0, Appendix F.\n");
    emit(None, &out)
}
