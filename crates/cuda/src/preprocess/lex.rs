//! Translation phases 1–3 (C17 §5.1.1.2): line splicing (`\` newline), comments replaced by
//! white space, and the split into preprocessing tokens (§6.4). Every token keeps the byte
//! range it came from in the file as written, so that positions survive splicing.

/// What a preprocessing token is (C17 §6.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Ident,
    /// A pp-number: digits, letters, `.`, and `e+`/`p-` exponents.
    Number,
    /// A string or character literal, quotes included.
    Literal,
    Punct,
    /// Spaces, tabs and comments (a comment's newlines are kept in its text so that the
    /// output keeps the file's lines).
    Space,
    Newline,
}

/// One preprocessing token.
#[derive(Clone, Debug)]
pub struct Token {
    pub kind: Kind,
    /// The spelling after splicing; a comment becomes spaces and its newlines.
    pub text: String,
    /// Byte range in the file as written (before splicing).
    pub start: usize,
    pub end: usize,
}

/// Punctuators, longest first (C17 §6.4.6; digraphs are not used by CUDA code).
const PUNCTS: [&str; 24] = [
    "...", "<<=", ">>=", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "*=",
    "/=", "%=", "+=", "-=", "&=", "^=", "|=", "##", "::",
];

/// Splits `raw` into tokens. Never fails: an unterminated literal or comment runs to the end
/// of its line or file, and any other byte is a one-character punctuator.
pub fn tokenize(raw: &str) -> Vec<Token> {
    // Phase 2: splice lines, remembering each kept byte's position in `raw`.
    let mut text = String::with_capacity(raw.len());
    let mut pos = Vec::with_capacity(raw.len() + 1);
    let b = raw.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            let nl = match (b.get(i + 1), b.get(i + 2)) {
                (Some(b'\n'), _) => 2,
                (Some(b'\r'), Some(b'\n')) => 3,
                _ => 0,
            };
            if nl > 0 {
                i += nl;
                continue;
            }
        }
        let ch = raw[i..].chars().next().unwrap_or(' ');
        for k in 0..ch.len_utf8() {
            pos.push(i + k);
        }
        text.push(ch);
        i += ch.len_utf8();
    }
    pos.push(raw.len());
    let s = text.as_bytes();
    let mut out: Vec<Token> = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let start = i;
        let c = s[i];
        let (kind, spelled) = if c == b'\n' {
            i += 1;
            (Kind::Newline, None)
        } else if c == b'\r' || c == b' ' || c == b'\t' || c == b'\x0b' || c == b'\x0c' {
            while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c') {
                i += 1;
            }
            (Kind::Space, None)
        } else if s[i..].starts_with(b"//") {
            while i < s.len() && s[i] != b'\n' {
                i += 1;
            }
            (Kind::Space, Some(" ".to_string()))
        } else if s[i..].starts_with(b"/*") {
            i += 2;
            while i < s.len() && !s[i..].starts_with(b"*/") {
                i += 1;
            }
            i = (i + 2).min(s.len());
            let lines = text[start..i].matches('\n').count();
            let blank = if lines == 0 {
                " ".to_string()
            } else {
                "\n".repeat(lines)
            };
            (Kind::Space, Some(blank))
        } else if c == b'"' || c == b'\'' {
            i += 1;
            while i < s.len() && s[i] != c && s[i] != b'\n' {
                if s[i] == b'\\' && i + 1 < s.len() {
                    i += 1;
                }
                i += 1;
            }
            if i < s.len() && s[i] == c {
                i += 1;
            }
            (Kind::Literal, None)
        } else if c.is_ascii_digit() || (c == b'.' && s.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            i += 1;
            while i < s.len() {
                let d = s[i];
                let exponent_sign =
                    matches!(d, b'+' | b'-') && matches!(s[i - 1], b'e' | b'E' | b'p' | b'P');
                if !(exponent_sign || d.is_ascii_alphanumeric() || matches!(d, b'_' | b'.' | b'\''))
                {
                    break;
                }
                i += 1;
            }
            (Kind::Number, None)
        } else if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            while i < s.len() && (s[i].is_ascii_alphanumeric() || s[i] == b'_' || s[i] >= 0x80) {
                i += 1;
            }
            // A prefixed literal: L"…", u8"…", R is not handled specially.
            (Kind::Ident, None)
        } else {
            let len = PUNCTS
                .iter()
                .find(|p| s[i..].starts_with(p.as_bytes()))
                .map_or(1, |p| p.len());
            i += len;
            (Kind::Punct, None)
        };
        // Keep to char boundaries (a multi-byte character is one identifier or punctuator).
        while i < s.len() && !text.is_char_boundary(i) {
            i += 1;
        }
        out.push(Token {
            kind,
            text: spelled.unwrap_or_else(|| text[start..i].to_string()),
            start: pos[start],
            end: pos[i],
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<(Kind, String)> {
        tokenize(src)
            .into_iter()
            .map(|t| (t.kind, t.text))
            .filter(|(k, _)| *k != Kind::Space)
            .collect()
    }

    #[test]
    fn splices_lines_and_blanks_comments() {
        let t = tokenize("a\\\nb // c\n/* x\ny */d");
        assert_eq!(t[0].text, "ab");
        assert_eq!((t[0].start, t[0].end), (0, 4));
        let texts: Vec<&str> = t.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(texts, vec!["ab", " ", " ", "\n", "\n", "d"]);
        assert_eq!(t[5].start, 19);
    }

    #[test]
    fn numbers_literals_and_punctuators() {
        let k = kinds("1.5e+3f x<<=2 \"a\\\"b\" '\\'' a##b ...");
        let texts: Vec<&str> = k.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(
            texts,
            vec![
                "1.5e+3f",
                "x",
                "<<=",
                "2",
                "\"a\\\"b\"",
                "'\\''",
                "a",
                "##",
                "b",
                "..."
            ]
        );
        assert_eq!(k[0].0, Kind::Number);
        assert_eq!(k[4].0, Kind::Literal);
    }
}
