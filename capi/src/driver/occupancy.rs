//! Occupancy: how many blocks of a kernel one multiprocessor holds, by the limits the device
//! reports (`cuDeviceGetAttribute`): 1536 threads, 16 blocks and 100 KiB of shared memory per
//! multiprocessor, one multiprocessor per core. The CPU does not bind on them, but clients
//! size grids from these answers (and cooperative launches must fit them).

use std::ffi::{c_int, c_uint};

use super::module::FUNCTIONS;
use super::*;

const THREADS_PER_SM: u64 = 1536;
const BLOCKS_PER_SM: u64 = 16;
const SHARED_PER_SM: u64 = 100 * 1024;
const MAX_THREADS_PER_BLOCK: u64 = 1024;

/// Blocks of `block_size` threads, each with `shared` bytes of shared memory, that one
/// multiprocessor holds.
fn active_blocks(block_size: u64, max_threads: u64, shared: u64) -> u64 {
    if block_size == 0 || block_size > max_threads {
        return 0;
    }
    let by_threads = THREADS_PER_SM / block_size.next_multiple_of(32);
    let by_shared = SHARED_PER_SM.checked_div(shared).unwrap_or(u64::MAX);
    by_threads.min(by_shared).min(BLOCKS_PER_SM)
}

/// (max threads per block, static shared bytes) of a function.
fn limits(func: Handle) -> Result<(u64, u64), CUresult> {
    FUNCTIONS.with(func, |(_, k)| {
        let a = k.attributes();
        (a.max_threads_per_block as u64, a.static_shared_bytes)
    })
}

/// The multiprocessor count the device reports.
pub(crate) fn multiprocessors() -> u64 {
    std::thread::available_parallelism().map_or(1, |n| n.get()) as u64
}

/// Blocks of `f` that may run at once on the whole device: what a cooperative launch may ask.
pub(crate) fn max_resident_blocks(
    f: Handle,
    block_size: u64,
    dynamic_shared: u64,
) -> Result<u64, CUresult> {
    let (max_threads, shared) = limits(f)?;
    Ok(active_blocks(block_size, max_threads, shared + dynamic_shared) * multiprocessors())
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuOccupancyMaxActiveBlocksPerMultiprocessor(
    blocks: *mut c_int,
    func: Handle,
    block_size: c_int,
    dynamic_shared: usize,
) -> CUresult {
    call_in_context(|| {
        let (max_threads, shared) = limits(func)?;
        let n = active_blocks(
            block_size.max(0) as u64,
            max_threads,
            shared + dynamic_shared as u64,
        );
        put(blocks, n as c_int)
    })
}

/// # Safety
/// As [`cuOccupancyMaxActiveBlocksPerMultiprocessor`] (no flag changes the answer here).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    blocks: *mut c_int,
    func: Handle,
    block_size: c_int,
    dynamic_shared: usize,
    _flags: c_uint,
) -> CUresult {
    // SAFETY: passed on.
    unsafe { cuOccupancyMaxActiveBlocksPerMultiprocessor(blocks, func, block_size, dynamic_shared) }
}

/// `CUoccupancyB2DSize`: the dynamic shared memory a block size needs.
pub type BlockToSharedSize = unsafe extern "C" fn(c_int) -> usize;

/// The block size (a multiple of 32, at most `limit`) that keeps the most threads resident,
/// the larger on a tie, and the smallest grid that fills the device with it.
///
/// # Safety
/// The out-pointers must be writable; `to_shared` null or callable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuOccupancyMaxPotentialBlockSize(
    min_grid: *mut c_int,
    block_size: *mut c_int,
    func: Handle,
    to_shared: Option<BlockToSharedSize>,
    dynamic_shared: usize,
    limit: c_int,
) -> CUresult {
    call_in_context(|| {
        if min_grid.is_null() || block_size.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let (max_threads, shared) = limits(func)?;
        let limit = match limit {
            l if l > 0 => (l as u64).min(max_threads),
            _ => max_threads,
        }
        .min(MAX_THREADS_PER_BLOCK);
        let mut best = (0u64, 0u64, 0u64); // (resident threads, block size, blocks per SM)
        let mut size = limit;
        while size > 0 {
            let dynamic = match to_shared {
                // SAFETY: the caller's function of a block size.
                Some(f) => (unsafe { f(size as c_int) }) as u64,
                None => dynamic_shared as u64,
            };
            let blocks = active_blocks(size, max_threads, shared + dynamic);
            if blocks * size > best.0 {
                best = (blocks * size, size, blocks);
            }
            size = if size.is_multiple_of(32) {
                size - 32
            } else {
                size / 32 * 32
            };
        }
        put(block_size, best.1 as c_int)?;
        put(min_grid, (best.2 * multiprocessors()) as c_int)
    })
}

/// # Safety
/// As [`cuOccupancyMaxPotentialBlockSize`] (no flag changes the answer here).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuOccupancyMaxPotentialBlockSizeWithFlags(
    min_grid: *mut c_int,
    block_size: *mut c_int,
    func: Handle,
    to_shared: Option<BlockToSharedSize>,
    dynamic_shared: usize,
    limit: c_int,
    _flags: c_uint,
) -> CUresult {
    // SAFETY: passed on.
    unsafe {
        cuOccupancyMaxPotentialBlockSize(
            min_grid,
            block_size,
            func,
            to_shared,
            dynamic_shared,
            limit,
        )
    }
}
