//! `warpscope sweep`: Harris's offset and stride experiments, predicted per GPU.

use super::launch::pairs;
use super::{emit, Format};
use anyhow::{bail, Context, Result};
use clap::ValueEnum;

#[derive(clap::Args)]
pub struct SweepArgs {
    /// offset: i = blockIdx.x*blockDim.x + threadIdx.x + offset; stride: i = (…) * stride.
    #[arg(value_enum)]
    kind: SweepKindArg,
    /// Element type of the copied arrays.
    #[arg(long = "type", value_enum, default_value_t = ElemArg::Float)]
    elem: ElemArg,
    /// Values, A..B (both ends included) [default: offset 0..32, stride 1..32].
    #[arg(long, value_name = "A..B")]
    range: Option<String>,
    /// GPUs, comma-separated (`warpscope gpus` lists them).
    #[arg(long, default_value = "c870,c1060,c2050,h100")]
    gpu: String,
    /// A calibrated profile for one of the GPUs, NAME=FILE (repeatable).
    #[arg(long = "profile", value_name = "NAME=FILE")]
    profiles: Vec<String>,
    /// Elements per array (the ground truth ran 2^28; fewer interpret faster).
    #[arg(long, default_value_t = 1 << 22)]
    n: u64,
    /// Threads per block.
    #[arg(long, default_value_t = 256)]
    block: u32,
    /// Measured effective bandwidths of one of the GPUs to compare with, NAME=CSV; rows
    /// experiment,parameter,GB/s (the format of the ground truth's copy-bandwidth.csv).
    #[arg(long, value_name = "NAME=CSV")]
    measured: Option<String>,
    /// Also measure the GPU at hand (needs the `cuda` feature and a GPU); it is compared with
    /// its curve, which is added to --gpu when missing.
    #[arg(long, conflicts_with = "measured")]
    measure: bool,
    /// Elements per array when measuring (the ground truth's 2^28: arrays far larger than L2).
    #[arg(long, default_value_t = 1 << 28, requires = "measure")]
    measure_n: u64,
    /// Write the plot to this SVG file.
    #[arg(long, value_name = "FILE")]
    svg: Option<String>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

#[derive(Clone, Copy, ValueEnum)]
enum SweepKindArg {
    Offset,
    Stride,
}

#[derive(Clone, Copy, ValueEnum)]
enum ElemArg {
    Float,
    Double,
}

pub fn sweep(a: SweepArgs) -> Result<()> {
    use warpscope::sweep::{compare, harris_sweep, read_measured, HarrisSweep, SweepKind};
    let kind = match a.kind {
        SweepKindArg::Offset => SweepKind::Offset,
        SweepKindArg::Stride => SweepKind::Stride,
    };
    let range = a.range.clone().unwrap_or(match kind {
        SweepKind::Offset => "0..32".into(),
        SweepKind::Stride => "1..32".into(),
    });
    let bad = || format!("--range {range}: expected A..B with 0 ≤ A ≤ B ≤ 4096");
    let (lo, hi) = range.split_once("..").with_context(bad)?;
    let (lo, hi): (u32, u32) = (
        lo.trim().parse().with_context(bad)?,
        hi.trim()
            .trim_start_matches('=')
            .parse()
            .with_context(bad)?,
    );
    if lo > hi || hi > 4096 {
        bail!(bad());
    }
    let profiles = pairs(&a.profiles, "profile")?;
    let mut gpus = Vec::new();
    for name in a.gpu.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let json = match profiles.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
            Some((_, f)) => Some(super::input::read_text(f, &format!("--profile {name}="))?),
            None => None,
        };
        gpus.push(warpscope::GpuTarget::new(name, json.as_deref())?);
    }
    if gpus.is_empty() {
        bail!(
            "--gpu {}: name at least one GPU (`warpscope gpus` lists them)",
            a.gpu
        );
    }
    for (n, _) in &profiles {
        if !a.gpu.split(',').any(|g| g.trim().eq_ignore_ascii_case(n)) {
            bail!("--profile {n}=…: '{n}' is not in --gpu {}", a.gpu);
        }
    }
    let s = HarrisSweep {
        kind,
        elem: match a.elem {
            ElemArg::Float => "float",
            ElemArg::Double => "double",
        },
        values: (lo..=hi).collect(),
        n: a.n,
        block: a.block,
    };
    // --measure: the GPU at hand, timed, joins the comparison.
    let mut at_hand: Option<(String, Vec<(u32, f64)>)> = None;
    if a.measure {
        at_hand = Some(measure_sweep(&s, a.measure_n)?);
        let name = &at_hand.as_ref().map(|m| m.0.clone()).unwrap_or_default();
        if !gpus.iter().any(|g| g.gpu.name == name.as_str()) {
            gpus.push(warpscope::GpuTarget::new(name, None)?);
        }
    }
    let curves = harris_sweep(&s, &gpus)?;
    // The measured GPU's curve: compared, and drawn in its colour.
    let (measured, which) = match (&a.measured, at_hand) {
        (_, Some((name, m))) => {
            let i = curves.iter().position(|c| c.gpu == name).unwrap_or(0);
            (Some(m), i)
        }
        (None, None) => (None, 0),
        (Some(m), None) => {
            let Some((name, f)) = m.split_once('=') else {
                bail!("--measured {m}: expected GPU=CSV, e.g. h100=copy-bandwidth.csv");
            };
            let g = warpscope::traffic::gpus::lookup(name.trim())
                .map_err(|e| anyhow::anyhow!("--measured {m}: {e}"))?;
            let Some(i) = curves.iter().position(|c| c.gpu == g.name) else {
                bail!("--measured {m}: {} is not in --gpu {}", g.name, a.gpu);
            };
            let text = super::input::read_text(f.trim(), "--measured")?;
            (
                Some(read_measured(&text, kind).with_context(|| format!("--measured {m}"))?),
                i,
            )
        }
    };
    if let Some(path) = &a.svg {
        let mut series: Vec<warpscope::report::plot::Series> = curves
            .iter()
            .map(|c| warpscope::report::plot::Series {
                name: format!("{} (predicted)", c.gpu),
                points: c
                    .points
                    .iter()
                    .map(|p| (p.value as f64, p.effective_gbps))
                    .collect(),
                measured: false,
            })
            .collect();
        if let Some(m) = &measured {
            series.push(warpscope::report::plot::Series {
                name: format!("{} (measured)", curves[which].gpu),
                points: m.iter().map(|&(v, g)| (v as f64, g)).collect(),
                measured: true,
            });
        }
        let title = format!(
            "{} copy, {} — effective bandwidth (read + written)",
            s.kind.name(),
            s.elem
        );
        let xl = format!("{} ({}s)", s.kind.name(), s.elem);
        let svg = warpscope::report::plot::bandwidth_svg(&title, &xl, &series)
            .map_err(|e| anyhow::anyhow!("cannot draw the plot: {e}"))?;
        emit(Some(path), &svg)?;
    }
    let cmp = measured.as_ref().and_then(|m| compare(&curves[which], m));
    if let Format::Json = a.format {
        let out = warpscope::sweep::HarrisOutput {
            experiment: s.kind,
            elem: s.elem.to_string(),
            n: s.n,
            block: s.block,
            measured_gpu: measured.as_ref().map(|_| curves[which].gpu.clone()),
            measured: measured.as_ref().map(|m| {
                m.iter()
                    .map(|&(value, effective_gbps)| warpscope::sweep::MeasuredPoint {
                        value,
                        effective_gbps,
                    })
                    .collect()
            }),
            median_error: cmp.as_ref().map(|c| c.0),
            worst_error: cmp.as_ref().map(|c| c.1),
            curves,
        };
        return emit(
            None,
            &super::analyze::json(&warpscope::report::Versioned::new(&out))?,
        );
    }
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(comfy_table::ContentArrangement::Disabled);
    let mut header = vec![s.kind.name().to_string()];
    for c in &curves {
        header.push(format!("{} GB/s", c.gpu));
    }
    if measured.is_some() {
        header.push(format!("{} measured", curves[which].gpu));
        header.push("error".into());
    }
    t.set_header(header);
    for (i, &v) in s.values.iter().enumerate() {
        let mut row = vec![v.to_string()];
        for c in &curves {
            let p = &c.points[i];
            row.push(format!("{:.1} ({})", p.effective_gbps, p.limit));
        }
        if let Some(m) = &measured {
            match m.iter().find(|x| x.0 == v) {
                Some(&(_, g)) => {
                    row.push(format!("{g:.1}"));
                    row.push(format!(
                        "{:+.1}%",
                        100.0 * (curves[which].points[i].effective_gbps - g) / g
                    ));
                }
                None => row.extend(["-".to_string(), "-".to_string()]),
            }
        }
        t.add_row(row);
    }
    let mut out = format!(
        "Harris's {} copy of {} {}s, blocks of {} — predicted effective bandwidth (bytes read + written ÷ predicted time; bound in parentheses)\n{t}\n",
        s.kind.name(),
        s.n,
        s.elem,
        s.block
    );
    for c in &curves {
        out.push_str(&format!("{}: CC {}, {} profile\n", c.gpu, c.cc, c.profile));
    }
    if let Some((median, worst, _)) = cmp {
        out.push_str(&format!(
            "{} predicted against measured: median error {:.1}%, worst {:.1}%\n",
            curves[which].gpu,
            100.0 * median,
            100.0 * worst
        ));
    }
    emit(None, &out)
}

/// Times Harris's copy on the GPU at hand at every value of `s`: (the GPU table's name of
/// the device, (value, GB/s) points).
#[cfg(feature = "cuda")]
fn measure_sweep(s: &warpscope::sweep::HarrisSweep, n: u64) -> Result<(String, Vec<(u32, f64)>)> {
    use warpscope::sweep::SweepKind;
    use warpscope_gpu::{CopyKind, Elem};
    let info = warpscope_gpu::device_info(0).map_err(|e| anyhow::anyhow!("--measure: {e}"))?;
    let Some(g) = warpscope_gpu::bench::find_gpu(&info.name) else {
        bail!(
            "--measure: the GPU at hand, {}, is not in the GPU table (`warpscope gpus`)",
            info.name
        );
    };
    let kind = match s.kind {
        SweepKind::Offset => CopyKind::Offset,
        SweepKind::Stride => CopyKind::Stride,
    };
    let elem = if s.elem == "double" {
        Elem::Double
    } else {
        Elem::Float
    };
    let gbps = warpscope_gpu::measure_copy_sweep(kind, &s.values, elem, n, s.block)
        .map_err(|e| anyhow::anyhow!("--measure on {}: {e}", info.name))?;
    Ok((
        g.name.to_string(),
        s.values.iter().copied().zip(gbps).collect(),
    ))
}

#[cfg(not(feature = "cuda"))]
fn measure_sweep(_: &warpscope::sweep::HarrisSweep, _: u64) -> Result<(String, Vec<(u32, f64)>)> {
    bail!("--measure needs a GPU build of warpscope: cargo build --release --features cuda")
}
