//! `cuGetProcAddress`: the driver's own symbol table, as the CUDA runtime and NVRTC look
//! functions up; `cuGetExportTable` (private interfaces) is not supported.

use std::ffi::{CStr, c_char, c_int, c_void};

use super::context::*;
use super::errors::*;
use super::launch::*;
use super::link::*;
use super::memory::*;
use super::module::*;
use super::occupancy::*;
use super::stream::*;
use super::tensor_map::*;
use super::{CUresult, call_any_time, debug, put};

macro_rules! symbols {
    ($($f:ident @ $version:literal),* $(,)?) => {
        /// Every exported driver function: (name, ABI version, address). The ABI version is
        /// the CUDA version that introduced that signature (`PFN_<base>_v<version>` in
        /// `cudaTypedefs.h`); a base name with several lists each of them.
        fn symbols() -> &'static [(&'static str, c_int, usize)] {
            static TABLE: std::sync::OnceLock<Vec<(&'static str, c_int, usize)>> =
                std::sync::OnceLock::new();
            TABLE.get_or_init(|| vec![$((stringify!($f), $version, $f as *const () as usize)),*])
        }
    };
}

symbols!(
    cuInit @ 2000,
    cuDriverGetVersion @ 2020,
    cuGetErrorString @ 6000,
    cuGetErrorName @ 6000,
    cuGetExportTable @ 3000,
    cuGetProcAddress @ 11030,
    cuGetProcAddress_v2 @ 12000,
    // Devices.
    cuDeviceGet @ 2000,
    cuDeviceGetCount @ 2000,
    cuDeviceGetName @ 2000,
    cuDeviceGetUuid @ 9020,
    cuDeviceGetUuid_v2 @ 11040,
    cuDeviceGetLuid @ 10000,
    cuDeviceGetPCIBusId @ 4010,
    cuDeviceGetByPCIBusId @ 4010,
    cuDeviceGetAttribute @ 2000,
    cuDeviceComputeCapability @ 2000,
    cuDeviceTotalMem_v2 @ 3020,
    cuDeviceCanAccessPeer @ 4000,
    cuDevicePrimaryCtxRetain @ 7000,
    cuDevicePrimaryCtxRelease_v2 @ 11000,
    cuDevicePrimaryCtxSetFlags_v2 @ 11000,
    cuDevicePrimaryCtxGetState @ 7000,
    cuDevicePrimaryCtxReset_v2 @ 11000,
    // Contexts.
    cuCtxCreate_v2 @ 3020,
    cuCtxCreate_v3 @ 11040,
    cuCtxCreate_v4 @ 12050,
    cuCtxDestroy_v2 @ 4000,
    cuCtxSetCurrent @ 4000,
    cuCtxGetCurrent @ 4000,
    cuCtxPushCurrent_v2 @ 4000,
    cuCtxPopCurrent_v2 @ 4000,
    cuCtxGetDevice @ 2000,
    cuCtxGetDevice_v2 @ 13000,
    cuCtxSynchronize @ 2000,
    cuCtxSynchronize_v2 @ 13000,
    cuCtxGetFlags @ 7000,
    cuCtxSetFlags @ 12010,
    cuCtxGetId @ 12000,
    cuCtxGetApiVersion @ 3020,
    cuCtxSetLimit @ 3010,
    cuCtxGetLimit @ 3010,
    cuCtxGetCacheConfig @ 3020,
    cuCtxSetCacheConfig @ 3020,
    cuCtxGetStreamPriorityRange @ 5050,
    cuCtxEnablePeerAccess @ 4000,
    cuCtxDisablePeerAccess @ 4000,
    // Modules, libraries, linking, functions.
    cuModuleLoad @ 2000,
    cuModuleLoadData @ 2000,
    cuModuleLoadDataEx @ 2010,
    cuModuleGetFunction @ 2000,
    cuModuleGetFunctionCount @ 12040,
    cuModuleGetGlobal_v2 @ 3020,
    cuModuleUnload @ 2000,
    cuLinkCreate_v2 @ 6050,
    cuLinkAddData_v2 @ 6050,
    cuLinkAddFile_v2 @ 6050,
    cuLinkComplete @ 5050,
    cuLinkDestroy @ 5050,
    cuLibraryLoadData @ 12000,
    cuLibraryLoadFromFile @ 12000,
    cuLibraryUnload @ 12000,
    cuLibraryGetKernel @ 12000,
    cuLibraryGetModule @ 12000,
    cuLibraryGetGlobal @ 12000,
    cuKernelGetFunction @ 12000,
    cuKernelGetAttribute @ 12000,
    cuKernelSetAttribute @ 12000,
    cuKernelSetCacheConfig @ 12000,
    cuKernelGetName @ 12030,
    cuFuncGetAttribute @ 2020,
    cuFuncSetAttribute @ 9000,
    cuFuncSetCacheConfig @ 3000,
    cuFuncGetName @ 12030,
    cuFuncGetModule @ 11000,
    // Memory.
    cuMemGetInfo_v2 @ 3020,
    cuMemAlloc_v2 @ 3020,
    cuMemAllocPitch_v2 @ 3020,
    cuMemAllocManaged @ 6000,
    cuMemAllocAsync @ 11020,
    cuMemFree_v2 @ 3020,
    cuMemFreeAsync @ 11020,
    cuMemGetAddressRange_v2 @ 3020,
    cuMemAllocHost_v2 @ 3020,
    cuMemHostAlloc @ 2020,
    cuMemFreeHost @ 2000,
    cuMemHostGetFlags @ 2030,
    cuMemHostRegister_v2 @ 6050,
    cuMemHostUnregister @ 4000,
    cuIpcGetMemHandle @ 4010,
    cuIpcOpenMemHandle @ 4010,
    cuIpcOpenMemHandle_v2 @ 11000,
    cuIpcCloseMemHandle @ 4010,
    cuIpcGetEventHandle @ 4010,
    cuIpcOpenEventHandle @ 4010,
    cuMemHostGetDevicePointer_v2 @ 3020,
    cuPointerGetAttribute @ 4000,
    cuPointerGetAttributes @ 7000,
    cuMemcpy @ 4000,
    cuMemcpyAsync @ 4000,
    cuMemcpyHtoD_v2 @ 3020,
    cuMemcpyDtoH_v2 @ 3020,
    cuMemcpyDtoD_v2 @ 3020,
    cuMemcpyHtoDAsync_v2 @ 3020,
    cuMemcpyDtoHAsync_v2 @ 3020,
    cuMemcpyDtoDAsync_v2 @ 3020,
    cuMemsetD8_v2 @ 3020,
    cuMemsetD16_v2 @ 3020,
    cuMemsetD32_v2 @ 3020,
    cuMemsetD8Async @ 3020,
    cuMemsetD16Async @ 3020,
    cuMemsetD32Async @ 3020,
    // Launches and occupancy.
    cuLaunchKernel @ 4000,
    cuLaunchKernelEx @ 11060,
    cuLaunchCooperativeKernel @ 9000,
    cuOccupancyMaxActiveBlocksPerMultiprocessor @ 6050,
    cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags @ 7000,
    cuOccupancyMaxPotentialBlockSize @ 6050,
    cuOccupancyMaxPotentialBlockSizeWithFlags @ 7000,
    cuTensorMapEncodeTiled @ 12000,
    cuTensorMapReplaceAddress @ 12000,
    // Streams and events.
    cuStreamCreate @ 2000,
    cuStreamCreateWithPriority @ 5050,
    cuStreamGetPriority @ 5050,
    cuStreamGetFlags @ 5050,
    cuStreamGetId @ 12000,
    cuStreamGetCtx @ 9020,
    cuStreamGetCtx_v2 @ 12050,
    cuStreamSynchronize @ 2000,
    cuStreamQuery @ 2000,
    cuStreamIsCapturing @ 10000,
    cuStreamBeginCapture @ 10000,
    cuStreamBeginCapture_v2 @ 10010,
    cuStreamDestroy_v2 @ 4000,
    cuStreamWaitEvent @ 3020,
    cuStreamAddCallback @ 5000,
    cuLaunchHostFunc @ 10000,
    cuLaunchHostFunc_v2 @ 13010,
    cuEventCreate @ 2000,
    cuEventRecord @ 2000,
    cuEventRecordWithFlags @ 11010,
    cuEventQuery @ 2000,
    cuEventSynchronize @ 2000,
    cuEventElapsedTime @ 2000,
    cuEventElapsedTime_v2 @ 12080,
    cuEventDestroy_v2 @ 4000,
    cuProfilerStart @ 4000,
    cuProfilerStop @ 4000,
);

/// The name CUDA looks a function up by: the exported name less its `_vN` suffix.
fn base(name: &str) -> &str {
    match name.rsplit_once("_v") {
        Some((b, n)) if !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()) => b,
        _ => name,
    }
}

/// What a lookup of `name` for CUDA version `version` finds.
#[derive(Debug, PartialEq, Eq)]
pub enum Found {
    /// The function with the newest ABI not newer than `version`.
    Function(usize),
    /// The function exists, but only in ABIs newer than `version`.
    VersionNotSufficient,
    NotFound,
}

/// The function `name` (a base name, or an exported name exactly) as CUDA `version` knows it.
pub fn lookup(name: &str, version: c_int) -> Found {
    let table = symbols();
    if let Some(&(_, _, f)) = table.iter().find(|(s, _, _)| *s == name && base(s) != name) {
        return Found::Function(f);
    }
    let abis: Vec<_> = table.iter().filter(|(s, _, _)| base(s) == name).collect();
    if abis.is_empty() {
        return Found::NotFound;
    }
    abis.iter()
        .filter(|(_, v, _)| *v <= version)
        .max_by_key(|(_, v, _)| *v)
        .map_or(Found::VersionNotSufficient, |&&(_, _, f)| {
            Found::Function(f)
        })
}

const CU_GET_PROC_ADDRESS_SUCCESS: c_int = 0;
const CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND: c_int = 1;
const CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT: c_int = 2;

/// # Safety
/// `symbol` NUL-terminated; `pfn` writable; `status` writable or null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGetProcAddress_v2(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    cuda_version: c_int,
    _flags: u64,
    status: *mut c_int,
) -> CUresult {
    call_any_time(|| {
        if symbol.is_null() || pfn.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: the caller passes a NUL-terminated name.
        let name = unsafe { CStr::from_ptr(symbol) }.to_str().unwrap_or("");
        let found = lookup(name, cuda_version);
        let (address, s) = match found {
            Found::Function(f) => (f, CU_GET_PROC_ADDRESS_SUCCESS),
            Found::VersionNotSufficient => (0, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT),
            Found::NotFound => (0, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND),
        };
        if address == 0 {
            debug(&format!(
                "cuGetProcAddress: {name} (CUDA {cuda_version}): {found:?}"
            ));
        }
        if !status.is_null() {
            put(status, s)?;
        }
        put(pfn, address as *mut c_void)?;
        match address {
            0 => Err(CUDA_ERROR_NOT_FOUND),
            _ => Ok(()),
        }
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

/// The profiler has nothing to start: accepted.
#[unsafe(no_mangle)]
pub extern "C" fn cuProfilerStart() -> CUresult {
    CUDA_SUCCESS
}

#[unsafe(no_mangle)]
pub extern "C" fn cuProfilerStop() -> CUresult {
    CUDA_SUCCESS
}

/// NVIDIA's private interfaces: not available (callers such as NVRTC then do without).
#[unsafe(no_mangle)]
pub extern "C" fn cuGetExportTable(_table: *mut *const c_void, _id: *const c_void) -> CUresult {
    CUDA_ERROR_NOT_SUPPORTED
}
