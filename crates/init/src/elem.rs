//! The element type a pointer parameter points to, as far as filling its allocation needs:
//! the scalar type of one component and how many components an element has (`float4`: four
//! 4-byte floats) [CUDA C++ Programming Guide, "Built-in Vector Types"].

use serde::Serialize;

/// One component's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scalar {
    /// IEEE 754 binary16 (`__half`).
    F16,
    /// bfloat16 (`__nv_bfloat16`): the upper 16 bits of a binary32.
    Bf16,
    /// IEEE 754 binary32 (`float`).
    F32,
    /// IEEE 754 binary64 (`double`).
    F64,
    /// Two's-complement or unsigned integer of `bytes` bytes (1, 2, 4, 8); `bool` is an
    /// unsigned byte.
    Int { bytes: u8, signed: bool },
}

impl Scalar {
    /// Bytes of one component.
    pub fn bytes(self) -> u64 {
        match self {
            Scalar::F16 | Scalar::Bf16 => 2,
            Scalar::F32 => 4,
            Scalar::F64 => 8,
            Scalar::Int { bytes, .. } => bytes as u64,
        }
    }

    /// "4-byte float", "4-byte signed integer", for messages.
    pub fn describe(self) -> String {
        match self {
            Scalar::F16 => "2-byte float (binary16)".into(),
            Scalar::Bf16 => "2-byte bfloat16".into(),
            Scalar::F32 => "4-byte float".into(),
            Scalar::F64 => "8-byte float".into(),
            Scalar::Int { bytes, signed } => format!(
                "{bytes}-byte {} integer",
                if signed { "signed" } else { "unsigned" }
            ),
        }
    }

    /// NumPy's dtype for this scalar (`'<f4'`), `None` for bfloat16 (NumPy has none).
    pub fn numpy(self) -> Option<String> {
        Some(match self {
            Scalar::F16 => "<f2".into(),
            Scalar::Bf16 => return None,
            Scalar::F32 => "<f4".into(),
            Scalar::F64 => "<f8".into(),
            Scalar::Int { bytes: 1, signed } => if signed { "|i1" } else { "|u1" }.into(),
            Scalar::Int { bytes, signed } => {
                format!("<{}{bytes}", if signed { "i" } else { "u" })
            }
        })
    }

    /// NumPy's `astype` name for this scalar (`numpy.float32`).
    pub fn numpy_name(self) -> Option<String> {
        Some(match self {
            Scalar::F16 => "numpy.float16".into(),
            Scalar::Bf16 => return None,
            Scalar::F32 => "numpy.float32".into(),
            Scalar::F64 => "numpy.float64".into(),
            Scalar::Int { bytes, signed } => {
                format!("numpy.{}int{}", if signed { "" } else { "u" }, bytes * 8)
            }
        })
    }
}

/// What a pointer parameter points to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ElemType {
    /// The type as written, without pointer and qualifiers (`float4`, `unsigned int`).
    pub name: String,
    /// The component type; `None` for a structure or an unknown type (filled byte-wise).
    pub scalar: Option<Scalar>,
    /// Components per element (4 for `float4`; 1 for a scalar).
    pub lanes: u32,
    /// Bytes of one element (the stride of `p[i]`).
    pub bytes: u64,
}

impl ElemType {
    /// The element type of a pointer of C type `pointer_type` (`const float*`, `float
    /// const*`, `float4 *`, `unsigned int*`, `struct particle*`); `elem_bytes` is the element
    /// size the front end computed, used for types this does not know (structures).
    pub fn of_pointer(pointer_type: &str, elem_bytes: u64) -> ElemType {
        let words: Vec<&str> = pointer_type
            .split(|c: char| c.is_whitespace() || c == '*' || c == '&')
            .filter(|w| {
                !w.is_empty()
                    && ![
                        "const",
                        "volatile",
                        "__restrict__",
                        "__restrict",
                        "restrict",
                        "struct",
                    ]
                    .contains(w)
            })
            .collect();
        let name = words.join(" ");
        let (scalar, lanes) = match scalar_named(&name) {
            Some(s) => (Some(s), 1),
            None => match vector_named(&name) {
                Some((s, n)) => (Some(s), n),
                None => (None, 1),
            },
        };
        let bytes = match scalar {
            // float3 is 12 bytes; the front end agrees for every built-in vector type.
            Some(s) => s.bytes() * lanes as u64,
            None => elem_bytes.max(1),
        };
        ElemType {
            name,
            scalar,
            lanes,
            bytes,
        }
    }

    /// "float4 (4 × 4-byte float)", for messages.
    pub fn describe(&self) -> String {
        match self.scalar {
            Some(s) if self.lanes > 1 => {
                format!("{} ({} × {})", self.name, self.lanes, s.describe())
            }
            Some(s) => format!("{} ({})", self.name, s.describe()),
            None => format!("{} ({} bytes)", self.name, self.bytes),
        }
    }
}

/// The scalar C/CUDA type called `name` (qualifiers already removed).
fn scalar_named(name: &str) -> Option<Scalar> {
    let int = |bytes, signed| Some(Scalar::Int { bytes, signed });
    match name {
        "float" => Some(Scalar::F32),
        "double" => Some(Scalar::F64),
        "__half" | "half" => Some(Scalar::F16),
        "__nv_bfloat16" | "nv_bfloat16" => Some(Scalar::Bf16),
        // nvcc's `char` is signed on every host it supports.
        "char" | "signed char" | "int8_t" => int(1, true),
        "unsigned char" | "uchar" | "uint8_t" | "bool" => int(1, false),
        "short" | "short int" | "signed short" | "int16_t" => int(2, true),
        "unsigned short" | "unsigned short int" | "ushort" | "uint16_t" => int(2, false),
        "int" | "signed" | "signed int" | "int32_t" => int(4, true),
        "unsigned" | "unsigned int" | "uint" | "uint32_t" => int(4, false),
        "long" | "long int" | "long long" | "long long int" | "int64_t" | "ptrdiff_t"
        | "longlong" => int(8, true),
        "unsigned long"
        | "unsigned long int"
        | "unsigned long long"
        | "unsigned long long int"
        | "ulong"
        | "ulonglong"
        | "uint64_t"
        | "size_t" => int(8, false),
        _ => None,
    }
}

/// The built-in vector type called `name` (`float4`, `uchar2`, `__half2`): its component
/// and count.
fn vector_named(name: &str) -> Option<(Scalar, u32)> {
    match name {
        "__half2" | "half2" => return Some((Scalar::F16, 2)),
        "__nv_bfloat162" | "nv_bfloat162" => return Some((Scalar::Bf16, 2)),
        _ => {}
    }
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    if digits != 1 {
        return None;
    }
    let (base, n) = name.split_at(name.len() - 1);
    let n: u32 = n.parse().ok()?;
    if !(1..=4).contains(&n) {
        return None;
    }
    let s = match base {
        "float" => Scalar::F32,
        "double" => Scalar::F64,
        "char" => Scalar::Int {
            bytes: 1,
            signed: true,
        },
        "uchar" => Scalar::Int {
            bytes: 1,
            signed: false,
        },
        "short" => Scalar::Int {
            bytes: 2,
            signed: true,
        },
        "ushort" => Scalar::Int {
            bytes: 2,
            signed: false,
        },
        "int" => Scalar::Int {
            bytes: 4,
            signed: true,
        },
        "uint" => Scalar::Int {
            bytes: 4,
            signed: false,
        },
        "long" | "longlong" => Scalar::Int {
            bytes: 8,
            signed: true,
        },
        "ulong" | "ulonglong" => Scalar::Int {
            bytes: 8,
            signed: false,
        },
        _ => return None,
    };
    Some((s, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointer_types_of_both_front_ends() {
        let e = ElemType::of_pointer("const float* __restrict__", 4);
        assert_eq!(
            (e.name.as_str(), e.scalar, e.bytes),
            ("float", Some(Scalar::F32), 4)
        );
        let e = ElemType::of_pointer("float const*", 4);
        assert_eq!(e.scalar, Some(Scalar::F32));
        let e = ElemType::of_pointer("unsigned int*", 4);
        assert_eq!(
            e.scalar,
            Some(Scalar::Int {
                bytes: 4,
                signed: false
            })
        );
        let e = ElemType::of_pointer("float4*", 16);
        assert_eq!((e.scalar, e.lanes, e.bytes), (Some(Scalar::F32), 4, 16));
        let e = ElemType::of_pointer("float3 *", 12);
        assert_eq!((e.lanes, e.bytes), (3, 12));
        let e = ElemType::of_pointer("struct particle*", 28);
        assert_eq!((e.scalar, e.bytes), (None, 28));
        assert_eq!(
            ElemType::of_pointer("long long*", 8).scalar,
            Some(Scalar::Int {
                bytes: 8,
                signed: true
            })
        );
    }
}
