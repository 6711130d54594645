//! The reference: what each instruction means, written once as plain Rust.
//!
//! The JIT's inline IR helpers (`lower::softfloat`) implement the same algorithms; tests run
//! both over the same inputs and compare bits.

pub mod directed;
pub mod float;
pub mod half;
pub mod half_approx;
pub mod half_ops;
pub mod int;
pub mod minifloat;
pub mod mufu;
pub mod video;
