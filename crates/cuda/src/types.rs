//! C/CUDA types and their layout (sizes, alignment, padding) as nvcc lays them out on a
//! 64-bit host [CUDA C++ Programming Guide, "Built-in Vector Types"; C11 6.7.2.1].

/// A C/CUDA type. Structs (and the built-in vector types, which are structs with fields
/// `x`, `y`, `z`, `w`) are indices into [`Structs`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    Void,
    Bool,
    /// Integer of `bytes` bytes (1, 2, 4, 8).
    Int {
        bytes: u8,
        signed: bool,
    },
    /// Floating point of `bytes` bytes: 2 (`__half`), 4 (`float`), 8 (`double`).
    Float(u8),
    Ptr(Box<Ty>),
    /// Array of `n` elements.
    Array(Box<Ty>, u64),
    Struct(usize),
}

pub const INT: Ty = Ty::Int {
    bytes: 4,
    signed: true,
};
pub const UINT: Ty = Ty::Int {
    bytes: 4,
    signed: false,
};
pub const LONG: Ty = Ty::Int {
    bytes: 8,
    signed: true,
};
pub const ULONG: Ty = Ty::Int {
    bytes: 8,
    signed: false,
};
pub const FLOAT: Ty = Ty::Float(4);
pub const DOUBLE: Ty = Ty::Float(8);

impl Ty {
    pub fn ptr(self) -> Ty {
        Ty::Ptr(Box::new(self))
    }
    pub fn is_int(&self) -> bool {
        matches!(self, Ty::Int { .. } | Ty::Bool)
    }
    pub fn is_float(&self) -> bool {
        matches!(self, Ty::Float(_))
    }
    pub fn is_arith(&self) -> bool {
        self.is_int() || self.is_float()
    }
    pub fn is_ptr(&self) -> bool {
        matches!(self, Ty::Ptr(_))
    }
    pub fn is_scalar(&self) -> bool {
        self.is_arith() || self.is_ptr()
    }
    pub fn pointee(&self) -> Option<&Ty> {
        match self {
            Ty::Ptr(t) | Ty::Array(t, _) => Some(t),
            _ => None,
        }
    }
    pub fn is_signed(&self) -> bool {
        matches!(self, Ty::Int { signed: true, .. })
    }
}

/// One field of a struct: name, type and byte offset.
#[derive(Clone, Debug)]
pub struct Field {
    pub name: String,
    pub ty: Ty,
    pub offset: u64,
}

/// A struct's layout.
#[derive(Clone, Debug)]
pub struct StructDef {
    pub name: String,
    pub fields: Vec<Field>,
    pub size: u64,
    pub align: u64,
    /// A built-in vector type (`float4`, `int2`, …).
    pub builtin: bool,
}

/// The struct table of one program.
#[derive(Clone, Debug, Default)]
pub struct Structs {
    pub defs: Vec<StructDef>,
}

impl Structs {
    /// Size in bytes of `t` (`void` counts 1 as GNU C does for pointer arithmetic).
    pub fn size(&self, t: &Ty) -> u64 {
        match t {
            Ty::Void | Ty::Bool => 1,
            Ty::Int { bytes, .. } | Ty::Float(bytes) => *bytes as u64,
            Ty::Ptr(_) => 8,
            // Saturating: a declared size may be absurd; callers check it against a limit.
            Ty::Array(e, n) => self.size(e).saturating_mul(*n),
            Ty::Struct(i) => self.defs[*i].size,
        }
    }

    /// Alignment in bytes of `t`.
    pub fn align(&self, t: &Ty) -> u64 {
        match t {
            Ty::Array(e, _) => self.align(e),
            Ty::Struct(i) => self.defs[*i].align,
            other => self.size(other),
        }
    }

    /// Lays out a struct with C rules: each field at the next multiple of its alignment, the
    /// size rounded up to the struct's alignment, which is the largest of its fields' and
    /// `min_align` (from `__align__(n)`).
    pub fn define(
        &mut self,
        name: &str,
        fields: Vec<(String, Ty)>,
        min_align: u64,
        builtin: bool,
    ) -> usize {
        let mut off = 0u64;
        let mut align = min_align.max(1);
        let mut out = Vec::new();
        for (n, t) in fields {
            let a = self.align(&t);
            off = off.div_ceil(a) * a;
            align = align.max(a);
            let sz = self.size(&t);
            out.push(Field {
                name: n,
                ty: t,
                offset: off,
            });
            off += sz;
        }
        let size = off.div_ceil(align).max(1) * align;
        self.defs.push(StructDef {
            name: name.to_string(),
            fields: out,
            size,
            align,
            builtin,
        });
        self.defs.len() - 1
    }

    /// Finds a built-in vector type by name (`float4`, `uchar2`, `__half2`, …), defining it on
    /// first use with the alignment the CUDA headers give it.
    pub fn vector(&mut self, name: &str) -> Option<Ty> {
        if let Some(i) = self.defs.iter().position(|d| d.builtin && d.name == name) {
            return Some(Ty::Struct(i));
        }
        let (elem, n) = vector_shape(name)?;
        let esize = self.size(&elem);
        let align = match n {
            1 => esize,
            3 => esize,
            2 => esize * 2,
            _ => (esize * 4).min(16),
        };
        let names = ["x", "y", "z", "w"];
        let fields = (0..n)
            .map(|k| (names[k].to_string(), elem.clone()))
            .collect();
        Some(Ty::Struct(self.define(name, fields, align, true)))
    }

    /// A human-readable name of `t` as CUDA spells it.
    pub fn name(&self, t: &Ty) -> String {
        match t {
            Ty::Void => "void".into(),
            Ty::Bool => "bool".into(),
            Ty::Int { bytes, signed } => {
                let base = match bytes {
                    1 => "char",
                    2 => "short",
                    4 => "int",
                    _ => "long long",
                };
                if *signed {
                    base.into()
                } else {
                    format!("unsigned {base}")
                }
            }
            Ty::Float(2) => "__half".into(),
            Ty::Float(4) => "float".into(),
            Ty::Float(_) => "double".into(),
            Ty::Ptr(e) => format!("{}*", self.name(e)),
            Ty::Array(e, n) => format!("{}[{n}]", self.name(e)),
            Ty::Struct(i) => self.defs[*i].name.clone(),
        }
    }

    /// Splits an access to a value of type `t` into the loads/stores the compiler emits:
    /// one instruction when the size is 1, 2, 4, 8 or 16 bytes and the type is aligned to it,
    /// otherwise one per member [PG "Size and Alignment Requirement"]. Returns (byte offset,
    /// width) pairs.
    pub fn access_parts(&self, t: &Ty) -> Vec<(u64, u32)> {
        let size = self.size(t);
        let mut out = Vec::new();
        if matches!(size, 1 | 2 | 4 | 8 | 16) && self.align(t) >= size {
            out.push((0, size as u32));
            return out;
        }
        match t {
            Ty::Struct(i) => {
                for f in &self.defs[*i].fields {
                    for (o, w) in self.access_parts(&f.ty) {
                        out.push((f.offset + o, w));
                    }
                }
            }
            Ty::Array(e, n) => {
                let es = self.size(e);
                let parts = self.access_parts(e);
                for k in 0..*n {
                    for (o, w) in &parts {
                        out.push((k * es + o, *w));
                    }
                }
            }
            _ => out.push((0, size as u32)),
        }
        out
    }
}

/// Whether `name` is a built-in vector type (`float4`, `uchar2`, `__half2`).
pub fn is_vector_type_name(name: &str) -> bool {
    vector_shape(name).is_some()
}

/// Element type and component count of a built-in vector type name.
fn vector_shape(name: &str) -> Option<(Ty, usize)> {
    let name = name.strip_prefix("__").unwrap_or(name);
    if name == "half2" {
        return Some((Ty::Float(2), 2));
    }
    // The last character, not byte: a name may end in a multi-byte character (`floatß`).
    let (last, _) = name.char_indices().last()?;
    let (base, n) = name.split_at(last);
    let n: usize = n.parse().ok()?;
    if !(1..=4).contains(&n) {
        return None;
    }
    let elem = match base {
        "char" => Ty::Int {
            bytes: 1,
            signed: true,
        },
        "uchar" => Ty::Int {
            bytes: 1,
            signed: false,
        },
        "short" => Ty::Int {
            bytes: 2,
            signed: true,
        },
        "ushort" => Ty::Int {
            bytes: 2,
            signed: false,
        },
        "int" => INT,
        "uint" => UINT,
        "long" | "longlong" => LONG,
        "ulong" | "ulonglong" => ULONG,
        "float" => FLOAT,
        "double" => DOUBLE,
        _ => return None,
    };
    Some((elem, n))
}

/// The promoted type of an integer operand [C11 6.3.1.1].
pub fn promote(t: &Ty) -> Ty {
    match t {
        Ty::Bool => INT,
        Ty::Int { bytes, .. } if *bytes < 4 => INT,
        other => other.clone(),
    }
}

/// The common type of two arithmetic operands [C11 6.3.1.8, usual arithmetic conversions].
pub fn common(a: &Ty, b: &Ty) -> Ty {
    match (a, b) {
        (Ty::Float(x), Ty::Float(y)) => Ty::Float((*x).max(*y)),
        (Ty::Float(x), _) | (_, Ty::Float(x)) => Ty::Float((*x).max(4)),
        _ => {
            let (a, b) = (promote(a), promote(b));
            match (&a, &b) {
                (
                    Ty::Int {
                        bytes: x,
                        signed: sx,
                    },
                    Ty::Int {
                        bytes: y,
                        signed: sy,
                    },
                ) => {
                    if x > y {
                        a.clone()
                    } else if y > x {
                        b.clone()
                    } else {
                        Ty::Int {
                            bytes: *x,
                            signed: *sx && *sy,
                        }
                    }
                }
                _ => a,
            }
        }
    }
}

/// One scalar inside an aggregate, as `--arg NAME.PATH=VALUE` sets it: its path (`n`,
/// `box.x`, `w[2]`), byte offset and size, and whether it is floating point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScalarField {
    pub path: String,
    pub offset: u64,
    pub bytes: u64,
    pub float: bool,
    /// Its type (a scalar: integer, float, bool or pointer).
    pub ty: Ty,
    /// The type as C spells it (`int`, `float`).
    pub type_name: String,
}

impl Structs {
    /// The scalars of `t` in layout order, nested structs and arrays flattened (`a.b`,
    /// `v[3]`); at most `limit` of them (a huge array is not spelled out).
    pub fn scalar_fields(&self, t: &Ty, limit: usize) -> Vec<ScalarField> {
        self.scalar_parts(t, limit)
            .into_iter()
            .map(|(path, offset, ty)| ScalarField {
                path,
                offset,
                bytes: self.size(&ty),
                float: ty.is_float(),
                type_name: self.name(&ty),
                ty,
            })
            .collect()
    }

    /// [`Structs::scalar_fields`] with each scalar's type: (path, byte offset, type).
    pub fn scalar_parts(&self, t: &Ty, limit: usize) -> Vec<(String, u64, Ty)> {
        let mut out = Vec::new();
        self.flatten(t, String::new(), 0, limit, &mut out);
        out
    }

    fn flatten(
        &self,
        t: &Ty,
        path: String,
        offset: u64,
        limit: usize,
        out: &mut Vec<(String, u64, Ty)>,
    ) {
        if out.len() >= limit {
            return;
        }
        match t {
            Ty::Struct(i) => {
                for f in &self.defs[*i].fields {
                    let p = if path.is_empty() {
                        f.name.clone()
                    } else {
                        format!("{path}.{}", f.name)
                    };
                    self.flatten(&f.ty, p, offset + f.offset, limit, out);
                }
            }
            Ty::Array(e, n) => {
                let step = self.size(e);
                for k in 0..*n {
                    self.flatten(e, format!("{path}[{k}]"), offset + k * step, limit, out);
                }
            }
            Ty::Void => {}
            _ => out.push((path, offset, t.clone())),
        }
    }
}
