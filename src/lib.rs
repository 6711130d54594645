//! ptxjit: run NVIDIA PTX kernels written in half precision on the CPU, through Cranelift.
//!
//! ```no_run
//! use ptxjit::{Arg, DeviceBuffer, Module};
//! use half::f16;
//! # fn main() -> ptxjit::Result<()> {
//! let module = Module::from_file("examples/f16_scale/f16_scale.ptx")?;
//! let kernel = module.kernel("f16_scale")?;
//! let x = DeviceBuffer::from_slice(&[f16::from_f32(1.0); 8])?;
//! kernel.launch(1, 8, &[Arg::buffer(&x), Arg::f16(f16::from_f32(0.5)), Arg::u32(8)])?;
//! let out: Vec<f16> = x.to_vec();
//! # Ok(()) }
//! ```

pub mod cli;
pub mod device_heap;
pub mod error;
pub mod frontend;
pub mod interp;
pub mod jit;
mod kernel;
pub mod link;
pub mod lower;
pub mod mbarrier;
pub mod mma;
pub mod native;
pub mod prefetch;
pub mod printf;
pub mod semantics;
pub mod stats;
pub mod swizzle;
pub mod sync;
pub mod tensor_copy;
pub mod tensor_map;
mod tier;
pub mod types;
pub mod wgmma;

pub use error::{Diagnostic, Error, Result};
pub use jit::{Approximations, CompileOptions, LaneGroups, OptLevel};
pub use kernel::{Arg, Kernel, KernelAttributes, LaunchTimes, Module, ParamInfo, check_ptx};
pub use link::{LinkInput, limit_registers, link};
pub use ptxjit_runtime::{DeviceBuffer, Dim3, LaunchConfig, Schedule};
