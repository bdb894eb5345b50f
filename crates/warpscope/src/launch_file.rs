//! The launch file (`warpscope.toml`, `--launches FILE`, `warpscope check`): a project's
//! launches and their budgets, read from TOML (the `toml` crate, TOML 1.0 with its spans).
//! [`read`] checks the file and turns each `[[launch]]` table into the flag list
//! `warpscope analyze` takes (`--kernel=K --grid=X,Y ... -- FILE`), so that a key means exactly
//! what its flag means; the command parses those flags with its own flag parser (clap), handed
//! in as `parse_flags`. The keys are documented in `examples/warpscope.toml` and in the book's
//! "Launch files" chapter.
//!
//! Every error names the file, line and column (1-based, columns in characters) of the key or
//! table at fault, from the spans `toml` keeps (issue 21: bad input ends in a clean error).

use crate::budget::{Budget, Scope};
use anyhow::{anyhow, bail, Result};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;

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

/// A `[[launch.budget]]` table: the keys of [`Budget`], its scope from `line` (and
/// `column`) or `site`.
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

/// A place in the launch file, shown as `warpscope.toml:31:1`: the file as the user named it,
/// the line and the column (both 1-based; the column counts characters, not bytes).
#[derive(Clone, Debug, PartialEq)]
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

/// A budget of the file and where its `[[launch.budget]]` table starts.
#[derive(Clone, Debug)]
pub struct PlacedBudget {
    pub at: Place,
    pub budget: Budget,
}

/// One `[[launch]]` table, read and checked; `parsed` is what the caller's `parse_flags`
/// made of its [`FileLaunch::flags`] (the command: its parsed launch flags).
#[derive(Debug)]
pub struct FileLaunch<T> {
    pub name: String,
    /// Where its `[[launch]]` table starts.
    pub at: Place,
    /// The flags of `warpscope analyze` it stands for, paths resolved against the launch
    /// file's folder, the file's `cc` as the default (see [`read`]).
    pub flags: Vec<String>,
    pub parsed: T,
    /// The `gpu` key: the GPU whose measurements `warpscope run` compares with.
    pub gpu: Option<String>,
    /// The `profile` key, resolved against the launch file's folder.
    pub profile: Option<PathBuf>,
    /// Its budgets, in the file's order.
    pub budgets: Vec<PlacedBudget>,
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

/// `; did you mean `KEY`?` for toml's "unknown field `X`, expected one of `A`, `B`, …"
/// when one expected key is within two edits of `X` (or a quarter of its length, Damerau–
/// Levenshtein distance), else "".
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

/// Reads the launch file `text`, named `shown` in messages, whose relative paths (`file`,
/// `include_dirs`, `init = "file:…"`, `nvcc`, `profile`) are relative to the folder `base`.
/// `allow_tools` is `--allow-launch-file-tools`: without it an `nvcc` key is an error.
/// `parse_flags` parses each launch's flags ([`FileLaunch::flags`]) as the command's flag
/// parser does; its error message is shown after the launch's place and name.
///
/// Launches are checked in the file's order; the first error ends the reading. Errors, each
/// starting with `shown:line:column`: TOML syntax (TOML 1.0); an unknown key (toml names it
/// and the keys it expected; a key within two edits of one gets "did you mean"); a missing
/// `name`/`file`/`kernel`/`grid`/`block`; a value of the wrong type; a file with no
/// `[[launch]]` (named without a place); an unknown compute capability in `cc`
/// ([`crate::model::arch::parse_list`]); an `nvcc` key without `allow_tools`; two launches
/// of one name; a value `parse_flags` rejects; a budget with both `line` and `site`, a
/// `column` with no `line`, or limits [`Budget::validate`] refuses.
pub fn read<T>(
    text: &str,
    shown: &str,
    base: &Path,
    allow_tools: bool,
    mut parse_flags: impl FnMut(&[String]) -> Result<T, String>,
) -> Result<Vec<FileLaunch<T>>> {
    let lines = Lines::new(text);
    let file: FileToml = toml::from_str(text).map_err(|e| {
        let at = match e.span() {
            Some(s) => lines.place(shown, s).to_string(),
            None => shown.to_string(),
        };
        anyhow!(
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
            check_ccs(&flag)
                .map_err(|e| anyhow!("{}: cc = {flag}: {e}", lines.place(shown, c.span())))?;
            Some(flag)
        }
        None => None,
    };
    let mut launches: Vec<FileLaunch<T>> = Vec::new();
    // Name → index in `launches`: a duplicate is found without a scan per launch.
    let mut seen: HashMap<String, usize> = HashMap::new();
    for sl in file.launch {
        let at = lines.place(shown, sl.span());
        let l = sl.into_inner();
        if let Some(n) = l.nvcc.as_ref().filter(|_| !allow_tools) {
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
        let flags = flags_of(&l, base, default_cc.as_deref());
        let parsed = parse_flags(&flags).map_err(|e| anyhow!("{at}: launch '{}': {e}", l.name))?;
        let mut budgets = Vec::new();
        for sb in l.budget {
            let bat = lines.place(shown, sb.span());
            let budget = budget(sb.into_inner())
                .map_err(|e| anyhow!("{bat}: budget of launch '{}': {e:#}", l.name))?;
            budgets.push(PlacedBudget { at: bat, budget });
        }
        launches.push(FileLaunch {
            name: l.name,
            at,
            flags,
            parsed,
            gpu: l.gpu,
            profile: l.profile.map(|p| PathBuf::from(resolve(base, &p))),
            budgets,
        });
    }
    Ok(launches)
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
        // A program to run: [`read`] refuses it without `allow_tools`.
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
    let archs = crate::model::arch::parse_list(list).map_err(|e| anyhow!("{e}"))?;
    Ok(archs.iter().map(|a| a.cc.to_string()).collect())
}

/// A `[[launch.budget]]` table as a [`Budget`]: `line` (with `column`) a source line, `site`
/// a row of `analyze`'s table, neither the whole launch.
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
            check_ccs(&flag).map_err(|e| anyhow!("cc = {flag}: {e}"))
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
#[path = "launch_file_tests.rs"]
mod tests;
