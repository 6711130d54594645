//! Modules from PTX text, their functions and globals.

use std::ffi::{CStr, c_char, c_int, c_uint, c_void};

use ptxjit::{CompileOptions, Kernel, Module};

use super::*;

pub static MODULES: Table<Module> = Table::new();
/// Functions, with the handle of the module they came from (unloading it invalidates them).
pub static FUNCTIONS: Table<(usize, Kernel)> = Table::new();

/// `CUjit_option` values this library answers.
const CU_JIT_INFO_LOG_BUFFER: c_int = 3;
const CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES: c_int = 4;
const CU_JIT_ERROR_LOG_BUFFER: c_int = 5;
const CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: c_int = 6;

/// Compiles an image: PTX text (NUL-terminated). ELF (cubin) and fatbin images are not for
/// this device. On a PTX error, returns the diagnostic too.
fn load(image: *const c_void) -> Result<Module, (CUresult, String)> {
    if image.is_null() {
        return Err((CUDA_ERROR_INVALID_VALUE, "null image".into()));
    }
    // The first 4 bytes, up to a NUL: a text shorter than that may end just before unmapped
    // memory, and no binary header has a NUL in its first 4 bytes.
    let mut magic = [0u8; 4];
    for (i, m) in magic.iter_mut().enumerate() {
        // SAFETY: bytes 0..i were readable and not NUL, so the image goes on to byte i.
        *m = unsafe { *(image as *const u8).add(i) };
        if *m == 0 {
            break;
        }
    }
    if &magic == b"\x7FELF"
        || magic == 0xBA55_ED50u32.to_le_bytes()
        || magic == 0x466243B1u32.to_le_bytes()
    {
        return Err((
            CUDA_ERROR_NO_BINARY_FOR_GPU,
            "cubin and fatbin images cannot run here: pass PTX text".into(),
        ));
    }
    // SAFETY: not a binary image, so a NUL-terminated PTX text. (Bytes that are not UTF-8
    // become U+FFFD: harmless in a comment, a located diagnostic elsewhere.)
    let text = unsafe { CStr::from_ptr(image as *const c_char) }.to_string_lossy();
    let text = text.as_ref();
    if text.trim().is_empty() {
        return Err((CUDA_ERROR_INVALID_PTX, "the PTX text is empty".into()));
    }
    let opts = CompileOptions::default();
    Module::from_ptx_named("<cuModuleLoadData>", text, &opts).map_err(|e| {
        debug(&format!("{e}\n--- the module ---\n{text}"));
        (errors::code_of(&e), e.to_string())
    })
}

/// # Safety
/// `module` must be writable; `image` a NUL-terminated PTX text (or a binary image).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleLoadData(module: *mut Handle, image: *const c_void) -> CUresult {
    call_in_context(|| {
        let m = load(image).map_err(|(code, _)| code)?;
        put(module, MODULES.insert(m))
    })
}

/// Copies `text` into a caller's log buffer of `size` bytes (NUL-terminated, truncated).
fn write_log(buffer: *mut c_void, size: usize, text: &str) {
    if buffer.is_null() || size == 0 {
        return;
    }
    let n = text.len().min(size - 1);
    // SAFETY: the caller's buffer has `size` bytes; n + 1 <= size are written.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), buffer as *mut u8, n);
        *(buffer as *mut u8).add(n) = 0;
    }
}

/// [`cuModuleLoadData`] with JIT options: a PTX error's diagnostic goes to the
/// `CU_JIT_ERROR_LOG_BUFFER` (its size from `CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES`); the info
/// log is left empty. Other options are accepted and ignored.
///
/// # Safety
/// As [`cuModuleLoadData`]; `options` and `values` hold `num_options` entries.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleLoadDataEx(
    module: *mut Handle,
    image: *const c_void,
    num_options: c_uint,
    options: *const c_int,
    values: *const *mut c_void,
) -> CUresult {
    call_in_context(|| {
        let mut error_log = (std::ptr::null_mut(), 0usize);
        let mut info_log = (std::ptr::null_mut(), 0usize);
        for i in 0..num_options as usize {
            if options.is_null() || values.is_null() {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            // SAFETY: the caller passes `num_options` options and values.
            let (opt, value) = unsafe { (*options.add(i), *values.add(i)) };
            match opt {
                CU_JIT_ERROR_LOG_BUFFER => error_log.0 = value,
                CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES => error_log.1 = value as usize,
                CU_JIT_INFO_LOG_BUFFER => info_log.0 = value,
                CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES => info_log.1 = value as usize,
                _ => {}
            }
        }
        write_log(info_log.0, info_log.1, "");
        match load(image) {
            Ok(m) => {
                write_log(error_log.0, error_log.1, "");
                put(module, MODULES.insert(m))
            }
            Err((code, message)) => {
                write_log(error_log.0, error_log.1, &message);
                Err(code)
            }
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuModuleUnload(module: Handle) -> CUresult {
    call_in_context(|| {
        MODULES.remove(module).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        FUNCTIONS.retain(|(m, _)| *m != module as usize);
        Ok(())
    })
}

fn name_of<'a>(name: *const c_char) -> Result<&'a str, CUresult> {
    if name.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // SAFETY: the caller passes a NUL-terminated name.
    unsafe { CStr::from_ptr(name) }
        .to_str()
        .map_err(|_| CUDA_ERROR_NOT_FOUND)
}

/// # Safety
/// `func` must be writable; `name` NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleGetFunction(
    func: *mut Handle,
    module: Handle,
    name: *const c_char,
) -> CUresult {
    call_in_context(|| {
        let name = name_of(name)?;
        let kernel = MODULES
            .with(module, |m| m.kernel(name))?
            .map_err(|_| CUDA_ERROR_NOT_FOUND)?;
        put(func, FUNCTIONS.insert((module as usize, kernel)))
    })
}

/// # Safety
/// The out-pointers must be writable or null; `name` NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleGetGlobal_v2(
    dptr: *mut CUdeviceptr,
    bytes: *mut usize,
    module: Handle,
    name: *const c_char,
) -> CUresult {
    call_in_context(|| {
        let name = name_of(name)?;
        let (address, size) = MODULES
            .with(module, |m| m.global(name))?
            .ok_or(CUDA_ERROR_NOT_FOUND)?;
        if !dptr.is_null() {
            put(dptr, address)?;
        }
        if !bytes.is_null() {
            put(bytes, size as usize)?;
        }
        Ok(())
    })
}

/// Attributes are accepted (the limits they raise do not exist here).
#[unsafe(no_mangle)]
pub extern "C" fn cuFuncSetAttribute(func: Handle, _attrib: c_int, _value: c_int) -> CUresult {
    call_in_context(|| FUNCTIONS.with(func, |_| ()))
}
