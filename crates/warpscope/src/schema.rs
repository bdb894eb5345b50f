//! JSON Schemas of the commands' `--format json` outputs, generated from the Rust types that
//! are serialized (schemars; doc comments become descriptions, which give each field's unit).
//! They are committed under `docs/schema/`; `tests/schema.rs` regenerates them, fails when a
//! committed file differs (`WARPSCOPE_UPDATE_SCHEMA=1 cargo test --test schema` rewrites
//! them), and validates every command's output against them.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};
use warpscope_report::{explain::Explanation, Analysis, SweepOutput, Versioned, SCHEMA_VERSION};

use crate::sweep::HarrisOutput;

/// One command output's schema: its file under `docs/schema/`, the command line that writes
/// it, and the schema.
pub struct SchemaFile {
    /// File name under `docs/schema/`, e.g. `analyze.schema.json`.
    pub file: &'static str,
    /// The command that writes JSON of this shape.
    pub command: &'static str,
    /// The JSON Schema (draft 2020-12).
    pub schema: Schema,
}

/// The schema of `Versioned<T>` titled `command`: `schema_version` fixed to
/// [`SCHEMA_VERSION`].
fn versioned<T: JsonSchema>(file: &'static str, command: &'static str, what: &str) -> SchemaFile {
    let mut schema = SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<Versioned<T>>();
    schema.insert("title".into(), format!("warpscope {command}").into());
    schema.insert(
        "description".into(),
        format!(
            "{what} Written by `warpscope {command}`, schema version {SCHEMA_VERSION}. Units are \
             given in each field's description: widths and byte counts in bytes, sectors of 32 \
             bytes, efficiency as a fraction from 0 to 1, bandwidths in GB/s (1e9 bytes per \
             second), times in seconds; lines and columns are 1-based, site numbers, warp \
             indexes and executions 0-based; lane masks are hexadecimal strings."
        )
        .into(),
    );
    if let Some(p) = schema
        .get_mut("properties")
        .and_then(|p| p.get_mut("schema_version"))
        .and_then(|v| v.as_object_mut())
    {
        p.insert("const".into(), SCHEMA_VERSION.into());
    }
    SchemaFile {
        file,
        command,
        schema,
    }
}

/// Every command output's schema, in a fixed order.
pub fn all() -> Vec<SchemaFile> {
    vec![
        versioned::<Analysis>(
            "analyze.schema.json",
            "analyze --format json",
            "One launch of one kernel: per compute capability, every memory access site's requests, transactions, sectors and wavefronts summed over the launch, with totals, advice and (with --gpu) traffic below the request.",
        ),
        versioned::<SweepOutput>(
            "analyze-sweep.schema.json",
            "analyze --sweep NAME=A..B --format json",
            "One analysis per value of a swept scalar parameter.",
        ),
        versioned::<Explanation>(
            "explain.schema.json",
            "explain --format json",
            "One warp-level execution of one access, explained per compute capability: the lanes' addresses, the requests and transactions or bank passes the model made, a paragraph and advice; with the whole launch's analysis.",
        ),
        versioned::<HarrisOutput>(
            "sweep.schema.json",
            "sweep offset|stride --format json",
            "Harris's copy kernels at each offset or stride: predicted effective bandwidth per GPU, and measured figures when given.",
        ),
    ]
}

/// `schema` as the committed file holds it: pretty JSON and a final newline.
pub fn to_file_text(schema: &Schema) -> String {
    serde_json::to_string_pretty(schema).unwrap_or_default() + "\n"
}
