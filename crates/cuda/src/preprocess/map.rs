//! The position map from the preprocessor's output back to the files as written: each output
//! position names its file, line and column; a token a macro produced names the macro's use.

use crate::ir::Loc;

/// One file read by the preprocessor: its name as shown in messages and its text.
#[derive(Clone, Debug)]
pub struct File {
    pub name: String,
    pub text: String,
    line_starts: Vec<usize>,
}

impl File {
    pub fn new(name: String, text: String) -> File {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        File {
            name,
            text,
            line_starts,
        }
    }

    /// 1-based line and byte column of byte `offset`.
    pub fn loc(&self, offset: usize) -> Loc {
        let line = self.line_starts.partition_point(|&s| s <= offset).max(1) - 1;
        Loc {
            line: line as u32 + 1,
            col: (offset - self.line_starts[line]) as u32 + 1,
        }
    }
}

/// A run of output bytes and where it came from.
#[derive(Clone, Copy, Debug)]
pub struct Piece {
    /// First output byte.
    pub out: usize,
    /// Index into [`SourceMap::files`].
    pub file: usize,
    /// Byte range in that file: for a copied run, the bytes copied; for a macro's output,
    /// the whole use (`MAX(a, b)`).
    pub start: usize,
    pub end: usize,
    /// `true` when the output bytes are the file's own (so an offset inside maps 1:1).
    pub verbatim: bool,
}

/// Output position → file:line:col.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    pub files: Vec<File>,
    /// Sorted by `out`.
    pub pieces: Vec<Piece>,
    out_line_starts: Vec<usize>,
}

/// A place in a file as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    pub file: String,
    pub loc: Loc,
    /// Byte range in the file: one byte for a copied character, the whole use for a macro.
    pub start: usize,
    pub end: usize,
    pub from_macro: bool,
    file_index: usize,
}

impl SourceMap {
    /// Finishes a map for `output`.
    pub fn new(files: Vec<File>, pieces: Vec<Piece>, output: &str) -> SourceMap {
        let out_line_starts = std::iter::once(0)
            .chain(output.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        SourceMap {
            files,
            pieces,
            out_line_starts,
        }
    }

    /// Byte offset in the output of 1-based `loc`.
    pub fn out_offset(&self, loc: Loc) -> Option<usize> {
        let start = self
            .out_line_starts
            .get((loc.line as usize).checked_sub(1)?)?;
        Some(start + (loc.col as usize).saturating_sub(1))
    }

    /// Where output byte `offset` came from.
    pub fn origin_at(&self, offset: usize) -> Option<Origin> {
        let i = self
            .pieces
            .partition_point(|p| p.out <= offset)
            .checked_sub(1)?;
        let p = self.pieces[i];
        let file = self.files.get(p.file)?;
        let (start, end) = if p.verbatim {
            let at = (p.start + (offset - p.out)).min(p.end);
            (at, at + 1)
        } else {
            (p.start, p.end)
        };
        Some(Origin {
            file: file.name.clone(),
            loc: file.loc(start.min(file.text.len())),
            start,
            end,
            from_macro: !p.verbatim,
            file_index: p.file,
        })
    }

    /// Where output position `loc` came from.
    pub fn origin(&self, loc: Loc) -> Option<Origin> {
        self.origin_at(self.out_offset(loc)?)
    }

    /// The text as written behind `text`, which the output holds at `loc` (white space
    /// collapsed, as [`crate::Site::text`] is): when a macro produced part of it, the file's
    /// own spelling from the first to the last byte (`p[IDX(2, 1)]`, not the expansion).
    /// `None` when it is the file's own text already or spans files.
    pub fn written_text(&self, loc: Loc, text: &str, output: &str) -> Option<String> {
        let start = self.out_offset(loc)?;
        // Walk the output matching `text` (white space collapsed) to find its last byte.
        let mut want = text.chars().filter(|c| !c.is_whitespace()).peekable();
        let mut last = start;
        for (i, c) in output.get(start..)?.char_indices() {
            if want.peek().is_none() {
                break;
            }
            if c.is_whitespace() {
                continue;
            }
            if want.next() != Some(c) {
                return None;
            }
            last = start + i;
        }
        let first = self.origin_at(start)?;
        let end = self.origin_at(last)?;
        let any_macro = self
            .pieces
            .iter()
            .any(|p| !p.verbatim && p.out >= start && p.out <= last)
            || first.from_macro;
        if !any_macro || first.file_index != end.file_index || end.end <= first.start {
            return None;
        }
        let written = self.files[first.file_index]
            .text
            .get(first.start..end.end)?;
        Some(written.split_whitespace().collect::<Vec<_>>().join(" "))
    }
}
