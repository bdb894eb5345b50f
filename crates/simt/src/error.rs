//! Errors of decoding and running PTX, each naming where (PTX line and column, source
//! position, thread and block) and what to do.

use thiserror::Error;

/// Where in the PTX an instruction is, and the source position its `.loc` gives.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct At {
    /// 1-based line and column in the PTX text.
    pub ptx_line: u32,
    pub ptx_col: u32,
    /// `file:line:col` of the source, when a `.loc` says.
    pub source: Option<String>,
    /// The same position as numbers: (`.file` index, line, column).
    pub loc: Option<(u32, u32, u32)>,
}

impl std::fmt::Display for At {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PTX line {}:{}", self.ptx_line, self.ptx_col)?;
        if let Some(s) = &self.source {
            write!(f, " ({s})")?;
        }
        Ok(())
    }
}

/// Errors of [`crate::Program::decode`] and [`crate::Program::run`].
#[derive(Debug, Error)]
pub enum Error {
    /// An instruction the executor does not run.
    #[error("{at}: unsupported instruction '{instr}': {why}")]
    Unsupported { at: At, instr: String, why: String },
    /// An operand or modifier that does not fit the instruction.
    #[error("{at}: {msg}")]
    Invalid { at: At, msg: String },
    /// A launch the kernel cannot take (parameters, sizes, limits).
    #[error("{0}")]
    Launch(String),
    /// A lane touched memory outside every allocation, or misaligned.
    #[error("{at}: {msg} (thread ({tx},{ty},{tz}) of block ({bx},{by},{bz}))", tx = thread[0], ty = thread[1], tz = thread[2], bx = block[0], by = block[1], bz = block[2])]
    Fault {
        at: At,
        msg: String,
        thread: [u32; 3],
        block: [u32; 3],
    },
    /// A block ran more than the step limit.
    #[error("{at}: block ({bx},{by},{bz}) ran {steps} warp instructions without finishing: a runaway loop? Raise the limit with --max-steps if it is expected", bx = block[0], by = block[1], bz = block[2])]
    Runaway { at: At, steps: u64, block: [u32; 3] },
}

/// Results of this crate.
pub type Result<T> = std::result::Result<T, Error>;
