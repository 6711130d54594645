//! `cuLink*`: PTX inputs linked into one image ([`ptxjit::link`]), which is PTX text, so that
//! `cuModuleLoadData` and `cuLibraryLoadData` load it like any other. A fatbin, host object
//! or library gives the PTX it carries (`fatbin`; a library's members give only what the
//! other inputs use, as CUDA's `libcudadevrt.a` gives the grid barrier). Machine code alone
//! (a cubin, a container without PTX) or LTO-IR cannot run here: adding one fails with a
//! result code and a message in the error log.

use std::ffi::{CStr, c_char, c_int, c_uint, c_void};

use super::module::{LogBuffer, jit_options, write_log};
use super::*;

struct Link {
    inputs: Vec<Input>,
    error_log: LogBuffer,
    info_log: LogBuffer,
    /// `CU_JIT_MAX_REGISTERS`, written into the image (`.maxnreg`).
    max_registers: Option<u32>,
    /// The linked image, NUL-terminated, once complete (valid until the link is destroyed).
    image: Vec<u8>,
}

/// One input's PTX: its name, its text, whether it comes from a library.
struct Input {
    name: String,
    text: String,
    library: bool,
}

// SAFETY: the log pointers are the caller's buffers, written only from calls on this link.
unsafe impl Send for Link {}

static LINKS: Table<Link> = Table::new();

const CU_JIT_INPUT_CUBIN: c_int = 0;
const CU_JIT_INPUT_PTX: c_int = 1;
const CU_JIT_INPUT_FATBINARY: c_int = 2;
const CU_JIT_INPUT_OBJECT: c_int = 3;
const CU_JIT_INPUT_LIBRARY: c_int = 4;
const CU_JIT_INPUT_NVVM: c_int = 5;

/// # Safety
/// `options` and `values` hold `num_options` entries; `state` must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuLinkCreate_v2(
    num_options: c_uint,
    options: *const c_int,
    values: *const *mut c_void,
    state: *mut Handle,
) -> CUresult {
    call_in_context(|| {
        // SAFETY: passed on.
        let jit = unsafe { jit_options(num_options, options, values) }?;
        let (error_log, info_log, max_registers) = (jit.error_log, jit.info_log, jit.max_registers);
        write_log(info_log.0, info_log.1, "");
        write_log(error_log.0, error_log.1, "");
        put(
            state,
            LINKS.insert(Link {
                inputs: Vec::new(),
                error_log,
                info_log,
                max_registers,
                image: Vec::new(),
            }),
        )
    })
}

/// Adds one input; `Err` with the message for the error log.
fn add(state: Handle, kind: c_int, data: &[u8], name: &str) -> Result<(), CUresult> {
    let refuse = |code, why: &str| {
        let message = format!("{name}: {why}");
        debug(&format!("cuLinkAddData: {message}"));
        let _ = LINKS.with(state, |l| write_log(l.error_log.0, l.error_log.1, &message));
        Err(code)
    };
    let input = |name: String, text: String, library: bool| Input {
        name,
        text,
        library,
    };
    let inputs = match kind {
        CU_JIT_INPUT_PTX => {
            let text = CStr::from_bytes_until_nul(data)
                .map(|c| c.to_string_lossy().into_owned())
                .unwrap_or_else(|_| String::from_utf8_lossy(data).into_owned());
            vec![input(name.to_string(), text, false)]
        }
        CU_JIT_INPUT_FATBINARY | CU_JIT_INPUT_OBJECT => {
            let mut contents = fatbin::Contents::default();
            let read = match kind {
                CU_JIT_INPUT_FATBINARY if fatbin::is_fatbin(data) => {
                    fatbin::read_fatbins(data, &mut contents)
                }
                CU_JIT_INPUT_FATBINARY => Err("not a fatbin".into()),
                _ => fatbin::read_object(data, &mut contents),
            };
            if let Err(why) = read {
                return refuse(CUDA_ERROR_INVALID_IMAGE, &why);
            }
            match fatbin::ptx_for_device(contents) {
                Ok(text) => vec![input(name.to_string(), text, false)],
                Err(why) => return refuse(CUDA_ERROR_NO_BINARY_FOR_GPU, &why),
            }
        }
        CU_JIT_INPUT_LIBRARY => {
            let members = match fatbin::archive_members(data) {
                Ok(m) => m,
                Err(why) => return refuse(CUDA_ERROR_INVALID_IMAGE, &why),
            };
            let mut inputs = Vec::new();
            let mut machine_code = Vec::new();
            for (k, member) in members.iter().enumerate() {
                let mut contents = fatbin::Contents::default();
                if let Err(why) = fatbin::read_object(member, &mut contents) {
                    return refuse(CUDA_ERROR_INVALID_IMAGE, &format!("member {k}: {why}"));
                }
                machine_code.extend_from_slice(&contents.machine_code);
                if let Some(ptx) = fatbin::pick(contents, fatbin::device_sm()) {
                    inputs.push(input(format!("{name}({k})"), ptx.text, true));
                }
            }
            if inputs.is_empty() {
                return refuse(CUDA_ERROR_NO_BINARY_FOR_GPU, &fatbin::no_ptx(&machine_code));
            }
            inputs
        }
        CU_JIT_INPUT_NVVM => {
            return refuse(
                CUDA_ERROR_NOT_SUPPORTED,
                "LTO-IR cannot be linked here: ptxjit runs PTX (compile without LTO)",
            );
        }
        CU_JIT_INPUT_CUBIN => {
            return refuse(
                CUDA_ERROR_NO_BINARY_FOR_GPU,
                "GPU machine code (a cubin) cannot run here: link PTX",
            );
        }
        _ => return Err(CUDA_ERROR_INVALID_VALUE),
    };
    LINKS.with(state, |l| l.inputs.extend(inputs))
}

/// # Safety
/// `data` holds `size` bytes; `name` NUL-terminated or null; the option arrays their counts.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuLinkAddData_v2(
    state: Handle,
    kind: c_int,
    data: *const c_void,
    size: usize,
    name: *const c_char,
    _num_options: c_uint,
    _options: *const c_int,
    _values: *const *mut c_void,
) -> CUresult {
    call_in_context(|| {
        LINKS.with(state, |_| ())?;
        if data.is_null() || size == 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: the caller passes `size` bytes and a NUL-terminated name or null.
        let (bytes, name) = unsafe {
            (
                std::slice::from_raw_parts(data as *const u8, size),
                name_or(name, "<cuLinkAddData>"),
            )
        };
        add(state, kind, bytes, &name)
    })
}

/// # Safety
/// `path` NUL-terminated; the option arrays hold their counts.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuLinkAddFile_v2(
    state: Handle,
    kind: c_int,
    path: *const c_char,
    _num_options: c_uint,
    _options: *const c_int,
    _values: *const *mut c_void,
) -> CUresult {
    call_in_context(|| {
        LINKS.with(state, |_| ())?;
        if path.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: the caller passes a NUL-terminated path.
        let path = unsafe { name_or(path, "") };
        let bytes = std::fs::read(&path).map_err(|e| {
            debug(&format!("cuLinkAddFile: cannot read {path}: {e}"));
            CUDA_ERROR_FILE_NOT_FOUND
        })?;
        add(state, kind, &bytes, &path)
    })
}

/// # Safety
/// `s` NUL-terminated or null.
unsafe fn name_or(s: *const c_char, default: &str) -> String {
    if s.is_null() {
        return default.to_string();
    }
    // SAFETY: the caller's guarantee.
    unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
}

/// Links the inputs; the image (PTX text) stays valid until the link is destroyed.
///
/// # Safety
/// The out-pointers must be writable (`size` may be null).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuLinkComplete(
    state: Handle,
    image: *mut *mut c_void,
    size: *mut usize,
) -> CUresult {
    call_in_context(|| {
        let linked = LINKS.with(state, |l| {
            let inputs: Vec<ptxjit::LinkInput> = l
                .inputs
                .iter()
                .map(|i| ptxjit::LinkInput {
                    name: &i.name,
                    text: &i.text,
                    library: i.library,
                })
                .collect();
            if inputs.is_empty() {
                return Err("nothing to link".to_string());
            }
            // Loading reports what the checker finds; linking reports what the link finds.
            ptxjit::link(&inputs)
                .and_then(|text| match l.max_registers {
                    Some(max) => ptxjit::limit_registers("<cuLinkComplete>", &text, max),
                    None => Ok(text),
                })
                .and_then(|text| ptxjit::check_ptx("<cuLinkComplete>", &text).map(|_| text))
                .map_err(|e| e.to_string())
        })?;
        LINKS.with(state, |l| match linked {
            Ok(text) => {
                write_log(l.info_log.0, l.info_log.1, "");
                l.image = text.into_bytes();
                l.image.push(0);
                put(image, l.image.as_mut_ptr() as *mut c_void)?;
                if !size.is_null() {
                    put(size, l.image.len())?;
                }
                Ok(())
            }
            Err(message) => {
                debug(&format!("cuLinkComplete: {message}"));
                write_log(l.error_log.0, l.error_log.1, &message);
                Err(CUDA_ERROR_INVALID_PTX)
            }
        })?
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuLinkDestroy(state: Handle) -> CUresult {
    call_in_context(|| {
        LINKS
            .remove(state)
            .map(|_| ())
            .ok_or(CUDA_ERROR_INVALID_HANDLE)
    })
}
