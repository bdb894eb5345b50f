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
    if data.starts_with(NPY_MAGIC) {
        npy(&data, elem)
    } else {
        raw(data, elem)
    }
    .map_err(|e| format!("{}: {e}", path.display()))
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
    let count = header.len();
    let nbytes = count
        .checked_mul(item)
        .ok_or_else(|| "the .npy header's shape is too large".to_string())?;
    let body = &data[start..];
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
