//! Per-thread arrays indexed by the induction variable of a loop nvcc unrolls fully stay in
//! registers, as the compiled path shows nvcc does (Parboil sgemm's `float c[16]`); a run-time
//! index, a body that changes the induction variable or a loop longer than
//! `MAX_UNROLLED_TRIPS` (200) leaves the array in local memory.

use warpscope_cuda::Source;
use warpscope_model::Space;

/// (local accesses, local array names) of kernel `k` in `src`, one warp.
fn local(src: &str) -> (usize, Vec<String>) {
    let s = Source::parse("t.cu", src, &[]).unwrap();
    let k = s.kernel("k").unwrap();
    let cfg = k
        .configure(
            &[("n".into(), "2".into())],
            &[("out".into(), 4096)],
            [1, 1, 1],
            [32, 1, 1],
            0,
            1_000_000,
        )
        .unwrap();
    let mut n = 0;
    k.run(&cfg, &mut |_, a| n += (a.space == Space::Local) as usize)
        .unwrap();
    (n, k.local_arrays().iter().map(|a| a.name.clone()).collect())
}

#[test]
fn arrays_indexed_by_unrolled_loops_stay_in_registers() {
    // i++, kk -= 1 from 15 down, i += 3: constant trip counts, so constant indexes.
    let (n, arrays) = local(
        "__global__ void k(float *out, int n) {
            float c[16];
            for (int i = 0; i < 16; i++) c[i] = 0.0f;
            for (int j = 0; j < n; j++)
                for (int kk = 15; kk >= 0; kk -= 1) c[kk] += out[j * 16 + kk];
            float s = 0;
            for (int i = 0; i < 16; i += 3) s += c[(i + 1) % 16];
            out[threadIdx.x] = c[3] + s;
        }",
    );
    assert_eq!((n, arrays.len()), (0, 0), "{arrays:?}");
}

#[test]
fn arrays_stay_local_when_the_index_is_not_constant_after_unrolling() {
    for (body, why) in [
        (
            "for (int i = 0; i < 16; i++) s += c[(i + n) % 16];",
            "a run-time value",
        ),
        (
            "for (int i = 0; i < 16; i++) { s += c[i]; if (s > 4) i++; }",
            "the body steps i",
        ),
        (
            "for (int i = 0; i < n; i++) s += c[i % 16];",
            "a run-time trip count",
        ),
        (
            "for (int i = 0; i < 256; i++) s += c[i % 16];",
            "256 trips: not unrolled",
        ),
    ] {
        let (n, arrays) = local(&format!(
            "__global__ void k(float *out, int n) {{
                float c[16];
                for (int i = 0; i < 16; i++) c[i] = out[i];
                float s = 0;
                {body}
                out[threadIdx.x] = s;
            }}"
        ));
        assert_eq!(arrays, ["c"], "{why}");
        assert!(n >= 16, "{why}: {n} local accesses");
    }
}
