//! Device and page-locked host memory, copies and fills. Device addresses are checked
//! against the live allocations (`CUDA_ERROR_INVALID_VALUE` outside them).
//!
//! Host memory a client registers (`cuMemHostRegister`: a NumPy array it pins or maps) lies
//! outside the arena, where kernels cannot reach: it gets a *mirror* in the arena, which is
//! its device address. The host memory stays the truth: a launch copies each registered range
//! into its mirror before the kernel runs and back after it, and host-side copies and fills
//! that name a mirror address act on the host memory itself. Work is synchronous, so nothing
//! can observe the two apart.
//!
//! Kernels, like a GPU's, fault only outside an allocation's *granule*: its size rounded up to
//! the arena's 64 KiB slots, which it owns anyway. On a GPU an access past an allocation's end
//! but inside its page does not fault, and client tests rely on it (ZLUDA's `ldmatrix` writes
//! its second warp's results past a one-warp output buffer). `PTXJIT_CUDA_EXACT_BOUNDS=1` makes
//! the last requested byte the limit instead, as compute-sanitizer reports. Copies and fills
//! are checked against the requested size either way, as the driver does.

use std::collections::BTreeMap;
use std::ffi::{c_int, c_uchar, c_uint, c_ushort, c_void};
use std::sync::Mutex;

use ptxjit::DeviceBuffer;

use super::*;

/// What an allocation is for, as `cuPointerGetAttribute` reports it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Device,
    /// Page-locked host memory (`cuMemAllocHost`, `cuMemHostAlloc`), with its flags.
    Host(c_uint),
    Managed,
    /// The mirror of registered host memory.
    Mirror,
}

struct Allocation {
    buffer: DeviceBuffer,
    /// The size asked for.
    size: usize,
    kind: Kind,
}

/// Allocations by address: device memory and host memory (both from the arena, so kernels
/// reach host allocations too, as with mapped pinned memory).
static ALLOCATIONS: Mutex<BTreeMap<u64, Allocation>> = Mutex::new(BTreeMap::new());

/// A registered host range: its length, flags and mirror's address.
struct Registration {
    len: usize,
    flags: c_uint,
    mirror: u64,
}

/// Registered host memory by host address.
static REGISTERED: Mutex<BTreeMap<u64, Registration>> = Mutex::new(BTreeMap::new());

fn allocations() -> std::sync::MutexGuard<'static, BTreeMap<u64, Allocation>> {
    ALLOCATIONS.lock().unwrap_or_else(|e| e.into_inner())
}

fn registered() -> std::sync::MutexGuard<'static, BTreeMap<u64, Registration>> {
    REGISTERED.lock().unwrap_or_else(|e| e.into_inner())
}

/// The allocation holding `address` (within the bytes asked for): its start and size.
fn allocation_of(address: u64) -> Option<(u64, usize, Kind)> {
    let guard = allocations();
    let (&start, a) = guard.range(..=address).next_back()?;
    (address - start < a.size.max(1) as u64).then_some((start, a.size, a.kind))
}

/// The registered host range holding `address`: its start and registration.
fn registration_of(address: u64) -> Option<(u64, usize, c_uint, u64)> {
    let guard = registered();
    let (&start, r) = guard.range(..=address).next_back()?;
    (address - start < r.len as u64).then_some((start, r.len, r.flags, r.mirror))
}

/// `address` as host code must touch it: a mirror's bytes are their host memory's.
fn resolve(address: u64) -> u64 {
    let guard = registered();
    for (&host, r) in guard.iter() {
        if (r.mirror..r.mirror + r.len as u64).contains(&address) {
            return host + (address - r.mirror);
        }
    }
    address
}

/// Before a launch: every registered range into its mirror.
pub(crate) fn mirrors_in() {
    for (&host, r) in registered().iter() {
        // SAFETY: the client vouched for `len` bytes at `host` when it registered them; the
        // mirror is a live allocation of that size.
        unsafe { std::ptr::copy_nonoverlapping(host as *const u8, r.mirror as *mut u8, r.len) };
    }
}

/// After a launch: every mirror back into its registered range.
pub(crate) fn mirrors_out() {
    for (&host, r) in registered().iter() {
        // SAFETY: as in `mirrors_in`.
        unsafe { std::ptr::copy_nonoverlapping(r.mirror as *const u8, host as *mut u8, r.len) };
    }
}

/// The device's memory: the arena, or the machine's memory if that is less.
pub(crate) fn total_memory() -> usize {
    // SAFETY: sysconf has no preconditions.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGE_SIZE),
        )
    };
    let physical = (pages.max(0) as usize).saturating_mul(page.max(0) as usize);
    let arena = ptxjit_runtime::arena().size as usize;
    if physical == 0 {
        arena
    } else {
        arena.min(physical)
    }
}

fn allocate(size: usize, kind: Kind) -> Result<u64, CUresult> {
    let granule = if std::env::var_os("PTXJIT_CUDA_EXACT_BOUNDS").is_some_and(|v| v != "0") {
        size
    } else {
        ptxjit_runtime::granule(size).ok_or(CUDA_ERROR_OUT_OF_MEMORY)?
    };
    let buf = DeviceBuffer::zeroed(granule).map_err(|_| CUDA_ERROR_OUT_OF_MEMORY)?;
    let address = buf.address();
    allocations().insert(
        address,
        Allocation {
            buffer: buf,
            size,
            kind,
        },
    );
    Ok(address)
}

/// Frees an allocation of one of `kinds` that starts at `address`.
fn free(address: u64, kinds: impl Fn(Kind) -> bool) -> Result<(), CUresult> {
    let mut guard = allocations();
    match guard.get(&address) {
        Some(a) if kinds(a.kind) => {
            guard.remove(&address);
            Ok(())
        }
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

/// `len` bytes at `address` lie in one live allocation (a module's variables are in the arena
/// too), and in the bytes asked for when it is one of ours.
fn device_range(address: u64, len: usize) -> Result<(), CUresult> {
    let asked = || {
        let guard = allocations();
        match guard.range(..=address).next_back() {
            Some((&start, a)) if address - start < a.buffer.len() as u64 => {
                address - start + len as u64 <= a.size as u64
            }
            _ => true,
        }
    };
    if len == 0 || ptxjit_runtime::arena().contains(address, len as u64) && asked() {
        Ok(())
    } else {
        debug(&format!(
            "{len} bytes at {address:#x} are not in one allocation"
        ));
        Err(CUDA_ERROR_INVALID_VALUE)
    }
}

/// A host buffer of `len` bytes: any pointer but null (the rest the caller vouches for).
fn host_range(address: *const c_void, len: usize) -> Result<(), CUresult> {
    if len > 0 && address.is_null() {
        debug(&format!("a null host pointer for {len} bytes"));
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    Ok(())
}

/// What one side of a copy or fill may be.
#[derive(Clone, Copy)]
enum Side {
    Device,
    Host,
    /// Either, told apart by the address (unified addressing: `cuMemcpy`).
    Any,
}

/// The address host code uses for `len` bytes at `address`, checked as `side`.
fn checked(address: u64, len: usize, side: Side) -> Result<u64, CUresult> {
    let in_arena = address >= ptxjit_runtime::arena().base
        && address - ptxjit_runtime::arena().base < ptxjit_runtime::arena().size;
    match side {
        Side::Device => device_range(address, len).map(|()| resolve(address)),
        Side::Any if in_arena => device_range(address, len).map(|()| resolve(address)),
        Side::Host | Side::Any => host_range(address as *const c_void, len).map(|()| address),
    }
}

/// Copies `n` bytes (the ranges may overlap, as `memmove`).
fn copy(dst: u64, dst_side: Side, src: u64, src_side: Side, n: usize) -> Result<(), CUresult> {
    let (dst, src) = (checked(dst, n, dst_side)?, checked(src, n, src_side)?);
    // SAFETY: device ranges lie in live allocations; the caller vouches for host ranges.
    unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, n) };
    Ok(())
}

/// Fills `n` elements of `T` at device address `dst` (aligned to `T`) with `value`.
fn fill<T: Copy>(dst: CUdeviceptr, value: T, n: usize) -> Result<(), CUresult> {
    if !dst.is_multiple_of(std::mem::size_of::<T>() as u64) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let bytes = n
        .checked_mul(std::mem::size_of::<T>())
        .ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let dst = checked(dst, bytes, Side::Device)?;
    // SAFETY: the range lies in a live allocation (or registered host memory) and is aligned.
    unsafe { std::slice::from_raw_parts_mut(dst as *mut T, n) }.fill(value);
    Ok(())
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemAlloc_v2(dptr: *mut CUdeviceptr, size: usize) -> CUresult {
    call_in_context(|| {
        if size == 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        put(dptr, allocate(size, Kind::Device)?)
    })
}

/// # Safety
/// The out-pointers must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemAllocPitch_v2(
    dptr: *mut CUdeviceptr,
    pitch: *mut usize,
    width: usize,
    height: usize,
    element_size: c_uint,
) -> CUresult {
    call_in_context(|| {
        if width == 0 || height == 0 || ![4, 8, 16].contains(&element_size) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let row = width
            .checked_next_multiple_of(512)
            .ok_or(CUDA_ERROR_INVALID_VALUE)?;
        let size = row.checked_mul(height).ok_or(CUDA_ERROR_OUT_OF_MEMORY)?;
        put(pitch, row)?;
        put(dptr, allocate(size, Kind::Device)?)
    })
}

/// Managed memory is arena memory: the host and kernels share it as it is.
///
/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemAllocManaged(
    dptr: *mut CUdeviceptr,
    size: usize,
    flags: c_uint,
) -> CUresult {
    call_in_context(|| {
        // CU_MEM_ATTACH_GLOBAL (1) or CU_MEM_ATTACH_HOST (2), exactly one.
        if size == 0 || !(flags == 1 || flags == 2) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        put(dptr, allocate(size, Kind::Managed)?)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuMemFree_v2(dptr: CUdeviceptr) -> CUresult {
    call_in_context(|| match dptr {
        0 => Ok(()),
        _ => free(dptr, |k| matches!(k, Kind::Device | Kind::Managed)),
    })
}

/// Stream-ordered allocation is immediate here (work is synchronous).
///
/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemAllocAsync(
    dptr: *mut CUdeviceptr,
    size: usize,
    stream: Handle,
) -> CUresult {
    call_in_context(|| {
        super::stream::check(stream)?;
        if size == 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        put(dptr, allocate(size, Kind::Device)?)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuMemFreeAsync(dptr: CUdeviceptr, stream: Handle) -> CUresult {
    call_in_context(|| {
        super::stream::check(stream)?;
        free(dptr, |k| matches!(k, Kind::Device | Kind::Managed))
    })
}

/// # Safety
/// The out-pointers must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemGetInfo_v2(free_bytes: *mut usize, total: *mut usize) -> CUresult {
    call_in_context(|| {
        let total_bytes = total_memory();
        let used: usize = allocations().values().map(|a| a.buffer.len()).sum();
        put(free_bytes, total_bytes.saturating_sub(used))?;
        put(total, total_bytes)
    })
}

/// # Safety
/// The out-pointers must be writable or null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemGetAddressRange_v2(
    base: *mut CUdeviceptr,
    size: *mut usize,
    dptr: CUdeviceptr,
) -> CUresult {
    call_in_context(|| {
        let (start, len, _) = allocation_of(dptr).ok_or(CUDA_ERROR_NOT_FOUND)?;
        if !base.is_null() {
            put(base, start)?;
        }
        if !size.is_null() {
            put(size, len)?;
        }
        Ok(())
    })
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemAllocHost_v2(pp: *mut *mut c_void, size: usize) -> CUresult {
    call_in_context(|| put(pp, allocate(size.max(1), Kind::Host(0))? as *mut c_void))
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemHostAlloc(
    pp: *mut *mut c_void,
    size: usize,
    flags: c_uint,
) -> CUresult {
    call_in_context(|| {
        // PORTABLE (1), DEVICEMAP (2), WRITECOMBINED (4).
        if flags & !7 != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        put(pp, allocate(size.max(1), Kind::Host(flags))? as *mut c_void)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuMemFreeHost(p: *mut c_void) -> CUresult {
    call_in_context(|| free(p as u64, |k| matches!(k, Kind::Host(_))))
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemHostGetFlags(flags: *mut c_uint, p: *mut c_void) -> CUresult {
    call_in_context(|| match allocation_of(p as u64) {
        Some((_, _, Kind::Host(f))) => put(flags, f),
        _ => match registration_of(p as u64) {
            Some((_, _, f, _)) => put(flags, f),
            None => Err(CUDA_ERROR_INVALID_VALUE),
        },
    })
}

/// Registers `size` bytes of the caller's memory at `p` (see the module notes: it gets a
/// mirror in the arena, which is its device address).
///
/// # Safety
/// `p` must hold `size` bytes, readable and writable until unregistered.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemHostRegister_v2(
    p: *mut c_void,
    size: usize,
    flags: c_uint,
) -> CUresult {
    call_in_context(|| {
        // PORTABLE (1), DEVICEMAP (2), IOMEMORY (4), READ_ONLY (8).
        if p.is_null() || size == 0 || flags & !0xF != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        if flags & 4 != 0 {
            return Err(CUDA_ERROR_NOT_SUPPORTED);
        }
        let (start, end) = (p as u64, p as u64 + size as u64);
        let overlaps = {
            let guard = registered();
            guard
                .range(..end)
                .next_back()
                .is_some_and(|(&s, r)| s + r.len as u64 > start)
        };
        if overlaps || allocation_of(start).is_some() {
            return Err(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
        }
        let mirror = allocate(size, Kind::Mirror)?;
        registered().insert(
            start,
            Registration {
                len: size,
                flags,
                mirror,
            },
        );
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuMemHostUnregister(p: *mut c_void) -> CUresult {
    call_in_context(|| {
        let r = registered()
            .remove(&(p as u64))
            .ok_or(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED)?;
        free(r.mirror, |k| k == Kind::Mirror)
    })
}

/// The device address of page-locked host memory: itself for memory this library allocated,
/// the mirror for registered memory.
///
/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemHostGetDevicePointer_v2(
    dptr: *mut CUdeviceptr,
    p: *mut c_void,
    flags: c_uint,
) -> CUresult {
    call_in_context(|| {
        if flags != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let address = p as u64;
        match allocation_of(address) {
            Some((_, _, Kind::Host(_))) => put(dptr, address),
            _ => match registration_of(address) {
                Some((start, _, _, mirror)) => put(dptr, mirror + (address - start)),
                None => Err(CUDA_ERROR_INVALID_VALUE),
            },
        }
    })
}

// ---- pointer attributes ---------------------------------------------------------------------

const CU_MEMORYTYPE_HOST: c_uint = 1;
const CU_MEMORYTYPE_DEVICE: c_uint = 2;
const CU_MEMORYTYPE_UNIFIED: c_uint = 4;

/// What `address` is: (memory type, device pointer, host pointer, range start, range size,
/// managed, mapped), or `None` for memory the driver does not know.
fn pointer_info(address: u64) -> Option<(c_uint, u64, u64, u64, usize, bool, bool)> {
    if let Some((start, size, kind)) = allocation_of(address) {
        return Some(match kind {
            Kind::Device => (CU_MEMORYTYPE_DEVICE, address, 0, start, size, false, false),
            Kind::Managed => (
                CU_MEMORYTYPE_UNIFIED,
                address,
                address,
                start,
                size,
                true,
                false,
            ),
            Kind::Host(_) => (
                CU_MEMORYTYPE_HOST,
                address,
                address,
                start,
                size,
                false,
                true,
            ),
            Kind::Mirror => (
                CU_MEMORYTYPE_HOST,
                address,
                resolve(address),
                start,
                size,
                false,
                true,
            ),
        });
    }
    let (start, len, _, mirror) = registration_of(address)?;
    let offset = address - start;
    Some((
        CU_MEMORYTYPE_HOST,
        mirror + offset,
        address,
        start,
        len,
        false,
        true,
    ))
}

/// Writes attribute `attribute` of `address` to `data`; `Err(INVALID_VALUE)` for memory the
/// driver does not know (as CUDA does for every attribute but the memory type's context).
fn pointer_attribute(data: *mut c_void, attribute: c_int, address: u64) -> Result<(), CUresult> {
    let (kind, dptr, hptr, start, size, managed, mapped) =
        pointer_info(address).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let ctx = super::context::current().unwrap_or(std::ptr::null_mut());
    match attribute {
        1 => put(data as *mut Handle, ctx),            // CONTEXT
        2 => put(data as *mut c_uint, kind),           // MEMORY_TYPE
        3 => put(data as *mut u64, dptr),              // DEVICE_POINTER
        4 if hptr != 0 => put(data as *mut u64, hptr), // HOST_POINTER
        4 => Err(CUDA_ERROR_INVALID_VALUE),
        6 => put(data as *mut c_int, 1),   // SYNC_MEMOPS
        7 => put(data as *mut u64, start), // BUFFER_ID
        8 => put(data as *mut c_int, managed as c_int), // IS_MANAGED
        9 => put(data as *mut c_int, 0),   // DEVICE_ORDINAL
        10 => put(data as *mut c_int, 0),  // IS_LEGACY_CUDA_IPC_CAPABLE
        11 => put(data as *mut u64, start), // RANGE_START_ADDR
        12 => put(data as *mut usize, size), // RANGE_SIZE
        13 => put(data as *mut c_int, mapped as c_int), // MAPPED
        14 => put(data as *mut u64, 0),    // ALLOWED_HANDLE_TYPES
        15 => put(data as *mut c_int, 0),  // IS_GPU_DIRECT_RDMA_CAPABLE
        16 => put(data as *mut c_uint, 3), // ACCESS_FLAGS (read-write)
        17 => put(data as *mut Handle, std::ptr::null_mut()), // MEMPOOL_HANDLE
        18 => put(data as *mut usize, size), // MAPPING_SIZE
        19 => put(data as *mut u64, start), // MAPPING_BASE_ADDR
        20 => put(data as *mut u64, start), // MEMORY_BLOCK_ID
        21 => put(data as *mut c_int, 0),  // IS_HW_DECOMPRESS_CAPABLE
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

/// # Safety
/// `data` must be writable for the attribute's type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuPointerGetAttribute(
    data: *mut c_void,
    attribute: c_int,
    ptr: CUdeviceptr,
) -> CUresult {
    call_in_context(|| pointer_attribute(data, attribute, ptr))
}

/// Several attributes at once; unlike [`cuPointerGetAttribute`], memory the driver does not
/// know is no error: each attribute reads as zero (its memory type 0, unregistered).
///
/// # Safety
/// `attributes` and `data` hold `count` entries, each `data[i]` writable for its type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuPointerGetAttributes(
    count: c_uint,
    attributes: *const c_int,
    data: *const *mut c_void,
    ptr: CUdeviceptr,
) -> CUresult {
    call_in_context(|| {
        if count > 0 && (attributes.is_null() || data.is_null()) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let known = pointer_info(ptr).is_some();
        for i in 0..count as usize {
            // SAFETY: the caller passes `count` attributes and destinations.
            let (attribute, out) = unsafe { (*attributes.add(i), *data.add(i)) };
            if out.is_null() {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            if known {
                pointer_attribute(out, attribute, ptr)?;
            } else {
                let width = match attribute {
                    1 | 3 | 4 | 7 | 11 | 14 | 17 | 19 | 20 => 8,
                    12 | 18 => std::mem::size_of::<usize>(),
                    _ => 4,
                };
                // SAFETY: `out` has room for the attribute's type, `width` bytes.
                unsafe { std::ptr::write_bytes(out as *mut u8, 0, width) };
            }
        }
        Ok(())
    })
}

// ---- copies and fills -----------------------------------------------------------------------

/// # Safety
/// `src` must hold `n` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyHtoD_v2(
    dst: CUdeviceptr,
    src: *const c_void,
    n: usize,
) -> CUresult {
    call_in_context(|| copy(dst, Side::Device, src as u64, Side::Host, n))
}

/// # Safety
/// `dst` must have `n` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyDtoH_v2(dst: *mut c_void, src: CUdeviceptr, n: usize) -> CUresult {
    call_in_context(|| copy(dst as u64, Side::Host, src, Side::Device, n))
}

#[unsafe(no_mangle)]
pub extern "C" fn cuMemcpyDtoD_v2(dst: CUdeviceptr, src: CUdeviceptr, n: usize) -> CUresult {
    call_in_context(|| copy(dst, Side::Device, src, Side::Device, n))
}

/// A copy between any two addresses, each device or host by where it lies (unified
/// addressing).
///
/// # Safety
/// Host ranges must hold `n` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpy(dst: CUdeviceptr, src: CUdeviceptr, n: usize) -> CUresult {
    call_in_context(|| copy(dst, Side::Any, src, Side::Any, n))
}

/// The stream forms complete before they return; their stream must exist.
macro_rules! async_form {
    ($(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty),*) => $sync:ident) => {
        $(#[$doc])*
        /// # Safety
        /// As the synchronous form (the work is done when it returns).
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($arg: $ty,)* stream: Handle) -> CUresult {
            match super::stream::check(stream) {
                // SAFETY: passed on (some synchronous forms are safe functions).
                #[allow(unused_unsafe)]
                Ok(()) => unsafe { $sync($($arg),*) },
                Err(code) => code,
            }
        }
    };
}

async_form!(cuMemcpyHtoDAsync_v2(dst: CUdeviceptr, src: *const c_void, n: usize) => cuMemcpyHtoD_v2);
async_form!(cuMemcpyDtoHAsync_v2(dst: *mut c_void, src: CUdeviceptr, n: usize) => cuMemcpyDtoH_v2);
async_form!(cuMemcpyDtoDAsync_v2(dst: CUdeviceptr, src: CUdeviceptr, n: usize) => cuMemcpyDtoD_v2);
async_form!(cuMemcpyAsync(dst: CUdeviceptr, src: CUdeviceptr, n: usize) => cuMemcpy);
async_form!(cuMemsetD8Async(dst: CUdeviceptr, value: c_uchar, n: usize) => cuMemsetD8_v2);
async_form!(cuMemsetD16Async(dst: CUdeviceptr, value: c_ushort, n: usize) => cuMemsetD16_v2);
async_form!(cuMemsetD32Async(dst: CUdeviceptr, value: c_uint, n: usize) => cuMemsetD32_v2);

#[unsafe(no_mangle)]
pub extern "C" fn cuMemsetD8_v2(dst: CUdeviceptr, value: c_uchar, n: usize) -> CUresult {
    call_in_context(|| fill(dst, value, n))
}

#[unsafe(no_mangle)]
pub extern "C" fn cuMemsetD16_v2(dst: CUdeviceptr, value: c_ushort, n: usize) -> CUresult {
    call_in_context(|| fill(dst, value, n))
}

#[unsafe(no_mangle)]
pub extern "C" fn cuMemsetD32_v2(dst: CUdeviceptr, value: c_uint, n: usize) -> CUresult {
    call_in_context(|| fill(dst, value, n))
}

/// `CUipcMemHandle`/`CUipcEventHandle`: 64 opaque bytes, passed by value.
#[repr(C)]
pub struct IpcHandle([u8; 64]);

/// Sharing memory and events between processes (IPC) is not supported: each process's
/// device memory is its own.
#[unsafe(no_mangle)]
pub extern "C" fn cuIpcGetMemHandle(_handle: *mut IpcHandle, _ptr: CUdeviceptr) -> CUresult {
    call_in_context(|| Err(CUDA_ERROR_NOT_SUPPORTED))
}

#[unsafe(no_mangle)]
pub extern "C" fn cuIpcOpenMemHandle(
    _ptr: *mut CUdeviceptr,
    _handle: IpcHandle,
    _flags: c_uint,
) -> CUresult {
    call_in_context(|| Err(CUDA_ERROR_NOT_SUPPORTED))
}

#[unsafe(no_mangle)]
pub extern "C" fn cuIpcOpenMemHandle_v2(
    ptr: *mut CUdeviceptr,
    handle: IpcHandle,
    flags: c_uint,
) -> CUresult {
    cuIpcOpenMemHandle(ptr, handle, flags)
}

#[unsafe(no_mangle)]
pub extern "C" fn cuIpcCloseMemHandle(_ptr: CUdeviceptr) -> CUresult {
    call_in_context(|| Err(CUDA_ERROR_NOT_SUPPORTED))
}

#[unsafe(no_mangle)]
pub extern "C" fn cuIpcGetEventHandle(_handle: *mut IpcHandle, _event: Handle) -> CUresult {
    call_in_context(|| Err(CUDA_ERROR_NOT_SUPPORTED))
}

#[unsafe(no_mangle)]
pub extern "C" fn cuIpcOpenEventHandle(_event: *mut Handle, _handle: IpcHandle) -> CUresult {
    call_in_context(|| Err(CUDA_ERROR_NOT_SUPPORTED))
}
