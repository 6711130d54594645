//! Modules from PTX text, their functions and globals.

use std::ffi::{CStr, c_char, c_int, c_uint, c_void};

use ptxjit::{CompileOptions, Kernel, Module};

use super::*;

pub static MODULES: Table<Module> = Table::new();
/// Functions, with the handle of the module they came from (unloading it invalidates them).
pub static FUNCTIONS: Table<(usize, Kernel)> = Table::new();

/// `CUjit_option` values this library answers.
const CU_JIT_MAX_REGISTERS: c_int = 0;
const CU_JIT_INFO_LOG_BUFFER: c_int = 3;
const CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES: c_int = 4;
const CU_JIT_ERROR_LOG_BUFFER: c_int = 5;
const CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: c_int = 6;

/// Compiles an image: PTX text (NUL-terminated), or a fatbin (or the `__fatBinC_Wrapper_t`
/// that points to one) that carries PTX. An ELF (cubin) image, or a fatbin of machine code
/// alone, is not for this device. On a PTX error, returns the diagnostic too.
fn load(image: *const c_void, options: &JitOptions) -> Result<Module, (CUresult, String)> {
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
    if &magic == b"\x7FELF" {
        return Err((
            CUDA_ERROR_NO_BINARY_FOR_GPU,
            "cubin images (GPU machine code) cannot run here: pass PTX text".into(),
        ));
    }
    let from_fatbin;
    // SAFETY: `magic` is the image's first bytes.
    let text = if let Some(fatbin) = unsafe { fatbin_image(image, magic) } {
        from_fatbin = super::fatbin::ptx_of_fatbin(fatbin)
            .map_err(|why| (CUDA_ERROR_NO_BINARY_FOR_GPU, format!("the fatbin {why}")))?;
        std::borrow::Cow::Borrowed(from_fatbin.as_str())
    } else {
        // SAFETY: not a binary image, so a NUL-terminated PTX text. (Bytes that are not
        // UTF-8 become U+FFFD: harmless in a comment, a located diagnostic elsewhere.)
        unsafe { CStr::from_ptr(image as *const c_char) }.to_string_lossy()
    };
    let text = text.as_ref();
    if text.trim().is_empty() {
        return Err((CUDA_ERROR_INVALID_PTX, "the PTX text is empty".into()));
    }
    let limited;
    let text = match options.max_registers {
        Some(max) => {
            limited = ptxjit::limit_registers("<cuModuleLoadData>", text, max)
                .map_err(|e| (errors::code_of(&e), e.to_string()))?;
            limited.as_str()
        }
        None => text,
    };
    let opts = CompileOptions::default();
    Module::from_ptx_named("<cuModuleLoadData>", text, &opts).map_err(|e| {
        debug(&format!("{e}\n--- the module ---\n{text}"));
        (errors::code_of(&e), e.to_string())
    })
}

/// The bytes of the fatbin an image is, or points to (`__fatBinC_Wrapper_t`: magic
/// `0x466243B1`, version, then the fatbin's address), by its header's size.
///
/// # Safety
/// `image` is a fatbin or a wrapper when `magic`, its first bytes, says so.
unsafe fn fatbin_image<'a>(image: *const c_void, magic: [u8; 4]) -> Option<&'a [u8]> {
    let fatbin = match u32::from_le_bytes(magic) {
        0xBA55_ED50 => image as *const u8,
        // SAFETY: a wrapper holds the fatbin's address at byte 8.
        0x4662_43B1 => unsafe { *((image as *const u8).add(8) as *const *const u8) },
        _ => return None,
    };
    if fatbin.is_null() {
        return None;
    }
    // SAFETY: a fatbin begins with its 16-byte header: magic, version, header size (u16 at
    // 6), size of what follows (u64 at 8).
    let (header, size) = unsafe {
        (
            (fatbin.add(6) as *const u16).read_unaligned() as usize,
            (fatbin.add(8) as *const u64).read_unaligned() as usize,
        )
    };
    let total = header.checked_add(size).filter(|&t| t <= 1 << 32)?;
    // SAFETY: the header says the fatbin has `total` bytes.
    Some(unsafe { std::slice::from_raw_parts(fatbin, total) })
}

/// # Safety
/// `module` must be writable; `image` a NUL-terminated PTX text (or a binary image).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleLoadData(module: *mut Handle, image: *const c_void) -> CUresult {
    call_in_context(|| {
        let m = load(image, &JitOptions::default()).map_err(|(code, _)| code)?;
        put(module, MODULES.insert(m))
    })
}

/// Copies `text` into a caller's log buffer of `size` bytes (NUL-terminated, truncated).
pub(crate) fn write_log(buffer: *mut c_void, size: usize, text: &str) {
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
/// log is left empty; `CU_JIT_MAX_REGISTERS` caps every kernel's register count. Other
/// options are accepted and ignored.
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
        // SAFETY: passed on.
        let jit = unsafe { jit_options(num_options, options, values) }?;
        let (error_log, info_log) = (jit.error_log, jit.info_log);
        write_log(info_log.0, info_log.1, "");
        match load(image, &jit) {
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

/// A caller's log buffer: where, and how many bytes.
pub(crate) type LogBuffer = (*mut c_void, usize);

/// The JIT options this library answers.
pub(crate) struct JitOptions {
    pub error_log: LogBuffer,
    pub info_log: LogBuffer,
    /// `CU_JIT_MAX_REGISTERS`.
    pub max_registers: Option<u32>,
}

impl Default for JitOptions {
    fn default() -> Self {
        JitOptions {
            error_log: (std::ptr::null_mut(), 0),
            info_log: (std::ptr::null_mut(), 0),
            max_registers: None,
        }
    }
}

/// The log buffers and the register limit among JIT options; other options are accepted
/// and ignored.
///
/// # Safety
/// `options` and `values` hold `num_options` entries.
pub(crate) unsafe fn jit_options(
    num_options: c_uint,
    options: *const c_int,
    values: *const *mut c_void,
) -> Result<JitOptions, CUresult> {
    let mut jit = JitOptions::default();
    let (error_log, info_log) = (&mut jit.error_log, &mut jit.info_log);
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
            // An unsigned int in the pointer's place; 0 is no limit.
            CU_JIT_MAX_REGISTERS => {
                jit.max_registers = Some(value as usize as u32).filter(|&n| n > 0)
            }
            _ => {}
        }
    }
    Ok(jit)
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

/// # Safety
/// `module` must be writable; `path` NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleLoad(module: *mut Handle, path: *const c_char) -> CUresult {
    call_in_context(|| {
        let path = name_of(path).map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
        let mut image = std::fs::read(path).map_err(|e| {
            debug(&format!("cuModuleLoad: cannot read {path}: {e}"));
            CUDA_ERROR_FILE_NOT_FOUND
        })?;
        image.push(0);
        let m = load(image.as_ptr() as *const c_void, &JitOptions::default())
            .map_err(|(code, _)| code)?;
        put(module, MODULES.insert(m))
    })
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleGetFunctionCount(count: *mut c_uint, module: Handle) -> CUresult {
    call_in_context(|| {
        let n = MODULES.with(module, |m| m.kernel_names().len())?;
        put(count, n as c_uint)
    })
}

// ---- libraries and kernels --------------------------------------------------------------------
//
// A library (`CUlibrary`) is a module here and a kernel (`CUkernel`) is a function: the
// context-independent handles and the per-context ones are the same objects, as this driver
// has one device and its contexts share everything.

/// # Safety
/// `library` must be writable; `code` a NUL-terminated PTX text (or a binary image); the
/// option arrays hold their counts.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuLibraryLoadData(
    library: *mut Handle,
    code: *const c_void,
    jit_options: *const c_int,
    jit_values: *const *mut c_void,
    num_jit_options: c_uint,
    _library_options: *const c_int,
    _library_values: *const *mut c_void,
    _num_library_options: c_uint,
) -> CUresult {
    // SAFETY: the caller's guarantees are passed on.
    unsafe { cuModuleLoadDataEx(library, code, num_jit_options, jit_options, jit_values) }
}

/// # Safety
/// As [`cuLibraryLoadData`], with `path` a NUL-terminated file name.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuLibraryLoadFromFile(
    library: *mut Handle,
    path: *const c_char,
    _jit_options: *const c_int,
    _jit_values: *const *mut c_void,
    _num_jit_options: c_uint,
    _library_options: *const c_int,
    _library_values: *const *mut c_void,
    _num_library_options: c_uint,
) -> CUresult {
    // SAFETY: passed on.
    unsafe { cuModuleLoad(library, path) }
}

#[unsafe(no_mangle)]
pub extern "C" fn cuLibraryUnload(library: Handle) -> CUresult {
    cuModuleUnload(library)
}

/// # Safety
/// As [`cuModuleGetFunction`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuLibraryGetKernel(
    kernel: *mut Handle,
    library: Handle,
    name: *const c_char,
) -> CUresult {
    // SAFETY: passed on.
    unsafe { cuModuleGetFunction(kernel, library, name) }
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuLibraryGetModule(module: *mut Handle, library: Handle) -> CUresult {
    call_in_context(|| {
        MODULES.with(library, |_| ())?;
        put(module, library)
    })
}

/// # Safety
/// As [`cuModuleGetGlobal_v2`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuLibraryGetGlobal(
    dptr: *mut CUdeviceptr,
    bytes: *mut usize,
    library: Handle,
    name: *const c_char,
) -> CUresult {
    // SAFETY: passed on.
    unsafe { cuModuleGetGlobal_v2(dptr, bytes, library, name) }
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuKernelGetFunction(func: *mut Handle, kernel: Handle) -> CUresult {
    call_in_context(|| {
        FUNCTIONS.with(kernel, |_| ())?;
        put(func, kernel)
    })
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuKernelGetAttribute(
    value: *mut c_int,
    attrib: c_int,
    kernel: Handle,
    _dev: c_int,
) -> CUresult {
    // SAFETY: passed on.
    unsafe { cuFuncGetAttribute(value, attrib, kernel) }
}

#[unsafe(no_mangle)]
pub extern "C" fn cuKernelSetAttribute(
    attrib: c_int,
    value: c_int,
    kernel: Handle,
    _dev: c_int,
) -> CUresult {
    cuFuncSetAttribute(kernel, attrib, value)
}

#[unsafe(no_mangle)]
pub extern "C" fn cuKernelSetCacheConfig(kernel: Handle, config: c_int, _dev: c_int) -> CUresult {
    cuFuncSetCacheConfig(kernel, config)
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuKernelGetName(name: *mut *const c_char, kernel: Handle) -> CUresult {
    // SAFETY: passed on.
    unsafe { cuFuncGetName(name, kernel) }
}

// ---- function attributes ----------------------------------------------------------------------

/// The value of a function attribute (`CUfunction_attribute`).
fn function_attribute(kernel: &Kernel, attrib: c_int) -> Result<c_int, CUresult> {
    let a = kernel.attributes();
    let clamp = |v: u64| v.min(c_int::MAX as u64) as c_int;
    Ok(match attrib {
        0 => a.max_threads_per_block as c_int, // MAX_THREADS_PER_BLOCK
        1 => clamp(a.static_shared_bytes),     // SHARED_SIZE_BYTES
        2 => clamp(a.const_bytes),             // CONST_SIZE_BYTES
        3 => clamp(a.local_bytes),             // LOCAL_SIZE_BYTES
        4 => a.registers as c_int,             // NUM_REGS
        5 => a.ptx_version as c_int,           // PTX_VERSION
        6 => 86,                               // BINARY_VERSION
        7 => 0,                                // CACHE_MODE_CA
        8 => clamp(99 * 1024 - a.static_shared_bytes.min(99 * 1024)), // MAX_DYNAMIC_SHARED_SIZE_BYTES
        9 => -1,      // PREFERRED_SHARED_MEMORY_CARVEOUT
        10..=15 => 0, // cluster attributes: none required
        _ => return Err(CUDA_ERROR_INVALID_VALUE),
    })
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuFuncGetAttribute(
    value: *mut c_int,
    attrib: c_int,
    func: Handle,
) -> CUresult {
    call_in_context(|| {
        let v = FUNCTIONS.with(func, |(_, k)| function_attribute(k, attrib))??;
        put(value, v)
    })
}

/// Attributes are accepted (the limits they raise do not exist here).
#[unsafe(no_mangle)]
pub extern "C" fn cuFuncSetAttribute(func: Handle, attrib: c_int, _value: c_int) -> CUresult {
    call_in_context(|| {
        FUNCTIONS.with(func, |_| ())?;
        match attrib {
            8..=15 => Ok(()),
            _ => Err(CUDA_ERROR_INVALID_VALUE),
        }
    })
}

/// A cache preference: accepted (a CPU's caches take no orders).
#[unsafe(no_mangle)]
pub extern "C" fn cuFuncSetCacheConfig(func: Handle, config: c_int) -> CUresult {
    call_in_context(|| {
        FUNCTIONS.with(func, |_| ())?;
        match config {
            0..=3 => Ok(()),
            _ => Err(CUDA_ERROR_INVALID_VALUE),
        }
    })
}

/// Kernel names, NUL-terminated, kept for the life of the process (CUDA's stay valid while
/// the module is loaded).
static NAMES: std::sync::Mutex<Vec<std::ffi::CString>> = std::sync::Mutex::new(Vec::new());

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuFuncGetName(name: *mut *const c_char, func: Handle) -> CUresult {
    call_in_context(|| {
        let n = FUNCTIONS.with(func, |(_, k)| k.name().to_string())?;
        let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
        let i = match names.iter().position(|c| c.to_bytes() == n.as_bytes()) {
            Some(i) => i,
            None => {
                names.push(std::ffi::CString::new(n).map_err(|_| CUDA_ERROR_INVALID_VALUE)?);
                names.len() - 1
            }
        };
        put(name, names[i].as_ptr())
    })
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuFuncGetModule(module: *mut Handle, func: Handle) -> CUresult {
    call_in_context(|| put(module, FUNCTIONS.with(func, |(m, _)| *m)? as Handle))
}
