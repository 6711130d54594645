//! A CUDA driver API subset over ptxjit: enough for clients such as tinygrad to load PTX,
//! move memory and launch kernels through `libcuda.so.1`.
//!
//! The device is this CPU (reported as compute capability 8.6). Device memory comes from
//! ptxjit's arena, so kernels run confined: an access outside the allocations ends the launch
//! with `CUDA_ERROR_ILLEGAL_ADDRESS`. Work is synchronous: every call completes before it
//! returns, so streams and events only order nothing; events record wall-clock times.
//! Handles are small integers behind the opaque pointer types, checked on every use.

pub mod context;
pub mod errors;
mod fatbin;
pub mod launch;
pub mod link;
pub mod memory;
pub mod module;
pub mod occupancy;
pub mod proc;
pub mod stream;
pub mod tensor_map;

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

pub use errors::*;

/// `CUresult`.
pub type CUresult = std::ffi::c_int;
/// `CUdeviceptr`: a device address.
pub type CUdeviceptr = u64;
/// Opaque handles (`CUcontext`, `CUmodule`, `CUfunction`, `CUstream`, `CUevent`).
pub type Handle = *mut std::ffi::c_void;

/// Objects of one kind by handle.
pub struct Table<T> {
    items: Mutex<Option<HashMap<usize, T>>>,
}

static NEXT_HANDLE: AtomicUsize = AtomicUsize::new(0x1000);

impl<T> Table<T> {
    pub const fn new() -> Table<T> {
        Table {
            items: Mutex::new(None),
        }
    }

    pub fn insert(&self, item: T) -> Handle {
        let id = NEXT_HANDLE.fetch_add(16, Ordering::Relaxed);
        let mut guard = self.items.lock().unwrap_or_else(|e| e.into_inner());
        guard.get_or_insert_with(HashMap::new).insert(id, item);
        id as Handle
    }

    pub fn remove(&self, h: Handle) -> Option<T> {
        let mut guard = self.items.lock().unwrap_or_else(|e| e.into_inner());
        guard.as_mut()?.remove(&(h as usize))
    }

    /// Keeps only the objects for which `keep` holds.
    pub fn retain(&self, mut keep: impl FnMut(&T) -> bool) {
        let mut guard = self.items.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = guard.as_mut() {
            m.retain(|_, item| keep(item));
        }
    }

    /// `f` of the object behind `h`, or `CUDA_ERROR_INVALID_HANDLE`.
    pub fn with<R>(&self, h: Handle, f: impl FnOnce(&mut T) -> R) -> Result<R, CUresult> {
        let mut guard = self.items.lock().unwrap_or_else(|e| e.into_inner());
        match guard.as_mut().and_then(|m| m.get_mut(&(h as usize))) {
            Some(item) => Ok(f(item)),
            None => Err(CUDA_ERROR_INVALID_HANDLE),
        }
    }
}

impl<T> Default for Table<T> {
    fn default() -> Table<T> {
        Table::new()
    }
}

/// Set by `cuInit`: until then, every call but the few CUDA allows before it returns
/// `CUDA_ERROR_NOT_INITIALIZED`.
pub(crate) static INITIALIZED: AtomicBool = AtomicBool::new(false);

/// Runs a driver call that needs nothing first (`cuDriverGetVersion`, the error strings,
/// `cuGetProcAddress`): its `Err` is the result code, and a panic (a bug) is
/// `CUDA_ERROR_UNKNOWN` rather than unwinding into C.
pub fn call_any_time(f: impl FnOnce() -> Result<(), CUresult>) -> CUresult {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Ok(())) => CUDA_SUCCESS,
        Ok(Err(code)) => code,
        Err(_) => CUDA_ERROR_UNKNOWN,
    }
}

/// Runs a driver call made after `cuInit` (device queries, context management).
pub fn call(f: impl FnOnce() -> Result<(), CUresult>) -> CUresult {
    call_any_time(|| match INITIALIZED.load(Ordering::Acquire) {
        true => f(),
        false => Err(CUDA_ERROR_NOT_INITIALIZED),
    })
}

/// Runs a driver call that works in the calling thread's current context (memory, modules,
/// launches, streams, events): `CUDA_ERROR_INVALID_CONTEXT` without one.
pub fn call_in_context(f: impl FnOnce() -> Result<(), CUresult>) -> CUresult {
    call(|| {
        context::current()?;
        f()
    })
}

/// Writes `v` through a caller's out-pointer, or fails with `CUDA_ERROR_INVALID_VALUE`.
pub(crate) fn put<T>(out: *mut T, v: T) -> Result<(), CUresult> {
    if out.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // SAFETY: the caller passes a writable pointer of this type (null checked).
    unsafe { out.write(v) };
    Ok(())
}

/// Prints why a call failed when `PTXJIT_CUDA_DEBUG` is set (CUDA itself says only the code).
pub fn debug(message: &str) {
    if std::env::var_os("PTXJIT_CUDA_DEBUG").is_some() {
        eprintln!("ptxjit libcuda: {message}");
    }
}
