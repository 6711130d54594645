//! Initialization, the one device, and contexts.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_uint, c_ulonglong, c_void};
use std::sync::Mutex;

/// The compute capability the device reports (an sm_86 GPU's limits).
pub const COMPUTE_CAPABILITY: (i32, i32) = (8, 6);

use super::*;

/// `CUdevice`.
pub type CUdevice = c_int;

/// Live contexts, with their flags (they hold nothing else: the device has one address space).
static CONTEXTS: Table<c_uint> = Table::new();

thread_local! {
    /// The calling thread's context stack; its top is the current context.
    static STACK: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// The device's primary context: its handle while it exists, how many retains hold it, and
/// the flags it is (or will be) created with.
struct Primary {
    handle: usize,
    retains: u32,
    flags: c_uint,
}

static PRIMARY: Mutex<Primary> = Mutex::new(Primary {
    handle: 0,
    retains: 0,
    flags: 0,
});

const NAME: &str = "ptxjit (CPU, PTX JIT)";

/// The CUDA version whose driver API this library serves: 13.5, the version whose
/// `cudaTypedefs.h` the function table of `cuGetProcAddress` was checked against (so that
/// cuda-bindings 13 finds the driver new enough).
pub const DRIVER_VERSION: c_int = 13050;

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

fn top() -> usize {
    STACK.with(|s| s.borrow().last().copied().unwrap_or(0))
}

/// The calling thread's current context, or `CUDA_ERROR_INVALID_CONTEXT`.
pub(crate) fn current() -> Result<Handle, CUresult> {
    context(top() as Handle)
}

/// `ctx` if it is a live context, else `CUDA_ERROR_INVALID_CONTEXT`.
fn context(ctx: Handle) -> Result<Handle, CUresult> {
    CONTEXTS
        .with(ctx, |_| ctx)
        .map_err(|_| CUDA_ERROR_INVALID_CONTEXT)
}

/// `ctx`, or the current context when `ctx` is null (as the `_v2` context calls take it).
fn context_or_current(ctx: Handle) -> Result<Handle, CUresult> {
    if ctx.is_null() {
        current()
    } else {
        context(ctx)
    }
}

/// Makes `ctx` the calling thread's current context (replacing the top of its stack).
fn set_current(ctx: usize) {
    STACK.with(|s| {
        let mut s = s.borrow_mut();
        match s.last_mut() {
            Some(top) => *top = ctx,
            None if ctx != 0 => s.push(ctx),
            None => {}
        }
    })
}

/// Forgets `ctx` in this thread's stack (other threads find it gone on their next call).
fn forget(ctx: usize) {
    STACK.with(|s| s.borrow_mut().retain(|&c| c != ctx));
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDriverGetVersion(version: *mut c_int) -> CUresult {
    call_any_time(|| put(version, DRIVER_VERSION))
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
        write_c_string(name, len, NAME)
    })
}

/// The value of a device attribute (`CUdevice_attribute`): what this CPU device offers, 0 for
/// what it lacks; `None` past the last attribute CUDA 13.5 defines.
fn attribute(attrib: c_int) -> Option<c_int> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as c_int;
    Some(match attrib {
        1 => 1024,                  // MAX_THREADS_PER_BLOCK
        2 | 3 => 1024,              // MAX_BLOCK_DIM_X, _Y
        4 => 64,                    // MAX_BLOCK_DIM_Z
        5 => i32::MAX,              // MAX_GRID_DIM_X
        6 | 7 => 65535,             // MAX_GRID_DIM_Y, _Z
        8 => 48 * 1024,             // MAX_SHARED_MEMORY_PER_BLOCK
        9 => 64 * 1024,             // TOTAL_CONSTANT_MEMORY
        10 => 32,                   // WARP_SIZE
        11 => i32::MAX,             // MAX_PITCH
        12 => 65536,                // MAX_REGISTERS_PER_BLOCK
        13 => 1_000_000,            // CLOCK_RATE (kHz)
        14 => 512,                  // TEXTURE_ALIGNMENT
        15 => 1,                    // GPU_OVERLAP
        16 => cores,                // MULTIPROCESSOR_COUNT
        19 => 1,                    // CAN_MAP_HOST_MEMORY
        30 => 512,                  // SURFACE_ALIGNMENT
        31 => 1,                    // CONCURRENT_KERNELS
        36 => 1_000_000,            // MEMORY_CLOCK_RATE (kHz)
        37 => 64,                   // GLOBAL_MEMORY_BUS_WIDTH
        38 => 4 << 20,              // L2_CACHE_SIZE
        39 => 1536,                 // MAX_THREADS_PER_MULTIPROCESSOR
        40 => 1,                    // ASYNC_ENGINE_COUNT
        41 => 1,                    // UNIFIED_ADDRESSING
        75 => COMPUTE_CAPABILITY.0, // COMPUTE_CAPABILITY_MAJOR
        76 => COMPUTE_CAPABILITY.1, // COMPUTE_CAPABILITY_MINOR
        78 => 1,                    // STREAM_PRIORITIES_SUPPORTED
        79 | 80 => 1,               // GLOBAL_L1_CACHE_SUPPORTED, LOCAL_L1_CACHE_SUPPORTED
        81 => 100 * 1024,           // MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
        82 => 65536,                // MAX_REGISTERS_PER_MULTIPROCESSOR
        83 => 1,                    // MANAGED_MEMORY
        86 => 1,                    // HOST_NATIVE_ATOMIC_SUPPORTED
        87 => 2,                    // SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO
        89 => 1,                    // CONCURRENT_MANAGED_ACCESS
        95 => 1,                    // COOPERATIVE_LAUNCH
        97 => 99 * 1024,            // MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
        99 => 1,                    // HOST_REGISTER_SUPPORTED
        101 => 1,                   // DIRECT_MANAGED_MEM_ACCESS_FROM_HOST
        106 => 16,                  // MAX_BLOCKS_PER_MULTIPROCESSOR
        111 => 0,                   // RESERVED_SHARED_MEMORY_PER_BLOCK
        120 => 1,                   // CLUSTER_LAUNCH
        126 => 1,                   // MEM_SYNC_DOMAIN_COUNT
        127 => 1,                   // TENSOR_MAP_ACCESS_SUPPORTED
        0..=161 => 0,
        _ => return None,
    })
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
        put(pi, attribute(attrib).ok_or(CUDA_ERROR_INVALID_VALUE)?)
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

/// The device's UUID: fixed, so that a client sees the same device in every process.
const UUID: [u8; 16] = *b"ptxjit-cpu-dev-0";

/// # Safety
/// `uuid` must have 16 writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetUuid(uuid: *mut [u8; 16], dev: CUdevice) -> CUresult {
    call(|| {
        device(dev)?;
        put(uuid, UUID)
    })
}

/// # Safety
/// As [`cuDeviceGetUuid`] (the `_v2` form differs only for MIG instances, which this is not).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetUuid_v2(uuid: *mut [u8; 16], dev: CUdevice) -> CUresult {
    // SAFETY: passed on.
    unsafe { cuDeviceGetUuid(uuid, dev) }
}

/// A LUID exists on Windows only.
#[unsafe(no_mangle)]
pub extern "C" fn cuDeviceGetLuid(
    _luid: *mut c_char,
    _mask: *mut c_uint,
    dev: CUdevice,
) -> CUresult {
    call(|| {
        device(dev)?;
        Err(CUDA_ERROR_NOT_SUPPORTED)
    })
}

const PCI_BUS_ID: &str = "0000:00:00.0";

/// # Safety
/// `bus_id` must have room for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetPCIBusId(
    bus_id: *mut c_char,
    len: c_int,
    dev: CUdevice,
) -> CUresult {
    call(|| {
        device(dev)?;
        write_c_string(bus_id, len, PCI_BUS_ID)
    })
}

/// # Safety
/// `dev` writable; `bus_id` NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetByPCIBusId(
    dev: *mut CUdevice,
    bus_id: *const c_char,
) -> CUresult {
    call(|| {
        if bus_id.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: the caller passes a NUL-terminated string.
        let id = unsafe { std::ffi::CStr::from_ptr(bus_id) };
        match id.to_str() {
            Ok(id) if id.eq_ignore_ascii_case(PCI_BUS_ID) || id.eq_ignore_ascii_case("00:00.0") => {
                put(dev, 0)
            }
            _ => Err(CUDA_ERROR_INVALID_DEVICE),
        }
    })
}

/// Copies `text` into a caller's buffer of `len` bytes, NUL-terminated (truncated to fit).
fn write_c_string(out: *mut c_char, len: c_int, text: &str) -> Result<(), CUresult> {
    if out.is_null() || len <= 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let n = text.len().min(len as usize - 1);
    // SAFETY: the caller's buffer has `len` bytes; n + 1 <= len are written.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr() as *const c_char, out, n);
        *out.add(n) = 0;
    }
    Ok(())
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

// ---- contexts -------------------------------------------------------------------------------

fn create(ctx: *mut Handle, flags: c_uint, dev: CUdevice) -> Result<(), CUresult> {
    device(dev)?;
    if ctx.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let h = CONTEXTS.insert(flags);
    STACK.with(|s| s.borrow_mut().push(h as usize));
    put(ctx, h)
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxCreate_v2(
    ctx: *mut Handle,
    flags: c_uint,
    dev: CUdevice,
) -> CUresult {
    call(|| create(ctx, flags, dev))
}

/// [`cuCtxCreate_v2`] with execution-affinity parameters (SM counts), which a CPU device has
/// no use for: accepted and ignored.
///
/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxCreate_v3(
    ctx: *mut Handle,
    _params: *const c_void,
    _num_params: c_int,
    flags: c_uint,
    dev: CUdevice,
) -> CUresult {
    call(|| create(ctx, flags, dev))
}

/// [`cuCtxCreate_v2`] with `CUctxCreateParams` (affinity, a CIG context): accepted when null
/// or when it asks for nothing beyond a plain context.
///
/// # Safety
/// The out-pointer must be writable; `params` null or a `CUctxCreateParams`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxCreate_v4(
    ctx: *mut Handle,
    params: *const CtxCreateParams,
    flags: c_uint,
    dev: CUdevice,
) -> CUresult {
    call(|| {
        // SAFETY: the caller passes a valid structure or null.
        if let Some(p) = unsafe { params.as_ref() }
            && !p.cig_params.is_null()
        {
            debug("cuCtxCreate_v4: CIG (graphics-shared) contexts are not supported");
            return Err(CUDA_ERROR_NOT_SUPPORTED);
        }
        create(ctx, flags, dev)
    })
}

/// `CUctxCreateParams`.
#[repr(C)]
pub struct CtxCreateParams {
    exec_affinity_params: *const c_void,
    num_exec_affinity_params: c_int,
    cig_params: *const c_void,
}

#[unsafe(no_mangle)]
pub extern "C" fn cuCtxDestroy_v2(ctx: Handle) -> CUresult {
    call(|| {
        CONTEXTS.remove(ctx).ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
        forget(ctx as usize);
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuCtxSetCurrent(ctx: Handle) -> CUresult {
    call(|| {
        if !ctx.is_null() {
            context(ctx)?;
        }
        set_current(ctx as usize);
        Ok(())
    })
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxGetCurrent(ctx: *mut Handle) -> CUresult {
    call(|| put(ctx, top() as Handle))
}

#[unsafe(no_mangle)]
pub extern "C" fn cuCtxPushCurrent_v2(ctx: Handle) -> CUresult {
    call(|| {
        context(ctx)?;
        STACK.with(|s| s.borrow_mut().push(ctx as usize));
        Ok(())
    })
}

/// # Safety
/// The out-pointer must be writable or null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxPopCurrent_v2(ctx: *mut Handle) -> CUresult {
    call(|| {
        let popped = STACK
            .with(|s| s.borrow_mut().pop())
            .ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
        if !ctx.is_null() {
            put(ctx, popped as Handle)?;
        }
        Ok(())
    })
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxGetDevice(dev: *mut CUdevice) -> CUresult {
    call(|| {
        current()?;
        put(dev, 0)
    })
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxGetDevice_v2(dev: *mut CUdevice, ctx: Handle) -> CUresult {
    call(|| {
        context_or_current(ctx)?;
        put(dev, 0)
    })
}

/// Work is synchronous: nothing is ever pending.
#[unsafe(no_mangle)]
pub extern "C" fn cuCtxSynchronize() -> CUresult {
    call_in_context(|| Ok(()))
}

#[unsafe(no_mangle)]
pub extern "C" fn cuCtxSynchronize_v2(ctx: Handle) -> CUresult {
    call(|| context_or_current(ctx).map(|_| ()))
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxGetFlags(flags: *mut c_uint) -> CUresult {
    call(|| put(flags, CONTEXTS.with(current()?, |f| *f)?))
}

#[unsafe(no_mangle)]
pub extern "C" fn cuCtxSetFlags(flags: c_uint) -> CUresult {
    call(|| CONTEXTS.with(current()?, |f| *f = flags))
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxGetId(ctx: Handle, id: *mut c_ulonglong) -> CUresult {
    call(|| put(id, context_or_current(ctx)? as c_ulonglong))
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxGetApiVersion(ctx: Handle, version: *mut c_uint) -> CUresult {
    call(|| {
        context_or_current(ctx)?;
        // Contexts are created by the `_v2` generation of the API (CUDA 3.2 onwards).
        put(version, 3020)
    })
}

/// Context limits (`CUlimit`): stack size, printf FIFO, malloc heap, device-runtime depth
/// and pending launches, L2 fetch granularity, persisting L2 size. The malloc heap's is the
/// device heap's (`ptxjit::device_heap`); the others are kept as set: what they name does
/// not bind a CPU device.
static LIMITS: Mutex<[usize; 7]> = Mutex::new([1024, 1 << 20, 8 << 20, 2, 2048, 64, 0]);
const CU_LIMIT_MALLOC_HEAP_SIZE: c_int = 2;

#[unsafe(no_mangle)]
pub extern "C" fn cuCtxSetLimit(limit: c_int, value: usize) -> CUresult {
    call_in_context(|| {
        let mut limits = LIMITS.lock().unwrap_or_else(|e| e.into_inner());
        let slot = limits
            .get_mut(limit as usize)
            .ok_or(CUDA_ERROR_UNSUPPORTED_LIMIT)?;
        // The heap's size is fixed once a kernel has allocated from it.
        if limit == CU_LIMIT_MALLOC_HEAP_SIZE && !ptxjit::device_heap::set_limit(value as u64) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        *slot = value;
        Ok(())
    })
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxGetLimit(value: *mut usize, limit: c_int) -> CUresult {
    call_in_context(|| {
        let limits = LIMITS.lock().unwrap_or_else(|e| e.into_inner());
        let v = *limits
            .get(limit as usize)
            .ok_or(CUDA_ERROR_UNSUPPORTED_LIMIT)?;
        let v = match limit {
            CU_LIMIT_MALLOC_HEAP_SIZE => ptxjit::device_heap::limit() as usize,
            _ => v,
        };
        put(value, v)
    })
}

/// The cache preference (`CUfunc_cache`), kept as set: a CPU's caches take no orders.
static CACHE_CONFIG: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxGetCacheConfig(config: *mut c_int) -> CUresult {
    call_in_context(|| {
        put(
            config,
            CACHE_CONFIG.load(std::sync::atomic::Ordering::Relaxed),
        )
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuCtxSetCacheConfig(config: c_int) -> CUresult {
    call_in_context(|| {
        if !(0..=3).contains(&config) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        CACHE_CONFIG.store(config, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    })
}

/// Stream priorities run 0 (least) to -5 (greatest), as on NVIDIA GPUs; work runs in call
/// order whatever the priority.
pub const LEAST_PRIORITY: c_int = 0;
pub const GREATEST_PRIORITY: c_int = -5;

/// # Safety
/// The out-pointers must be writable or null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxGetStreamPriorityRange(
    least: *mut c_int,
    greatest: *mut c_int,
) -> CUresult {
    call_in_context(|| {
        if !least.is_null() {
            put(least, LEAST_PRIORITY)?;
        }
        if !greatest.is_null() {
            put(greatest, GREATEST_PRIORITY)?;
        }
        Ok(())
    })
}

/// There is one device, so no peer to reach.
#[unsafe(no_mangle)]
pub extern "C" fn cuCtxEnablePeerAccess(peer: Handle, _flags: c_uint) -> CUresult {
    call_in_context(|| {
        context(peer)?;
        Err(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuCtxDisablePeerAccess(peer: Handle) -> CUresult {
    call_in_context(|| {
        context(peer)?;
        Err(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED)
    })
}

// ---- the primary context --------------------------------------------------------------------

fn primary() -> std::sync::MutexGuard<'static, Primary> {
    PRIMARY.lock().unwrap_or_else(|e| e.into_inner())
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDevicePrimaryCtxRetain(ctx: *mut Handle, dev: CUdevice) -> CUresult {
    call(|| {
        device(dev)?;
        if ctx.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let mut p = primary();
        if p.retains == 0 || CONTEXTS.with(p.handle as Handle, |_| ()).is_err() {
            p.handle = CONTEXTS.insert(p.flags) as usize;
        }
        p.retains += 1;
        put(ctx, p.handle as Handle)
    })
}

/// Drops one retain; the last one destroys the primary context.
#[unsafe(no_mangle)]
pub extern "C" fn cuDevicePrimaryCtxRelease_v2(dev: CUdevice) -> CUresult {
    call(|| {
        device(dev)?;
        let mut p = primary();
        if p.retains == 0 {
            return Err(CUDA_ERROR_INVALID_CONTEXT);
        }
        p.retains -= 1;
        if p.retains == 0 {
            CONTEXTS.remove(p.handle as Handle);
            forget(p.handle);
        }
        Ok(())
    })
}

/// Destroys the primary context whatever its retains (allocations stay: they belong to the
/// device's one address space).
#[unsafe(no_mangle)]
pub extern "C" fn cuDevicePrimaryCtxReset_v2(dev: CUdevice) -> CUresult {
    call(|| {
        device(dev)?;
        let mut p = primary();
        if p.retains > 0 {
            CONTEXTS.remove(p.handle as Handle);
            forget(p.handle);
        }
        p.retains = 0;
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuDevicePrimaryCtxSetFlags_v2(dev: CUdevice, flags: c_uint) -> CUresult {
    call(|| {
        device(dev)?;
        let mut p = primary();
        p.flags = flags;
        if p.retains > 0 {
            CONTEXTS.with(p.handle as Handle, |f| *f = flags)?;
        }
        Ok(())
    })
}

/// # Safety
/// The out-pointers must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDevicePrimaryCtxGetState(
    dev: CUdevice,
    flags: *mut c_uint,
    active: *mut c_int,
) -> CUresult {
    call(|| {
        device(dev)?;
        let p = primary();
        put(flags, p.flags)?;
        put(active, (p.retains > 0) as c_int)
    })
}
