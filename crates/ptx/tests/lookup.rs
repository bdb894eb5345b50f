//! `find_entry` and `demangle` on nvcc's mangled names.

mod common;

use common::module;
use warpscope_ptx::{demangle, find_entry, LookupError};

fn found(m: &warpscope_ptx::ast::Module, name: &str) -> String {
    match find_entry(m, name) {
        Ok(f) => f.name.clone(),
        Err(e) => panic!("{name}: {e}"),
    }
}

#[test]
fn demangles_names() {
    assert_eq!(
        demangle("_Z15transpose_naivePfPKfii"),
        "transpose_naive(float*, float const*, int, int)"
    );
    // Templates carry a return type in their mangling; it is dropped.
    assert_eq!(demangle("_Z6offsetIfEvPT_i"), "offset<float>(float*, int)");
    assert_eq!(demangle("add_kernel"), "add_kernel");
    assert_eq!(demangle("_Znot_really"), "_Znot_really");
    assert_eq!(demangle(""), "");
}

#[test]
fn finds_entries_by_every_name() {
    let m = module("transpose.ptx");
    let naive = "_Z15transpose_naivePfPKfii";
    assert_eq!(found(&m, naive), naive);
    assert_eq!(
        found(&m, "transpose_naive(float*, float const*, int, int)"),
        naive
    );
    assert_eq!(
        found(&m, "transpose_naive(float*,float const*,int,int)"),
        naive
    );
    assert_eq!(found(&m, "transpose_naive"), naive);
    assert_eq!(
        found(&m, "transpose_coalesced"),
        "_Z19transpose_coalescedPfPKfii"
    );

    let h = module("harris.ptx");
    assert_eq!(found(&h, "offset<float>"), "_Z6offsetIfEvPT_i");
    assert_eq!(found(&h, "offset<double>"), "_Z6offsetIdEvPT_i");
    assert_eq!(found(&h, "offset< double >"), "_Z6offsetIdEvPT_i");
    assert_eq!(found(&h, "stride<float>(float*, int)"), "_Z6strideIfEvPT_i");
    assert_eq!(
        found(&h, "void stride<float>(float*, int)"),
        "_Z6strideIfEvPT_i"
    );
    // `offset_copy` is not an instance of `offset`.
    assert_eq!(found(&h, "offset_copy"), "_Z11offset_copyPKfPfii");

    let t = module("triton_add.ptx");
    assert_eq!(found(&t, "add_kernel"), "add_kernel");
}

#[test]
fn template_name_without_arguments_is_ambiguous() {
    let h = module("harris.ptx");
    let err = find_entry(&h, "offset").unwrap_err();
    assert_eq!(
        err,
        LookupError::Ambiguous {
            name: "offset".into(),
            candidates: vec![
                (
                    "_Z6offsetIfEvPT_i".into(),
                    "offset<float>(float*, int)".into()
                ),
                (
                    "_Z6offsetIdEvPT_i".into(),
                    "offset<double>(double*, int)".into()
                ),
            ],
        }
    );
}

#[test]
fn overloads_are_ambiguous() {
    let m = module("features.ptx");
    let err = find_entry(&m, "pick").unwrap_err();
    assert_eq!(
        err.to_string(),
        "`pick` names 2 kernels: pick(float*) (_Z4pickPf), pick(double*) (_Z4pickPd); \
         name one by its full signature (e.g. `pick(float*)`) or its mangled name (e.g. `_Z4pickPf`)"
    );
    assert_eq!(found(&m, "pick(double*)"), "_Z4pickPd");
    assert_eq!(found(&m, "_Z4pickPf"), "_Z4pickPf");
}

#[test]
fn missing_lists_the_entries() {
    let m = module("features.ptx");
    let err = find_entry(&m, "featurez").unwrap_err();
    assert_eq!(
        err.to_string(),
        "no kernel named `featurez`; the PTX's kernels are: features(float const*, float*, int*, int) \
         (_Z8featuresPKfPfPii), pick(float*) (_Z4pickPf), pick(double*) (_Z4pickPd)"
    );
    // Device functions are not kernels.
    assert!(matches!(
        find_entry(&m, "scale"),
        Err(LookupError::Missing { .. })
    ));
    let t = module("triton_add.ptx");
    assert_eq!(
        find_entry(&t, "mul_kernel").unwrap_err().to_string(),
        "no kernel named `mul_kernel`; the PTX's kernels are: add_kernel, sum_kernel"
    );
    let empty = warpscope_ptx::parse(".version 8.0\n.target sm_80\n.address_size 64\n").unwrap();
    assert_eq!(
        find_entry(&empty, "k").unwrap_err().to_string(),
        "no kernel named `k`: the PTX has no .entry"
    );
}

/// An integer template argument: the demangler writes `reduce3<float, (unsigned int)256>`;
/// a user writes `reduce3<float, 256>` or `256u`.
#[test]
fn integer_template_arguments_match_as_plain_numbers() {
    let text = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry _Z7reduce3IfLj256EEvPT_S1_j(\n.param .u64 a,\n.param .u64 b,\n.param .u32 n\n)\n{\nret;\n}\n";
    let m = warpscope_ptx::parse(text).expect("parses");
    let name = "_Z7reduce3IfLj256EEvPT_S1_j";
    assert_eq!(
        demangle(name),
        "reduce3<float, (unsigned int)256>(float*, float*, unsigned int)"
    );
    assert_eq!(found(&m, "reduce3<float, 256>"), name);
    assert_eq!(found(&m, "reduce3<float,256u>"), name);
    assert_eq!(found(&m, "reduce3<float, (unsigned int)256>"), name);
    assert!(find_entry(&m, "reduce3<float, 128>").is_err());
}
