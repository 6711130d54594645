//! GPU Ocelot's `ptx_run`, as emulation layers call it (tinygrad's mock GPU: its
//! `test/mockgpu/helpers.py` binds it, `cuda/cuda.py` and `nv/nvgpu.py` call it).
//!
//! The argument convention is Ocelot's: `args[i]` is not a pointer to parameter i, it *is*
//! parameter i's value (a host address, or an integer widened to 64 bits), and the parameter
//! takes its low bytes (Ocelot's emulator does `val_u64 = (u64)args[i]`).

use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::{Arc, Mutex};

use ptxjit::{Approximations, Arg, CompileOptions, Dim3, LaunchConfig, Module, ParamInfo};

/// Modules by PTX text, never evicted: a test run launches thousands of times from a few
/// hundred kernels, more than the library's bounded module cache holds. A module holding data
/// (`.global`/`.const` variables) is not kept: every call gets fresh, initialized variables.
fn module_for(name: &str, text: &str) -> Result<Arc<Module>, ptxjit::Error> {
    static MODULES: Mutex<Option<HashMap<String, Arc<Module>>>> = Mutex::new(None);
    let mut guard = MODULES.lock().unwrap_or_else(|e| e.into_inner());
    let map = guard.get_or_insert_with(HashMap::new);
    if let Some(m) = map.get(text) {
        return Ok(m.clone());
    }
    // The caller passes host pointers: the kernels run unconfined. Approximate instructions
    // as GPU Ocelot's emulator computes them (its clients' tests expect that).
    let opts = CompileOptions {
        confine: false,
        approximations: Approximations::Accurate,
        ..CompileOptions::default()
    };
    let m = Arc::new(Module::from_ptx_named(name, text, &opts)?);
    if !m.holds_data() {
        map.insert(text.to_string(), m.clone());
    }
    Ok(m)
}

/// The name after the text's first `.entry`, found without parsing, so that an error in PTX
/// that does not parse still names its kernel.
fn first_entry_name(text: &str) -> Option<&str> {
    let rest = &text[text.find(".entry")? + ".entry".len()..];
    let rest = rest.trim_start();
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%' | '.')))
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// Parameter `p`'s bytes from its Ocelot argument: the value's low bytes.
fn argument(p: &ParamInfo, value: u64) -> Result<Arg, String> {
    if p.size > 8 {
        return Err(format!(
            "parameter '{}' is {} bytes; ptx_run passes each argument as one 64-bit value",
            p.name, p.size
        ));
    }
    Ok(Arg::bytes(&value.to_le_bytes()[..p.size as usize]))
}

fn dim3(what: &str, x: c_int, y: c_int, z: c_int) -> Result<Dim3, String> {
    let u = |v: c_int| u32::try_from(v).map_err(|_| format!("negative {what} dimension {v}"));
    Ok(Dim3::new(u(x)?, u(y)?, u(z)?))
}

/// Runs the first `.entry` of `source` (NUL-terminated PTX) on a grid, Ocelot's way:
/// `args[i]` is parameter i's value (see the module comment); pointers are host addresses;
/// block dimensions come before grid dimensions; `shared_mem_bytes` is the dynamic shared
/// memory. Returns when the grid is done. There is no error channel: on an error it prints one
/// line naming the kernel, the PTX location and the reason to stderr and aborts the process.
///
/// # Safety
/// `source` must be a NUL-terminated string and `args` must hold `n_args` values; the kernel
/// may read and write any host memory its pointer arguments reach.
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
    crate::stats::arm();
    let mut kernel_name = String::from("?");
    let mut run = || -> Result<(), String> {
        if source.is_null() {
            return Err("the PTX source is a null pointer".into());
        }
        // SAFETY: the caller passes a NUL-terminated string. (Bytes that are not UTF-8
        // become U+FFFD: harmless in a comment, a located diagnostic elsewhere.)
        let text = unsafe { CStr::from_ptr(source) }.to_string_lossy();
        kernel_name = first_entry_name(&text).unwrap_or("?").to_string();
        let module = module_for(&format!("{kernel_name}.ptx"), &text).map_err(|e| e.one_line())?;
        let name = module
            .kernel_names()
            .into_iter()
            .next()
            .ok_or("the PTX has no .entry")?;
        kernel_name.clone_from(&name);
        let kernel = module.kernel(&name).map_err(|e| e.one_line())?;
        let params = kernel.params();
        if usize::try_from(n_args) != Ok(params.len()) {
            return Err(format!(
                "takes {} arguments, ptx_run got {n_args}",
                params.len()
            ));
        }
        if !params.is_empty() && args.is_null() {
            return Err("the argument array is a null pointer".into());
        }
        let values = params
            .iter()
            .enumerate()
            // SAFETY: the caller passes `n_args` values, and `n_args == params.len()`.
            .map(|(i, p)| argument(p, unsafe { *args.add(i) } as usize as u64))
            .collect::<Result<Vec<_>, _>>()?;
        let config = LaunchConfig {
            grid: dim3("grid", grid_x, grid_y, grid_z)?,
            block: dim3("block", block_x, block_y, block_z)?,
            dynamic_shared_bytes: u32::try_from(shared_mem_bytes)
                .map_err(|_| format!("negative shared memory size {shared_mem_bytes}"))?,
            cluster: None,
            cooperative: false,
        };
        kernel
            .launch_with(&config, &values)
            .map_err(|e| e.one_line())
    };
    let failure = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(&mut run)) {
        Ok(Ok(())) => return,
        Ok(Err(message)) => message,
        Err(_) => "internal error (a panic in ptxjit)".to_string(),
    };
    // The message may already start with "kernel 'name': ": say it once.
    let failure = failure
        .strip_prefix(&format!("kernel '{kernel_name}': "))
        .unwrap_or(&failure)
        .to_string();
    eprintln!(
        "ptx_run: kernel '{kernel_name}': {failure} (ptx_run has no error channel: aborting)"
    );
    std::process::abort();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_name_is_found_without_parsing() {
        let ptx = ".version 8.0\n.target sm_86\n.visible .entry E_3(\n.param .u64 d) { bogus }";
        assert_eq!(first_entry_name(ptx), Some("E_3"));
        assert_eq!(first_entry_name(".version 8.0"), None);
    }

    #[test]
    fn a_parameter_takes_the_low_bytes_of_its_value() {
        let p = |size| ParamInfo {
            name: "p".into(),
            ty: ptxjit::types::PtxType::B8,
            size,
            offset: 0,
            array: None,
        };
        let v = 0x1122_3344_5566_7788;
        assert_eq!(argument(&p(8), v).unwrap(), Arg::bytes(&v.to_le_bytes()));
        assert_eq!(
            argument(&p(4), v).unwrap(),
            Arg::bytes(&[0x88, 0x77, 0x66, 0x55])
        );
        assert_eq!(argument(&p(2), v).unwrap(), Arg::bytes(&[0x88, 0x77]));
        // An i32 -1 arrives sign-extended; the parameter keeps its 4 low bytes.
        assert_eq!(argument(&p(4), u64::MAX).unwrap(), Arg::bytes(&[0xff; 4]));
    }

    #[test]
    fn a_parameter_wider_than_eight_bytes_has_no_ocelot_meaning() {
        let p = ParamInfo {
            name: "agg".into(),
            ty: ptxjit::types::PtxType::B8,
            size: 16,
            offset: 0,
            array: Some(16),
        };
        let e = argument(&p, 0).unwrap_err();
        assert!(e.contains("'agg' is 16 bytes"), "{e}");
    }
}
