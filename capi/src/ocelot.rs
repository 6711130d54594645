//! GPU Ocelot's `ptx_run`, as tinygrad's mock GPU calls it.

use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::{Arc, Mutex};

use ptxjit::{Arg, CompileOptions, Dim3, LaunchConfig, Module};

/// Modules by PTX text: a test run launches thousands of times from a few hundred kernels.
fn module_for(text: &str) -> Result<Arc<Module>, String> {
    static MODULES: Mutex<Option<HashMap<String, Arc<Module>>>> = Mutex::new(None);
    let mut guard = MODULES.lock().unwrap_or_else(|e| e.into_inner());
    let map = guard.get_or_insert_with(HashMap::new);
    if let Some(m) = map.get(text) {
        return Ok(m.clone());
    }
    // The caller passes host pointers: the kernels run unconfined.
    let opts = CompileOptions {
        confine: false,
        ..CompileOptions::default()
    };
    let m = Arc::new(Module::from_ptx_named("<ptx_run>", text, &opts).map_err(|e| e.to_string())?);
    map.insert(text.to_string(), m.clone());
    Ok(m)
}

/// Runs the first `.entry` of `source` (NUL-terminated PTX) on a grid. `args[i]` points to the
/// value of parameter i (a 64-bit slot, of which the parameter's width is read); pointers are
/// host addresses; block dimensions come before grid dimensions. Returns when the grid is
/// done. There is no error channel: on an error it prints the diagnostic to stderr and aborts
/// the process.
///
/// # Safety
/// `source` must be a NUL-terminated string and `args` must hold `n_args` pointers to
/// readable 8-byte slots; the kernel may read and write any host memory its pointers reach.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn ptx_run(
    source: *const c_char,
    n_args: c_int,
    args: *const *const c_void,
    block_x: c_int,
    block_y: c_int,
    block_z: c_int,
    grid_x: c_int,
    grid_y: c_int,
    grid_z: c_int,
    shared_mem_bytes: c_int,
) {
    let run = || -> Result<(), String> {
        if source.is_null() {
            return Err("source is a null pointer".into());
        }
        // SAFETY: the caller passes a NUL-terminated string.
        let text = unsafe { CStr::from_ptr(source) }
            .to_str()
            .map_err(|_| "the PTX source is not UTF-8".to_string())?;
        let module = module_for(text)?;
        let name = module
            .kernel_names()
            .into_iter()
            .next()
            .ok_or("the PTX has no .entry")?;
        let kernel = module.kernel(&name).map_err(|e| e.to_string())?;
        let params = kernel.params();
        if n_args as usize != params.len() {
            return Err(format!(
                "kernel '{name}' takes {} arguments, ptx_run got {n_args}",
                params.len()
            ));
        }
        let mut values = Vec::new();
        for (i, p) in params.iter().enumerate() {
            // SAFETY: the caller passes n_args pointers, each to an 8-byte slot.
            let slot = unsafe { *args.add(i) } as *const u8;
            let width = p.size.min(8) as usize;
            // SAFETY: as above; at most 8 bytes are read.
            let bytes = unsafe { std::slice::from_raw_parts(slot, width) };
            let mut value = bytes.to_vec();
            value.resize(p.size as usize, 0);
            values.push(Arg::bytes(&value));
        }
        let dim = |x: c_int, y: c_int, z: c_int| -> Result<Dim3, String> {
            let u = |v: c_int| u32::try_from(v).map_err(|_| format!("negative dimension {v}"));
            Ok(Dim3::new(u(x)?, u(y)?, u(z)?))
        };
        let config = LaunchConfig {
            grid: dim(grid_x, grid_y, grid_z)?,
            block: dim(block_x, block_y, block_z)?,
            dynamic_shared_bytes: u32::try_from(shared_mem_bytes)
                .map_err(|_| format!("negative shared memory size {shared_mem_bytes}"))?,
        };
        kernel
            .launch_with(&config, &values)
            .map_err(|e| e.to_string())
    };
    match std::panic::catch_unwind(run) {
        Ok(Ok(())) => {}
        Ok(Err(message)) => {
            eprintln!("ptx_run: {message}");
            eprintln!("ptx_run: aborting (ptx_run has no way to return an error)");
            std::process::abort();
        }
        Err(_) => {
            eprintln!("ptx_run: internal error (panic); aborting");
            std::process::abort();
        }
    }
}
