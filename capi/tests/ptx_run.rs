//! `ptx_run`, Ocelot's entry point, called as Ocelot's callers call it: each `args[i]` is the
//! parameter's value (a host address or an integer), block dimensions before grid dimensions.

use std::ffi::{CString, c_void};
use std::process::Command;

use ptxjit_capi::ocelot::ptx_run;

mod common;
use common::{library_dir, repo_root};

fn example(file: &str) -> Vec<u8> {
    std::fs::read(repo_root().join("examples/h2_axpy").join(file)).unwrap()
}

#[test]
fn each_argument_is_the_parameter_value_itself() {
    let ptx = CString::new(example("h2_axpy.ptx")).unwrap();
    let x = example("x.bin");
    let mut y = example("y.bin");
    let expected = example("expected_y.bin");
    // h2_axpy(u32 n, b32 a, u64 x, u64 y): the values, widened to pointer size.
    let args: [*const c_void; 4] = [
        (x.len() / 4) as *const c_void,
        0x4200_3800usize as *const c_void,
        x.as_ptr().cast(),
        y.as_mut_ptr().cast_const().cast(),
    ];
    // Twice: the second launch reuses the compiled module.
    for _ in 0..2 {
        y.copy_from_slice(&example("y.bin"));
        // SAFETY: a valid PTX string and 4 values; the kernel reads x and writes y, both large
        // enough for n.
        unsafe { ptx_run(ptx.as_ptr(), 4, args.as_ptr(), 4, 1, 1, 1, 1, 1, 0) };
        assert_eq!(y, expected);
    }
}

#[test]
fn a_narrow_parameter_takes_the_low_bytes_of_a_sign_extended_value() {
    // n = -1 arrives sign-extended to 64 bits; the u32 parameter keeps the low 4 bytes.
    let ptx = CString::new(
        ".version 8.0\n.target sm_80\n.address_size 64\n\
         .visible .entry store_n(.param .u32 n, .param .u64 out) {\n\
         .reg .b32 %r<2>; .reg .b64 %rd<2>;\n\
         ld.param.u32 %r1, [n]; ld.param.u64 %rd1, [out];\n\
         st.u32 [%rd1], %r1; ret; }\n",
    )
    .unwrap();
    let mut out = [0u32; 2];
    let args: [*const c_void; 2] = [usize::MAX as *const c_void, out.as_mut_ptr().cast()];
    // SAFETY: a valid PTX string and 2 values; the kernel writes out[0].
    unsafe { ptx_run(ptx.as_ptr(), 2, args.as_ptr(), 1, 1, 1, 1, 1, 1, 0) };
    assert_eq!(out, [u32::MAX, 0]);
}

/// tinygrad's mock GPU is Python calling `ptx_run` through ctypes: the same calls, from Python
/// (`tests/clients/ptx_run_ctypes.py`, standard library only).
#[test]
fn python_ctypes_calls_it_as_tinygrads_mock_does() {
    let run = Command::new("python3")
        .arg(repo_root().join("tests/clients/ptx_run_ctypes.py"))
        .arg(library_dir().join("libptxjit_capi.so"))
        .output()
        .expect("python3");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(stdout.ends_with("5 passed, 0 failed\n"), "{stdout}");
}
