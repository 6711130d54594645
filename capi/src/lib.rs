//! The C face of ptxjit, built as `libptxjit_capi.so`:
//!
//! - [`ptx_run`](ocelot::ptx_run): GPU Ocelot's entry point, for emulation layers that load it
//!   with ctypes (host pointers, no error channel);
//! - a subset of the CUDA driver API (`cu*`, in `driver/`), so that the same library, named
//!   `libcuda.so.1`, stands in for NVIDIA's driver (`make-libcuda-dir.sh`).
//!
//! `PTXJIT_STATS=FILE` makes the process report ptxjit's compile and launch totals at exit
//! ([`stats`]). Every entry point catches panics at the boundary: Rust panics must not unwind
//! into C.

pub mod driver;
pub mod ocelot;
pub mod stats;
