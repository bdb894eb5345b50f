//! `file:PATH`: a NumPy `.npy` array (told apart by its magic string `\x93NUMPY`, whatever the
//! file is called) or raw little-endian bytes of the parameter's element type.

use crate::elem::{ElemType, Scalar};
use npyz::{DType, Endianness, NpyHeader, Order, TypeChar};
use std::path::Path;

/// The bytes to put in an allocation, read from a file, and its size in elements.
pub(crate) struct Loaded {
    /// Little-endian bytes, `elements × elem.bytes` of them.
    pub bytes: Vec<u8>,
    /// Elements of the parameter's type (`float4` elements for a `float4*`).
    pub elements: u64,
}

const NPY_MAGIC: &[u8] = b"\x93NUMPY";

/// The largest `.npy` header read, in bytes. NumPy itself refuses headers over 10,000 bytes
/// unless told otherwise (`numpy.lib.format._MAX_HEADER_SIZE`); 1 MiB leaves room for any
/// real shape while a v2/v3 length field claiming 4 GB is refused before anything is
/// allocated for it.
pub const MAX_NPY_HEADER: u64 = 1 << 20;

/// Deepest nesting of brackets (`()`, `[]`, `{}`, outside quotes) read in a `.npy` header:
/// npyz parses the header's Python literal with backtracking that triples with each level
/// (`({{{{{{{{{{{{3,)` took 26 s; found by the `npy` fuzz target). A plain array's header
/// nests 2 (the dict, the shape tuple); a structured dtype 3 or more, refused anyway.
pub const MAX_NPY_HEADER_DEPTH: usize = 4;

/// Refuses a header (its bytes after the preamble) nesting brackets deeper than
/// [`MAX_NPY_HEADER_DEPTH`], naming the byte where it does.
fn check_header_depth(header: &[u8]) -> Result<(), String> {
    let mut depth = 0usize;
    let mut quote: Option<u8> = None;
    for (i, &b) in header.iter().enumerate() {
        match (quote, b) {
            (Some(q), _) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'\'' | b'"') => quote = Some(b),
            (None, b'(' | b'[' | b'{') => {
                depth += 1;
                if depth > MAX_NPY_HEADER_DEPTH {
                    return Err(format!(
                        "the .npy header nests brackets more than {MAX_NPY_HEADER_DEPTH} deep (at byte {i} of the header); a NumPy header nests 2 (a structured dtype more): the file is damaged or not written by NumPy"
                    ));
                }
            }
            (None, b')' | b']' | b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// The header's length as the preamble gives it [NumPy format: 6-byte magic, major and
/// minor version, then a little-endian u16 (v1) or u32 (v2, v3) length], checked against
/// [`MAX_NPY_HEADER`] and against the bytes the file holds.
fn npy_header_len(data: &[u8]) -> Result<u64, String> {
    let major = *data
        .get(6)
        .ok_or("the .npy file ends inside its preamble")?;
    let (len, at) = match major {
        1 => {
            let b = data
                .get(8..10)
                .ok_or("the .npy file ends inside its preamble")?;
            (u16::from_le_bytes([b[0], b[1]]) as u64, 10)
        }
        2 | 3 => {
            let b = data
                .get(8..12)
                .ok_or("the .npy file ends inside its preamble")?;
            (u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64, 12)
        }
        v => {
            return Err(format!(
                "the .npy format version {v} is unknown (1, 2 and 3 are)"
            ))
        }
    };
    if len > MAX_NPY_HEADER {
        return Err(format!(
            "the .npy header claims {len} bytes, over the limit of {MAX_NPY_HEADER} bytes (1 MiB); the file is damaged or not written by NumPy"
        ));
    }
    let left = data.len() as u64 - at;
    if len > left {
        return Err(format!(
            "the .npy header claims {len} bytes but only {left} follow its preamble: the file is truncated"
        ));
    }
    Ok(len)
}

/// Reads `path` for a parameter whose elements are `elem`. Errors (as text for the caller
/// to prefix with the flag): an unreadable file, a malformed `.npy`, a dtype other than the
/// element type (both named), a size that is not whole elements.
pub(crate) fn load(path: &Path, elem: &ElemType) -> Result<Loaded, String> {
    // By its metadata first: a FIFO would block in `open`, a device never ends.
    let meta =
        std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!(
            "{} is not a regular file (a FIFO, device or folder): give a .npy or raw data file",
            path.display()
        ));
    }
    let data = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    from_bytes(data, elem).map_err(|e| format!("{}: {e}", path.display()))
}

/// Reads a file's bytes `data` for a parameter whose elements are `elem`: a `.npy` array when
/// it starts with NumPy's magic string, raw little-endian elements otherwise. Errors as
/// [`load`]'s, without the path.
pub(crate) fn from_bytes(data: Vec<u8>, elem: &ElemType) -> Result<Loaded, String> {
    if data.starts_with(NPY_MAGIC) {
        npy(&data, elem)
    } else {
        raw(data, elem)
    }
}

fn raw(bytes: Vec<u8>, elem: &ElemType) -> Result<Loaded, String> {
    let n = bytes.len() as u64;
    if !n.is_multiple_of(elem.bytes) {
        return Err(format!(
            "the file has {n} bytes, not a whole number of {}-byte elements of {}; a file that is not .npy is read as raw little-endian {} elements",
            elem.bytes,
            elem.describe(),
            elem.name
        ));
    }
    Ok(Loaded {
        elements: n / elem.bytes,
        bytes,
    })
}

/// The dtype a scalar takes in an `.npy` file: (kind, bytes).
fn matches(scalar: Scalar, kind: TypeChar, bytes: u64) -> bool {
    match (scalar, kind) {
        (Scalar::F16, TypeChar::Float) => bytes == 2,
        (Scalar::F32, TypeChar::Float) => bytes == 4,
        (Scalar::F64, TypeChar::Float) => bytes == 8,
        // The same bytes whether NumPy calls them signed or not (an index array saved as
        // uint32 for an `int*`).
        (Scalar::Int { bytes: b, .. }, TypeChar::Int | TypeChar::Uint) => bytes == b as u64,
        (Scalar::Int { bytes: 1, .. }, TypeChar::Bool) => bytes == 1,
        _ => false,
    }
}

fn npy(data: &[u8], elem: &ElemType) -> Result<Loaded, String> {
    let len = npy_header_len(data)?;
    let at = if data[6] == 1 { 10 } else { 12 };
    check_header_depth(&data[at..at + len as usize])?;
    let mut cursor = std::io::Cursor::new(data);
    let header = NpyHeader::from_reader(&mut cursor)
        .map_err(|e| format!("not a readable .npy file: {e}"))?;
    let start = cursor.position() as usize;
    let DType::Plain(ts) = header.dtype() else {
        return Err(format!(
            "the .npy holds a structured dtype ({}); save a plain numeric array",
            header.dtype().descr()
        ));
    };
    let item = ts.size_field();
    let kind = ts.type_char();
    let numeric = matches!(
        kind,
        TypeChar::Bool | TypeChar::Int | TypeChar::Uint | TypeChar::Float
    );
    if !numeric {
        return Err(format!(
            "the .npy dtype '{ts}' is not numeric; save a numeric array"
        ));
    }
    if let Some(s) = elem.scalar {
        if !matches(s, kind, item) {
            let want = match (s.numpy(), s.numpy_name()) {
                (Some(d), Some(n)) => format!("'{d}'; convert it with .astype({n})"),
                _ => format!(
                    "{} (NumPy has no such dtype: write the raw little-endian bytes instead)",
                    s.describe()
                ),
            };
            return Err(format!(
                "the .npy dtype is '{ts}' ({}), but the parameter's elements are {}: the file must hold {want}",
                dtype_words(kind, item),
                elem.describe()
            ));
        }
    }
    let shape = header.shape();
    if header.order() == Order::Fortran && shape.iter().filter(|&&d| d > 1).count() > 1 {
        return Err(
            "the .npy array is in Fortran order; save it in C order (numpy.ascontiguousarray)"
                .into(),
        );
    }
    // npyz's own product wraps: a shape (2^62 + 25, 4) read as 100 values.
    let count = shape
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(d))
        .ok_or_else(|| {
            format!("the .npy shape {shape:?} holds more than 2^64 values: the header is damaged")
        })?;
    let nbytes = count.checked_mul(item).ok_or_else(|| {
        format!("the .npy shape {shape:?} of {item}-byte values holds more than 2^64 bytes: the header is damaged")
    })?;
    let body = data.get(start..).unwrap_or(&[]);
    if (body.len() as u64) < nbytes {
        return Err(format!(
            "the .npy header says {count} values of {item} bytes ({nbytes} bytes) but the file holds {} bytes of data",
            body.len()
        ));
    }
    let mut bytes = body[..nbytes as usize].to_vec();
    if ts.endianness() == Endianness::Big && item > 1 {
        for c in bytes.chunks_exact_mut(item as usize) {
            c.reverse();
        }
    }
    let total = nbytes;
    if !total.is_multiple_of(elem.bytes) {
        return Err(format!(
            "the .npy holds {count} values ({total} bytes), not a whole number of {} elements",
            elem.describe()
        ));
    }
    Ok(Loaded {
        elements: total / elem.bytes,
        bytes,
    })
}

fn dtype_words(kind: TypeChar, bytes: u64) -> String {
    match kind {
        TypeChar::Float => format!("{bytes}-byte float"),
        TypeChar::Int => format!("{bytes}-byte signed integer"),
        TypeChar::Uint => format!("{bytes}-byte unsigned integer"),
        TypeChar::Bool => "1-byte bool".into(),
        _ => format!("{bytes} bytes"),
    }
}
