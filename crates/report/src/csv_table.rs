//! `--format csv`: one row per access site and compute capability, for spreadsheets and
//! scripts, with the figures under warpscope's names and again under Nsight Compute's
//! metric names ([`crate::ncu`]) so that they line up with an `ncu --csv` export.

use crate::ncu::{self, METRICS};
use crate::{Analysis, Counters, SweepOutput};

/// warpscope's own columns, in order; [`METRICS`]' ncu names follow.
///
/// Units: `width_bytes`, `transaction_bytes` and `bytes_requested` in bytes; `sectors`,
/// `ideal_sectors` and `excess_sectors` in 32-byte sectors; `efficiency_percent` in percent
/// (bytes requested ÷ bytes moved × 100, uncapped, empty where no transaction was issued:
/// shared and constant memory); `wavefront_efficiency_percent` in percent (ideal ÷ actual
/// wavefronts × 100, uncapped, shared memory only); `line`, `column` and `ptx_line` 1-based;
/// `site` the table's `#` (0-based, what `explain --site` takes), or `total` on the rows that
/// sum one memory space (`space`) of one CC after the sites (leave them out when summing
/// the rows).
pub const OWN_COLUMNS: [&str; 26] = [
    "kernel",
    "site",
    "file",
    "line",
    "column",
    "text",
    "ptx",
    "ptx_line",
    "op",
    "space",
    "width_bytes",
    "read_only",
    "cc",
    "executions",
    "requests",
    "transactions",
    "transaction_bytes",
    "sectors",
    "bytes_requested",
    "wavefronts",
    "efficiency_percent",
    "ideal_sectors",
    "excess_sectors",
    "ideal_wavefronts",
    "excess_wavefronts",
    "wavefront_efficiency_percent",
];

fn lower(x: impl std::fmt::Debug) -> String {
    format!("{x:?}").to_lowercase()
}

/// A fraction as a percentage with two decimals; empty for `None`.
fn percent(x: Option<f64>) -> String {
    x.map(|e| format!("{:.2}", 100.0 * e)).unwrap_or_default()
}

/// The counter columns of [`OWN_COLUMNS`], from `executions` on.
fn counter_cells(c: &Counters) -> Vec<String> {
    vec![
        c.executions.to_string(),
        c.requests.to_string(),
        c.transactions.to_string(),
        c.transaction_bytes.to_string(),
        c.sectors.to_string(),
        c.bytes_requested.to_string(),
        c.wavefronts.to_string(),
        percent(c.efficiency),
        c.ideal_sectors.to_string(),
        c.excess_sectors.to_string(),
        c.ideal_wavefronts.to_string(),
        c.excess_wavefronts.to_string(),
        percent(c.wavefront_efficiency),
    ]
}

/// The rows of `a`: per site, per compute capability, in the table's order; then per
/// compute capability one `total` row per memory space it accesses.
fn rows(a: &Analysis) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let nsites = a.architectures.first().map_or(0, |x| x.sites.len());
    for i in 0..nsites {
        for arch in &a.architectures {
            let s = &arch.sites[i];
            let c = &s.counters;
            let mut row = vec![
                a.kernel.clone(),
                i.to_string(),
                s.file.clone().unwrap_or_else(|| a.source.clone()),
                s.line.to_string(),
                s.column.to_string(),
                s.text.clone(),
                s.ptx.clone().unwrap_or_default(),
                s.ptx_line.map(|l| l.to_string()).unwrap_or_default(),
                lower(s.op),
                lower(s.space),
                s.width.to_string(),
                s.read_only.to_string(),
                arch.cc.clone(),
            ];
            row.extend(counter_cells(c));
            let mut metrics = vec![String::new(); METRICS.len()];
            let profiled = arch
                .cc
                .parse::<warpscope_model::ComputeCapability>()
                .is_ok_and(ncu::profiled);
            if profiled {
                for (m, v) in ncu::row_metrics(s.space, s.op, s.ptx.as_deref(), c) {
                    if let Some(k) = METRICS.iter().position(|x| x == m) {
                        metrics[k] = v.to_string();
                    }
                }
            }
            row.extend(metrics);
            out.push(row);
        }
    }
    for arch in &a.architectures {
        for (space, c) in arch.totals.by_space() {
            if c.is_empty() {
                continue;
            }
            let mut row = vec![a.kernel.clone(), "total".into()];
            row.extend(std::iter::repeat_n(String::new(), 7));
            row.push(lower(space));
            row.extend([String::new(), String::new(), arch.cc.clone()]);
            row.extend(counter_cells(c));
            row.extend(std::iter::repeat_n(String::new(), METRICS.len()));
            out.push(row);
        }
    }
    out
}

fn write(header: Vec<&str>, rows: Vec<Vec<String>>) -> Result<String, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(header)?;
    for r in rows {
        w.write_record(r)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| csv::Error::from(e.into_error()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// `a` as CSV: a header, then one row per site and compute capability (sites in the table's
/// order, the capabilities in the order asked for). The columns are [`OWN_COLUMNS`], then
/// one per Nsight Compute metric of [`METRICS`] (named as `ncu --metrics` takes it), filled
/// with warpscope's figure on the rows that metric counts (its memory space and operation)
/// and left empty elsewhere, and on every row of a compute capability below 7.0, which
/// Nsight Compute does not profile. Global atomics other than PTX `red` leave them empty too:
/// whether ncu counts one as `op_atom` or `op_red` depends on whether its result is used
/// ([`ncu::ncu_op`]).
///
/// Errors: only the CSV writer's, which writing to memory does not produce in practice.
pub fn render_csv(a: &Analysis) -> Result<String, csv::Error> {
    let mut header: Vec<&str> = OWN_COLUMNS.to_vec();
    header.extend(METRICS.iter().map(|m| m.metric));
    write(header, rows(a))
}

/// A sweep as CSV: [`render_csv`]'s columns after two more, `parameter` (the swept
/// parameter's name) and `value` (its value for the launch), one block of rows per value.
///
/// Errors: as [`render_csv`].
pub fn render_sweep_csv(s: &SweepOutput) -> Result<String, csv::Error> {
    let items: Vec<(Vec<String>, &Analysis)> = s
        .points
        .iter()
        .map(|p| (vec![s.parameter.clone(), p.value.to_string()], &p.analysis))
        .collect();
    render_labeled_csv(&["parameter", "value"], &items)
}

/// Several analyses in one CSV table: each row starts with its analysis's `labels` values
/// (columns named `label_columns`), then [`render_csv`]'s columns. Used by sweeps (parameter,
/// value) and launch files (launch name).
///
/// Errors: as [`render_csv`].
pub fn render_labeled_csv(
    label_columns: &[&str],
    items: &[(Vec<String>, &Analysis)],
) -> Result<String, csv::Error> {
    let mut header: Vec<&str> = label_columns.to_vec();
    header.extend(OWN_COLUMNS);
    header.extend(METRICS.iter().map(|m| m.metric));
    let mut all = Vec::new();
    for (labels, a) in items {
        for r in rows(a) {
            let mut row = labels.clone();
            row.extend(r);
            all.push(row);
        }
    }
    write(header, all)
}
