//! Initialization, the one device, and contexts.

use std::cell::Cell;
use std::ffi::{c_char, c_int, c_uint};

use super::*;

/// `CUdevice`.
pub type CUdevice = c_int;

/// Live contexts (they hold nothing: the device has one address space).
static CONTEXTS: Table<()> = Table::new();

thread_local! {
    static CURRENT: Cell<usize> = const { Cell::new(0) };
}

const NAME: &str = "ptxjit (CPU, PTX JIT)";

fn device(dev: CUdevice) -> Result<(), CUresult> {
    if dev == 0 {
        Ok(())
    } else {
        Err(CUDA_ERROR_INVALID_DEVICE)
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn cuInit(_flags: c_uint) -> CUresult {
    crate::stats::arm();
    INITIALIZED.store(true, std::sync::atomic::Ordering::Release);
    CUDA_SUCCESS
}

/// The calling thread's current context, or `CUDA_ERROR_INVALID_CONTEXT`.
pub(crate) fn current() -> Result<Handle, CUresult> {
    let h = CURRENT.with(|c| c.get()) as Handle;
    CONTEXTS
        .with(h, |_| h)
        .map_err(|_| CUDA_ERROR_INVALID_CONTEXT)
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDriverGetVersion(version: *mut c_int) -> CUresult {
    call_any_time(|| put(version, 12080))
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGet(out: *mut CUdevice, ordinal: c_int) -> CUresult {
    call(|| {
        device(ordinal)?;
        put(out, 0)
    })
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetCount(count: *mut c_int) -> CUresult {
    call(|| put(count, 1))
}

/// # Safety
/// `name` must have room for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetName(name: *mut c_char, len: c_int, dev: CUdevice) -> CUresult {
    call(|| {
        device(dev)?;
        if name.is_null() || len <= 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let n = NAME.len().min(len as usize - 1);
        // SAFETY: the caller's buffer has `len` bytes; n + 1 <= len are written.
        unsafe {
            std::ptr::copy_nonoverlapping(NAME.as_ptr() as *const c_char, name, n);
            *name.add(n) = 0;
        }
        Ok(())
    })
}

/// The value of a device attribute (`CUdevice_attribute`); 0 for those not listed.
fn attribute(attrib: c_int) -> c_int {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as c_int;
    match attrib {
        1 => 1024,        // MAX_THREADS_PER_BLOCK
        2 | 3 => 1024,    // MAX_BLOCK_DIM_X, _Y
        4 => 64,          // MAX_BLOCK_DIM_Z
        5 => i32::MAX,    // MAX_GRID_DIM_X
        6 | 7 => 65535,   // MAX_GRID_DIM_Y, _Z
        8 => 48 * 1024,   // MAX_SHARED_MEMORY_PER_BLOCK
        9 => 64 * 1024,   // TOTAL_CONSTANT_MEMORY
        10 => 32,         // WARP_SIZE
        11 => i32::MAX,   // MAX_PITCH
        12 => 65536,      // MAX_REGISTERS_PER_BLOCK
        13 => 1_000_000,  // CLOCK_RATE (kHz)
        14 => 512,        // TEXTURE_ALIGNMENT
        16 => cores,      // MULTIPROCESSOR_COUNT
        19 => 1,          // CAN_MAP_HOST_MEMORY
        30 => 1,          // CONCURRENT_KERNELS
        39 => 1536,       // MAX_THREADS_PER_MULTIPROCESSOR
        41 => 1,          // UNIFIED_ADDRESSING
        75 => 8,          // COMPUTE_CAPABILITY_MAJOR
        76 => 6,          // COMPUTE_CAPABILITY_MINOR
        81 => 100 * 1024, // MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
        82 => 65536,      // MAX_REGISTERS_PER_MULTIPROCESSOR
        97 => 99 * 1024,  // MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
        _ => 0,
    }
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetAttribute(
    pi: *mut c_int,
    attrib: c_int,
    dev: CUdevice,
) -> CUresult {
    call(|| {
        device(dev)?;
        put(pi, attribute(attrib))
    })
}

/// # Safety
/// The out-pointers must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceComputeCapability(
    major: *mut c_int,
    minor: *mut c_int,
    dev: CUdevice,
) -> CUresult {
    call(|| {
        device(dev)?;
        put(major, 8)?;
        put(minor, 6)
    })
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceTotalMem_v2(bytes: *mut usize, dev: CUdevice) -> CUresult {
    call(|| {
        device(dev)?;
        put(bytes, ptxjit_runtime::arena().size as usize)
    })
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceCanAccessPeer(
    can: *mut c_int,
    dev: CUdevice,
    peer: CUdevice,
) -> CUresult {
    call(|| {
        device(dev)?;
        device(peer)?;
        put(can, 0)
    })
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxCreate_v2(
    ctx: *mut Handle,
    _flags: c_uint,
    dev: CUdevice,
) -> CUresult {
    call(|| {
        device(dev)?;
        let h = CONTEXTS.insert(());
        CURRENT.with(|c| c.set(h as usize));
        put(ctx, h)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuCtxDestroy_v2(ctx: Handle) -> CUresult {
    call(|| {
        CONTEXTS.remove(ctx).ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
        CURRENT.with(|c| {
            if c.get() == ctx as usize {
                c.set(0)
            }
        });
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuCtxSetCurrent(ctx: Handle) -> CUresult {
    call(|| {
        if !ctx.is_null() {
            CONTEXTS
                .with(ctx, |_| ())
                .map_err(|_| CUDA_ERROR_INVALID_CONTEXT)?;
        }
        CURRENT.with(|c| c.set(ctx as usize));
        Ok(())
    })
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxGetCurrent(ctx: *mut Handle) -> CUresult {
    call(|| put(ctx, CURRENT.with(|c| c.get()) as Handle))
}

/// Work is synchronous: nothing is ever pending.
#[unsafe(no_mangle)]
pub extern "C" fn cuCtxSynchronize() -> CUresult {
    call_in_context(|| Ok(()))
}

#[unsafe(no_mangle)]
pub extern "C" fn cuCtxEnablePeerAccess(_peer: Handle, _flags: c_uint) -> CUresult {
    CUDA_SUCCESS
}
