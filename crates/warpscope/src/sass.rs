//! The compiled path checked against the SASS: ptxas assembles the PTX that was analyzed,
//! and the groups of PTX loads and stores it merged into one wider instruction are run as
//! that instruction ([`warpscope_simt::Program::apply_sass`]), so the figures are those of
//! the code the GPU executes. Needs `ptxas` and `nvdisasm` beside nvcc (the
//! `nvidia-cuda-nvcc` and `nvidia-cuda-nvdisasm` wheels); without them, or with
//! `--no-sass`, the PTX is analyzed as written and a note says so.

use warpscope_ptx::ast::{Module, Statement};
use warpscope_simt::sass::{SassInst, SassReport};
use warpscope_simt::Program;
use warpscope_toolkit::{FunctionResources, SassMemory, SassText, Toolkit};

/// What [`check`] found: the note for the report (what was merged, or why the SASS was not
/// checked), every SASS instruction of the module with the PTX line it came from (empty
/// when not disassembled), and what `ptxas -v` said of each function (empty when ptxas did
/// not run).
pub struct Checked {
    /// For the report's notes: the merges, spills and rebuilt cache entries, or why the
    /// SASS was not checked.
    pub note: Option<String>,
    /// The module's SASS instructions, each tied to its PTX line (annotate's listing).
    pub listing: Vec<SassText>,
    /// Per function, ptxas's registers, stack frame, spills (bytes per thread) and static
    /// shared memory (bytes per block).
    pub resources: Vec<FunctionResources>,
    /// The target ptxas assembled for (the PTX's own `a`/`f` target where it names one).
    pub sm: String,
}

/// Applies ptxas's merges for `sm` (`"sm_90"`) to `prog`, decoded from `ptx`. nvdisasm runs
/// only where its listing can matter: `listing` asks for it (annotate shows it), the PTX has
/// loads or stores ptxas could merge or drop ([`Program::sass_could_merge`]), or ptxas
/// reports a stack frame or spills (its LDL/STL are not in the PTX). Elsewhere no listing can
/// change what runs, and ptxas's report alone is read. Never fails: a tool that is missing
/// or refuses the PTX leaves the PTX as written.
pub fn check(
    prog: &mut Program,
    ptx: &str,
    module: &Module,
    tk: &Toolkit,
    sm: &str,
    ptxas_options: &[String],
    listing: bool,
) -> Checked {
    let not_checked = |note: String| Checked {
        note: Some(note),
        listing: Vec::new(),
        resources: Vec::new(),
        sm: sm.to_string(),
    };
    let tools = match tk.sass_tools() {
        Ok(t) => t,
        Err(e) => {
            return not_checked(format!(
                "SASS not checked (figures for the PTX as written; ptxas may merge loads): {e}"
            ))
        }
    };
    let mut lines = Vec::new();
    for f in &module.functions {
        if let Some(body) = &f.body {
            instruction_lines(body, &mut lines);
        }
    }
    // PTX made for an `a`/`f` target (wgmma, setmaxnreg) assembles only for that target.
    let own = module
        .target
        .iter()
        .find(|t| t.starts_with("sm_"))
        .filter(|t| t.ends_with('a') || t.ends_with('f'));
    let sm = own.map_or(sm, String::as_str);
    // Asked only where no listing is cached: a warm run does not look for merges.
    let needed = |r: &[FunctionResources]| listing || listing_needed(prog, r);
    let mem = match tools.memory_if(ptx, &lines, sm, ptxas_options, &needed) {
        Ok(m) => m,
        Err(e) => {
            let first = e.to_string();
            let first = first.lines().take(2).collect::<Vec<_>>().join(" ");
            return not_checked(format!(
                "SASS not checked (figures for the PTX as written): {first}"
            ));
        }
    };
    let checked = |note: Option<String>, listing: Vec<SassText>| Checked {
        note,
        listing,
        resources: mem.resources.clone(),
        sm: sm.to_string(),
    };
    if !mem.disassembled {
        // No listing can change what runs (see above): the PTX is what the SASS runs.
        let note = (!mem.notes.is_empty()).then(|| mem.notes.join("; "));
        return checked(note, Vec::new());
    }
    // This kernel's spills and its callees', not the other kernels' of the module.
    let other_entry = |name: &str| {
        name != prog.name
            && module
                .functions
                .iter()
                .any(|f| f.is_entry && f.name == name)
    };
    let spills: Vec<String> = mem
        .resources
        .iter()
        .filter(|r| r.spill_store_bytes + r.spill_load_bytes > 0 && !other_entry(&r.function))
        .map(|r| {
            format!(
                "{}: {} bytes spill stores, {} bytes spill loads per thread ({}-byte stack frame, {} registers)",
                warpscope_ptx::demangle(&r.function),
                r.spill_store_bytes,
                r.spill_load_bytes,
                r.stack_bytes,
                r.registers
            )
        })
        .collect();
    let report = prog.apply_sass(&sass_insts(&mem.memory));
    // A rebuilt cache entry is said first.
    let merges = match (mem.notes.join("; "), summary(&report, sm)) {
        (c, m) if c.is_empty() => m,
        (c, Some(m)) => Some(format!("{c}. {m}")),
        (c, None) => Some(c),
    };
    if spills.is_empty() {
        return checked(merges, mem.instructions.clone());
    }
    let spill = format!(
        "ptxas ({sm}) spills registers to local memory — {}; its {} spill and refill instructions (LDL/STL, not in the PTX) are in these figures as local loads and stores at the PTX line ptxas ties them to (sites 'STL (spill)', 'LDL (refill)'); to remove them, let ptxas use more registers per thread (a smaller minimum of blocks per SM in __launch_bounds__, a larger -maxrregcount) or keep fewer values live at once",
        spills.join("; "),
        report.spills
    );
    checked(
        Some(merges.map_or(spill.clone(), |m| format!("{m}. {spill}"))),
        mem.instructions.clone(),
    )
}

/// Whether nvdisasm's listing can change what `prog` runs, given what `ptxas -v` reported
/// of the module's functions (`resources`): the PTX has loads or stores ptxas could merge or
/// drop ([`Program::sass_could_merge`]), or some function has a stack frame or spills (LDL
/// and STL the PTX may not have). Where it cannot, the check reads ptxas's report alone.
pub fn listing_needed(prog: &Program, resources: &[FunctionResources]) -> bool {
    resources
        .iter()
        .any(|f| f.stack_bytes + f.spill_store_bytes + f.spill_load_bytes > 0)
        || prog.sass_could_merge()
}

/// A listing's SASS loads and stores as [`Program::apply_sass`] takes them.
pub fn sass_insts(memory: &[SassMemory]) -> Vec<SassInst> {
    memory
        .iter()
        .map(|m| SassInst {
            ptx_line: m.ptx_line,
            width: m.width,
            store: m.store,
            local_offset: m.local_offset,
            spill_marked: m.spill_marked,
        })
        .collect()
}

/// Every instruction's 1-based PTX line, nested blocks included, in order (the lines the
/// SASS check tags before assembling).
pub fn instruction_lines(body: &[Statement], out: &mut Vec<u32>) {
    for s in body {
        match s {
            Statement::Instruction(i) => out.push(i.pos.line),
            Statement::Block(b, _) => instruction_lines(b, out),
            _ => {}
        }
    }
}

/// One sentence on the merges, e.g. "ptxas (sm_90) merged 64 PTX loads into 16 of 16 bytes
/// (PTX lines 241+244+247+250, …): analyzed as the SASS runs them (--no-sass: as written)",
/// merges of consecutive trips of a loop ptxas unrolled named as such, and one on the wider
/// instructions the PTX does not prove.
fn summary(r: &SassReport, sm: &str) -> Option<String> {
    let unproven = unproven(r, sm);
    let reused = (!r.reused.is_empty()).then(|| {
        let lines: Vec<String> = r.reused.iter().take(6).map(u32::to_string).collect();
        format!(
            "ptxas ({sm}) reuses the value of {} PTX load(s) an earlier load of the same address read (PTX lines {}{}): they make no access (--no-sass: as written)",
            r.reused.len(),
            lines.join(", "),
            if r.reused.len() > 6 { ", …" } else { "" }
        )
    });
    let unproven = match (unproven, reused) {
        (Some(u), Some(x)) => Some(format!("{x}. {u}")),
        (u, x) => u.or(x),
    };
    if r.groups.is_empty() {
        return unproven;
    }
    let members: usize = r.groups.iter().map(|g| g.ptx_lines.len()).sum();
    let mut kinds: Vec<(bool, u32, u32, u32, usize)> = Vec::new();
    for g in &r.groups {
        match kinds
            .iter_mut()
            .find(|k| (k.0, k.1, k.2, k.3) == (g.store, g.ptx_width, g.sass_width, g.trips))
        {
            Some(k) => k.4 += 1,
            None => kinds.push((g.store, g.ptx_width, g.sass_width, g.trips, 1)),
        }
    }
    let what = kinds
        .iter()
        .map(|(store, w, sw, trips, n)| {
            let across = if *trips > 1 {
                format!(", each over {trips} consecutive trips of a PTX loop ptxas unrolled (run on the first of each {trips})")
            } else {
                String::new()
            };
            format!(
                "{n} {} of {sw} bytes from {}-byte ones{across}",
                if *store { "stores" } else { "loads" },
                w
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let shown = r
        .groups
        .iter()
        .take(3)
        .map(|g| {
            let lines = g
                .ptx_lines
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join("+");
            if g.trips > 1 {
                format!("{lines} ×{} trips", g.trips)
            } else {
                lines
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    let more = if r.groups.len() > 3 { ", …" } else { "" };
    let merged = format!(
        "SASS checked: ptxas ({sm}) merged {members} PTX memory instructions into {} wider ones ({what}; PTX lines {shown}{more}); the figures are for the SASS (--no-sass: for the PTX as written)",
        r.groups.len()
    );
    Some(match unproven {
        Some(u) => format!("{merged}. {u}"),
        None => merged,
    })
}

/// The wider SASS instructions whose groups the PTX does not prove, e.g. "ptxas (sm_90)
/// also made a 16-byte load of the 4-byte one at PTX line 127 (not proven from the PTX: the
/// loop's trip count is not a constant); analyzed as written".
fn unproven(r: &SassReport, sm: &str) -> Option<String> {
    if r.unproven.is_empty() {
        return None;
    }
    let shown = r
        .unproven
        .iter()
        .take(3)
        .map(|u| {
            format!(
                "a {}-byte {} of the {}-byte one at PTX line {}: {}",
                u.sass_width,
                if u.store { "store" } else { "load" },
                u.ptx_width,
                u.ptx_line,
                u.why
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    let more = if r.unproven.len() > 3 {
        format!("; {} more", r.unproven.len() - 3)
    } else {
        String::new()
    };
    Some(format!(
        "ptxas ({sm}) also made wider instructions that the PTX does not prove a group for ({shown}{more}): those PTX instructions are analyzed as written, so their figures may exceed the SASS's"
    ))
}
