//! The picture of a texture fetch or surface access: the warp's texels on the texture's 2-D
//! grid (x across, y down, a window around the touched region) with the 32-byte sectors the
//! texture cache fetches drawn over them and each texel marked with the lane that reads it.
//!
//! Built from the requests of one warp-level execution (`warpscope_model::texture::
//! warp_requests` lays out their slots) and the texture's `--texture` description: each
//! slot's address goes back to its texel with `texture::texel_at`, and a sector is
//! `texture::sector_texels` texels across and rows down (16 B × 2 rows in a CUDA array, 32 B
//! × 1 row in pitch-linear memory; measured on H100, see `crates/model/src/texture.rs`).

use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeSet;
use warpscope_model::texture::{self, Filter, Kind, TextureDesc};
use warpscope_model::WarpAccess;

/// Texels across drawn at most (the window starts at the touched region's first sector).
pub const MAX_ACROSS: u64 = 40;
/// Rows drawn at most.
pub const MAX_ROWS: u64 = 16;

/// One texel one lane reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TexelRead {
    /// Texel coordinates (x, y, z or layer), 0-based.
    pub x: u64,
    pub y: u64,
    pub z: u64,
    /// 0-based index of the request (in the execution) that reads it.
    pub request: u32,
    /// The lane reading it; absent when the execution had fewer requests than groups of
    /// lanes (some group read nothing), so lanes cannot be told from request slots.
    pub lane: Option<u32>,
}

/// A texture/surface access's texels on the texture's grid (see the module's notes).
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct TexelGrid {
    /// The texture's name (its kernel parameter, as `--texture` gave it).
    pub texture: String,
    /// "array" (block-linear CUDA array), "pitch2d" or "linear".
    pub kind: String,
    /// Size in texels (width, height, depth or layers).
    pub size: [u64; 3],
    /// Bytes per texel.
    pub texel_bytes: u32,
    /// Texels across and rows down one 32-byte sector covers.
    pub sector: [u64; 2],
    /// The z slice (or layer) drawn: the first texel's.
    pub z: u64,
    /// The window drawn: first x, first y, texels across, rows down (sector-aligned, at most
    /// 40 × 16).
    pub window: [u64; 4],
    /// Every texel read, in request and slot order (all slices).
    pub texels: Vec<TexelRead>,
    /// Texels read that lie outside the window (another slice or past its edge).
    pub outside: u64,
    /// Lanes one request serves (4: a quad; 8: tex1Dfetch and surfaces).
    pub lanes_per_request: u32,
    /// Sectors each request fetches (the texture model's cost, in request order).
    pub sectors_per_request: Vec<u64>,
    /// Distinct sectors over the whole execution (what a cold cache misses).
    pub distinct_sectors: u64,
}

/// What one cell of the window shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cell {
    /// Read by these lanes (or, lanes unknown, these requests), lowest first, and the first
    /// reader's request.
    Read {
        lanes: Vec<u32>,
        request: u32,
        lanes_known: bool,
    },
    /// In a fetched sector, read by no lane.
    Fetched,
    /// In no fetched sector.
    NotFetched,
}

impl TexelGrid {
    /// The grid of `requests` (one warp-level execution, in order) on texture `t` whose
    /// texels start at address `base`; `surface` for `suld`/`sust`. `None` for a 1-D texture
    /// (height 1: the address picture says as much) or when no request has an active slot.
    ///
    /// Lanes: request `r` serves lanes `r · L ..` (L = [`texture::lanes_per_request`]) when the
    /// execution has 32 / L requests; slot `s` is lane `s / k` of its group, k = 1 texel slot
    /// a lane for nearest-point fetches, 2^dims for linear filtering, 4 for `tld4` (a
    /// nearest-point texture whose requests use slots past L).
    pub fn new(
        t: &TextureDesc,
        base: u64,
        requests: &[WarpAccess],
        surface: bool,
    ) -> Option<TexelGrid> {
        if t.size[1] <= 1 {
            return None;
        }
        let per = texture::lanes_per_request(t, surface);
        let max_slot = requests
            .iter()
            .filter(|a| a.mask != 0)
            .map(|a| 31 - a.mask.leading_zeros())
            .max()?;
        let slots = if surface || t.kind == Kind::Linear {
            1
        } else if t.filter == Filter::Linear {
            1u32 << t.dims.clamp(1, 3)
        } else if max_slot >= per {
            4
        } else {
            1
        }
        .min(32 / per);
        let lanes_known = requests.len() as u32 == 32 / per;
        let mut texels = Vec::new();
        for (r, a) in requests.iter().enumerate() {
            for s in 0..32u32 {
                if a.mask & (1 << s) == 0 {
                    continue;
                }
                let Some([x, y, z]) = a.addrs[s as usize]
                    .checked_sub(base)
                    .and_then(|o| texture::texel_at(t, o))
                else {
                    continue;
                };
                texels.push(TexelRead {
                    x,
                    y,
                    z,
                    request: r as u32,
                    lane: lanes_known.then_some(r as u32 * per + s / slots),
                });
            }
        }
        let first = texels.first()?;
        let z = first.z;
        let (sw, sh) = texture::sector_texels(t);
        let slice: Vec<&TexelRead> = texels.iter().filter(|r| r.z == z).collect();
        let x0 = slice.iter().map(|r| r.x).min()? / sw * sw;
        let y0 = slice.iter().map(|r| r.y).min()? / sh * sh;
        let x1 = (slice.iter().map(|r| r.x).max()? / sw + 1) * sw;
        let y1 = (slice.iter().map(|r| r.y).max()? / sh + 1) * sh;
        let across = (x1 - x0).min(MAX_ACROSS / sw * sw).min(t.size[0] - x0);
        let rows = (y1 - y0).min(MAX_ROWS / sh * sh).min(t.size[1] - y0);
        let window = [x0, y0, across, rows];
        let outside = texels
            .iter()
            .filter(|r| r.z != z || r.x < x0 || r.x >= x0 + across || r.y < y0 || r.y >= y0 + rows)
            .count() as u64;
        let sectors_per_request = requests.iter().map(|a| texture::cost(a).sectors).collect();
        let distinct_sectors = requests
            .iter()
            .flat_map(|a| {
                (0..32)
                    .filter(move |s| a.mask & (1 << s) != 0)
                    .map(move |s| a.addrs[s] / texture::SECTOR_BYTES)
            })
            .collect::<BTreeSet<u64>>()
            .len() as u64;
        Some(TexelGrid {
            texture: t.name.clone(),
            kind: match t.kind {
                Kind::Array => "array",
                Kind::Pitch2d => "pitch2d",
                Kind::Linear => "linear",
            }
            .into(),
            size: t.size,
            texel_bytes: t.texel_bytes,
            sector: [sw, sh],
            z,
            window,
            texels,
            outside,
            lanes_per_request: per,
            sectors_per_request,
            distinct_sectors,
        })
    }

    /// Whether texel (x, y) of the drawn slice lies in a sector some texel read touches.
    fn fetched(&self, x: u64, y: u64) -> bool {
        let [sw, sh] = self.sector;
        self.texels
            .iter()
            .any(|r| r.z == self.z && r.x / sw == x / sw && r.y / sh == y / sh)
    }

    /// What cell (x, y) of the drawn slice shows.
    pub fn cell(&self, x: u64, y: u64) -> Cell {
        let readers: Vec<&TexelRead> = self
            .texels
            .iter()
            .filter(|r| r.z == self.z && r.x == x && r.y == y)
            .collect();
        if let Some(first) = readers.first() {
            let lanes_known = first.lane.is_some();
            let mut lanes: Vec<u32> = readers
                .iter()
                .map(|r| r.lane.unwrap_or(r.request))
                .collect();
            lanes.sort_unstable();
            lanes.dedup();
            Cell::Read {
                lanes,
                request: first.request,
                lanes_known,
            }
        } else if self.fetched(x, y) {
            Cell::Fetched
        } else {
            Cell::NotFetched
        }
    }

    /// The cell's 3-character label: "  5", " 12", "12+" (several readers), "r3 " when lanes
    /// are unknown (request 3), "░░░" fetched but not read, " · " not fetched.
    pub fn cell_label(&self, x: u64, y: u64) -> String {
        match self.cell(x, y) {
            Cell::Read {
                lanes, lanes_known, ..
            } => {
                let who = if lanes_known {
                    lanes[0].to_string()
                } else {
                    format!("r{}", lanes[0])
                };
                if lanes.len() > 1 {
                    format!("{who:>2}+")
                } else {
                    format!("{who:>3}")
                }
            }
            Cell::Fetched => "░░░".into(),
            Cell::NotFetched => " · ".into(),
        }
    }

    /// One line saying what the window shows, for captions.
    pub fn caption(&self) -> String {
        let kind = match self.kind.as_str() {
            "array" => "CUDA array, block-linear",
            "pitch2d" => "pitch-linear",
            _ => "linear",
        };
        let [x0, y0, across, rows] = self.window;
        let mut s = format!(
            "texture {} ({}×{}{} × {} B, {kind}): x {}–{} across, y {}–{} down{}; a 32 B sector is {} texel{} × {} row{}",
            self.texture,
            self.size[0],
            self.size[1],
            if self.size[2] > 1 { format!("×{}", self.size[2]) } else { String::new() },
            self.texel_bytes,
            x0,
            x0 + across - 1,
            y0,
            y0 + rows - 1,
            if self.size[2] > 1 { format!(", z {}", self.z) } else { String::new() },
            self.sector[0],
            if self.sector[0] == 1 { "" } else { "s" },
            self.sector[1],
            if self.sector[1] == 1 { "" } else { "s" },
        );
        if self.outside > 0 {
            s.push_str(&format!(
                "; {} texel reads outside the window",
                self.outside
            ));
        }
        s
    }

    /// One line with the requests and sectors: "8 requests of 4 lanes; sectors per request
    /// 2 2 …; 16 sectors, 16 distinct".
    pub fn summary(&self) -> String {
        let total: u64 = self.sectors_per_request.iter().sum();
        let each: Vec<String> = self
            .sectors_per_request
            .iter()
            .map(|s| s.to_string())
            .collect();
        format!(
            "{} request{} of {} lanes; sectors per request {}; {} sectors fetched, {} distinct over the warp{}",
            self.sectors_per_request.len(),
            if self.sectors_per_request.len() == 1 { "" } else { "s" },
            self.lanes_per_request,
            each.join(" "),
            total,
            self.distinct_sectors,
            if self.texels.iter().any(|r| r.lane.is_none()) {
                " (cells name requests: some group of lanes read nothing, so lanes are not known)"
            } else {
                ""
            }
        )
    }

    /// The picture for the terminal: a row of x labels at each sector column, then one row
    /// per y (label `y N`), 3-character cells ([`Self::cell_label`]) split by `│` at sector
    /// columns and by a `─` rule between sector rows; the caption and summary under it.
    /// `paint(request, text)` colours read cells.
    pub fn text(&self, paint: &dyn Fn(usize, &str) -> String) -> String {
        let [x0, y0, across, rows] = self.window;
        let [sw, sh] = self.sector;
        let label = 7;
        let mut out = String::new();
        let mut head = " ".repeat(label);
        for x in x0..x0 + across {
            if x % sw == 0 {
                head.push(' ');
                head.push_str(&format!("{:<w$}", x, w = 3 * sw.min(across) as usize));
            }
        }
        out.push_str(head.trim_end());
        out.push('\n');
        let rule = |out: &mut String| {
            out.push_str(&" ".repeat(label));
            for x in x0..x0 + across {
                if x == x0 {
                    out.push_str("├───");
                } else if x % sw == 0 {
                    out.push_str("┼───");
                } else {
                    out.push_str("───");
                }
            }
            out.push_str("┤\n");
        };
        for y in y0..y0 + rows {
            if y % sh == 0 && y != y0 {
                rule(&mut out);
            }
            out.push_str(&format!("{:<label$}", format!("y {y}")));
            for x in x0..x0 + across {
                if x % sw == 0 {
                    out.push('│');
                }
                let c = self.cell_label(x, y);
                match self.cell(x, y) {
                    Cell::Read { request, .. } => out.push_str(&paint(request as usize, &c)),
                    _ => out.push_str(&c),
                }
            }
            out.push_str("│\n");
        }
        out.push_str(&self.caption());
        out.push('\n');
        out.push_str(&self.summary());
        out.push('\n');
        out
    }
}

impl TexelGrid {
    /// Draws the grid into an SVG figure (see [`super::render_svg`]): x labels at sector
    /// columns, y labels at the left, a cell per texel, fetched sectors outlined.
    pub(super) fn svg(&self, f: &mut super::svg::Fig) {
        use super::svg::{color, legend, CW, LM};
        let [x0, y0, across, rows] = self.window;
        let [sw, sh] = self.sector;
        let cell = (CW / across.max(1) as f64).min(26.0);
        let top = f.h + 30.0;
        let id = f.id.clone();
        f.open("texels", "");
        for x in (x0..x0 + across).filter(|x| x % sw == 0) {
            let px = LM + (x - x0) as f64 * cell;
            f.text(px, top - 6.0, 10.0, "fill=\"#555\"", &x.to_string());
        }
        for y in y0..y0 + rows {
            let py = top + (y - y0) as f64 * cell;
            f.text(
                LM - 8.0,
                py + cell * 0.65,
                10.0,
                "text-anchor=\"end\" fill=\"#555\"",
                &format!("y {y}"),
            );
            for x in x0..x0 + across {
                let px = LM + (x - x0) as f64 * cell;
                match self.cell(x, y) {
                    Cell::Read {
                        lanes,
                        request,
                        lanes_known,
                    } => {
                        let (fill, stroke) = color(request as usize);
                        let who: Vec<String> = lanes
                            .iter()
                            .map(|l| {
                                if lanes_known {
                                    format!("lane {l}")
                                } else {
                                    format!("request {l}")
                                }
                            })
                            .collect();
                        f.rect_t(
                            px,
                            py,
                            cell,
                            cell,
                            &format!("fill=\"{fill}\" stroke=\"{stroke}\" stroke-width=\"0.5\""),
                            &format!("texel ({x}, {y}): {}", who.join(", ")),
                        );
                        f.text(
                            px + cell / 2.0,
                            py + cell * 0.65,
                            (cell * 0.42).min(11.0),
                            "text-anchor=\"middle\" fill=\"#111\"",
                            self.cell_label(x, y).trim(),
                        );
                    }
                    Cell::Fetched => f.rect_t(
                        px,
                        py,
                        cell,
                        cell,
                        &format!("fill=\"url(#waste-{id})\" stroke=\"#ccc\" stroke-width=\"0.5\""),
                        &format!("texel ({x}, {y}): fetched, not read"),
                    ),
                    Cell::NotFetched => f.rect(
                        px,
                        py,
                        cell,
                        cell,
                        "fill=\"#fafafa\" stroke=\"#e4e4e4\" stroke-width=\"0.5\"",
                    ),
                }
            }
        }
        // Sector outlines over the cells: every fetched sector of the drawn slice.
        let fetched: BTreeSet<(u64, u64)> = self
            .texels
            .iter()
            .filter(|r| r.z == self.z)
            .map(|r| (r.x / sw, r.y / sh))
            .collect();
        for (sx, sy) in fetched {
            let (x, y) = (sx * sw, sy * sh);
            if x + sw <= x0 || x >= x0 + across || y + sh <= y0 || y >= y0 + rows {
                continue;
            }
            let cx = x.max(x0);
            let cy = y.max(y0);
            let w = (x + sw).min(x0 + across) - cx;
            let h = (y + sh).min(y0 + rows) - cy;
            let _ = std::fmt::Write::write_fmt(
                &mut f.s,
                format_args!(
                    "<rect class=\"sector\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"none\" stroke=\"#222\" stroke-width=\"1.5\"/>\n",
                    LM + (cx - x0) as f64 * cell,
                    top + (cy - y0) as f64 * cell,
                    w as f64 * cell,
                    h as f64 * cell
                ),
            );
        }
        f.close();
        f.h = top + rows as f64 * cell + 6.0;
        for line in [self.caption(), self.summary()] {
            for l in super::common::wrap(&line, 120) {
                f.h += 15.0;
                f.text(LM, f.h, 11.0, "fill=\"#333\"", &l);
            }
        }
        f.h += 4.0;
        legend(
            f,
            &[
                (
                    &format!("fill=\"{}\" stroke=\"{}\"", color(0).0, color(0).1),
                    "texel a lane reads (its number)",
                ),
                (
                    &format!("fill=\"url(#waste-{id})\" stroke=\"#ccc\""),
                    "fetched, not read",
                ),
                (
                    "fill=\"none\" stroke=\"#222\" stroke-width=\"1.5\"",
                    "32 B sector fetched",
                ),
            ],
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use warpscope_model::texture::{footprint, Coords, Footprint, Sampling};
    use warpscope_model::Op;

    /// The requests of one warp fetching `coords(lane)` (nearest-point, integer) from `t`
    /// with lanes `active`, laid out by the model.
    fn fetch(t: &TextureDesc, active: u32, coords: impl Fn(i64) -> [i64; 3]) -> Vec<WarpAccess> {
        let lanes: Vec<(usize, Footprint)> = (0..32)
            .filter(|l| active & (1 << l) != 0)
            .map(|l| {
                let c = Coords::Int(coords(l as i64));
                (l, footprint(t, c, 2, None, Sampling::Tex))
            })
            .collect();
        texture::warp_requests(t, 0, &lanes, 1, false, Op::Load)
    }

    fn array() -> TextureDesc {
        "img=array:1024x1024:float".parse().unwrap()
    }

    #[test]
    fn row_of_32_texels_marks_each_lane_in_16_byte_by_2_row_sectors() {
        let t = array();
        let g = TexelGrid::new(&t, 0, &fetch(&t, !0, |l| [8 + l, 10, 0]), false).unwrap();
        // x 8..39 in sectors of 4 texels × 2 rows: the window is x 8–39, y 10–11.
        assert_eq!(g.window, [8, 10, 32, 2]);
        assert_eq!(g.sector, [4, 2]);
        // 8 quads, each 4 texels in one sector: 1 sector a request, 8 distinct.
        assert_eq!(g.sectors_per_request, vec![1; 8]);
        assert_eq!(g.distinct_sectors, 8);
        assert_eq!(g.cell_label(8, 10), "  0");
        assert_eq!(g.cell_label(13, 10), "  5");
        assert_eq!(g.cell_label(39, 10), " 31");
        // Row 11 shares the sectors (16 B × 2 rows): fetched, read by no lane.
        assert_eq!(g.cell(8, 11), Cell::Fetched);
        assert_eq!(g.cell_label(8, 11), "░░░");
        assert_eq!(g.outside, 0);
        let pic = g.text(&|_, s| s.to_string());
        let rows: Vec<&str> = pic.lines().collect();
        assert!(rows[1].starts_with("y 10   │  0  1  2  3│  4"), "{pic}");
        assert!(rows[2].starts_with("y 11   │░░░░░░░░░░░░│░░░"), "{pic}");
    }

    #[test]
    fn column_walk_takes_two_sectors_a_quad_and_clips_at_16_rows() {
        let t = array();
        let g = TexelGrid::new(&t, 0, &fetch(&t, !0, |l| [5, l, 0]), false).unwrap();
        // A quad reads rows 4q..4q+3 of column 5: two 2-row sectors a request.
        assert_eq!(g.sectors_per_request, vec![2; 8]);
        assert_eq!(g.distinct_sectors, 16);
        assert_eq!(g.window, [4, 0, 4, 16]);
        assert_eq!(g.outside, 16);
        assert_eq!(g.cell_label(5, 3), "  3");
        assert_eq!(g.cell(4, 3), Cell::Fetched);
        assert_eq!(g.cell(6, 15), Cell::Fetched);
    }

    #[test]
    fn pitch_linear_sectors_are_a_row_of_32_bytes_and_missing_groups_name_requests() {
        let t: TextureDesc = "p=pitch2d:256x64:float".parse().unwrap();
        // Lanes 0-3 and 16-19 only: 2 requests of the 8 groups, so lanes are unknown.
        let g = TexelGrid::new(&t, 0, &fetch(&t, 0x000F_000F, |l| [l, 2, 0]), false).unwrap();
        assert_eq!(g.sector, [8, 1]);
        assert_eq!(g.sectors_per_request, vec![1, 1]);
        assert_eq!(g.window, [0, 2, 24, 1]);
        assert_eq!(g.cell_label(1, 2), " r0");
        assert_eq!(g.cell_label(17, 2), " r1");
        assert_eq!(g.cell(6, 2), Cell::Fetched);
        assert_eq!(g.cell(8, 2), Cell::NotFetched);
        // A 1-D texture has no grid.
        let l: TextureDesc = "d=linear:4096:float".parse().unwrap();
        assert!(TexelGrid::new(&l, 0, &fetch(&l, !0, |l| [l, 0, 0]), false).is_none());
    }
}
