//! The JSON Schemas of `docs/schema/`: up to date with the Rust types, and every command's
//! `--format json` output valid against them.

mod common;
use common::warpscope;
use serde_json::Value;
use std::path::PathBuf;

fn schema_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/schema")
}

/// The committed schema `file`.
fn committed(file: &str) -> Value {
    let path = schema_dir().join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// Regenerates every schema from the types and compares it with the committed file;
/// `WARPSCOPE_UPDATE_SCHEMA=1` rewrites the files instead.
#[test]
fn committed_schemas_match_the_types() {
    let update = std::env::var_os("WARPSCOPE_UPDATE_SCHEMA").is_some();
    let all = warpscope::schema::all();
    assert_eq!(all.len(), 4);
    for s in all {
        let text = warpscope::schema::to_file_text(&s.schema);
        let path = schema_dir().join(s.file);
        if update {
            std::fs::write(&path, &text).unwrap();
            continue;
        }
        let old = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            old == text,
            "{} is not the schema of the types any more (or is missing): regenerate it with \
             WARPSCOPE_UPDATE_SCHEMA=1 cargo test --test schema, and raise SCHEMA_VERSION if a \
             field was renamed, removed or changed meaning",
            path.display()
        );
    }
}

/// `schema` with `additionalProperties: false` on every object schema that lists its
/// properties, so that an output field the schema does not describe fails validation.
fn closed(schema: &Value) -> Value {
    match schema {
        Value::Object(m) => {
            let mut out: serde_json::Map<String, Value> =
                m.iter().map(|(k, v)| (k.clone(), closed(v))).collect();
            if out.contains_key("properties") && !out.contains_key("additionalProperties") {
                out.insert("additionalProperties".into(), Value::Bool(false));
            }
            Value::Object(out)
        }
        Value::Array(v) => Value::Array(v.iter().map(closed).collect()),
        other => other.clone(),
    }
}

/// Runs warpscope with `args` (ending in `--format json`), checks it succeeded, and
/// validates its output against the committed `file` (closed: no undescribed field).
fn validates(file: &str, args: &[&str]) -> Value {
    let (ok, out, err) = warpscope(args);
    assert!(ok, "{args:?}: {err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["schema_version"], 1, "{args:?}");
    let schema = closed(&committed(file));
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&v)
        .take(5)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{args:?} against {file}: {errors:#?}");
    v
}

const TRANSPOSE: &[&str] = &[
    "examples/transpose.cu",
    "--kernel",
    "transpose_naive",
    "--grid",
    "4,4",
    "--block",
    "32,8",
    "--arg",
    "width=128",
    "--arg",
    "height=128",
];

fn with<'a>(base: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = base.to_vec();
    v.extend_from_slice(extra);
    v
}

#[test]
fn analyze_outputs_validate() {
    // Global loads and stores with advice, on three families, through the source interpreter.
    let mut args = vec!["analyze"];
    args.extend(with(
        TRANSPOSE,
        &[
            "--cc",
            "1.3,2.0,9.0",
            "--frontend",
            "source",
            "--format",
            "json",
        ],
    ));
    let v = validates("analyze.schema.json", &args);
    // The naive transpose's store walks a column: advice on row 0 (0-based), 9.0 counts
    // 32 sectors per request: 4 × 4 blocks × 8 warps × 4 rows each (32 / 8) = 512 requests,
    // 16,384 sectors.
    assert_eq!(v["advice"][0]["row"], 0);
    let store = &v["architectures"][2]["sites"][0];
    assert_eq!(store["op"], "store");
    assert_eq!(
        (store["requests"].as_u64(), store["sectors"].as_u64()),
        (Some(512), Some(16384))
    );
    // With --gpu: the traffic part, whose request count is the analysis's.
    let mut args = vec!["analyze"];
    args.extend(with(
        TRANSPOSE,
        &["--gpu", "h100", "--frontend", "source", "--format", "json"],
    ));
    let v = validates("analyze.schema.json", &args);
    let tot = &v["architectures"][0]["totals"];
    let reqs = tot["global_load"]["requests"].as_u64().unwrap()
        + tot["global_store"]["requests"].as_u64().unwrap();
    assert_eq!(v["traffic"][0]["launch"]["requests"].as_u64(), Some(reqs));
    assert_eq!(reqs, 1024);
    // Shared memory and a local array, -e patterns.
    for e in [
        "__shared__ float t[32][32]; t[threadIdx.x][0]",
        "__constant__ float c[64]; c[threadIdx.x % 4]",
    ] {
        validates(
            "analyze.schema.json",
            &["analyze", "-e", e, "--cc", "guide", "--format", "json"],
        );
    }
}

#[test]
fn analyze_sweep_output_validates() {
    let v = validates(
        "analyze-sweep.schema.json",
        &[
            "analyze",
            "-e",
            "float a[]; a[(blockIdx.x*blockDim.x + threadIdx.x) * s]",
            "--sweep",
            "s=1..4",
            "--cc",
            "9.0",
            "--format",
            "json",
        ],
    );
    assert_eq!(v["parameter"], "s");
    // Stride s floats: 4·s bytes apart, 32 lanes: sectors per request 4, 8, 12, 16.
    let sectors: Vec<u64> = v["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            p["analysis"]["architectures"][0]["sites"][0]["sectors"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(sectors, [4, 8, 12, 16]);
}

#[test]
fn explain_outputs_validate_with_hex_masks() {
    // Global (1.3 half-warps, 9.0 sectors), shared and constant breakdowns.
    let mut args = vec!["explain"];
    args.extend(with(
        TRANSPOSE,
        &[
            "--site",
            "0",
            "--cc",
            "1.3,9.0",
            "--frontend",
            "source",
            "--format",
            "json",
        ],
    ));
    let v = validates("explain.schema.json", &args);
    assert_eq!(v["mask"], "0xffffffff");
    let halves: Vec<&str> = v["architectures"][0]["breakdown"]["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["group"].as_str().unwrap())
        .collect();
    assert_eq!(halves, ["0x0000ffff", "0xffff0000"]);
    let v = validates(
        "explain.schema.json",
        &[
            "explain",
            "-e",
            "__shared__ float t[32][32]; t[threadIdx.x][0]",
            "--block",
            "16",
            "--cc",
            "9.0",
            "--format",
            "json",
        ],
    );
    // Half a warp active: lanes 0-15; the column walk puts all 16 in bank 0: 16 wavefronts.
    assert_eq!(v["mask"], "0x0000ffff");
    assert_eq!(v["architectures"][0]["cost"]["wavefronts"], 16);
    let v = validates(
        "explain.schema.json",
        &[
            "explain",
            "-e",
            "__constant__ float c[64]; c[threadIdx.x % 4]",
            "--cc",
            "2.0",
            "--format",
            "json",
        ],
    );
    // Four distinct addresses, each read by every fourth lane.
    let groups = &v["architectures"][0]["breakdown"]["groups"];
    assert_eq!(groups[0]["group"], "0xffffffff");
    assert_eq!(groups[0]["reads"][1]["lanes"], "0x22222222");
}

#[test]
fn sweep_output_validates() {
    let v = validates(
        "sweep.schema.json",
        &[
            "sweep", "offset", "--range", "0..2", "--n", "65536", "--gpu", "h100", "--format",
            "json",
        ],
    );
    assert_eq!(v["experiment"], "offset");
    assert_eq!(v["curves"][0]["points"].as_array().unwrap().len(), 3);
    assert!(v["measured"].is_null());
    // With measured figures: the H100 ground truth at offsets 0..2.
    let v = validates(
        "sweep.schema.json",
        &[
            "sweep",
            "offset",
            "--range",
            "0..2",
            "--n",
            "65536",
            "--gpu",
            "h100",
            "--measured",
            "h100=tests/data/ground-truth/h100/copy-bandwidth.csv",
            "--format",
            "json",
        ],
    );
    assert_eq!(v["measured_gpu"], "H100 SXM5 80GB");
    assert_eq!(v["measured"][1]["value"], 1);
    assert!(v["median_error"].as_f64().is_some());
}

/// The validation is not vacuous: an output with a lane mask as a number, or a field the
/// schema does not describe, fails.
#[test]
fn invalid_outputs_fail_validation() {
    let schema = closed(&committed("explain.schema.json"));
    let validator = jsonschema::validator_for(&schema).unwrap();
    let (ok, out, err) = warpscope(&[
        "explain",
        "-e",
        "float a[]; a[threadIdx.x]",
        "--cc",
        "9.0",
        "--format",
        "json",
    ]);
    assert!(ok, "{err}");
    let good: Value = serde_json::from_str(&out).unwrap();
    assert!(validator.is_valid(&good));
    let mut bad = good.clone();
    bad["mask"] = Value::from(u32::MAX);
    assert!(!validator.is_valid(&bad));
    let mut bad = good.clone();
    bad["schema_version"] = Value::from(2);
    assert!(!validator.is_valid(&bad));
    let mut bad = good;
    bad["analysis"]["architectures"][0]["sites"][0]["accesses"] = Value::from(1);
    assert!(!validator.is_valid(&bad));
}
