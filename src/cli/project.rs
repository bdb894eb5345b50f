//! The launch file (`warpscope.toml`): a project's launches and their budgets, read with the
//! `toml` crate. Each launch becomes the flag list `analyze` takes and is parsed by clap
//! into [`LaunchArgs`], so a key means exactly what its flag means. The keys are documented
//! in `examples/warpscope.toml`.

use super::analyze::AnalyzeFormat;
use super::emit;
use super::launch::{job, LaunchArgs};
use anyhow::{bail, Context, Result};
use clap::Parser;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;
use warpscope::budget::{Budget, Scope};
use warpscope::report::Analysis;

/// The file: an optional default `cc` and the `[[launch]]` tables.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileToml {
    /// Compute capabilities of every launch that sets none.
    cc: Option<Spanned<Ccs>>,
    #[serde(default)]
    launch: Vec<Spanned<LaunchToml>>,
}

/// `"9.0"`, `"1.3,9.0"` or `["1.3", "9.0"]`.
#[derive(Deserialize, Clone)]
#[serde(
    untagged,
    expecting = "expected compute capabilities as \"9.0\", \"1.3,9.0\", [\"1.3\", \"9.0\"] or \"all\""
)]
enum Ccs {
    One(String),
    List(Vec<String>),
}

impl Ccs {
    fn flag(&self) -> String {
        match self {
            Ccs::One(s) => s.clone(),
            Ccs::List(v) => v.join(","),
        }
    }
}

/// `256`, `[32, 8]` or `"32,8"`.
#[derive(Deserialize)]
#[serde(
    untagged,
    expecting = "expected dimensions as 256, [32, 8] or \"32,8\""
)]
enum Dims {
    One(u64),
    List(Vec<u64>),
    Text(String),
}

impl Dims {
    fn flag(&self) -> String {
        match self {
            Dims::One(n) => n.to_string(),
            Dims::List(v) => v
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(","),
            Dims::Text(s) => s.clone(),
        }
    }
}

/// A scalar argument's value: `1024`, `1.5`, `"0x10"`, `true` (1).
#[derive(Deserialize)]
#[serde(untagged, expecting = "expected a number, a string or true/false")]
enum Scalar {
    Int(i64),
    Float(f64),
    Bool(bool),
    Text(String),
}

impl Scalar {
    fn text(&self) -> String {
        match self {
            Scalar::Int(n) => n.to_string(),
            Scalar::Float(x) => x.to_string(),
            Scalar::Bool(b) => (*b as u8).to_string(),
            Scalar::Text(s) => s.clone(),
        }
    }
}

/// `["N=4", "FAST"]` or `{ N = 4, FAST = true }` (true: defined with no value).
#[derive(Deserialize)]
#[serde(
    untagged,
    expecting = "expected macros as [\"N=4\", \"FAST\"] or { N = 4, FAST = true }"
)]
enum Defines {
    List(Vec<String>),
    Table(BTreeMap<String, Scalar>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LaunchToml {
    name: String,
    file: String,
    kernel: String,
    grid: Dims,
    block: Dims,
    #[serde(default)]
    args: BTreeMap<String, Scalar>,
    #[serde(default)]
    allocs: BTreeMap<String, u64>,
    #[serde(default)]
    init: BTreeMap<String, String>,
    defines: Option<Defines>,
    #[serde(default)]
    include_dirs: Vec<String>,
    std: Option<String>,
    opt_level: Option<Scalar>,
    #[serde(default)]
    nvcc_flags: Vec<String>,
    frontend: Option<String>,
    nvcc: Option<String>,
    cc: Option<Ccs>,
    dynamic_smem: Option<u64>,
    l1: Option<String>,
    smem_bank_size: Option<u64>,
    max_steps: Option<u64>,
    gpu: Option<String>,
    profile: Option<String>,
    #[serde(default)]
    budget: Vec<Spanned<BudgetToml>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BudgetToml {
    line: Option<u32>,
    column: Option<u32>,
    site: Option<usize>,
    cc: Option<Ccs>,
    max_sectors_per_request: Option<f64>,
    min_efficiency: Option<f64>,
    max_wavefronts_per_request: Option<f64>,
    max_total_sectors: Option<u64>,
    max_excess_wavefronts: Option<u64>,
    max_conflict_ways: Option<f64>,
}

/// `launch`'s flags as clap parses them (no program name).
#[derive(Parser)]
#[command(name = "launch", no_binary_name = true)]
struct LaunchFlags {
    #[command(flatten)]
    launch: LaunchArgs,
}

/// A budget of the file and where it is (`warpscope.toml:31:1`).
pub struct PlacedBudget {
    pub at: Place,
    pub budget: Budget,
}

/// A place in the launch file.
#[derive(Clone, Debug)]
pub struct Place {
    pub file: String,
    pub line: usize,
    pub column: usize,
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
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

/// The start of each line of a text, found once, so that the place of each of 20,000
/// launches is a binary search rather than a scan from the file's start (which made a
/// large launch file quadratic).
struct Lines<'t> {
    text: &'t str,
    starts: Vec<usize>,
}

impl<'t> Lines<'t> {
    fn new(text: &'t str) -> Self {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Lines { text, starts }
    }

    /// 1-based line and column (in characters) of a byte offset.
    fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|&s| s <= offset);
        let start = self.starts[line - 1];
        let col = self
            .text
            .get(start..offset)
            .map(|l| l.chars().count())
            .unwrap_or(0)
            + 1;
        (line, col)
    }

    fn place(&self, path: &str, span: Range<usize>) -> Place {
        let (line, column) = self.line_col(span.start);
        Place {
            file: path.to_string(),
            line,
            column,
        }
    }
}

/// A path of the file, relative to the file's folder unless absolute.
fn resolve(base: &Path, p: &str) -> String {
    let path = Path::new(p);
    if path.is_absolute() {
        p.to_string()
    } else {
        base.join(path).to_string_lossy().into_owned()
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

/// `; did you mean `KEY`?` for toml's "unknown field `X`, expected one of `A`, `B`, …"
/// when one expected key is within two edits of `X` (or shares its first letters), else "".
fn did_you_mean(message: &str) -> String {
    let Some(rest) = message.strip_prefix("unknown field `") else {
        return String::new();
    };
    let Some((unknown, expected)) = rest.split_once('`') else {
        return String::new();
    };
    let best = expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|k| (strsim::damerau_levenshtein(unknown, k), k))
        .min();
    match best {
        Some((d, k)) if d <= 2.max(unknown.len() / 4) && d < unknown.len() => {
            format!("; did you mean `{k}`?")
        }
        _ => String::new(),
    }
}

/// Reads the launch file at `path`.
///
/// Errors name `path:line:column`: TOML syntax, an unknown key (toml's error names it and
/// the keys it expected), a missing `name`/`file`/`kernel`/`grid`/`block`, a value of the
/// wrong type, a value the flag rejects, two launches of one name, a budget with no limit or
/// with both `line` and `site`, an unknown CC.
pub fn load(path: &Path) -> Result<Project> {
    let shown = path.display().to_string();
    let text = super::input::read_text(path, "launch file").with_context(|| {
        format!("cannot read the launch file {shown}: give its path with --launches FILE")
    })?;
    let base = path.parent().unwrap_or(Path::new("")).to_path_buf();
    let lines = Lines::new(&text);
    let file: FileToml = toml::from_str(&text).map_err(|e| {
        let at = match e.span() {
            Some(s) => lines.place(&shown, s).to_string(),
            None => shown.clone(),
        };
        anyhow::anyhow!(
            "{at}: {}{}",
            e.message().trim_end(),
            did_you_mean(e.message())
        )
    })?;
    if file.launch.is_empty() {
        bail!(
            "{shown}: no launch; add a [[launch]] table with name, file, kernel, grid and block (examples/warpscope.toml shows every key)"
        );
    }
    let default_cc = match &file.cc {
        Some(c) => {
            let flag = c.get_ref().flag();
            check_ccs(&flag).map_err(|e| {
                anyhow::anyhow!("{}: cc = {flag}: {e}", lines.place(&shown, c.span()))
            })?;
            Some(flag)
        }
        None => None,
    };
    let mut launches: Vec<Launch> = Vec::new();
    // Name → index in `launches`: a duplicate is found without a scan per launch.
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for sl in file.launch {
        let at = lines.place(&shown, sl.span());
        let l = sl.into_inner();
        if let Some(n) = l
            .nvcc
            .as_ref()
            .filter(|_| !super::launch_file_tools_allowed())
        {
            bail!(
                "{at}: launch '{}': nvcc = \"{n}\" names a program for warpscope to run; a launch file's tools run only with --allow-launch-file-tools (or drop the key and pass --nvcc PATH on the command line)",
                l.name
            );
        }
        if let Some(&prev) = seen.get(&l.name) {
            bail!(
                "{at}: a second launch named '{}' (the first is at {}); give each launch its own name",
                l.name,
                launches[prev].at
            );
        }
        seen.insert(l.name.clone(), launches.len());
        let flags = flags_of(&l, &base, default_cc.as_deref());
        let args = LaunchFlags::try_parse_from(&flags)
            .map_err(|e| anyhow::anyhow!("{at}: launch '{}': {}", l.name, clap_message(&e)))?
            .launch;
        let mut budgets = Vec::new();
        for sb in l.budget {
            let bat = lines.place(&shown, sb.span());
            let b = sb.into_inner();
            let budget = budget(b)
                .map_err(|e| anyhow::anyhow!("{bat}: budget of launch '{}': {e:#}", l.name))?;
            budgets.push(PlacedBudget { at: bat, budget });
        }
        launches.push(Launch {
            name: l.name,
            at,
            flags,
            args,
            gpu: l.gpu,
            profile: l.profile.map(|p| PathBuf::from(resolve(&base, &p))),
            budgets,
        });
    }
    Ok(Project {
        path: path.to_path_buf(),
        launches,
    })
}

/// The flags of `analyze` that launch `l` stands for, paths resolved against `base` (the
/// launch file's folder), the file's `cc` as the default: `--kernel=K --grid=X,Y ... -- FILE`.
fn flags_of(l: &LaunchToml, base: &Path, default_cc: Option<&str>) -> Vec<String> {
    let mut flags = vec![
        format!("--kernel={}", l.kernel),
        format!("--grid={}", l.grid.flag()),
        format!("--block={}", l.block.flag()),
    ];
    flags.extend(
        l.args
            .iter()
            .map(|(n, v)| format!("--arg={n}={}", v.text())),
    );
    flags.extend(l.allocs.iter().map(|(n, v)| format!("--alloc={n}={v}")));
    flags.extend(l.init.iter().map(|(n, mode)| {
        // A data file is relative to the launch file's folder, like every path here.
        let mode = match mode.strip_prefix("file:") {
            Some(p) => format!("file:{}", resolve(base, p)),
            None => mode.clone(),
        };
        format!("--init={n}={mode}")
    }));
    match &l.defines {
        Some(Defines::List(v)) => flags.extend(v.iter().map(|d| format!("-D{d}"))),
        Some(Defines::Table(t)) => flags.extend(t.iter().map(|(n, v)| match v {
            Scalar::Bool(true) => format!("-D{n}"),
            v => format!("-D{n}={}", v.text()),
        })),
        None => {}
    }
    flags.extend(
        l.include_dirs
            .iter()
            .map(|d| format!("-I{}", resolve(base, d))),
    );
    if let Some(s) = &l.std {
        flags.push(format!("--std={s}"));
    }
    if let Some(o) = &l.opt_level {
        flags.push(format!("-O{}", o.text()));
    }
    for f in &l.nvcc_flags {
        flags.push(format!("--nvcc-flag={f}"));
    }
    if let Some(f) = &l.frontend {
        flags.push(format!("--frontend={f}"));
    }
    if let Some(n) = &l.nvcc {
        // A program to run: the launch-file check refuses it without --allow-launch-file-tools.
        flags.push(format!("--nvcc={}", resolve(base, n)));
    }
    if let Some(cc) =
        l.cc.as_ref()
            .map(Ccs::flag)
            .or(default_cc.map(str::to_string))
    {
        flags.push(format!("--cc={cc}"));
    }
    if let Some(n) = l.dynamic_smem {
        flags.push(format!("--dynamic-smem={n}"));
    }
    if let Some(m) = &l.l1 {
        flags.push(format!("--l1={m}"));
    }
    if let Some(b) = l.smem_bank_size {
        flags.push(format!("--smem-bank-size={b}"));
    }
    if let Some(n) = l.max_steps {
        flags.push(format!("--max-steps={n}"));
    }
    flags.push("--".into());
    flags.push(resolve(base, &l.file));
    flags
}

/// The CCs of a list, normalized to the report's names (`"9.0"`).
fn check_ccs(list: &str) -> Result<Vec<String>> {
    let archs = warpscope::model::arch::parse_list(list).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(archs.iter().map(|a| a.cc.to_string()).collect())
}

fn budget(b: BudgetToml) -> Result<Budget> {
    let scope = match (b.line, b.column, b.site) {
        (Some(_), _, Some(_)) => bail!("give line or site, not both"),
        (None, Some(_), _) => bail!("column needs a line"),
        (Some(line), column, None) => Scope::Line { line, column },
        (None, None, Some(n)) => Scope::Row(n),
        (None, None, None) => Scope::Launch,
    };
    let ccs =
        b.cc.map(|c| {
            let flag = c.flag();
            check_ccs(&flag).map_err(|e| anyhow::anyhow!("cc = {flag}: {e}"))
        })
        .transpose()?;
    let budget = Budget {
        scope,
        ccs,
        max_sectors_per_request: b.max_sectors_per_request,
        min_efficiency: b.min_efficiency,
        max_wavefronts_per_request: b.max_wavefronts_per_request,
        max_total_sectors: b.max_total_sectors,
        max_excess_wavefronts: b.max_excess_wavefronts,
        max_conflict_ways: b.max_conflict_ways,
    };
    budget.validate()?;
    Ok(budget)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_text(text: &str) -> Result<Project> {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("warpscope-project-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("warpscope.toml");
        std::fs::write(&p, text).unwrap();
        load(&p)
    }

    const ONE: &str = "[[launch]]\nname = \"t\"\nfile = \"k.cu\"\nkernel = \"k\"\ngrid = [32, 32]\nblock = \"32,8\"\nargs = { width = 1024, alpha = 1.5 }\nallocs = { a = 4096 }\ndefines = { N = 4, FAST = true }\ninclude_dirs = [\"inc\"]\nopt_level = 2\ncc = [\"9.0\", \"8.0\"]\ndynamic_smem = 1024\n";

    #[test]
    fn keys_become_the_flags_of_analyze_with_paths_from_the_files_folder() {
        let p = load_text(ONE).unwrap();
        let l = &p.launches[0];
        let dir = p.path.parent().unwrap();
        let f = &l.flags;
        assert_eq!(f[0], "--kernel=k");
        assert_eq!(f[1], "--grid=32,32");
        assert_eq!(f[2], "--block=32,8");
        assert!(f.contains(&"--arg=width=1024".to_string()), "{f:?}");
        assert!(f.contains(&"--arg=alpha=1.5".to_string()), "{f:?}");
        assert!(f.contains(&"--alloc=a=4096".to_string()), "{f:?}");
        assert!(f.contains(&"-DN=4".to_string()) && f.contains(&"-DFAST".to_string()));
        assert!(f.contains(&format!("-I{}", dir.join("inc").display())));
        assert!(f.contains(&"-O2".to_string()) && f.contains(&"--cc=9.0,8.0".to_string()));
        assert!(f.contains(&"--dynamic-smem=1024".to_string()));
        assert_eq!(f.last().unwrap(), &dir.join("k.cu").display().to_string());
        assert_eq!((l.at.line, l.at.column), (1, 1));
    }

    /// `init` becomes `--init NAME=MODE` (the flag of analyze that fills a pointer
    /// parameter), a `file:` path relative to the launch file's folder.
    #[test]
    fn init_becomes_init_flags_with_data_files_from_the_files_folder() {
        let text = format!(
            "{}init = {{ idx = \"iota\", x = \"random:7\", w = \"file:data/w.npy\", y = \"file:/abs/y.bin\" }}\n",
            ONE.replace("[[launch]]\n", "")
        );
        let l: LaunchToml = toml::from_str(&text).unwrap();
        let f = flags_of(&l, Path::new("proj"), None);
        let init: Vec<&str> = f
            .iter()
            .filter(|x| x.starts_with("--init="))
            .map(String::as_str)
            .collect();
        let data = Path::new("proj").join("data/w.npy");
        assert_eq!(
            init,
            [
                "--init=idx=iota".to_string(),
                format!("--init=w=file:{}", data.display()),
                "--init=x=random:7".to_string(),
                "--init=y=file:/abs/y.bin".to_string(),
            ]
        );
        // The launch's own cc wins over the file's.
        assert!(f.contains(&"--cc=9.0,8.0".to_string()), "{f:?}");
        let mut no_cc: LaunchToml = toml::from_str(&text).unwrap();
        no_cc.cc = None;
        let f = flags_of(&no_cc, Path::new("proj"), Some("7.0"));
        assert!(f.contains(&"--cc=7.0".to_string()), "{f:?}");
    }

    #[test]
    fn unknown_key_is_named_with_its_line_and_column() {
        let e = load_text(&ONE.replace("block = ", "blok = "))
            .err()
            .unwrap();
        let m = format!("{e:#}");
        assert!(m.contains("warpscope.toml:6:1:"), "{m}");
        assert!(m.contains("unknown field `blok`"), "{m}");
        assert!(m.contains("did you mean `block`?"), "{m}");
        // A budget key one letter off, and a name close to none.
        let e = load_text(&format!(
            "{ONE}[[launch.budget]]\nmax_sector_per_request = 4\n"
        ))
        .err()
        .unwrap();
        let m = format!("{e:#}");
        assert!(m.contains("did you mean `max_sectors_per_request`?"), "{m}");
        let e = load_text(&ONE.replace("block = ", "threads_per_cta = "))
            .err()
            .unwrap();
        assert!(!format!("{e:#}").contains("did you mean"), "{e:#}");
    }

    #[test]
    fn missing_kernel_names_the_launch_table() {
        let e = load_text(&ONE.replace("kernel = \"k\"\n", ""))
            .err()
            .unwrap();
        let m = format!("{e:#}");
        assert!(m.contains("warpscope.toml:1:1:"), "{m}");
        assert!(m.contains("missing field `kernel`"), "{m}");
    }

    #[test]
    fn a_value_the_flag_rejects_names_the_launch() {
        let e = load_text(&format!("{ONE}frontend = \"gcc\"\n"))
            .err()
            .unwrap();
        let m = format!("{e:#}");
        assert!(m.contains("warpscope.toml:1:1: launch 't'"), "{m}");
        assert!(m.contains("'gcc'") && m.contains("--frontend"), "{m}");
    }

    #[test]
    fn budgets_are_read_with_their_place() {
        let text = format!(
            "cc = \"9.0\"\n{ONE}\n[[launch.budget]]\nmax_sectors_per_request = 4\n\n[[launch.budget]]\nline = 42\ncc = \"9.0\"\nmin_efficiency = 50\n"
        );
        let p = load_text(&text).unwrap();
        let b = &p.launches[0].budgets;
        assert_eq!((b[0].at.line, b[1].at.line), (16, 19));
        assert_eq!(b[0].budget.scope, Scope::Launch);
        assert_eq!(b[0].budget.max_sectors_per_request, Some(4.0));
        assert_eq!(
            b[1].budget.scope,
            Scope::Line {
                line: 42,
                column: None
            }
        );
        assert_eq!(b[1].budget.ccs, Some(vec!["9.0".to_string()]));
        assert_eq!(b[1].budget.min_efficiency, Some(50.0));
        let bad_cc = text.replace("cc = \"9.0\"\nmin", "cc = \"4.2\"\nmin");
        let m = format!("{:#}", load_text(&bad_cc).err().unwrap());
        assert!(
            m.contains("warpscope.toml:19:1") && m.contains("cc = 4.2"),
            "{m}"
        );
        let both = format!("{ONE}[[launch.budget]]\nline = 3\nsite = 2\nmax_total_sectors = 9\n");
        let m = format!("{:#}", load_text(&both).err().unwrap());
        assert!(
            m.contains("warpscope.toml:14:1") && m.contains("not both"),
            "{m}"
        );
        let none = format!("{ONE}[[launch.budget]]\nline = 3\n");
        let m = format!("{:#}", load_text(&none).err().unwrap());
        assert!(m.contains("at least one of"), "{m}");
    }

    #[test]
    fn duplicate_names_and_an_empty_file_are_errors() {
        let m = format!("{:#}", load_text(&format!("{ONE}{ONE}")).err().unwrap());
        assert!(
            m.contains("warpscope.toml:14:1: a second launch named 't'"),
            "{m}"
        );
        assert!(m.contains("first is at") && m.contains(":1:1"), "{m}");
        let m = format!("{:#}", load_text("cc = \"9.0\"\n").err().unwrap());
        assert!(m.contains("no launch"), "{m}");
        let m = format!("{:#}", load_text("[[launch]\n").err().unwrap());
        assert!(m.contains("warpscope.toml:1:"), "{m}");
    }
}
