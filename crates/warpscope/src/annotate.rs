//! The `annotate` pipeline: a launch analyzed as for `analyze`, with the source files its
//! sites are in, its memory instructions' PTX and SASS (compiled path), and, when asked, the
//! costliest warp of each access explained (one more run of the launch, for all accesses at
//! once).

use anyhow::Result;
use warpscope_report::annotate::{Annotation, Instruction, SourceText};
use warpscope_report::rows::{rows, RowView};
use warpscope_simt::sass::SassFate;

use crate::explain::{build, pick};
use crate::load::Loaded;
use crate::{analyze_prepared, prepare, AnalyzeRequest};

/// What to annotate: a launch, and whether to explain each access's costliest warp.
#[derive(Clone, Debug)]
pub struct AnnotateRequest {
    /// The launch, as for [`crate::analyze`].
    pub analyze: AnalyzeRequest,
    /// Explain the costliest warp of each access of the source (the HTML page draws them):
    /// runs the launch a second time.
    pub explain: bool,
}

/// Runs the launch, costs every access (as [`crate::analyze`]) and gathers what `annotate`
/// shows beside the figures: the source files, each memory instruction's PTX text, what
/// ptxas did with it and its SASS, and with [`AnnotateRequest::explain`] the costliest warp
/// of each access (of an unrolled loop's copies, the costliest of any).
///
/// Errors: everything [`crate::analyze`] reports.
pub fn annotate(req: &AnnotateRequest) -> Result<Annotation> {
    // The listing is shown: nvdisasm runs even where no merge is possible.
    let mut r = req.analyze.clone();
    r.compile.sass_listing = true;
    let r = &r;
    let p = prepare(r)?;
    let mut analysis = analyze_prepared(r, &p)?;
    // Sites name their file; the analyzed file's are shown under it (`file: None` here).
    for s in analysis
        .architectures
        .iter_mut()
        .flat_map(|x| x.sites.iter_mut())
    {
        if s.file.as_deref() == Some(r.file.as_str()) {
            s.file = None;
        }
    }
    // The analyzed file first, unless it is PTX (whose sites name the .cu they came from),
    // then each other file the sites name, in order of first appearance.
    let mut files: Vec<SourceText> = Vec::new();
    if !crate::is_ptx_file(&r.file) {
        files.push(SourceText {
            file: None,
            shown: r.file.clone(),
            lines: Some(r.source.lines().map(str::to_string).collect()),
            kernel_lines: kernel_lines(&r.source, &r.kernel),
        });
    }
    for s in analysis
        .architectures
        .first()
        .map(|x| x.sites.as_slice())
        .unwrap_or_default()
    {
        if s.file.is_none() || files.iter().any(|f| f.file == s.file) {
            continue;
        }
        let path = s.file.clone().unwrap_or_default();
        let text = std::fs::read_to_string(&path).ok();
        files.push(SourceText {
            file: s.file.clone(),
            shown: path,
            kernel_lines: text.as_deref().and_then(|t| kernel_lines(t, &r.kernel)),
            lines: text.map(|t| t.lines().map(str::to_string).collect()),
        });
    }
    let (instructions, sass_checked) = match &p.kernel {
        Loaded::Compiled(k) => {
            let ptx: Vec<&str> = k.ptx.lines().collect();
            let ins = k
                .prog
                .sites
                .iter()
                .zip(&k.sites)
                .map(|(s, info)| Instruction {
                    file: info.file.clone().filter(|f| *f != r.file),
                    line: info.line,
                    column: info.column,
                    access: info.text.clone(),
                    op: info.op,
                    ptx_line: s.ptx_line,
                    ptx: ptx
                        .get(s.ptx_line.saturating_sub(1) as usize)
                        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
                        .unwrap_or_else(|| s.ptx.clone()),
                    fate: match s.sass {
                        SassFate::AsWritten => None,
                        SassFate::Widened { width, members, .. } => Some(format!(
                            "ptxas: one {width}-byte instruction with the next {}",
                            members - 1
                        )),
                        SassFate::WidenedAcrossTrips {
                            width,
                            members,
                            every,
                            ..
                        } => Some(format!(
                            "ptxas: one {width}-byte instruction for {members} executions over {every} trips of the loop"
                        )),
                        SassFate::Merged => {
                            Some("ptxas: merged into a wider one, no access of its own".into())
                        }
                        SassFate::Reused => Some(
                            "ptxas: removed, an earlier load's value is reused"
                                .into(),
                        ),
                    },
                    sass: k
                        .sass
                        .iter()
                        .filter(|x| x.ptx_line == s.ptx_line)
                        .map(|x| x.text.clone())
                        .collect(),
                })
                .collect();
            (ins, !k.sass.is_empty())
        }
        Loaded::Source(..) => (Vec::new(), false),
    };
    let mut explanations = Vec::new();
    if req.explain && !analysis.architectures.is_empty() {
        let all: Vec<usize> = (0..analysis.architectures[0].sites.len()).collect();
        let picked = pick(r, &p, &analysis, &all, None)?;
        for row in rows(&analysis, &RowView::default()) {
            let mut best: Option<usize> = None;
            for &i in &row.sites {
                if picked[i].chosen.is_some()
                    && best.is_none_or(|b| picked[i].weight > picked[b].weight)
                {
                    best = Some(i);
                }
            }
            if let Some(i) = best {
                explanations.push((i, build(r, &p, analysis.clone(), i, &picked[i], None)));
            }
        }
    }
    Ok(Annotation {
        analysis,
        files,
        instructions,
        sass_checked,
        explanations,
    })
}

/// The first and last line (1-based) of the definition of the `__global__` function `kernel`
/// (`name`, `name<float>` or a demangled signature) in CUDA source `source`: from its
/// `template` or `__global__` line to its closing brace. `None` when no definition is found.
pub fn kernel_lines(source: &str, kernel: &str) -> Option<(u32, u32)> {
    let base = kernel.split(['<', '(']).next().unwrap_or(kernel).trim();
    let base = base.rsplit("::").next().unwrap_or(base);
    if base.is_empty() {
        return None;
    }
    let bytes = source.as_bytes();
    let line_of = |at: usize| source[..at].matches('\n').count() as u32 + 1;
    let mut from = 0;
    while let Some(k) = source[from..].find(base) {
        let at = from + k;
        from = at + base.len();
        let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        if (at > 0 && ident(bytes[at - 1])) || bytes.get(from).is_some_and(|&b| ident(b)) {
            continue;
        }
        if !source[from..].trim_start().starts_with('(') {
            continue;
        }
        let mut head_start = at.saturating_sub(300);
        while !source.is_char_boundary(head_start) {
            head_start += 1;
        }
        let head = &source[head_start..at];
        let cut = head.rfind([';', '}']).map_or(0, |i| i + 1);
        let head = &head[cut..];
        let Some(g) = head.find("__global__") else {
            continue;
        };
        // The parameters, then the body's braces (a prototype ends with `;`).
        let mut depth = 0i32;
        let mut i = from;
        let mut body = None;
        while i < bytes.len() {
            match bytes[i] {
                b'(' => depth += 1,
                b')' => depth -= 1,
                b';' if depth == 0 => break,
                b'{' if depth == 0 => {
                    body = Some(i);
                    break;
                }
                _ => {}
            }
            i += 1;
        }
        let Some(open) = body else { continue };
        let mut depth = 0i32;
        let mut end = None;
        for (j, &b) in bytes[open..].iter().enumerate() {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(open + j);
                        break;
                    }
                }
                _ => {}
            }
        }
        let end = end?;
        let mut first = line_of(head_start + cut + g);
        // A `template <…>` line just before.
        if first > 1 {
            let prev = source.lines().nth(first as usize - 2).unwrap_or("");
            if prev.trim_start().starts_with("template") {
                first -= 1;
            }
        }
        return Some((first, line_of(end)));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::kernel_lines;

    #[test]
    fn finds_the_definition_not_a_prototype() {
        // Multi-byte characters before the name do not split a character.
        let wide = format!(
            "// {}\n__global__ void k(int* a) {{ a[0] = 1; }}\n",
            "é—".repeat(120)
        );
        assert_eq!(kernel_lines(&wide, "k"), Some((2, 2)));
        let src = "__global__ void k(float* a);\n\ntemplate <int N>\n__global__ void\nk(float* a)\n{\n    if (a) { a[0] = 1; }\n}\nvoid h() { k<<<1, 1>>>(0); }\n";
        assert_eq!(kernel_lines(src, "k<4>"), Some((3, 8)));
        assert_eq!(kernel_lines(src, "nope"), None);
    }
}
