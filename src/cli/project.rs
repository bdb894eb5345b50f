//! The launch file (`warpscope.toml`): a project's launches and their budgets, read by the
//! library ([`warpscope::launch_file`]: TOML, checks, budgets, each launch as `analyze`'s
//! flags); here those flags are parsed by clap into [`LaunchArgs`], so a key means exactly
//! what its flag means, and the launches are run. The keys are documented in
//! `examples/warpscope.toml`.

use super::analyze::AnalyzeFormat;
use super::emit;
use super::launch::{job, LaunchArgs};
use anyhow::{Context, Result};
use clap::Parser;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use warpscope::report::Analysis;

pub use warpscope::launch_file::{Place, PlacedBudget};

/// `launch`'s flags as clap parses them (no program name).
#[derive(Parser)]
#[command(name = "launch", no_binary_name = true)]
struct LaunchFlags {
    #[command(flatten)]
    launch: LaunchArgs,
}

/// One launch of the file, ready to analyze.
pub struct Launch {
    pub name: String,
    /// Where its `[[launch]]` table starts.
    pub at: Place,
    /// The flags of `analyze` it stands for (for messages).
    pub flags: Vec<String>,
    args: LaunchArgs,
    gpu: Option<String>,
    profile: Option<PathBuf>,
    pub budgets: Vec<PlacedBudget>,
}

impl Launch {
    /// The kernel's file, as resolved against the launch file's folder.
    pub fn file(&self) -> Option<&str> {
        self.args.file()
    }

    /// Runs the analysis. `gpu` (the command line's `--gpu NAME` and `--profile FILE`)
    /// overrides the launch's `gpu` and `profile`.
    pub fn analyze(&self, gpu: Option<(&str, Option<&Path>)>) -> Result<Analysis> {
        let mut j = job(&self.args, None)?;
        let (gpu, profile) = match gpu {
            Some((g, p)) => (Some(g.to_string()), p.map(Path::to_path_buf)),
            None => (self.gpu.clone(), self.profile.clone()),
        };
        if let Some(name) = gpu {
            let json = profile
                .map(|p| super::input::read_text(&p, "profile"))
                .transpose()?;
            j.req.gpus = vec![warpscope::GpuTarget::new(&name, json.as_deref())?];
        }
        j.analyze(&j.req)
    }

    /// [`Launch::analyze`], with errors naming the launch and its place.
    pub fn analyze_named(&self, gpu: Option<(&str, Option<&Path>)>) -> Result<Analysis> {
        self.analyze(gpu).with_context(|| {
            format!(
                "{}: launch '{}' (as `warpscope analyze {}`)",
                self.at,
                self.name,
                self.command_line()
            )
        })
    }

    /// The launch as `analyze`'s flags, quoted for a POSIX shell where needed.
    pub fn command_line(&self) -> String {
        let safe = |c: char| c.is_ascii_alphanumeric() || "_-=,./:+@%".contains(c);
        self.flags
            .iter()
            .map(|f| {
                if !f.is_empty() && f.chars().all(safe) {
                    f.clone()
                } else {
                    format!("'{}'", f.replace('\'', "'\\''"))
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The flags of one launch that `analyze --launches` does not take (the file sets them).
pub const LAUNCH_FLAGS: [&str; 23] = [
    "file",
    "launch",
    "init",
    "expr",
    "kernel",
    "grid",
    "block",
    "args",
    "allocs",
    "defines",
    "cc",
    "dynamic_smem",
    "l1",
    "smem_bank_size",
    "max_steps",
    "max_memory",
    "frontend",
    "nvcc",
    "include_dirs",
    "std",
    "opt_level",
    "nvcc_flags",
    "sweep",
];

/// One launch's analysis in the JSON of `analyze --launches`.
#[derive(serde::Serialize)]
struct Named<'a> {
    name: &'a str,
    analysis: Analysis,
}

/// `analyze --launches FILE`: every launch (or those of `only`), as one table each with
/// its name, or as JSON `{"launch_file": FILE, "launches": [{"name", "analysis"}, ...]}`.
pub fn analyze_all(
    path: &Path,
    only: &[String],
    gpu: Option<(&str, Option<&Path>)>,
    format: AnalyzeFormat,
    view: &warpscope::report::rows::RowView,
) -> Result<()> {
    let project = load(path)?;
    let launches = project.select(only)?;
    match format {
        AnalyzeFormat::Table => {
            let color = std::io::stdout().is_terminal();
            let width = warpscope::report::table_width();
            for (i, l) in launches.iter().enumerate() {
                let a = l.analyze_named(gpu)?;
                let sep = if i == 0 { "" } else { "\n" };
                emit(
                    None,
                    &format!(
                        "{sep}== launch {} ({}) ==\n{}",
                        l.name,
                        l.at,
                        warpscope::report::render_table_view(&a, color, width, view)
                    ),
                )?;
                super::emit_notes(&a.notes);
                super::emit_findings(&a.findings);
            }
            Ok(())
        }
        AnalyzeFormat::Csv => {
            let mut all = Vec::new();
            for l in &launches {
                all.push((vec![l.name.clone()], l.analyze_named(gpu)?));
            }
            let items: Vec<(Vec<String>, &Analysis)> =
                all.iter().map(|(n, a)| (n.clone(), a)).collect();
            emit(
                None,
                &warpscope::report::render_labeled_csv(&["launch"], &items)?,
            )
        }
        AnalyzeFormat::Json => {
            let mut all = Vec::new();
            for l in &launches {
                all.push(Named {
                    name: &l.name,
                    analysis: l.analyze_named(gpu)?,
                });
            }
            let v = serde_json::json!({
                "schema_version": warpscope::report::SCHEMA_VERSION,
                "launch_file": path.display().to_string(),
                "launches": all,
            });
            emit(None, &(serde_json::to_string_pretty(&v)? + "\n"))
        }
    }
}

/// The launch file, read and checked.
pub struct Project {
    pub path: PathBuf,
    pub launches: Vec<Launch>,
}

impl Project {
    /// The launches named in `only`, or all of them; an unknown name is an error that lists
    /// the file's names.
    pub fn select(&self, only: &[String]) -> Result<Vec<&Launch>> {
        if only.is_empty() {
            return Ok(self.launches.iter().collect());
        }
        only.iter()
            .map(|n| {
                self.launches
                    .iter()
                    .find(|l| &l.name == n)
                    .with_context(|| {
                        format!(
                            "{}: no launch named '{n}'; its launches: {}",
                            self.path.display(),
                            self.names()
                        )
                    })
            })
            .collect()
    }

    fn names(&self) -> String {
        self.launches
            .iter()
            .map(|l| l.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// clap's message without its "error: " head and its usage and help lines.
fn clap_message(e: &clap::Error) -> String {
    let s = e.to_string();
    let s = s.trim_start_matches("error: ");
    s.lines()
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Reads the launch file at `path` ([`warpscope::launch_file::read`], its flags parsed by
/// clap as `analyze`'s), relative paths from the file's folder, its `nvcc` keys allowed
/// with `--allow-launch-file-tools`.
///
/// Errors: a file that cannot be read (not a regular file, over `--max-input-bytes`, not
/// UTF-8), and those of [`load_text`].
pub fn load(path: &Path) -> Result<Project> {
    let text = super::input::read_text(path, "launch file").with_context(|| {
        format!(
            "cannot read the launch file {}: give its path with --launches FILE",
            path.display()
        )
    })?;
    load_text(path, &text)
}

/// Reads `text`, the launch file at `path`.
///
/// Errors (each naming `path:line:column`): those of [`warpscope::launch_file::read`], a
/// value `analyze`'s flags reject (clap's message, without its usage lines).
pub fn load_text(path: &Path, text: &str) -> Result<Project> {
    let shown = path.display().to_string();
    let base = path.parent().unwrap_or(Path::new(""));
    let read = warpscope::launch_file::read(
        text,
        &shown,
        base,
        super::launch_file_tools_allowed(),
        |flags| {
            LaunchFlags::try_parse_from(flags)
                .map(|f| f.launch)
                .map_err(|e| clap_message(&e))
        },
    )?;
    let launches = read
        .into_iter()
        .map(|l| Launch {
            name: l.name,
            at: l.at,
            flags: l.flags,
            args: l.parsed,
            gpu: l.gpu,
            profile: l.profile,
            budgets: l.budgets,
        })
        .collect();
    Ok(Project {
        path: path.to_path_buf(),
        launches,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: &str = "[[launch]]\nname = \"t\"\nfile = \"k.cu\"\nkernel = \"k\"\ngrid = [32, 32]\nblock = \"32,8\"\n";

    fn load_one(text: &str) -> Result<Project> {
        load_text(Path::new("proj/warpscope.toml"), text)
    }

    /// The reading itself is tested in crates/warpscope/src/launch_file_tests.rs; here, what
    /// clap makes of the flags.
    #[test]
    fn a_value_the_flag_rejects_names_the_launch() {
        let e = load_one(&format!("{ONE}frontend = \"gcc\"\n"))
            .err()
            .unwrap();
        let m = format!("{e:#}");
        assert!(m.starts_with("proj/warpscope.toml:1:1: launch 't'"), "{m}");
        assert!(m.contains("'gcc'") && m.contains("--frontend"), "{m}");
        assert!(!m.contains("Usage:"), "{m}");
        let p = load_one(ONE).unwrap();
        let l = &p.launches[0];
        assert_eq!(l.file(), Some("proj/k.cu"));
        assert_eq!(
            l.command_line(),
            "--kernel=k --grid=32,32 --block=32,8 -- proj/k.cu"
        );
    }

    /// Every launch file of the fuzz target's corpus and regressions (fuzz/corpus/launch_file,
    /// fuzz/regressions/launch_file) through the command's own reading, clap included: a value
    /// or an error, never a panic. The corpus holds launch files clap accepts and rejects.
    #[test]
    fn the_launch_file_fuzz_corpus_reads_through_clap_without_panics() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
        let mut files: Vec<PathBuf> = ["corpus", "regressions"]
            .iter()
            .filter_map(|d| std::fs::read_dir(root.join(d).join("launch_file")).ok())
            .flat_map(|rd| rd.flatten().map(|e| e.path()))
            .collect();
        files.sort();
        assert!(files.len() >= 10, "{} launch files", files.len());
        let mut read = 0;
        for f in &files {
            let bytes = std::fs::read(f).unwrap();
            let Ok(text) = String::from_utf8(bytes) else {
                continue;
            };
            let r = std::panic::catch_unwind(|| load_one(&text).is_ok());
            read += r.unwrap_or_else(|_| panic!("panic on {}", f.display())) as usize;
        }
        assert!(read > 0, "no launch file of the corpus was read");
    }
}
