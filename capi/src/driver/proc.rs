//! `cuGetProcAddress`: the driver's own symbol table, as the CUDA runtime and NVRTC look
//! functions up; `cuGetExportTable` (private interfaces) is not supported.

use std::ffi::{CStr, c_char, c_int, c_void};

use super::context::*;
use super::errors::*;
use super::launch::*;
use super::memory::*;
use super::module::*;
use super::stream::*;
use super::tensor_map::*;
use super::{CUresult, call_any_time, put};

macro_rules! symbols {
    ($($f:ident),* $(,)?) => {
        /// Every exported driver function, by name.
        fn symbols() -> Vec<(&'static str, usize)> {
            vec![$((stringify!($f), $f as *const () as usize)),*]
        }
    };
}

symbols!(
    cuInit,
    cuDriverGetVersion,
    cuDeviceGet,
    cuDeviceGetCount,
    cuDeviceGetName,
    cuDeviceGetAttribute,
    cuDeviceComputeCapability,
    cuDeviceTotalMem_v2,
    cuDeviceCanAccessPeer,
    cuCtxCreate_v2,
    cuCtxDestroy_v2,
    cuCtxSetCurrent,
    cuCtxGetCurrent,
    cuCtxSynchronize,
    cuCtxEnablePeerAccess,
    cuModuleLoadData,
    cuModuleLoadDataEx,
    cuModuleGetFunction,
    cuModuleGetGlobal_v2,
    cuModuleUnload,
    cuFuncSetAttribute,
    cuMemAlloc_v2,
    cuMemFree_v2,
    cuMemAllocHost_v2,
    cuMemHostAlloc,
    cuMemFreeHost,
    cuMemcpyHtoD_v2,
    cuMemcpyDtoH_v2,
    cuMemcpyDtoD_v2,
    cuMemcpyHtoDAsync_v2,
    cuMemcpyDtoHAsync_v2,
    cuMemcpyDtoDAsync_v2,
    cuMemsetD8_v2,
    cuMemsetD32_v2,
    cuLaunchKernel,
    cuLaunchKernelEx,
    cuTensorMapEncodeTiled,
    cuTensorMapReplaceAddress,
    cuStreamCreate,
    cuStreamSynchronize,
    cuStreamDestroy_v2,
    cuStreamWaitEvent,
    cuEventCreate,
    cuEventRecord,
    cuEventSynchronize,
    cuEventElapsedTime,
    cuEventDestroy_v2,
    cuGetErrorString,
    cuGetErrorName,
    cuGetExportTable,
    cuGetProcAddress,
    cuGetProcAddress_v2,
);

/// A function by the name callers ask for: exact, or its `_v2` version (`cuMemAlloc` is
/// `cuMemAlloc_v2` for every CUDA version this library claims).
fn lookup(name: &str) -> Option<usize> {
    let table = symbols();
    let find = |n: &str| table.iter().find(|(s, _)| *s == n).map(|&(_, f)| f);
    find(name).or_else(|| find(&format!("{name}_v2")))
}

const CU_GET_PROC_ADDRESS_SUCCESS: c_int = 0;
const CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND: c_int = 1;

/// # Safety
/// `symbol` NUL-terminated; `pfn` writable; `status` writable or null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGetProcAddress_v2(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    _cuda_version: c_int,
    _flags: u64,
    status: *mut c_int,
) -> CUresult {
    call_any_time(|| {
        if symbol.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: the caller passes a NUL-terminated name.
        let name = unsafe { CStr::from_ptr(symbol) }.to_str().unwrap_or("");
        let found = lookup(name);
        if !status.is_null() {
            let s = if found.is_some() {
                CU_GET_PROC_ADDRESS_SUCCESS
            } else {
                CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND
            };
            put(status, s)?;
        }
        put(pfn, found.unwrap_or(0) as *mut c_void)?;
        found.map(|_| ()).ok_or(CUDA_ERROR_NOT_FOUND)
    })
}

/// # Safety
/// As [`cuGetProcAddress_v2`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGetProcAddress(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    cuda_version: c_int,
    flags: u64,
) -> CUresult {
    // SAFETY: passed on.
    unsafe { cuGetProcAddress_v2(symbol, pfn, cuda_version, flags, std::ptr::null_mut()) }
}

/// NVIDIA's private interfaces: not available (callers such as NVRTC then do without).
#[unsafe(no_mangle)]
pub extern "C" fn cuGetExportTable(_table: *mut *const c_void, _id: *const c_void) -> CUresult {
    CUDA_ERROR_NOT_SUPPORTED
}
