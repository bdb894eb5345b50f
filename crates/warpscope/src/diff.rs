//! `warpscope diff`: two results of `analyze --format json` side by side, access by access
//! and in total, for each compute capability both have.
//!
//! The JSON is read field by field ([`read_runs`]) rather than into the report's types, so
//! that results written by other versions of warpscope (fields added, counters nested) still
//! compare. Accesses are matched by source line (and file, for a header's lines), then among
//! the accesses of a line by column, operation, memory space, width and PTX instruction
//! ([`match_sites`]); the rest are listed as added or removed. A result of
//! `analyze --launches` holds several launches: they are matched by name.

use anyhow::{bail, Context, Result};
use serde::Serialize;
use serde_json::Value;

/// The counters of one access (or a sum of accesses of one space) on one CC, summed over
/// the launch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Figures {
    pub requests: u64,
    pub transactions: u64,
    /// 32-byte sectors.
    pub sectors: u64,
    /// Shared-memory wavefronts.
    pub wavefronts: u64,
    /// Bytes the active lanes asked for (accesses with sectors: global, local, texture,
    /// surface; 0 for shared ones, whose efficiency is in wavefronts).
    pub bytes_requested: u64,
    /// Bytes the transactions moved (the same accesses).
    pub transaction_bytes: u64,
    /// Wavefronts a conflict-free access needs (shared accesses; 0 where the JSON, written
    /// by an older warpscope, lacks `ideal_wavefronts`).
    pub ideal_wavefronts: u64,
    /// Wavefronts above the ideal (bank conflicts).
    pub excess_wavefronts: u64,
    /// Sectors above ⌈bytes requested ÷ 32⌉.
    pub excess_sectors: u64,
}

impl Figures {
    /// Adds `o` counter by counter.
    pub fn add(&mut self, o: &Figures) {
        self.requests += o.requests;
        self.transactions += o.transactions;
        self.sectors += o.sectors;
        self.wavefronts += o.wavefronts;
        self.bytes_requested += o.bytes_requested;
        self.transaction_bytes += o.transaction_bytes;
        self.ideal_wavefronts += o.ideal_wavefronts;
        self.excess_wavefronts += o.excess_wavefronts;
        self.excess_sectors += o.excess_sectors;
    }

    /// The table's `eff` of figures of one memory space, percent, uncapped: ideal ÷ actual
    /// wavefronts for `shared` (`None` without the ideal), none for `constant`, else bytes
    /// requested ÷ bytes moved where a transaction was issued. `None` for `space` `None`:
    /// a sum over several spaces has no efficiency.
    pub fn efficiency(&self, space: Option<&str>) -> Option<f64> {
        match space? {
            "shared" => (self.wavefronts > 0 && self.ideal_wavefronts > 0)
                .then(|| 100.0 * self.ideal_wavefronts as f64 / self.wavefronts as f64),
            "constant" => None,
            _ => (self.transaction_bytes > 0)
                .then(|| 100.0 * self.bytes_requested as f64 / self.transaction_bytes as f64),
        }
    }
}

/// One access of a result, on one CC.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSite {
    /// The file of the line when the report names one (a header, the `.cu` of a `.ptx`).
    pub file: Option<String>,
    pub line: u32,
    pub column: u32,
    pub text: String,
    /// `load`, `store` or `atomic`.
    pub op: String,
    /// `global`, `shared`, `local` or `constant`.
    pub space: String,
    /// Bytes per lane.
    pub width: u32,
    /// The PTX instruction (compiled path).
    pub ptx: Option<String>,
    pub figures: Figures,
}

/// One compute capability of a result.
#[derive(Clone, Debug, PartialEq)]
pub struct RunArch {
    /// As the report names it: `"9.0"`.
    pub cc: String,
    pub sites: Vec<RunSite>,
}

/// One analysis read from JSON: a launch of a kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    /// The launch's name in a launch file's result; `None` for a plain `analyze` result.
    pub name: Option<String>,
    pub kernel: String,
    pub source: String,
    pub archs: Vec<RunArch>,
    /// Predicted time per `--gpu` GPU: (GPU name, seconds).
    pub times: Vec<(String, f64)>,
}

/// `v[key]`, or the first `child[key]` of an object child of `v` (counters may be nested).
fn field<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).or_else(|| {
        v.as_object()?
            .values()
            .filter(|c| c.is_object())
            .find_map(|c| c.get(key))
    })
}

/// A count that older results may lack (0 then; the caller says why that is safe).
fn optional(v: &Value, key: &str) -> u64 {
    field(v, key).and_then(Value::as_u64).unwrap_or(0)
}

fn text(v: &Value, key: &str) -> Option<String> {
    field(v, key).and_then(|x| match x {
        Value::String(s) => Some(s.to_lowercase()),
        Value::Null => None,
        other => Some(other.to_string()),
    })
}

fn read_analysis(v: &Value, name: Option<String>, what: &str) -> Result<Run> {
    let archs = v
        .get("architectures")
        .and_then(Value::as_array)
        .with_context(|| format!("{what}: no \"architectures\" array: not a result of `warpscope analyze --format json`"))?;
    let mut out = Vec::new();
    for (i, a) in archs.iter().enumerate() {
        let cc = a
            .get("cc")
            .and_then(|c| {
                c.as_str()
                    .map(str::to_string)
                    .or_else(|| Some(c.to_string()))
            })
            .with_context(|| format!("{what}: architectures[{i}] has no \"cc\""))?;
        let sites = a
            .get("sites")
            .and_then(Value::as_array)
            .with_context(|| format!("{what}: architectures[{i}] (CC {cc}) has no \"sites\""))?;
        let mut rs = Vec::new();
        for (j, s) in sites.iter().enumerate() {
            let line = field(s, "line")
                .and_then(Value::as_u64)
                .with_context(|| format!("{what}: CC {cc} site {j} has no \"line\""))?;
            // A field the comparison reads must be there: read as 0 it would pass the gate.
            let at = format!("{what}: CC {cc} site {j} (line {line})");
            let need = |keys: &[&str]| -> Result<u64> {
                keys.iter()
                    .find_map(|k| field(s, k).and_then(Value::as_u64))
                    .with_context(|| {
                        format!(
                            "{at} has no \"{}\" (a whole number): not a complete result of `warpscope analyze --format json` (docs/schema/analyze.schema.json)",
                            keys[0]
                        )
                    })
            };
            let need_text = |key: &str| -> Result<String> {
                text(s, key).with_context(|| {
                    format!(
                        "{at} has no \"{key}\": not a complete result of `warpscope analyze --format json` (docs/schema/analyze.schema.json)"
                    )
                })
            };
            let space = need_text("space")?;
            let shared = space == "shared";
            let mut f = Figures {
                requests: need(&["requests"])?,
                transactions: need(&["transactions"])?,
                sectors: need(&["sectors"])?,
                wavefronts: need(&["wavefronts"])?,
                // Older results lack these: no shared efficiency then, rather than a wrong one.
                ideal_wavefronts: optional(s, "ideal_wavefronts"),
                excess_wavefronts: optional(s, "excess_wavefronts"),
                excess_sectors: optional(s, "excess_sectors"),
                ..Figures::default()
            };
            if !shared {
                f.bytes_requested = need(&["bytes_requested", "requested_bytes"])?;
                // Absent in older results: derived from the sectors below.
                f.transaction_bytes = optional(s, "transaction_bytes");
                if f.transaction_bytes == 0 {
                    f.transaction_bytes = 32 * f.sectors;
                }
            }
            rs.push(RunSite {
                file: field(s, "file").and_then(|x| x.as_str().map(str::to_string)),
                line: line as u32,
                column: need(&["column"])? as u32,
                text: field(s, "text")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                op: need_text("op")?,
                space,
                width: need(&["width"])? as u32,
                ptx: field(s, "ptx").and_then(|x| x.as_str().map(str::to_string)),
                figures: f,
            });
        }
        out.push(RunArch { cc, sites: rs });
    }
    let times = v
        .get("traffic")
        .and_then(Value::as_array)
        .map(|ts| {
            ts.iter()
                .filter_map(|t| {
                    let secs = field(t, "predicted_seconds")?.as_f64()?;
                    let gpu = field(t, "gpu")?.as_str()?.to_string();
                    Some((gpu, secs))
                })
                .collect()
        })
        .unwrap_or_default();
    // The analyzed file's own sites may or may not name it (older results left it out):
    // compare them alike.
    let source_name = v.get("source").and_then(Value::as_str).unwrap_or_default();
    for s in out.iter_mut().flat_map(|a| &mut a.sites) {
        if s.file.as_deref() == Some(source_name) {
            s.file = None;
        }
    }
    Ok(Run {
        name,
        kernel: v
            .get("kernel")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        source: v
            .get("source")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        archs: out,
        times,
    })
}

/// Reads the analyses of `json`, one result of `warpscope analyze --format json` (one
/// analysis) or of `analyze --launches FILE --format json` (an object with a `launches`
/// array of `{name, analysis}`; a bare array of them is read too). `what` names the input
/// in errors.
///
/// Errors: not JSON (with line and column), no `architectures`, a site without a line.
pub fn read_runs(json: &str, what: &str) -> Result<Vec<Run>> {
    let v: Value = serde_json::from_str(json).map_err(|e| {
        anyhow::anyhow!(
            "{what}:{}:{}: not JSON: {e}; give the output of `warpscope analyze --format json`",
            e.line(),
            e.column()
        )
    })?;
    let launches = v
        .get("launches")
        .and_then(Value::as_array)
        .or_else(|| v.as_array());
    match launches {
        Some(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let name = item
                    .get("name")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("#{}", i + 1));
                let a = item.get("analysis").unwrap_or(item);
                read_analysis(a, Some(name.clone()), &format!("{what} (launch {name})"))
            })
            .collect(),
        None => Ok(vec![read_analysis(&v, None, what)?]),
    }
}

/// Pairs the accesses of `old` and `new` (one CC's rows each): first by file, line, column,
/// operation, space, width and PTX instruction, then what is left by file, line, operation
/// and space (an edit moved the column or changed the width), then by file, source text,
/// operation, space and width (lines inserted above moved it), each in row order. Returns
/// (old row, new row) pairs, `None` on the side that lacks the access, ordered by line.
pub fn match_sites(old: &[RunSite], new: &[RunSite]) -> Vec<(Option<usize>, Option<usize>)> {
    fn exact(a: &RunSite, b: &RunSite) -> bool {
        (
            a.file.as_deref(),
            a.line,
            a.column,
            &a.op,
            &a.space,
            a.width,
        ) == (
            b.file.as_deref(),
            b.line,
            b.column,
            &b.op,
            &b.space,
            b.width,
        ) && a.ptx == b.ptx
    }
    fn loose(a: &RunSite, b: &RunSite) -> bool {
        (a.file.as_deref(), a.line, &a.op, &a.space) == (b.file.as_deref(), b.line, &b.op, &b.space)
    }
    fn moved(a: &RunSite, b: &RunSite) -> bool {
        !a.text.is_empty()
            && (a.file.as_deref(), &a.text, &a.op, &a.space, a.width)
                == (b.file.as_deref(), &b.text, &b.op, &b.space, b.width)
    }
    let mut new_of_old: Vec<Option<usize>> = vec![None; old.len()];
    let mut new_used = vec![false; new.len()];
    for same in [exact, loose, moved] {
        for (j, n) in new.iter().enumerate() {
            if new_used[j] {
                continue;
            }
            if let Some(i) = (0..old.len()).find(|&i| new_of_old[i].is_none() && same(&old[i], n)) {
                new_used[j] = true;
                new_of_old[i] = Some(j);
            }
        }
    }
    let mut pairs: Vec<(Option<usize>, Option<usize>)> = new_of_old
        .iter()
        .enumerate()
        .map(|(i, j)| (Some(i), *j))
        .collect();
    pairs.extend(
        (0..new.len())
            .filter(|&j| !new_used[j])
            .map(|j| (None, Some(j))),
    );
    // By line: the new side's place where there is one, else the old side's.
    let pos = |p: &(Option<usize>, Option<usize>)| {
        let s = p.1.map(|j| &new[j]).or(p.0.map(|i| &old[i]));
        s.map(|s| (s.line, s.column)).unwrap_or_default()
    };
    pairs.sort_by_key(|p| (pos(p), p.1, p.0));
    pairs
}

/// One side of a comparison: the counters and the efficiency (percent, uncapped, see
/// [`Figures::efficiency`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Side {
    #[serde(flatten)]
    pub figures: Figures,
    pub efficiency_percent: Option<f64>,
}

impl Side {
    /// `figures` of one memory space (`None`: summed over several), with its efficiency.
    pub fn new(figures: Figures, space: Option<&str>) -> Side {
        Side {
            figures,
            efficiency_percent: figures.efficiency(space),
        }
    }
}

/// New minus old; efficiency in percentage points (absent unless both sides have one).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Change {
    pub requests: i64,
    pub transactions: i64,
    pub sectors: i64,
    pub wavefronts: i64,
    pub excess_sectors: i64,
    pub excess_wavefronts: i64,
    pub efficiency_points: Option<f64>,
}

impl Change {
    /// `new − old`, counter by counter, efficiencies those of one memory space `space`
    /// (`None`: a sum over several spaces, with no efficiency).
    pub fn between(old: &Figures, new: &Figures, space: Option<&str>) -> Change {
        let d = |a: u64, b: u64| b as i64 - a as i64;
        Change {
            requests: d(old.requests, new.requests),
            transactions: d(old.transactions, new.transactions),
            sectors: d(old.sectors, new.sectors),
            wavefronts: d(old.wavefronts, new.wavefronts),
            excess_sectors: d(old.excess_sectors, new.excess_sectors),
            excess_wavefronts: d(old.excess_wavefronts, new.excess_wavefronts),
            efficiency_points: old
                .efficiency(space)
                .zip(new.efficiency(space))
                .map(|(a, b)| b - a),
        }
    }
}

/// Whether an access is in both results or in one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Matched,
    Added,
    Removed,
}

/// One access in the comparison: where it is (the new side's place when it has one) and
/// its counters on each side.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SiteChange {
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    pub line: u32,
    pub column: u32,
    /// The old side's line when it moved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_line: Option<u32>,
    pub text: String,
    pub op: String,
    pub space: String,
    pub width: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ptx: Option<String>,
    pub old: Option<Side>,
    pub new: Option<Side>,
    /// New minus old; for an added or removed access, against zero.
    pub change: Change,
}

/// The accesses of one memory space summed, on both sides.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SpaceTotal {
    /// `global`, `local`, `shared`, `constant`, … as the sites name it.
    pub space: String,
    pub old: Side,
    pub new: Side,
    /// New minus old.
    pub change: Change,
}

/// One compute capability of a launch compared.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CcDiff {
    pub cc: String,
    pub sites: Vec<SiteChange>,
    /// Counts summed over every access of every space; no efficiency (that is per space,
    /// in `spaces`).
    pub old_total: Side,
    pub new_total: Side,
    pub total_change: Change,
    /// Sums per memory space (the table's total rows), in the order global, local, shared,
    /// distributed shared, constant, texture, surface, then any other.
    pub spaces: Vec<SpaceTotal>,
}

/// The predicted time on one `--gpu` GPU of both results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TimeChange {
    pub gpu: String,
    pub old_seconds: f64,
    pub new_seconds: f64,
    /// `new − old`, seconds.
    pub change_seconds: f64,
    /// `100 · (new − old) / old`.
    pub change_percent: f64,
}

/// One launch compared.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LaunchDiff {
    /// The launch's name (results of `analyze --launches`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub old_kernel: String,
    pub new_kernel: String,
    pub old_source: String,
    pub new_source: String,
    /// The CCs both results have, in the new result's order.
    pub ccs: Vec<CcDiff>,
    /// CCs of one side only (not compared).
    pub only_old_ccs: Vec<String>,
    pub only_new_ccs: Vec<String>,
    /// GPUs both results predicted a time for.
    pub times: Vec<TimeChange>,
}

/// The comparison of two results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Diff {
    pub launches: Vec<LaunchDiff>,
    /// Launches (by name) of the old result only.
    pub removed_launches: Vec<String>,
    /// Launches (by name) of the new result only.
    pub added_launches: Vec<String>,
}

/// A launch total that `--fail-on-regression` watches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Measure {
    /// Requests of every access.
    Requests,
    /// 32-byte sectors of every access.
    Sectors,
    /// Shared-memory wavefronts of every access.
    Wavefronts,
    /// Predicted time on each `--gpu` GPU.
    Time,
}

impl Measure {
    /// `requests`, `sectors`, `wavefronts`, `time`.
    pub fn name(self) -> &'static str {
        match self {
            Measure::Requests => "requests",
            Measure::Sectors => "sectors",
            Measure::Wavefronts => "wavefronts",
            Measure::Time => "time",
        }
    }

    pub const ALL: [Measure; 4] = [
        Measure::Requests,
        Measure::Sectors,
        Measure::Wavefronts,
        Measure::Time,
    ];
}

fn compare_launch(old: &Run, new: &Run) -> LaunchDiff {
    let mut ccs = Vec::new();
    for na in &new.archs {
        let Some(oa) = old.archs.iter().find(|a| a.cc == na.cc) else {
            continue;
        };
        let mut sites = Vec::new();
        let (mut ot, mut nt) = (Figures::default(), Figures::default());
        for s in &oa.sites {
            ot.add(&s.figures);
        }
        for s in &na.sites {
            nt.add(&s.figures);
        }
        for (i, j) in match_sites(&oa.sites, &na.sites) {
            let o = i.map(|i| &oa.sites[i]);
            let n = j.map(|j| &na.sites[j]);
            let Some(at) = n.or(o) else { continue };
            let status = match (o, n) {
                (Some(_), Some(_)) => Status::Matched,
                (None, _) => Status::Added,
                (_, None) => Status::Removed,
            };
            let zero = Figures::default();
            let of = o.map(|s| s.figures);
            let nf = n.map(|s| s.figures);
            let space = Some(at.space.as_str());
            let mut change = Change::between(
                of.as_ref().unwrap_or(&zero),
                nf.as_ref().unwrap_or(&zero),
                space,
            );
            if status != Status::Matched {
                change.efficiency_points = None;
            }
            sites.push(SiteChange {
                status,
                file: at.file.clone(),
                line: at.line,
                column: at.column,
                old_line: o
                    .zip(n)
                    .and_then(|(o, n)| (o.line != n.line).then_some(o.line)),
                text: at.text.clone(),
                op: at.op.clone(),
                space: at.space.clone(),
                width: at.width,
                ptx: at.ptx.clone(),
                old: of.map(|f| Side::new(f, space)),
                new: nf.map(|f| Side::new(f, space)),
                change,
            });
        }
        ccs.push(CcDiff {
            cc: na.cc.clone(),
            sites,
            old_total: Side::new(ot, None),
            new_total: Side::new(nt, None),
            total_change: Change::between(&ot, &nt, None),
            spaces: space_totals(&oa.sites, &na.sites),
        });
    }
    let times = new
        .times
        .iter()
        .filter_map(|(gpu, n)| {
            let (_, o) = old.times.iter().find(|(g, _)| g == gpu)?;
            Some(TimeChange {
                gpu: gpu.clone(),
                old_seconds: *o,
                new_seconds: *n,
                change_seconds: n - o,
                change_percent: if *o > 0.0 { 100.0 * (n - o) / o } else { 0.0 },
            })
        })
        .collect();
    let only = |a: &Run, b: &Run| -> Vec<String> {
        a.archs
            .iter()
            .filter(|x| !b.archs.iter().any(|y| y.cc == x.cc))
            .map(|x| x.cc.clone())
            .collect()
    };
    LaunchDiff {
        name: new.name.clone(),
        old_kernel: old.kernel.clone(),
        new_kernel: new.kernel.clone(),
        old_source: old.source.clone(),
        new_source: new.source.clone(),
        ccs,
        only_old_ccs: only(old, new),
        only_new_ccs: only(new, old),
        times,
    }
}

/// The sums per memory space of `old` and `new` (one CC's accesses each), for the spaces
/// either side has.
fn space_totals(old: &[RunSite], new: &[RunSite]) -> Vec<SpaceTotal> {
    const ORDER: [&str; 7] = [
        "global",
        "local",
        "shared",
        "distributed_shared",
        "constant",
        "texture",
        "surface",
    ];
    let mut spaces: Vec<&str> = old.iter().chain(new).map(|s| s.space.as_str()).collect();
    spaces.sort_by_key(|s| (ORDER.iter().position(|o| o == s).unwrap_or(ORDER.len()), *s));
    spaces.dedup();
    let sum = |sites: &[RunSite], space: &str| {
        let mut f = Figures::default();
        for s in sites.iter().filter(|s| s.space == space) {
            f.add(&s.figures);
        }
        f
    };
    spaces
        .into_iter()
        .map(|space| {
            let (o, n) = (sum(old, space), sum(new, space));
            SpaceTotal {
                space: space.to_string(),
                old: Side::new(o, Some(space)),
                new: Side::new(n, Some(space)),
                change: Change::between(&o, &n, Some(space)),
            }
        })
        .collect()
}

/// Compares two results read by [`read_runs`]: one analysis with one, or the launches of
/// two launch-file results by name.
///
/// Errors: one result of one analysis and the other of several launches (with more than
/// one launch, which would be compared is unclear), no CC in common.
pub fn diff(old: &[Run], new: &[Run]) -> Result<Diff> {
    let mut d = Diff {
        launches: Vec::new(),
        removed_launches: Vec::new(),
        added_launches: Vec::new(),
    };
    let named = |r: &[Run]| r.iter().all(|x| x.name.is_some());
    match (old, new) {
        ([o], [n]) => d.launches.push(compare_launch(o, n)),
        (o, n) if named(o) && named(n) => {
            for nr in n {
                match o.iter().find(|x| x.name == nr.name) {
                    Some(or) => d.launches.push(compare_launch(or, nr)),
                    None => d.added_launches.extend(nr.name.clone()),
                }
            }
            d.removed_launches = o
                .iter()
                .filter(|x| !n.iter().any(|y| y.name == x.name))
                .filter_map(|x| x.name.clone())
                .collect();
        }
        (o, n) => bail!(
            "OLD has {} analyses and NEW {}: compare one analysis with one, or two results of `analyze --launches` (matched by launch name)",
            o.len(),
            n.len()
        ),
    }
    for l in &d.launches {
        if l.ccs.is_empty() {
            bail!(
                "{}: no compute capability in common (OLD has {}, NEW has {}); analyze both with the same --cc",
                l.name.as_deref().unwrap_or(&l.new_kernel),
                l.only_old_ccs.join(", "),
                l.only_new_ccs.join(", ")
            );
        }
    }
    Ok(d)
}

/// The launch totals of `d` that grew, among `watch`: one line each, e.g.
/// `transpose_naive → transpose_coalesced: CC 9.0 wavefronts 0 → 1081344 (+1081344)`.
pub fn regressions(d: &Diff, watch: &[Measure]) -> Vec<String> {
    let mut out = Vec::new();
    for l in &d.launches {
        let who = match &l.name {
            Some(n) => n.clone(),
            None if l.old_kernel == l.new_kernel => l.new_kernel.clone(),
            None => format!("{} → {}", l.old_kernel, l.new_kernel),
        };
        for c in &l.ccs {
            let (o, n) = (&c.old_total.figures, &c.new_total.figures);
            for (m, a, b) in [
                (Measure::Requests, o.requests, n.requests),
                (Measure::Sectors, o.sectors, n.sectors),
                (Measure::Wavefronts, o.wavefronts, n.wavefronts),
            ] {
                if watch.contains(&m) && b > a {
                    out.push(format!(
                        "{who}: CC {} {} {a} → {b} (+{})",
                        c.cc,
                        m.name(),
                        b - a
                    ));
                }
            }
        }
        if watch.contains(&Measure::Time) {
            for t in &l.times {
                if t.new_seconds > t.old_seconds {
                    out.push(format!(
                        "{who}: predicted time on {} {:.3} µs → {:.3} µs ({:+.1}%)",
                        t.gpu,
                        t.old_seconds * 1e6,
                        t.new_seconds * 1e6,
                        t.change_percent
                    ));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A site of the JSON of `analyze`: counters flattened into it, as the report writes
    /// them.
    /// Shared accesses are of 4-byte words: ideally one wavefront per request.
    fn site(line: u32, op: &str, space: &str, req: u64, sectors: u64, wf: u64) -> Value {
        let bytes = if space == "shared" { 0 } else { 128 * req };
        let ideal_wf = if space == "shared" { req } else { 0 };
        json!({
            "line": line, "column": 5, "text": format!("a{line}"), "space": space, "op": op,
            "width": 4, "read_only": false, "executions": req, "requests": req,
            "transactions": sectors, "transaction_bytes": 32 * sectors, "sectors": sectors,
            "bytes_requested": bytes, "efficiency": null, "wavefronts": wf,
            "misaligned_lanes": 0, "ideal_sectors": bytes / 32,
            "excess_sectors": sectors.saturating_sub(bytes / 32),
            "ideal_wavefronts": ideal_wf, "excess_wavefronts": wf - ideal_wf
        })
    }

    fn analysis(kernel: &str, sites: Vec<Value>) -> Value {
        json!({
            "kernel": kernel, "source": "k.cu", "grid": [1, 1, 1], "block": [32, 1, 1],
            "architectures": [{"cc": "9.0", "name": "Hopper", "sites": sites, "totals": {}}],
            "local_arrays": [], "notes": [], "advice": []
        })
    }

    fn runs(v: &Value) -> Vec<Run> {
        read_runs(&v.to_string(), "test.json").unwrap()
    }

    /// Old: a coalesced load (10 requests, 40 sectors), a column-walk store (10, 320) and
    /// a 2-way conflicted shared load (10 requests, 20 wavefronts). New: the same load, the
    /// store made coalesced (10, 40), the shared load gone, a new global atomic on line 13
    /// (10, 40).
    fn old_new() -> (Vec<Run>, Vec<Run>) {
        let old = analysis(
            "k",
            vec![
                site(10, "load", "global", 10, 40, 0),
                site(11, "store", "global", 10, 320, 0),
                site(12, "load", "shared", 10, 0, 20),
            ],
        );
        let new = analysis(
            "k",
            vec![
                site(10, "load", "global", 10, 40, 0),
                site(11, "store", "global", 10, 40, 0),
                site(13, "atomic", "global", 10, 40, 0),
            ],
        );
        (runs(&old), runs(&new))
    }

    fn pair() -> Diff {
        let (old, new) = old_new();
        diff(&old, &new).unwrap()
    }

    #[test]
    fn sites_are_matched_by_line_and_the_rest_added_or_removed() {
        let d = pair();
        let c = &d.launches[0].ccs[0];
        let st: Vec<(u32, Status)> = c.sites.iter().map(|s| (s.line, s.status)).collect();
        assert_eq!(
            st,
            [
                (10, Status::Matched),
                (11, Status::Matched),
                (12, Status::Removed),
                (13, Status::Added)
            ]
        );
        // The store: 320 → 40 sectors, 12.5 % → 100 % (1280 requested bytes of 10240 / 1280).
        let store = &c.sites[1];
        assert_eq!(store.change.sectors, -280);
        assert_eq!(store.old.unwrap().efficiency_percent, Some(12.5));
        assert_eq!(store.change.efficiency_points, Some(87.5));
        // The removed shared load's efficiency is ideal / actual wavefronts = 10/20 = 50 %.
        assert_eq!(c.sites[2].old.unwrap().efficiency_percent, Some(50.0));
        assert_eq!(c.sites[2].change.wavefronts, -20);
        assert_eq!(c.sites[2].change.excess_wavefronts, -10);
        // The store's excess sectors: 320 − 40 → 0.
        assert_eq!(store.change.excess_sectors, -280);
        // Totals over every space: sectors 360 → 120, requests 30 → 30, wavefronts 20 → 0,
        // and no efficiency: that is per space.
        assert_eq!(c.old_total.figures.sectors, 360);
        assert_eq!(c.new_total.figures.sectors, 120);
        assert_eq!(c.total_change.sectors, -240);
        assert_eq!(c.total_change.requests, 0);
        assert_eq!(c.total_change.wavefronts, -20);
        assert_eq!(c.old_total.efficiency_percent, None);
        assert_eq!(c.total_change.efficiency_points, None);
        // Per space: global 2560/11520 → 3840/3840 bytes; shared 50 % → none left.
        let spaces: Vec<&str> = c.spaces.iter().map(|t| t.space.as_str()).collect();
        assert_eq!(spaces, ["global", "shared"]);
        let g = &c.spaces[0];
        let e = g.old.efficiency_percent.unwrap();
        assert!((e - 100.0 * 2560.0 / 11520.0).abs() < 1e-9, "{e}");
        assert_eq!(g.new.efficiency_percent, Some(100.0));
        assert_eq!((g.old.figures.requests, g.new.figures.requests), (20, 30));
        let sh = &c.spaces[1];
        assert_eq!(sh.old.efficiency_percent, Some(50.0));
        assert_eq!(sh.new.efficiency_percent, None);
        assert_eq!(sh.change.wavefronts, -20);
    }

    /// A 32-way conflict beside a coalesced global access: the shared total is 1/32 =
    /// 3.125 % efficient and the global one 100 %, never one figure over both.
    #[test]
    fn a_bank_conflict_is_not_hidden_by_a_coalesced_total() {
        let conflicted = analysis(
            "k",
            vec![
                site(10, "load", "global", 10, 40, 0),
                site(11, "load", "shared", 10, 0, 320),
            ],
        );
        let d = diff(&runs(&conflicted), &runs(&conflicted)).unwrap();
        let c = &d.launches[0].ccs[0];
        let eff: Vec<(&str, Option<f64>)> = c
            .spaces
            .iter()
            .map(|t| (t.space.as_str(), t.new.efficiency_percent))
            .collect();
        assert_eq!(eff, [("global", Some(100.0)), ("shared", Some(3.125))]);
        assert_eq!(c.spaces[1].new.figures.excess_wavefronts, 310);
        // A result of an older warpscope (no ideal_wavefronts): no shared efficiency rather
        // than a wrong one.
        let mut old = conflicted.clone();
        old["architectures"][0]["sites"][1]
            .as_object_mut()
            .unwrap()
            .remove("ideal_wavefronts");
        let d = diff(&runs(&old), &runs(&conflicted)).unwrap();
        let sh = &d.launches[0].ccs[0].spaces[1];
        assert_eq!(
            (sh.old.efficiency_percent, sh.change.efficiency_points),
            (None, None)
        );
    }

    #[test]
    fn regressions_are_the_watched_totals_that_grew() {
        let d = pair();
        assert!(regressions(&d, &Measure::ALL).is_empty());
        let (old, new) = old_new();
        let back = diff(&new, &old).unwrap();
        let r = regressions(&back, &Measure::ALL);
        assert_eq!(
            r,
            [
                "k: CC 9.0 sectors 120 → 360 (+240)",
                "k: CC 9.0 wavefronts 0 → 20 (+20)"
            ]
        );
        assert!(regressions(&back, &[Measure::Requests, Measure::Time]).is_empty());
    }

    #[test]
    fn unrolled_copies_pair_in_order_and_moved_lines_by_text() {
        let mk = |line: u32, ptx_line: u32, text: &str| RunSite {
            file: None,
            line,
            column: 9,
            text: text.into(),
            op: "load".into(),
            space: "global".into(),
            width: 4,
            ptx: Some("ld.global.f32".into()),
            figures: Figures {
                requests: ptx_line as u64,
                ..Figures::default()
            },
        };
        let old: Vec<RunSite> = (0..4).map(|i| mk(42, 100 + i, "a[i]")).collect();
        let new: Vec<RunSite> = (0..4).map(|i| mk(42, 200 + i, "a[i]")).collect();
        let p = match_sites(&old, &new);
        assert_eq!(
            p,
            [
                (Some(0), Some(0)),
                (Some(1), Some(1)),
                (Some(2), Some(2)),
                (Some(3), Some(3))
            ]
        );
        // Two lines inserted above: matched by its text, listed at its new line.
        let p = match_sites(
            &[mk(42, 1, "a[i]"), mk(50, 2, "b[i]")],
            &[mk(44, 1, "a[i]")],
        );
        assert_eq!(p, [(Some(0), Some(0)), (Some(1), None)]);
    }

    #[test]
    fn a_missing_gated_field_is_an_error_naming_it() {
        for key in ["requests", "sectors", "wavefronts", "bytes_requested", "op"] {
            let mut v = analysis("k", vec![site(10, "load", "global", 10, 40, 0)]);
            v["architectures"][0]["sites"][0]
                .as_object_mut()
                .unwrap()
                .remove(key);
            let e = read_runs(&v.to_string(), "new.json")
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with(&format!(
                    "new.json: CC 9.0 site 0 (line 10) has no \"{key}\""
                )),
                "{e}"
            );
        }
    }

    #[test]
    fn nested_counters_and_launch_files_are_read() {
        // Counters under "counters" (a later layout) read the same.
        let nested = json!({
            "kernel": "k", "source": "k.cu",
            "architectures": [{"cc": "9.0", "sites": [{
                "line": 3, "column": 1, "text": "a[i]", "space": "global", "op": "load",
                "width": 4, "counters": {"requests": 2, "sectors": 8, "transactions": 8,
                "bytes_requested": 256, "transaction_bytes": 256, "wavefronts": 0}
            }]}],
            "traffic": [{"launch": {"gpu": "H100", "predicted_seconds": 2e-6}}]
        });
        let r = runs(&nested);
        assert_eq!(r[0].archs[0].sites[0].figures.sectors, 8);
        assert_eq!(
            r[0].archs[0].sites[0].figures.efficiency(Some("global")),
            Some(100.0)
        );
        assert_eq!(r[0].times, [("H100".to_string(), 2e-6)]);
        // A launch-file result: launches by name; one only in each side.
        let a = analysis("k", vec![site(10, "load", "global", 10, 40, 0)]);
        let old =
            json!({"launches": [{"name": "x", "analysis": a}, {"name": "gone", "analysis": a}]});
        let new =
            json!({"launches": [{"name": "x", "analysis": a}, {"name": "new", "analysis": a}]});
        let d = diff(&runs(&old), &runs(&new)).unwrap();
        assert_eq!(d.launches.len(), 1);
        assert_eq!(d.launches[0].name.as_deref(), Some("x"));
        assert_eq!(d.removed_launches, ["gone"]);
        assert_eq!(d.added_launches, ["new"]);
        let e = diff(&runs(&a), &runs(&old)).unwrap_err();
        assert!(
            format!("{e}").contains("OLD has 1 analyses and NEW 2"),
            "{e}"
        );
    }

    #[test]
    fn bad_input_names_the_file_and_place() {
        let e = read_runs("{\n  \"kernel\": ,\n}", "old.json").unwrap_err();
        assert!(format!("{e}").starts_with("old.json:2:13: not JSON"), "{e}");
        let e = read_runs("{\"kernel\": \"k\"}", "old.json").unwrap_err();
        assert!(format!("{e}").contains("no \"architectures\""), "{e}");
        let a = analysis("k", vec![site(10, "load", "global", 10, 40, 0)]);
        let mut b = a.clone();
        b["architectures"][0]["cc"] = json!("8.0");
        let e = diff(&runs(&a), &runs(&b)).unwrap_err();
        assert!(
            format!("{e}").contains("no compute capability in common (OLD has 9.0, NEW has 8.0)"),
            "{e}"
        );
    }
}
