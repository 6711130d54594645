//! ptxjit-runtime: device memory, launch configuration and the work-stealing grid executor.
//!
//! The runtime knows nothing about PTX: it runs a compiled *block function* (one call runs every
//! thread of one block) for every block of a grid, on a rayon pool ([`workers`]), and hands it a
//! [`BlockContext`] whose layout is the contract with the code generator.

mod cluster;
mod launch;
mod memory;
pub mod workers;

pub use cluster::{ClusterPlace, MAX_CLUSTER_BLOCKS};
pub use launch::{
    BlockContext, BlockFailure, BlockFn, Cooperation, Dim3, Fault, HANDOVER_ALIGN,
    KERNEL_STACK_BYTES, LaunchConfig, LaunchOptions, Line, MAX_BLOCK, MAX_SHARED_BYTES,
    MAX_THREADS_PER_BLOCK, Poll, Schedule, Status, StatusKind, Upgrade, block_fits, block_limits,
    launch, launch_scheduled, ptxjit_poll_upgrade,
};
pub use memory::{Arena, DeviceBuffer, SLOT_SHIFT, arena, granule};

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("invalid launch configuration: {0}")]
    InvalidConfig(String),
    #[error("device allocation of {0} bytes failed")]
    OutOfMemory(usize),
}
