//! Finding and running the CUDA compiler.
