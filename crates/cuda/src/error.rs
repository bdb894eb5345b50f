//! Errors of the CUDA front end. Each names where it happened (file:line:col, or the thread
//! and block) and what to do about it.

use crate::ir::Loc;
use std::fmt;

/// A thread's coordinates: `threadIdx` and `blockIdx`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadCoord {
    pub thread: [u32; 3],
    pub block: [u32; 3],
}

impl fmt::Display for ThreadCoord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [tx, ty, tz] = self.thread;
        let [bx, by, bz] = self.block;
        write!(f, "thread ({tx},{ty},{tz}) of block ({bx},{by},{bz})")
    }
}

/// What went wrong, with enough context to fix it.
#[derive(Clone, Debug, thiserror::Error)]
pub enum Error {
    #[error("{file}:{}:{}: syntax error: {msg}", loc.line, loc.col)]
    Syntax { file: String, loc: Loc, msg: String },

    #[error("{file}:{}:{}: unsupported construct: {what}. warpscope interprets a subset of CUDA C++ (see docs/src/cuda-subset.md); rewrite this part with supported constructs", loc.line, loc.col)]
    Unsupported {
        file: String,
        loc: Loc,
        what: String,
    },

    #[error("{file}:{}:{}: {msg}", loc.line, loc.col)]
    Semantic { file: String, loc: Loc, msg: String },

    #[error("no kernel named '{name}' in {file}; kernels found: {}", if found.is_empty() { "none (is a function marked __global__?)".to_string() } else { found.join(", ") })]
    UnknownKernel {
        file: String,
        name: String,
        found: Vec<String>,
    },

    #[error("{0}")]
    Argument(String),

    /// A lane's access faulted (outside its allocation, misaligned), or a `trap` ran.
    #[error("{file}:{}:{}: {msg}, by {thread}", loc.line, loc.col)]
    Fault {
        file: String,
        loc: Loc,
        msg: String,
        thread: ThreadCoord,
    },

    #[error("{file}:{}:{}: integer division by zero by {thread}", loc.line, loc.col)]
    DivisionByZero {
        file: String,
        loc: Loc,
        thread: ThreadCoord,
    },

    #[error("{file}:{}:{}: loop ran more than {limit} steps (32 warp instructions each) in block ({},{},{}); it may never end. Raise the limit with --max-steps N if it is meant to run this long", loc.line, loc.col, block[0], block[1], block[2])]
    StepLimit {
        file: String,
        loc: Loc,
        limit: u64,
        block: [u32; 3],
    },

    #[error("{file}:{}:{}: loop ran more than {seconds} s in block ({},{},{}); it may never end. Fix the loop's exit condition, or give --max-steps N to let blocks run longer", loc.line, loc.col, block[0], block[1], block[2])]
    TimeLimit {
        file: String,
        loc: Loc,
        seconds: f64,
        block: [u32; 3],
    },
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The file and position an error names, if it names one (to move it from the
    /// preprocessed text to the user's file).
    pub fn location_mut(&mut self) -> Option<(&mut String, &mut Loc)> {
        match self {
            Error::Syntax { file, loc, .. }
            | Error::Unsupported { file, loc, .. }
            | Error::Semantic { file, loc, .. }
            | Error::DivisionByZero { file, loc, .. }
            | Error::Fault { file, loc, .. }
            | Error::StepLimit { file, loc, .. }
            | Error::TimeLimit { file, loc, .. } => Some((file, loc)),
            Error::UnknownKernel { .. } | Error::Argument(_) => None,
        }
    }
}
