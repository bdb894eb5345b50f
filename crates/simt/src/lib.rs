//! warpscope SIMT executor.
