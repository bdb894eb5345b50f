//! What ptxas makes of PTX: the SASS memory instructions of each function, each tied to the
//! PTX line it came from.
//!
//! ptxas keeps no PTX positions of its own, so the PTX is first tagged: every instruction
//! line gets `.loc 1 LINE 0` naming its own line in a `.file 1 "ptx"` (the compiler's own
//! `.loc`/`.file` are dropped). `ptxas -lineinfo` then writes a line table whose "source" is
//! the PTX, and `nvdisasm -g -c` prints `//## File "ptx", line N` before the SASS of line N.
//! Measured on the H100's PTX of `tests/kernels/compiled/matmul_tiled.cu` (nvcc 13.0): ptxas
//! merges the PTX loads `ld.shared.f32 [%r7]`, `[%r7+4]`, `[%r7+8]`, `[%r7+12]` into one
//! `LDS.128`, tied to the line of `[%r7]`; the other three lines get no SASS at all
//! (`tests/data/h100/compiled/sass-vs-ptx.txt`).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{Toolkit, ToolkitError};

/// ptxas and nvdisasm, found beside a toolkit's nvcc.
#[derive(Debug, Clone)]
pub struct SassTools {
    /// The PTX assembler (`ptxas`, in the `nvidia-cuda-nvcc` wheel).
    pub ptxas: PathBuf,
    /// The disassembler (`nvdisasm`, in the `nvidia-cuda-nvdisasm` wheel).
    pub nvdisasm: PathBuf,
}

/// One SASS memory instruction, as [`SassTools::memory`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SassMemory {
    /// The function (mangled PTX name) it belongs to.
    pub function: String,
    /// The 1-based line of the PTX instruction it came from.
    pub ptx_line: u32,
    /// The opcode with its modifiers, e.g. `LDS.128`, `LDG.E.64.CONSTANT`, `STG.E`.
    pub opcode: String,
    /// Bytes per lane: 1, 2, 4 (no size modifier), 8 (`.64`) or 16 (`.128`).
    pub width: u32,
    /// A store (`ST*`) rather than a load.
    pub store: bool,
    /// For a local load or store (`LDL`/`STL`): its byte offset in the thread's stack frame
    /// (`[R1+0x30]` → 48).
    pub local_offset: Option<i64>,
    /// Marked as a register spill or refill by nvdisasm (`SpillRefill`; nvdisasm 13.5 marks
    /// them, older ones may not).
    pub spill_marked: bool,
}

/// What `ptxas -v` reports of one function it compiled.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FunctionResources {
    /// The function (mangled PTX name).
    pub function: String,
    /// Registers per thread.
    pub registers: u32,
    /// Bytes of the per-thread stack frame (local memory), and of the register spills
    /// ptxas stores there and loads back: LDL/STL the PTX does not show.
    pub stack_bytes: u32,
    pub spill_store_bytes: u32,
    pub spill_load_bytes: u32,
    /// Bytes of static shared memory per block (`N bytes smem`; 0 when not reported).
    pub shared_bytes: u32,
}

/// One SASS instruction as nvdisasm prints it, tied to its PTX line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SassText {
    /// The function (mangled PTX name) it belongs to.
    pub function: String,
    /// The 1-based line of the PTX instruction it came from.
    pub ptx_line: u32,
    /// The instruction with its guard and operands, without its address comment and final
    /// `;` (`@!P0 LDS.128 R8, [R3+0x40]`).
    pub text: String,
}

/// The SASS of a PTX module as [`SassTools::memory`] reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SassListing {
    /// Every SASS load and store, in SASS order.
    pub memory: Vec<SassMemory>,
    /// Every SASS instruction after the first line marker, in SASS order.
    pub instructions: Vec<SassText>,
    /// Per function, what ptxas reported.
    pub resources: Vec<FunctionResources>,
    /// Whether nvdisasm ran: `false` when [`SassTools::memory_if`] was told the listing is
    /// not needed (then `memory` and `instructions` are empty).
    pub disassembled: bool,
    /// `note:` lines for the user: a cache entry that failed its SHA-256 check and was
    /// rebuilt, a cache folder not used.
    pub notes: Vec<String>,
}

impl Toolkit {
    /// `ptxas` and `nvdisasm` from nvcc's own folder, else from `PATH`.
    ///
    /// Errors: [`ToolkitError::NotFound`] naming the missing tool and the wheel that brings
    /// it (`nvidia-cuda-nvdisasm`).
    pub fn sass_tools(&self) -> Result<SassTools, ToolkitError> {
        let find = |name: &str| -> Option<PathBuf> {
            let exe = format!("{name}{}", std::env::consts::EXE_SUFFIX);
            self.nvcc
                .parent()
                .map(|bin| bin.join(&exe))
                .filter(|p| p.is_file())
                .or_else(|| {
                    std::env::split_paths(&std::env::var_os("PATH")?)
                        .map(|d| d.join(&exe))
                        .find(|p| p.is_file())
                })
        };
        let missing = |name: &str, wheel: &str| ToolkitError::NotFound {
            searched: vec![format!(
                "{name} beside {} and on PATH (none; `pip install {wheel}` brings it)",
                self.nvcc.display()
            )],
        };
        Ok(SassTools {
            ptxas: find("ptxas").ok_or_else(|| missing("ptxas", "nvidia-cuda-nvcc"))?,
            nvdisasm: find("nvdisasm")
                .ok_or_else(|| missing("nvdisasm", "nvidia-cuda-nvdisasm"))?,
        })
    }
}

impl SassTools {
    /// Assembles `ptx` for `sm` (`"sm_90"`) with line tags on `instruction_lines` (the
    /// 1-based lines of its instructions, as the PTX parser gives them) and returns every
    /// SASS memory instruction with the PTX line it came from, in SASS order, and what
    /// `ptxas -v` said of each function's registers and spills.
    ///
    /// The disassembly is kept in the cache beside the PTX ([`crate::default_cache_dir`]'s
    /// `../sass/`), keyed by the tagged PTX, `sm` and the two tools (path, size, time).
    ///
    /// Errors: [`ToolkitError::Spawn`] if a tool does not start, [`ToolkitError::Compile`]
    /// with its command and output if ptxas or nvdisasm fails (an `sm` this ptxas does not
    /// know, PTX newer than it reads).
    pub fn memory(
        &self,
        ptx: &str,
        instruction_lines: &[u32],
        sm: &str,
        options: &[String],
    ) -> Result<SassListing, ToolkitError> {
        self.memory_if(ptx, instruction_lines, sm, options, &|_| true)
    }

    /// [`SassTools::memory`], with nvdisasm run only where `disassemble` says ptxas's
    /// report (each function's resources) calls for the listing. nvdisasm takes 0.2–0.45 s
    /// on any cubin (its tables for the target: measured on this project's 2-core machine,
    /// sm_75 0.23 s, sm_90 0.33 s, sm_120 0.44 s), ptxas 0.05 s on a small kernel. A cached
    /// entry without the listing is assembled again when a later call needs it.
    ///
    /// Errors: as [`SassTools::memory`].
    pub fn memory_if(
        &self,
        ptx: &str,
        instruction_lines: &[u32],
        sm: &str,
        options: &[String],
        disassemble: &dyn Fn(&[FunctionResources]) -> bool,
    ) -> Result<SassListing, ToolkitError> {
        let tagged = tag_lines(ptx, instruction_lines);
        let cache = crate::default_cache_dir().and_then(|d| Some(d.parent()?.join("sass")));
        let key = {
            let mut k = crate::cache::KeyBuilder::new();
            for tool in [&self.ptxas, &self.nvdisasm] {
                k.field("tool", tool.as_os_str().as_encoded_bytes());
                if let Ok(m) = std::fs::metadata(tool) {
                    k.field("size", &m.len().to_le_bytes());
                    let t = m
                        .modified()
                        .ok()
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
                    k.field("time", &t.map_or(0, |d| d.as_nanos()).to_le_bytes());
                }
            }
            k.field(
                "listing",
                b"ptxas -v report, then nvdisasm -g -c (-ndf without spills)",
            );
            k.field("sm", sm.as_bytes());
            for o in options {
                k.field("ptxas option", o.as_bytes());
            }
            k.field("tagged ptx", tagged.as_bytes());
            k.finish()
        };
        let mut notes = Vec::new();
        let cache = cache.filter(|d| match crate::cache::prepare(d) {
            Ok(()) => true,
            Err(e) => {
                notes.push(format!("SASS listing not cached: {e}"));
                false
            }
        });
        let name = format!("{key}.sass");
        if let Some(dir) = &cache {
            match crate::store::read_entry(&dir.join(&name)) {
                crate::store::Entry::Good(text) if text.contains(".text.") => {
                    return Ok(listing(&text, notes));
                }
                crate::store::Entry::Good(text) if text.contains(NOT_DISASSEMBLED) => {
                    let report = listing(&text, notes.clone());
                    if !disassemble(&report.resources) {
                        return Ok(report);
                    }
                }
                crate::store::Entry::Good(_) => notes.push(format!(
                    "cache entry {} was corrupt (no .text section: not a listing): rebuilt",
                    dir.join(&name).display()
                )),
                crate::store::Entry::Corrupt(n) => notes.push(n),
                crate::store::Entry::Missing => {}
            }
        }
        let text = self.disassemble(&tagged, sm, options, disassemble)?;
        if let Some(dir) = &cache {
            // A failure to keep it costs only the next call's time.
            let _ = crate::store::write_entry(dir, &name, &text);
        }
        Ok(listing(&text, notes))
    }

    /// `ptxas -v -lineinfo` of `tagged`, then, where `disassemble` asks for it given ptxas's
    /// report, `nvdisasm -g -c` of the cubin: ptxas's report (each line as a `//` comment),
    /// then the disassembly or the [`NOT_DISASSEMBLED`] line.
    fn disassemble(
        &self,
        tagged: &str,
        sm: &str,
        options: &[String],
        disassemble: &dyn Fn(&[FunctionResources]) -> bool,
    ) -> Result<String, ToolkitError> {
        let dir = tempfile::tempdir().map_err(|source| ToolkitError::Read {
            path: std::env::temp_dir(),
            source,
        })?;
        let ptx_path = dir.path().join("tagged.ptx");
        let cubin = dir.path().join("tagged.cubin");
        std::fs::write(&ptx_path, tagged).map_err(|source| ToolkitError::Read {
            path: ptx_path.clone(),
            source,
        })?;
        let arch = format!("-arch={sm}");
        let mut args: Vec<&std::ffi::OsStr> =
            vec![arch.as_ref(), "-v".as_ref(), "-lineinfo".as_ref()];
        args.extend(options.iter().map(|o| std::ffi::OsStr::new(o.as_str())));
        args.extend([ptx_path.as_os_str(), "-o".as_ref(), cubin.as_os_str()]);
        let report = run(&self.ptxas, &args)?;
        let mut text: String = report.lines().map(|l| format!("// {l}\n")).collect();
        if !disassemble(&parse_ptxas_report(&text)) {
            text.push_str(NOT_DISASSEMBLED);
            text.push('\n');
            return Ok(text);
        }
        // nvdisasm's dataflow analysis takes 0.2 of its 0.5–0.7 s (measured on this project's
        // 2-core machine) and only adds `(*"SpillRefill"*)` and `(*"BRANCH_TARGETS …"*)`
        // comments; the listing needs the first alone, so it runs only when ptxas spilled.
        let mut disasm: Vec<&std::ffi::OsStr> = vec!["-g".as_ref(), "-c".as_ref()];
        if !spills(&report) {
            disasm.push("-ndf".as_ref());
        }
        disasm.push(cubin.as_os_str());
        text.push_str(&run(&self.nvdisasm, &disasm)?);
        Ok(text)
    }
}

/// The ptxas options among nvcc arguments `nvcc_flags`, for running ptxas as nvcc would:
/// `-Xptxas A,B` / `--ptxas-options=A,B` give `A`, `B`; `-maxrregcount N` (or `=N`) gives
/// `--maxrregcount N`. Other flags concern nvcc's own stages and give nothing.
pub fn ptxas_options(nvcc_flags: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = nvcc_flags.iter().peekable();
    while let Some(f) = it.next() {
        let f = f.as_str();
        let list = |s: &str| {
            s.split(',')
                .filter(|x| !x.is_empty())
                .map(String::from)
                .collect::<Vec<_>>()
        };
        if let Some(v) = ["-Xptxas=", "--ptxas-options=", "-Xptxas"]
            .iter()
            .find_map(|p| f.strip_prefix(p).filter(|v| !v.is_empty()))
        {
            out.extend(list(v));
        } else if f == "-Xptxas" || f == "--ptxas-options" {
            if let Some(v) = it.next() {
                out.extend(list(v));
            }
        } else if let Some(v) = ["-maxrregcount=", "--maxrregcount="]
            .iter()
            .find_map(|p| f.strip_prefix(p))
        {
            out.extend(["--maxrregcount".to_string(), v.to_string()]);
        } else if f == "-maxrregcount" || f == "--maxrregcount" {
            if let Some(v) = it.next() {
                out.extend(["--maxrregcount".to_string(), v.clone()]);
            }
        }
    }
    out
}

/// Runs `tool` with `args`; its standard output, or the error with the command line.
fn run(tool: &Path, args: &[&std::ffi::OsStr]) -> Result<String, ToolkitError> {
    let command = std::iter::once(tool.as_os_str())
        .chain(args.iter().copied())
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    let name = tool.file_name().unwrap_or_default().to_string_lossy();
    let out = crate::guard::run_tool(Command::new(tool).args(args), &name, &command)?;
    if !out.status.success() {
        return Err(crate::compile::failed(command, &name, &out));
    }
    // ptxas -v reports on standard error.
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    Ok(text)
}

/// The memory instructions and the `ptxas -v` report of a cached or fresh listing.
fn listing(text: &str, notes: Vec<String>) -> SassListing {
    SassListing {
        memory: parse_nvdisasm(text),
        instructions: parse_nvdisasm_text(text),
        resources: parse_ptxas_report(text),
        disassembled: !text.contains(NOT_DISASSEMBLED),
        notes,
    }
}

/// The line that ends a cached listing of ptxas's report alone (nvdisasm not run).
const NOT_DISASSEMBLED: &str = "// warpscope: not disassembled (not needed)";

/// Whether a `ptxas -v` report shows register spills in some function, or reports no
/// function at all (then spills cannot be ruled out).
fn spills(report: &str) -> bool {
    let functions = parse_ptxas_report(report);
    functions.is_empty()
        || functions
            .iter()
            .any(|f| f.spill_store_bytes > 0 || f.spill_load_bytes > 0)
}

/// The functions of a `ptxas -v` report (its lines may carry a leading `// `):
/// `Function properties for NAME` / `N bytes stack frame, N bytes spill stores, N bytes
/// spill loads` / `Used N registers, …, N bytes smem`.
pub fn parse_ptxas_report(text: &str) -> Vec<FunctionResources> {
    let mut out: Vec<FunctionResources> = Vec::new();
    let number_before = |l: &str, what: &str| -> Option<u32> {
        let at = l.find(what)?;
        l[..at].split_whitespace().last()?.parse().ok()
    };
    for l in text.lines() {
        let l = l.trim_start_matches("//").trim();
        if let Some(name) = l.split("Function properties for ").nth(1) {
            out.push(FunctionResources {
                function: name.trim().to_string(),
                ..Default::default()
            });
        } else if let Some(f) = out.last_mut() {
            if let Some(n) = number_before(l, "bytes stack frame") {
                f.stack_bytes = n;
                f.spill_store_bytes = number_before(l, "bytes spill stores").unwrap_or(0);
                f.spill_load_bytes = number_before(l, "bytes spill loads").unwrap_or(0);
            } else if let Some(n) = l
                .split("Used ")
                .nth(1)
                .and_then(|r| r.split_whitespace().next()?.parse().ok())
                .filter(|_| l.contains(" registers"))
            {
                f.registers = n;
                f.shared_bytes = number_before(l, "bytes smem").unwrap_or(0);
            }
        }
    }
    out
}

/// `ptx` with its `.loc`/`.file` lines emptied, `.file 1 "ptx"` after `.address_size` (or
/// `.target`), and a line `.loc 1 N 0` put before each line `N` of `instruction_lines` (the
/// `.loc` carries the original number, so the lines it adds do not matter).
pub fn tag_lines(ptx: &str, instruction_lines: &[u32]) -> String {
    let mut lines: Vec<String> = ptx.lines().map(str::to_string).collect();
    let mut file_at = None;
    for (i, l) in lines.iter_mut().enumerate() {
        let t = l.trim_start();
        if t.starts_with(".loc") || t.starts_with(".file") {
            l.clear();
        } else if t.starts_with(".address_size") || (file_at.is_none() && t.starts_with(".target"))
        {
            file_at = Some(i);
        }
    }
    for &n in instruction_lines {
        if let Some(l) = lines.get_mut(n as usize - 1).filter(|_| n > 0) {
            *l = format!("\t.loc 1 {n} 0\n{l}");
        }
    }
    if let Some(i) = file_at {
        lines[i].push_str(" .file 1 \"ptx\"");
    }
    let mut s = lines.join("\n");
    s.push('\n');
    s
}

/// The memory instructions of `nvdisasm -g -c` output, each with the PTX line of the last
/// `//## File "...", line N` before it and the function whose `.text.NAME` section holds it.
/// Instructions before any line marker are skipped.
pub fn parse_nvdisasm(text: &str) -> Vec<SassMemory> {
    let mut out = Vec::new();
    let mut function = String::new();
    let mut line = None;
    for l in text.lines() {
        let t = l.trim();
        if let Some(rest) = t.strip_prefix(".text.") {
            function = rest.trim_end_matches(':').to_string();
            line = None;
            continue;
        }
        if let Some(pos) = t.strip_prefix("//## File") {
            line = pos
                .rsplit_once("line ")
                .and_then(|(_, n)| n.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok());
            continue;
        }
        // `/*0240*/ @!P0 LDG.E R26, desc[UR8][R26.64] ;`
        let Some(rest) = t.strip_prefix("/*").and_then(|r| r.split_once("*/")) else {
            continue;
        };
        let mut words = rest.1.split_whitespace();
        let mut opcode = words.next().unwrap_or("");
        if opcode.starts_with('@') {
            opcode = words.next().unwrap_or("");
        }
        let (Some(ptx_line), Some((width, store))) = (line, memory_kind(opcode)) else {
            continue;
        };
        let local = opcode.starts_with("LDL") || opcode.starts_with("STL");
        out.push(SassMemory {
            function: function.clone(),
            ptx_line,
            opcode: opcode.trim_end_matches(';').to_string(),
            width,
            store,
            local_offset: local.then(|| frame_offset(t)).flatten(),
            spill_marked: local && t.contains("SpillRefill"),
        });
    }
    out
}

/// Every instruction of `nvdisasm -g -c` output with the PTX line of the last
/// `//## File "...", line N` before it and its function; instructions before any line
/// marker are skipped.
pub fn parse_nvdisasm_text(text: &str) -> Vec<SassText> {
    let mut out = Vec::new();
    let mut function = String::new();
    let mut line = None;
    for l in text.lines() {
        let t = l.trim();
        if let Some(rest) = t.strip_prefix(".text.") {
            function = rest.trim_end_matches(':').to_string();
            line = None;
            continue;
        }
        if let Some(pos) = t.strip_prefix("//## File") {
            line = pos
                .rsplit_once("line ")
                .and_then(|(_, n)| n.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok());
            continue;
        }
        let (Some(ptx_line), Some((_, rest))) =
            (line, t.strip_prefix("/*").and_then(|r| r.split_once("*/")))
        else {
            continue;
        };
        // `LDS R6, [R16] ;` or `STL [R1+0x30], R24 (*"SpillRefill"*);`
        let body = rest.split(" (*").next().unwrap_or(rest);
        let body = body.trim().trim_end_matches(';').trim_end();
        if body.is_empty() {
            continue;
        }
        out.push(SassText {
            function: function.clone(),
            ptx_line,
            text: body.split_whitespace().collect::<Vec<_>>().join(" "),
        });
    }
    out
}

/// The immediate of the first `[R+IMM]` (or `[R]`: 0) address operand of `text`.
fn frame_offset(text: &str) -> Option<i64> {
    let inner = text.split('[').nth(1)?.split(']').next()?;
    let Some((_, imm)) = inner.split_once('+') else {
        return Some(0);
    };
    let imm = imm.trim();
    let (neg, imm) = imm.strip_prefix('-').map_or((false, imm), |r| (true, r));
    let v = i64::from_str_radix(imm.strip_prefix("0x")?, 16).ok()?;
    Some(if neg { -v } else { v })
}

/// Bytes per lane and whether it stores, for the SASS loads and stores of global, shared,
/// local and generic memory (`LDG`, `LDS`, `LDL`, `LD`, `STG`, `STS`, `STL`, `ST`); `None`
/// for every other opcode (atomics, texture, `LDGSTS`, `LDSM`, constant loads `LDC`).
fn memory_kind(opcode: &str) -> Option<(u32, bool)> {
    let mut parts = opcode.trim_end_matches(';').split('.');
    let store = match parts.next()? {
        "LDG" | "LDS" | "LDL" | "LD" => false,
        "STG" | "STS" | "STL" | "ST" => true,
        _ => return None,
    };
    let mut width = 4;
    for p in parts {
        width = match p {
            "U8" | "S8" => 1,
            "U16" | "S16" => 2,
            "64" => 8,
            "128" => 16,
            _ => continue,
        };
    }
    Some((width, store))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_instruction_lines_and_drops_the_compilers_positions() {
        let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n.file 1 \"a.cu\"\n\
                   .visible .entry k()\n{\n.loc 1 3 5\nret;\n}\n";
        let t = tag_lines(ptx, &[8]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[2], ".address_size 64 .file 1 \"ptx\"");
        assert_eq!((lines[3], lines[6]), ("", ""));
        assert_eq!((lines[7], lines[8]), ("\t.loc 1 8 0", "ret;"));
        assert_eq!(lines.len(), 10);
    }

    #[test]
    fn dataflow_runs_only_where_ptxas_spilled() {
        let report = |spill: u32| {
            format!(
                "ptxas info    : Compiling entry function '_Z1kPf' for 'sm_90'\n\
                 ptxas info    : Function properties for _Z1kPf\n    \
                 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
                 ptxas info    : Function properties for _Z1gPf\n    \
                 {spill} bytes stack frame, {spill} bytes spill stores, 0 bytes spill loads\n"
            )
        };
        assert!(!spills(&report(0)));
        // One function of two spills: its SpillRefill marks are needed.
        assert!(spills(&report(8)));
        // A report without functions proves nothing.
        assert!(spills("ptxas info    : 0 bytes gmem\n"));
    }

    #[test]
    fn reads_the_ptxas_report() {
        let text = "// ptxas info    : 0 bytes gmem\n\
// ptxas info    : Compiling entry function '_Z1kPf' for 'sm_90'\n\
// ptxas info    : Function properties for _Z1kPf\n\
//     24 bytes stack frame, 20 bytes spill stores, 12 bytes spill loads\n\
// ptxas info    : Used 16 registers, used 1 barriers, 2048 bytes smem\n";
        assert_eq!(
            parse_ptxas_report(text),
            [FunctionResources {
                function: "_Z1kPf".into(),
                registers: 16,
                stack_bytes: 24,
                spill_store_bytes: 20,
                spill_load_bytes: 12,
                shared_bytes: 2048,
            }]
        );
    }

    #[test]
    fn reads_widths_lines_and_functions() {
        let text = "\
//--------------------- .text._Z1kPf --------------------------
.text._Z1kPf:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
\t//## File \"ptx\", line 240
        /*02a0*/                   LDS R6, [R16] ;
\t//## File \"ptx\", line 241
        /*02b0*/                   LDS.128 R8, [R18] ;
\t//## File \"ptx\", line 250
        /*02c0*/              @!P0 STG.E.64 desc[UR8][R2.64], R4 ;
        /*02d0*/                   LDG.E.U8.CONSTANT R3, desc[UR8][R2.64] ;
        /*02e0*/                   ATOMS.POPC.INC.32 RZ, [R3+URZ] ;
        /*02f0*/                   STL [R1+0x30], R24                 (*\"SpillRefill\"*);
        /*0300*/                   LDL.LU.64 R26, [R1]                (*\"SpillRefill\"*);
";
        let m = parse_nvdisasm(text);
        let got: Vec<_> = m
            .iter()
            .map(|s| {
                (
                    s.function.as_str(),
                    s.ptx_line,
                    s.opcode.as_str(),
                    s.width,
                    s.store,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("_Z1kPf", 240, "LDS", 4, false),
                ("_Z1kPf", 241, "LDS.128", 16, false),
                ("_Z1kPf", 250, "STG.E.64", 8, true),
                ("_Z1kPf", 250, "LDG.E.U8.CONSTANT", 1, false),
                ("_Z1kPf", 250, "STL", 4, true),
                ("_Z1kPf", 250, "LDL.LU.64", 8, false),
            ]
        );
        let local: Vec<_> = m.iter().map(|s| (s.local_offset, s.spill_marked)).collect();
        assert_eq!(
            local,
            [
                (None, false),
                (None, false),
                (None, false),
                (None, false),
                (Some(48), true),
                (Some(0), true)
            ]
        );
        // Every instruction after a line marker, guard and operands kept.
        let all: Vec<(u32, String)> = parse_nvdisasm_text(text)
            .into_iter()
            .map(|s| (s.ptx_line, s.text))
            .collect();
        assert_eq!(all.len(), 7);
        assert_eq!(all[0], (240, "LDS R6, [R16]".to_string()));
        assert_eq!(
            all[2],
            (250, "@!P0 STG.E.64 desc[UR8][R2.64], R4".to_string())
        );
        assert_eq!(all[5], (250, "STL [R1+0x30], R24".to_string()));
    }
}
