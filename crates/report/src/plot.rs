//! Line plots of a sweep (effective bandwidth against offset or stride), as standalone SVG
//! drawn with plotters' SVG backend: text is emitted as SVG `<text>`, so no system font is
//! read.

use plotters::prelude::*;
use serde::Serialize;

/// One curve: a GPU's predicted (or measured) effective bandwidth.
#[derive(Clone, Debug, Serialize)]
pub struct Series {
    /// Legend text, e.g. "H100 SXM5 80GB (predicted)".
    pub name: String,
    /// (x, GB/s) points, x ascending.
    pub points: Vec<(f64, f64)>,
    /// Measured on a GPU rather than predicted: drawn with markers.
    pub measured: bool,
}

const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(23, 190, 207),
    RGBColor(140, 86, 75),
    RGBColor(127, 127, 127),
];

/// Draws `series` against `x_label` (GB/s on y, from 0; logarithmic when the values span
/// more than 40×) into an SVG document of 900×560
/// pixels. A measured series takes the colour of the predicted series before it with the
/// same GPU name prefix (the text before " ("), so prediction and measurement pair up.
///
/// Errors: a message from the plotting library (an empty range is widened, not an error).
pub fn bandwidth_svg(title: &str, x_label: &str, series: &[Series]) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
        let (x0, x1) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
        let (x0, x1) = if x0 < x1 { (x0, x1) } else { (0.0, 1.0) };
        let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
        let ymax = ys.clone().fold(0.0f64, f64::max).max(1.0);
        let ymin = ys.filter(|&y| y > 0.0).fold(f64::MAX, f64::min);
        // GPUs a generation apart differ 10–100×: a log axis keeps every curve readable. It
        // is drawn as log10(GB/s) on a linear axis, labelled in GB/s.
        let log = ymin < f64::MAX && ymax / ymin > 40.0;
        let f = |y: f64| if log { y.max(ymin / 2.0).log10() } else { y };
        let (ylo, yhi) = if log {
            ((ymin / 1.5).log10(), (ymax * 10.0).log10())
        } else {
            (0.0, ymax * 1.3)
        };
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, ylo..yhi)
            .map_err(|e| e.to_string())?;
        let label = |v: &f64| {
            let g = if log { 10f64.powf(*v) } else { *v };
            if g >= 100.0 {
                format!("{g:.0}")
            } else {
                format!("{g:.1}")
            }
        };
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(if log {
                "effective bandwidth (GB/s, log scale)"
            } else {
                "effective bandwidth (GB/s)"
            })
            .y_label_formatter(&label)
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(|e| e.to_string())?;
        let mut color_of: Vec<(String, RGBColor)> = Vec::new();
        for s in series {
            let key = s.name.split(" (").next().unwrap_or(&s.name).to_string();
            let color = match color_of.iter().find(|(k, _)| *k == key) {
                Some((_, c)) => *c,
                None => {
                    let c = COLORS[color_of.len() % COLORS.len()];
                    color_of.push((key, c));
                    c
                }
            };
            let pts = s.points.iter().map(|&(x, y)| (x, f(y)));
            if s.measured {
                chart
                    .draw_series(pts.map(|p| Circle::new(p, 4, color.stroke_width(2))))
                    .map_err(|e| e.to_string())?
                    .label(&s.name)
                    .legend(move |(x, y)| Circle::new((x + 10, y), 4, color.stroke_width(2)));
            } else {
                chart
                    .draw_series(LineSeries::new(pts, color.stroke_width(2)))
                    .map_err(|e| e.to_string())?
                    .label(&s.name)
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                    });
            }
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(180, 180, 180))
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_standalone_svg_with_every_series() {
        let s = vec![
            Series {
                name: "Tesla C870 (predicted)".into(),
                points: (0..=32)
                    .map(|x| (x as f64, if x % 16 == 0 { 64.0 } else { 8.0 }))
                    .collect(),
                measured: false,
            },
            Series {
                name: "H100 <SXM> & co (measured)".into(),
                points: vec![(0.0, 2393.2), (1.0, 2309.7)],
                measured: true,
            },
        ];
        let svg = bandwidth_svg("offset copy", "offset (elements)", &s).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("Tesla C870 (predicted)"));
        // Legend text is escaped.
        assert!(svg.contains("H100 &lt;SXM&gt; &amp; co (measured)"));
        assert!(svg.contains("<circle"));
        assert!(svg.contains("<polyline"));
    }
}
