//! Entry point of the `.npy` fuzz target (`fuzz/`, cargo-fuzz) and of its corpus replay
//! (`tests/fuzz_corpus.rs`): a data file's raw bytes read as `--init NAME=file:PATH` reads
//! them ([`read_data`]), once for each pointer type of [`FUZZ_POINTER_TYPES`]. Bad input is an
//! `Err`; a panic, an abort or a huge allocation is a bug (issue 21).

use crate::{read_data, ElemType, Result};

/// The pointer types the bytes are read for: each scalar width, a vector type and a
/// structure (12 bytes, filled byte-wise).
pub const FUZZ_POINTER_TYPES: &[&str] = &[
    "float*",
    "double*",
    "int*",
    "unsigned char*",
    "__half*",
    "bool*",
    "float4*",
    "struct particle*",
];

/// Reads `bytes` for each type of [`FUZZ_POINTER_TYPES`] ([`read_data`]). Returns the
/// elements read for each type that accepted the bytes; the first error when none did.
///
/// Errors: [`read_data`]'s, of the last type tried, when no type accepted the bytes.
pub fn read_data_bytes(bytes: &[u8]) -> Result<Vec<u64>> {
    let mut read = Vec::new();
    let mut last = None;
    for ty in FUZZ_POINTER_TYPES {
        let elem = ElemType::of_pointer(ty, 12);
        match read_data(bytes.to_vec(), &elem) {
            Ok((data, elements)) => {
                // The bytes handed to the executor are exactly the elements counted.
                debug_assert_eq!(Some(data.len() as u64), elements.checked_mul(elem.bytes));
                read.push(elements);
            }
            Err(e) => last = Some(e),
        }
    }
    match (read.is_empty(), last) {
        (true, Some(e)) => Err(e),
        _ => Ok(read),
    }
}
