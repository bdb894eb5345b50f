//! Sparse tensor-core MMA: `mma.sp{::ordered_metadata}.sync.aligned` [PTX ISA §9.7.14.6]
//! (warp-wide register arithmetic: it moves no memory).
//!
//! A is an m×k matrix with half its elements zero in a fixed pattern: each row is cut into
//! chunks (4 elements of f16/bf16/8-bit types, 2 of tf32, 8 of s4/u4), and each chunk
//! holds k/2-wide non-zeros (2 of 4; 1 of 2 for tf32; 2 pairs of 4 pairs for s4/u4). The A
//! fragment holds only the non-zeros, an m×k/2 matrix laid out as the A fragment of the
//! dense `mma.m16n8k(k/2)` of the same type (§9.7.14.6.2: "row … col = [firstcol …
//! lastcol]"); the metadata register `e` gives, per chunk, a 4-bit nibble: bits [1:0] are
//! the position in the chunk of the first non-zero, bits [3:2] of the second (for s4/u4 a
//! position counts pairs; for tf32 it counts 16-bit halves, so 0b0100 is element 0 and
//! 0b1110 element 1 and nothing else is valid).
//!
//! Which thread's `e` holds which nibble depends on the shape and on the sparsity selector
//! `f` (§9.7.14.6.2's metadata figures, which are images; the layout here was measured on
//! an H100 with nvcc 13.5 `-arch=sm_90`, scripts/h100/mma_sp/, and agrees with the ISA's
//! text on which threads contribute). Group g (lanes 4g … 4g+3) holds the metadata of rows
//! g (h = 0) and g + 8 (h = 1); chunk q of row half h is, in lane 4g + T, bits b … b+3:
//! - 16- and 32-bit types (f16, bf16, tf32): each thread holds 16 bits of both rows, row
//!   g in bits 0–15, row g + 8 in bits 16–31: T = f·(Q/4) + q/4, b = 16h + 4·(q%4), where
//!   Q is the chunks per row (4 for f16 m16n8k16 and tf32 m16n8k8: one thread, f = 0 … 3;
//!   8 for f16 m16n8k32 and tf32 m16n8k16: a pair, f = 0 or 1);
//! - 8- and 4-bit types: each thread holds 8 chunks of one row: T = 2f·(Q/8) + h + 2·(q/8),
//!   b = 4·(q%8) (Q = 8 for s8/u8 m16n8k32 and s4/u4 m16n8k64: a pair, f = 0 or 1;
//!   Q = 16 for m16n8k64 8-bit types and s4/u4 m16n8k128: all four threads, f = 0).
//!
//! The lanes the selector leaves out are not read. A selector beyond these is refused when
//! decoding (f16 m16n8k32 with f = 2 or 3 passes ptxas 13.5 but is an illegal instruction
//! on the H100). The H100 runs `.sp` and `.sp::ordered_metadata` as the same SASS
//! (`HMMA.SP`/`IMMA.SP`; fp8 and s4/u4 are emulated on f16 and 8-bit sparse MMAs) and puts
//! each non-zero at its index whatever their order; equal indices (0b0000, 0b0101, 0b1010,
//! 0b1111, undefined by the ISA) sum the two non-zeros into one position there, and a tf32
//! nibble other than 0b0100/0b1110 splits the value's halves. Here an invalid nibble, and a
//! descending pair under `::ordered_metadata` (whose indices must ascend), is a fault
//! naming the thread that holds it; plain `.sp` takes a descending pair as the H100 does.
//!
//! D = A·B + C is then computed as for the dense `mma` (exec/mma.rs): B, C and D have the
//! dense m16n8k layouts, products and sums are exact in f64 and rounded once.

use super::mma::{gather, product, Layout, Part, MAX_A};
use super::*;

/// The chunk geometry of a sparse `mma` [PTX ISA §9.7.14.6.1].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sparse {
    shape: MmaShape,
    /// Dense elements per chunk.
    chunk: u32,
    /// Chunks per row.
    chunks: u32,
}

impl Sparse {
    pub(crate) fn new(s: &MmaShape) -> Sparse {
        let chunk = match s.a.bits() {
            32 => 2,
            4 => 8,
            _ => 4,
        };
        Sparse {
            shape: *s,
            chunk,
            chunks: s.k / chunk,
        }
    }

    /// Whether each thread holds 16 bits of each of its two rows (16- and 32-bit types).
    fn wide(&self) -> bool {
        self.shape.a.bits() >= 16
    }

    /// The layout of the A fragment: the m×k/2 non-zeros as the dense m16n8k(k/2) A.
    pub(crate) fn a_layout(&self) -> Layout {
        Layout::mma(&MmaShape {
            k: self.shape.k / 2,
            ..self.shape
        })
    }

    /// The largest sparsity selector of the shape.
    pub(crate) fn max_selector(&self) -> u32 {
        let threads = if self.wide() {
            (self.chunks / 4).max(1)
        } else {
            2 * (self.chunks / 8).max(1)
        };
        (4 / threads).max(1) - 1
    }

    /// (lane, first bit) of the metadata nibble of chunk `q` of row `r` under selector `f`.
    pub(crate) fn meta_at(&self, f: u32, r: u32, q: u32) -> (u32, u32) {
        let (g, h) = (r % 8, r / 8);
        if self.wide() {
            let t = f * (self.chunks / 4) + q / 4;
            (4 * g + t, 16 * h + 4 * (q % 4))
        } else {
            let t = 2 * f * (self.chunks / 8) + h + 2 * (q / 8);
            (4 * g + t, 4 * (q % 8))
        }
    }

    /// Where nibble `nib` of chunk `q` puts the chunk's non-zeros: (column of the
    /// compressed A, column of the dense A) pairs, or why the nibble is invalid.
    fn place(
        &self,
        nib: u32,
        q: u32,
        ordered: bool,
    ) -> std::result::Result<[(u32, u32); 4], String> {
        let (i0, i1) = (nib & 3, nib >> 2);
        if self.chunk == 2 {
            // tf32: one element of two, its 16-bit halves at positions 0, 1 or 2, 3.
            let k =
                match nib {
                    0b0100 => 2 * q,
                    0b1110 => 2 * q + 1,
                    _ => return Err(
                        "a .tf32 chunk's metadata must be 0b0100 (element 0) or 0b1110 (element 1)"
                            .into(),
                    ),
                };
            return Ok([(q, k); 4]);
        }
        if i0 == i1 {
            return Err(format!(
                "both non-zeros at index {i0} (0b0000, 0b0101, 0b1010 and 0b1111 are invalid metadata)"
            ));
        }
        if ordered && i0 > i1 {
            return Err(format!(
                "indices {i0}, {i1} descend, and mma.sp::ordered_metadata requires them in increasing order (plain mma.sp takes them)"
            ));
        }
        Ok(if self.chunk == 8 {
            // s4/u4: pairs.
            [
                (4 * q, 8 * q + 2 * i0),
                (4 * q + 1, 8 * q + 2 * i0 + 1),
                (4 * q + 2, 8 * q + 2 * i1),
                (4 * q + 3, 8 * q + 2 * i1 + 1),
            ]
        } else {
            [
                (2 * q, 4 * q + i0),
                (2 * q + 1, 4 * q + i1),
                (2 * q, 4 * q + i0),
                (2 * q + 1, 4 * q + i1),
            ]
        })
    }
}

impl<'a> BlockCtx<'a> {
    /// `mma.sp`: the non-zeros and metadata of every lane spread into the dense A, then
    /// `D = A·B + C` as the dense `mma` computes it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn mma_sp(
        &self,
        warp: &mut Warp,
        pc: u32,
        exec: u32,
        t: &TensorInstr,
        s: &MmaShape,
        e: Src,
        sel: u8,
        ordered: bool,
    ) -> Result<()> {
        let sp = Sparse::new(s);
        let half = (s.k / 2) as usize;
        let mut packed = [0f64; MAX_A / 2];
        gather(warp, &sp.a_layout(), Part::A, s.a, &t.a, half, &mut packed);
        let k = s.k as usize;
        let mut a = [0f64; MAX_A];
        for r in 0..s.m {
            for q in 0..sp.chunks {
                let (lane, bit) = sp.meta_at(sel as u32, r, q);
                let nib = (get(warp, e, lane as usize) >> bit) as u32 & 0xF;
                let places = sp.place(nib, q, ordered).map_err(|why| Error::Fault {
                    at: self.at(pc),
                    msg: format!(
                        "mma.sp: the metadata of row {r}, chunk {q} of A (bits {bit}–{} of this thread's metadata register, sparsity selector {sel}) is 0b{nib:04b}: {why} [PTX ISA §9.7.14.6.1]",
                        bit + 3
                    ),
                    thread: self.thread(warp, lane as usize),
                    block: self.block,
                })?;
                for (c, kk) in places {
                    let r = r as usize;
                    a[r * k + kk as usize] = packed[r * half + c as usize];
                }
            }
        }
        product(warp, exec, s, &Layout::mma(s), t, &a);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(k: u32, a: MmaElem, c: MmaElem) -> MmaShape {
        MmaShape {
            api: MmaApi::Sync,
            m: 16,
            n: 8,
            k,
            a,
            b: a,
            c,
            d: c,
            a_row: true,
            b_row: false,
            satfinite: false,
            bit_and: false,
        }
    }

    /// Under each selector, the chunks of a group's two rows take distinct nibbles of the
    /// group's lanes, every nibble of the threads the selector names.
    #[test]
    fn metadata_nibbles_are_each_used_once() {
        use MmaElem::*;
        for (k, a, c, sels) in [
            (16, F16, F32, 4),
            (32, BF16, F32, 2),
            (8, TF32, F32, 4),
            (16, TF32, F32, 2),
            (32, S8, S32, 2),
            (64, U8, S32, 1),
            (64, E4M3, F32, 1),
            (64, S4, S32, 2),
            (128, U4, S32, 1),
        ] {
            let sp = Sparse::new(&shape(k, a, c));
            assert_eq!(sp.max_selector() + 1, sels, "{k} {a:?}");
            for f in 0..sels {
                let mut seen = std::collections::HashSet::new();
                for r in [0, 8] {
                    for q in 0..sp.chunks {
                        let (lane, bit) = sp.meta_at(f, r, q);
                        assert!(lane < 4 && bit % 4 == 0 && bit < 32);
                        assert!(seen.insert((lane, bit)), "{k} {a:?} f={f} r={r} q={q}");
                    }
                }
                // The threads used are whole 32-bit registers.
                assert_eq!(seen.len() % 8, 0);
            }
            // The compressed A has k/2 columns.
            let lay = sp.a_layout();
            assert_eq!(lay.regs(Part::A) * a.per_reg() * 32, 16 * k / 2);
        }
    }
}
