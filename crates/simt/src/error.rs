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
    /// A block ran past its budget of warp instructions ([`crate::Launch::max_steps`]) or,
    /// when [`crate::Launch::max_block_time`] is set, ran that long and at least
    /// [`crate::MIN_STEPS_FOR_TIME`] warp instructions; `at` is the instruction
    /// it was about to run (inside the loop that does not end).
    #[error("{at}: block ({bx},{by},{bz}) {ran} without finishing: a runaway loop? Fix the loop's exit condition, or {what}", bx = block[0], by = block[1], bz = block[2], ran = limit.ran(*steps), what = limit.remedy())]
    Runaway {
        at: At,
        steps: u64,
        block: [u32; 3],
        limit: RunawayLimit,
    },
    /// A memory image (global memory written, a block's shared or local memory) would grow
    /// past [`crate::Launch::max_memory`], or the host refused the allocation. The message
    /// names the allocation or space, the bytes, and the `--max-memory` flag.
    #[error("{0}")]
    Memory(String),
    /// The run was stopped because an earlier block failed (never reported: the earlier
    /// block's error is).
    #[error("stopped: an earlier block failed")]
    Stopped,
}

/// Which limit a runaway block reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunawayLimit {
    /// The per-block budget of warp instructions (`--max-steps`).
    Steps,
    /// The wall-clock limit per block, in effect when no `--max-steps` was given.
    Time(std::time::Duration),
}

impl RunawayLimit {
    fn ran(&self, steps: u64) -> String {
        match self {
            RunawayLimit::Steps => {
                format!("ran {steps} warp instructions, its budget (--max-steps),")
            }
            RunawayLimit::Time(t) => format!(
                "ran for {:.1} s ({steps} warp instructions)",
                t.as_secs_f64()
            ),
        }
    }

    fn remedy(&self) -> &'static str {
        match self {
            RunawayLimit::Steps => "raise --max-steps if the block is meant to run longer",
            RunawayLimit::Time(_) => "give --max-steps N if the block is meant to run longer (a budget per block, in loop iterations; with it this time limit is off)",
        }
    }
}

/// Results of this crate.
pub type Result<T> = std::result::Result<T, Error>;
