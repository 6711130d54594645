//! Device and page-locked host memory, copies and fills. Device addresses are checked
//! against the live allocations (`CUDA_ERROR_INVALID_VALUE` outside them).
//!
//! Kernels, like a GPU's, fault only outside an allocation's *granule*: its size rounded up to
//! the arena's 64 KiB slots, which it owns anyway. On a GPU an access past an allocation's end
//! but inside its page does not fault, and client tests rely on it (ZLUDA's `ldmatrix` writes
//! its second warp's results past a one-warp output buffer). `PTXJIT_CUDA_EXACT_BOUNDS=1` makes
//! the last requested byte the limit instead, as compute-sanitizer reports. Copies and fills
//! are checked against the requested size either way, as the driver does.

use std::collections::BTreeMap;
use std::ffi::{c_uchar, c_uint, c_void};
use std::sync::Mutex;

use ptxjit::DeviceBuffer;

use super::*;

/// Allocations by address, with the size asked for: device memory and host memory (both from
/// the arena, so kernels reach host allocations too, as with mapped pinned memory).
static ALLOCATIONS: Mutex<BTreeMap<u64, (DeviceBuffer, usize)>> = Mutex::new(BTreeMap::new());

fn allocate(size: usize) -> Result<u64, CUresult> {
    let granule = if std::env::var_os("PTXJIT_CUDA_EXACT_BOUNDS").is_some_and(|v| v != "0") {
        size
    } else {
        ptxjit_runtime::granule(size).ok_or(CUDA_ERROR_OUT_OF_MEMORY)?
    };
    let buf = DeviceBuffer::zeroed(granule).map_err(|_| CUDA_ERROR_OUT_OF_MEMORY)?;
    let address = buf.address();
    let mut guard = ALLOCATIONS.lock().unwrap_or_else(|e| e.into_inner());
    guard.insert(address, (buf, size));
    Ok(address)
}

fn free(address: u64) -> Result<(), CUresult> {
    let mut guard = ALLOCATIONS.lock().unwrap_or_else(|e| e.into_inner());
    match guard.remove(&address) {
        Some(_) => Ok(()),
        None => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

/// `len` bytes at `address` lie in one live allocation (a module's variables are in the arena
/// too), and in the bytes asked for when it is one of ours.
fn device_range(address: u64, len: usize) -> Result<(), CUresult> {
    let asked = || {
        let guard = ALLOCATIONS.lock().unwrap_or_else(|e| e.into_inner());
        match guard.range(..=address).next_back() {
            Some((&start, (buf, size))) if address - start < buf.len() as u64 => {
                address - start + len as u64 <= *size as u64
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

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemAlloc_v2(dptr: *mut CUdeviceptr, size: usize) -> CUresult {
    call_in_context(|| {
        if size == 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        put(dptr, allocate(size)?)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuMemFree_v2(dptr: CUdeviceptr) -> CUresult {
    call_in_context(|| if dptr == 0 { Ok(()) } else { free(dptr) })
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemAllocHost_v2(pp: *mut *mut c_void, size: usize) -> CUresult {
    call_in_context(|| put(pp, allocate(size.max(1))? as *mut c_void))
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemHostAlloc(
    pp: *mut *mut c_void,
    size: usize,
    _flags: c_uint,
) -> CUresult {
    call_in_context(|| put(pp, allocate(size.max(1))? as *mut c_void))
}

#[unsafe(no_mangle)]
pub extern "C" fn cuMemFreeHost(p: *mut c_void) -> CUresult {
    call_in_context(|| free(p as u64))
}

/// # Safety
/// `src` must hold `n` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyHtoD_v2(
    dst: CUdeviceptr,
    src: *const c_void,
    n: usize,
) -> CUresult {
    call_in_context(|| {
        device_range(dst, n)?;
        host_range(src, n)?;
        // SAFETY: the destination was checked; the caller vouches for the source.
        unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, n) };
        Ok(())
    })
}

/// # Safety
/// `dst` must have `n` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyDtoH_v2(dst: *mut c_void, src: CUdeviceptr, n: usize) -> CUresult {
    call_in_context(|| {
        device_range(src, n)?;
        host_range(dst, n)?;
        // SAFETY: the source was checked; the caller vouches for the destination.
        unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, n) };
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuMemcpyDtoD_v2(dst: CUdeviceptr, src: CUdeviceptr, n: usize) -> CUresult {
    call_in_context(|| {
        device_range(dst, n)?;
        device_range(src, n)?;
        // SAFETY: both ranges lie in live allocations.
        unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, n) };
        Ok(())
    })
}

/// # Safety
/// As [`cuMemcpyHtoD_v2`] (the copy is done when it returns).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyHtoDAsync_v2(
    dst: CUdeviceptr,
    src: *const c_void,
    n: usize,
    _stream: Handle,
) -> CUresult {
    // SAFETY: passed on.
    unsafe { cuMemcpyHtoD_v2(dst, src, n) }
}

/// # Safety
/// As [`cuMemcpyDtoH_v2`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyDtoHAsync_v2(
    dst: *mut c_void,
    src: CUdeviceptr,
    n: usize,
    _stream: Handle,
) -> CUresult {
    // SAFETY: passed on.
    unsafe { cuMemcpyDtoH_v2(dst, src, n) }
}

#[unsafe(no_mangle)]
pub extern "C" fn cuMemcpyDtoDAsync_v2(
    dst: CUdeviceptr,
    src: CUdeviceptr,
    n: usize,
    _stream: Handle,
) -> CUresult {
    cuMemcpyDtoD_v2(dst, src, n)
}

#[unsafe(no_mangle)]
pub extern "C" fn cuMemsetD8_v2(dst: CUdeviceptr, value: c_uchar, n: usize) -> CUresult {
    call_in_context(|| {
        device_range(dst, n)?;
        // SAFETY: the range lies in a live allocation.
        unsafe { std::ptr::write_bytes(dst as *mut u8, value, n) };
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuMemsetD32_v2(dst: CUdeviceptr, value: c_uint, n: usize) -> CUresult {
    call_in_context(|| {
        if !dst.is_multiple_of(4) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        device_range(dst, n.checked_mul(4).ok_or(CUDA_ERROR_INVALID_VALUE)?)?;
        // SAFETY: the range lies in a live allocation and is 4-byte aligned.
        let words = unsafe { std::slice::from_raw_parts_mut(dst as *mut u32, n) };
        words.fill(value);
        Ok(())
    })
}
