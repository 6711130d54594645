//! Result codes, their names and descriptions (`cuGetErrorName`, `cuGetErrorString`).

use std::ffi::c_char;

use super::{CUresult, call_any_time, put};

pub const CUDA_SUCCESS: CUresult = 0;
pub const CUDA_ERROR_INVALID_VALUE: CUresult = 1;
pub const CUDA_ERROR_OUT_OF_MEMORY: CUresult = 2;
pub const CUDA_ERROR_NOT_INITIALIZED: CUresult = 3;
pub const CUDA_ERROR_INVALID_DEVICE: CUresult = 101;
pub const CUDA_ERROR_INVALID_IMAGE: CUresult = 200;
pub const CUDA_ERROR_INVALID_CONTEXT: CUresult = 201;
pub const CUDA_ERROR_NO_BINARY_FOR_GPU: CUresult = 209;
pub const CUDA_ERROR_INVALID_PTX: CUresult = 218;
pub const CUDA_ERROR_INVALID_HANDLE: CUresult = 400;
pub const CUDA_ERROR_NOT_FOUND: CUresult = 500;
pub const CUDA_ERROR_NOT_READY: CUresult = 600;
pub const CUDA_ERROR_ILLEGAL_ADDRESS: CUresult = 700;
pub const CUDA_ERROR_LAUNCH_TIMEOUT: CUresult = 702;
pub const CUDA_ERROR_HARDWARE_STACK_ERROR: CUresult = 714;
pub const CUDA_ERROR_MISALIGNED_ADDRESS: CUresult = 716;
pub const CUDA_ERROR_LAUNCH_FAILED: CUresult = 719;
pub const CUDA_ERROR_ASSERT: CUresult = 710;
pub const CUDA_ERROR_PEER_ACCESS_UNSUPPORTED: CUresult = 217;
pub const CUDA_ERROR_UNSUPPORTED_LIMIT: CUresult = 215;
pub const CUDA_ERROR_FILE_NOT_FOUND: CUresult = 301;
pub const CUDA_ERROR_PEER_ACCESS_NOT_ENABLED: CUresult = 705;
pub const CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED: CUresult = 712;
pub const CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED: CUresult = 713;
pub const CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE: CUresult = 720;
pub const CUDA_ERROR_NOT_SUPPORTED: CUresult = 801;
pub const CUDA_ERROR_INVALID_CLUSTER_SIZE: CUresult = 912;
pub const CUDA_ERROR_UNKNOWN: CUresult = 999;

/// (code, name, description), NUL-terminated for C.
const TABLE: &[(CUresult, &str, &str)] = &[
    (CUDA_SUCCESS, "CUDA_SUCCESS\0", "no error\0"),
    (
        CUDA_ERROR_INVALID_VALUE,
        "CUDA_ERROR_INVALID_VALUE\0",
        "invalid argument\0",
    ),
    (
        CUDA_ERROR_OUT_OF_MEMORY,
        "CUDA_ERROR_OUT_OF_MEMORY\0",
        "out of memory\0",
    ),
    (
        CUDA_ERROR_NOT_INITIALIZED,
        "CUDA_ERROR_NOT_INITIALIZED\0",
        "initialization error\0",
    ),
    (
        CUDA_ERROR_INVALID_DEVICE,
        "CUDA_ERROR_INVALID_DEVICE\0",
        "invalid device ordinal\0",
    ),
    (
        CUDA_ERROR_INVALID_IMAGE,
        "CUDA_ERROR_INVALID_IMAGE\0",
        "device kernel image is invalid\0",
    ),
    (
        CUDA_ERROR_INVALID_CONTEXT,
        "CUDA_ERROR_INVALID_CONTEXT\0",
        "invalid device context\0",
    ),
    (
        CUDA_ERROR_NO_BINARY_FOR_GPU,
        "CUDA_ERROR_NO_BINARY_FOR_GPU\0",
        "no kernel image is available for execution on the device (ptxjit runs PTX text only)\0",
    ),
    (
        CUDA_ERROR_INVALID_PTX,
        "CUDA_ERROR_INVALID_PTX\0",
        "a PTX JIT compilation failed\0",
    ),
    (
        CUDA_ERROR_INVALID_HANDLE,
        "CUDA_ERROR_INVALID_HANDLE\0",
        "invalid resource handle\0",
    ),
    (
        CUDA_ERROR_NOT_FOUND,
        "CUDA_ERROR_NOT_FOUND\0",
        "named symbol not found\0",
    ),
    (
        CUDA_ERROR_NOT_READY,
        "CUDA_ERROR_NOT_READY\0",
        "device not ready\0",
    ),
    (
        CUDA_ERROR_ILLEGAL_ADDRESS,
        "CUDA_ERROR_ILLEGAL_ADDRESS\0",
        "an illegal memory access was encountered\0",
    ),
    (
        CUDA_ERROR_LAUNCH_TIMEOUT,
        "CUDA_ERROR_LAUNCH_TIMEOUT\0",
        "the launch timed out and was terminated\0",
    ),
    (
        CUDA_ERROR_HARDWARE_STACK_ERROR,
        "CUDA_ERROR_HARDWARE_STACK_ERROR\0",
        "an illegal instruction was encountered (stack overflow)\0",
    ),
    (
        CUDA_ERROR_MISALIGNED_ADDRESS,
        "CUDA_ERROR_MISALIGNED_ADDRESS\0",
        "misaligned address\0",
    ),
    (
        CUDA_ERROR_ASSERT,
        "CUDA_ERROR_ASSERT\0",
        "device-side assert triggered\0",
    ),
    (
        CUDA_ERROR_LAUNCH_FAILED,
        "CUDA_ERROR_LAUNCH_FAILED\0",
        "unspecified launch failure\0",
    ),
    (
        CUDA_ERROR_UNSUPPORTED_LIMIT,
        "CUDA_ERROR_UNSUPPORTED_LIMIT\0",
        "limit is not supported on this architecture\0",
    ),
    (
        CUDA_ERROR_PEER_ACCESS_UNSUPPORTED,
        "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED\0",
        "peer access is not supported between these two devices\0",
    ),
    (
        CUDA_ERROR_FILE_NOT_FOUND,
        "CUDA_ERROR_FILE_NOT_FOUND\0",
        "file not found\0",
    ),
    (
        CUDA_ERROR_PEER_ACCESS_NOT_ENABLED,
        "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED\0",
        "peer access has not been enabled\0",
    ),
    (
        CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
        "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED\0",
        "part or all of the requested memory range is already mapped\0",
    ),
    (
        CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED,
        "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED\0",
        "pointer does not correspond to a registered memory region\0",
    ),
    (
        CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
        "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE\0",
        "too many blocks in cooperative launch\0",
    ),
    (
        CUDA_ERROR_NOT_SUPPORTED,
        "CUDA_ERROR_NOT_SUPPORTED\0",
        "operation not supported\0",
    ),
    (
        CUDA_ERROR_INVALID_CLUSTER_SIZE,
        "CUDA_ERROR_INVALID_CLUSTER_SIZE\0",
        "invalid cluster size\0",
    ),
    (
        CUDA_ERROR_UNKNOWN,
        "CUDA_ERROR_UNKNOWN\0",
        "unknown error\0",
    ),
];

fn lookup(code: CUresult) -> Option<&'static (CUresult, &'static str, &'static str)> {
    TABLE.iter().find(|(c, _, _)| *c == code)
}

/// # Safety
/// `p_str` must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGetErrorString(error: CUresult, p_str: *mut *const c_char) -> CUresult {
    call_any_time(|| {
        let (_, _, s) = lookup(error).ok_or(CUDA_ERROR_INVALID_VALUE)?;
        put(p_str, s.as_ptr() as *const c_char)
    })
}

/// # Safety
/// `p_str` must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGetErrorName(error: CUresult, p_str: *mut *const c_char) -> CUresult {
    call_any_time(|| {
        let (_, n, _) = lookup(error).ok_or(CUDA_ERROR_INVALID_VALUE)?;
        put(p_str, n.as_ptr() as *const c_char)
    })
}

/// The result code for a failed launch or load.
pub fn code_of(e: &ptxjit::Error) -> CUresult {
    use ptxjit_runtime::StatusKind;
    match e {
        ptxjit::Error::Runtime { kind, .. } => match kind {
            // A call through a bad pointer jumps to no code: an illegal address on a GPU.
            Some(StatusKind::IllegalAddress | StatusKind::BadCall) => CUDA_ERROR_ILLEGAL_ADDRESS,
            Some(StatusKind::Misaligned) => CUDA_ERROR_MISALIGNED_ADDRESS,
            Some(StatusKind::Timeout) => CUDA_ERROR_LAUNCH_TIMEOUT,
            Some(StatusKind::StackOverflow) => CUDA_ERROR_HARDWARE_STACK_ERROR,
            Some(StatusKind::Assert) => CUDA_ERROR_ASSERT,
            _ => CUDA_ERROR_LAUNCH_FAILED,
        },
        ptxjit::Error::Launch { message, .. } if message.contains("timeout") => {
            CUDA_ERROR_LAUNCH_TIMEOUT
        }
        ptxjit::Error::Launch { message, .. } if message.contains("stack overflow") => {
            CUDA_ERROR_HARDWARE_STACK_ERROR
        }
        ptxjit::Error::Launch { message, .. } if message.contains("cluster") => {
            CUDA_ERROR_INVALID_CLUSTER_SIZE
        }
        ptxjit::Error::Launch { .. } => CUDA_ERROR_INVALID_VALUE,
        ptxjit::Error::Device(ptxjit_runtime::RuntimeError::OutOfMemory(_)) => {
            CUDA_ERROR_OUT_OF_MEMORY
        }
        ptxjit::Error::Device(_) => CUDA_ERROR_INVALID_VALUE,
        ptxjit::Error::Ptx(_) | ptxjit::Error::PtxMany(_) => CUDA_ERROR_INVALID_PTX,
        ptxjit::Error::NoSuchKernel { .. } => CUDA_ERROR_NOT_FOUND,
        ptxjit::Error::Codegen { .. } => CUDA_ERROR_INVALID_PTX,
    }
}
