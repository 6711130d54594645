//! `cuLaunchKernel` and `cuLaunchKernelEx` (launch attributes: cluster dimensions):
//! arguments as `kernelParams` (one pointer per parameter) or as one packed buffer in
//! `extra`.

use std::ffi::{c_uint, c_void};
use std::sync::OnceLock;
use std::time::Duration;

use ptxjit::{Arg, Dim3, LaunchConfig};

use super::module::FUNCTIONS;
use super::*;

const CU_LAUNCH_PARAM_END: usize = 0;
const CU_LAUNCH_PARAM_BUFFER_POINTER: usize = 1;
const CU_LAUNCH_PARAM_BUFFER_SIZE: usize = 2;

/// `PTXJIT_LAUNCH_TIMEOUT=SECONDS`: a launch still running after that long ends with
/// `CUDA_ERROR_LAUNCH_TIMEOUT` (its kernel stops at its next backward branch; the context stays
/// usable). Unset, empty or not a positive number of seconds: no limit, as on a GPU.
fn launch_timeout() -> Option<Duration> {
    static TIMEOUT: OnceLock<Option<Duration>> = OnceLock::new();
    *TIMEOUT.get_or_init(|| {
        let seconds: f64 = std::env::var("PTXJIT_LAUNCH_TIMEOUT")
            .ok()?
            .trim()
            .parse()
            .ok()?;
        Duration::try_from_secs_f64(seconds)
            .ok()
            .filter(|d| !d.is_zero())
    })
}

/// The packed buffer of `extra`: (pointer, size).
fn packed_buffer(extra: *const *mut c_void) -> Result<(*const u8, usize), CUresult> {
    let (mut ptr, mut size): (*const u8, Option<usize>) = (std::ptr::null(), None);
    for i in (0..64).step_by(2) {
        // SAFETY: `extra` is a CU_LAUNCH_PARAM_END-terminated list of (key, value) pairs.
        let key = unsafe { *extra.add(i) } as usize;
        if key == CU_LAUNCH_PARAM_END {
            return match (ptr.is_null(), size) {
                (false, Some(s)) => Ok((ptr, s)),
                _ => Err(CUDA_ERROR_INVALID_VALUE),
            };
        }
        // SAFETY: as above: a value follows each key.
        let value = unsafe { *extra.add(i + 1) };
        match key {
            CU_LAUNCH_PARAM_BUFFER_POINTER => ptr = value as *const u8,
            // SAFETY: the size entry points to a size_t.
            CU_LAUNCH_PARAM_BUFFER_SIZE => size = Some(unsafe { *(value as *const usize) }),
            _ => return Err(CUDA_ERROR_INVALID_VALUE),
        }
    }
    Err(CUDA_ERROR_INVALID_VALUE)
}

/// # Safety
/// `kernel_params` holds one pointer per kernel parameter, each to that many bytes, or
/// `extra` is a valid CU_LAUNCH_PARAM list.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuLaunchKernel(
    f: Handle,
    grid_x: c_uint,
    grid_y: c_uint,
    grid_z: c_uint,
    block_x: c_uint,
    block_y: c_uint,
    block_z: c_uint,
    shared_mem_bytes: c_uint,
    _stream: Handle,
    kernel_params: *const *const c_void,
    extra: *const *mut c_void,
) -> CUresult {
    let config = LaunchConfig {
        grid: Dim3::new(grid_x, grid_y, grid_z),
        block: Dim3::new(block_x, block_y, block_z),
        dynamic_shared_bytes: shared_mem_bytes,
        cluster: None,
        cooperative: false,
    };
    // SAFETY: the caller's guarantees are passed on.
    unsafe { launch(f, config, kernel_params, extra) }
}

/// A launch whose blocks may all be resident at once, as grid-wide synchronization needs:
/// a grid larger than the device holds fails with `CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE`.
/// Its grid barrier works (`LaunchConfig::cooperative`).
///
/// # Safety
/// As for [`cuLaunchKernel`] (arguments as `kernel_params` only).
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuLaunchCooperativeKernel(
    f: Handle,
    grid_x: c_uint,
    grid_y: c_uint,
    grid_z: c_uint,
    block_x: c_uint,
    block_y: c_uint,
    block_z: c_uint,
    shared_mem_bytes: c_uint,
    _stream: Handle,
    kernel_params: *const *const c_void,
) -> CUresult {
    let config = LaunchConfig {
        grid: Dim3::new(grid_x, grid_y, grid_z),
        block: Dim3::new(block_x, block_y, block_z),
        dynamic_shared_bytes: shared_mem_bytes,
        cluster: None,
        cooperative: true,
    };
    // SAFETY: the caller's guarantees are passed on.
    unsafe { launch(f, config, kernel_params, std::ptr::null()) }
}

/// Whether a cooperative launch's blocks can all be resident at once.
fn fits_cooperatively(f: Handle, config: &LaunchConfig) -> Result<(), CUresult> {
    let (block, grid) = (config.block.count(), config.grid.count());
    let shared = config.dynamic_shared_bytes as u64;
    let most = super::occupancy::max_resident_blocks(f, block, shared)?;
    if grid > most {
        debug(&format!(
            "cooperative launch: {grid} blocks of {block} threads, at most {most} resident"
        ));
        return Err(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
    }
    Ok(())
}

/// `CUlaunchConfig`.
#[repr(C)]
pub struct CUlaunchConfig {
    grid: [c_uint; 3],
    block: [c_uint; 3],
    shared_mem_bytes: c_uint,
    stream: Handle,
    attrs: *const CUlaunchAttribute,
    num_attrs: c_uint,
}

/// `CUlaunchAttribute`: an id, then a 64-byte value (a union) at offset 8.
#[repr(C)]
pub struct CUlaunchAttribute {
    id: c_uint,
    pad: c_uint,
    value: [c_uint; 16],
}

const CU_LAUNCH_ATTRIBUTE_IGNORE: c_uint = 0;
const CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION: c_uint = 4;
const CU_LAUNCH_ATTRIBUTE_COOPERATIVE: c_uint = 2;
/// Attributes that change nothing on a CPU, where launches run one after another, to
/// completion, without caches to steer: access policy window (1), synchronization policy
/// (3), cluster scheduling policy (5), programmatic stream serialization (6), priority (8),
/// memory synchronization domains (9, 10).
const NO_EFFECT: [c_uint; 7] = [1, 3, 5, 6, 8, 9, 10];

/// # Safety
/// `config` points to a `CUlaunchConfig` whose `attrs` holds `num_attrs` attributes; the
/// arguments as for [`cuLaunchKernel`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuLaunchKernelEx(
    config: *const CUlaunchConfig,
    f: Handle,
    kernel_params: *const *const c_void,
    extra: *const *mut c_void,
) -> CUresult {
    // SAFETY: the caller passes a valid configuration or null.
    let Some(c) = (unsafe { config.as_ref() }) else {
        return CUDA_ERROR_INVALID_VALUE;
    };
    let attrs: &[CUlaunchAttribute] = match (c.attrs.is_null(), c.num_attrs) {
        (_, 0) => &[],
        (true, _) => return CUDA_ERROR_INVALID_VALUE,
        // SAFETY: `attrs` holds `num_attrs` attributes.
        (false, n) => unsafe { std::slice::from_raw_parts(c.attrs, n as usize) },
    };
    let mut cluster = None;
    let mut cooperative = false;
    for a in attrs {
        match a.id {
            CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION => {
                let [x, y, z] = [a.value[0], a.value[1], a.value[2]];
                cluster = Some(Dim3::new(x, y, z));
            }
            CU_LAUNCH_ATTRIBUTE_COOPERATIVE => cooperative = a.value[0] != 0,
            CU_LAUNCH_ATTRIBUTE_IGNORE => {}
            id if NO_EFFECT.contains(&id) => {}
            id => {
                debug(&format!(
                    "cuLaunchKernelEx: launch attribute {id} is not supported"
                ));
                return CUDA_ERROR_NOT_SUPPORTED;
            }
        }
    }
    let config = LaunchConfig {
        grid: Dim3::new(c.grid[0], c.grid[1], c.grid[2]),
        block: Dim3::new(c.block[0], c.block[1], c.block[2]),
        dynamic_shared_bytes: c.shared_mem_bytes,
        cluster,
        cooperative,
    };
    // SAFETY: the caller's guarantees are passed on.
    unsafe { launch(f, config, kernel_params, extra) }
}

/// A launch of `f` with its arguments as `kernel_params` or `extra`.
///
/// # Safety
/// As for [`cuLaunchKernel`].
unsafe fn launch(
    f: Handle,
    config: LaunchConfig,
    kernel_params: *const *const c_void,
    extra: *const *mut c_void,
) -> CUresult {
    call_in_context(|| {
        if config.cooperative {
            fits_cooperatively(f, &config)?;
        }
        let kernel = FUNCTIONS
            .with(f, |(_, k)| k.clone())?
            .with_timeout(launch_timeout());
        let params = kernel.params();
        let mut args = Vec::with_capacity(params.len());
        if !kernel_params.is_null() {
            for (i, p) in params.iter().enumerate() {
                // SAFETY: one pointer per parameter, each to `size` bytes.
                let bytes = unsafe {
                    let slot = *kernel_params.add(i) as *const u8;
                    if slot.is_null() {
                        return Err(CUDA_ERROR_INVALID_VALUE);
                    }
                    std::slice::from_raw_parts(slot, p.size as usize)
                };
                args.push(Arg::bytes(bytes));
            }
        } else if !extra.is_null() {
            let (buffer, size) = packed_buffer(extra)?;
            for p in &params {
                let end = (p.offset + p.size) as usize;
                if end > size {
                    debug(&format!(
                        "packed arguments of {size} bytes, parameter '{}' ends at {end}",
                        p.name
                    ));
                    return Err(CUDA_ERROR_INVALID_VALUE);
                }
                // SAFETY: the buffer has `size` bytes and the parameter lies inside.
                let bytes = unsafe {
                    std::slice::from_raw_parts(buffer.add(p.offset as usize), p.size as usize)
                };
                args.push(Arg::bytes(bytes));
            }
        } else if !params.is_empty() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        super::memory::mirrors_in();
        let result = kernel.launch_with(&config, &args);
        super::memory::mirrors_out();
        result.map_err(|e| {
            debug(&e.to_string());
            errors::code_of(&e)
        })
    })
}
