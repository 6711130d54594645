//! `ptx_run`, Ocelot's entry point: host pointers, block before grid, one slot per argument.

use std::ffi::{CString, c_void};

use ptxjit_capi::ocelot::ptx_run;

#[test]
fn ptx_run_launches_the_first_entry_on_host_memory() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap();
    let ex = root.join("examples/h2_axpy");
    let ptx = CString::new(std::fs::read_to_string(ex.join("h2_axpy.ptx")).unwrap()).unwrap();
    let x = std::fs::read(ex.join("x.bin")).unwrap();
    let mut y = std::fs::read(ex.join("y.bin")).unwrap();
    let expected = std::fs::read(ex.join("expected_y.bin")).unwrap();
    // 64-bit slots; each parameter reads its own width.
    let slots: [u64; 4] = [
        (x.len() / 4) as u64,
        0x4200_3800,
        x.as_ptr() as u64,
        y.as_mut_ptr() as u64,
    ];
    let args: Vec<*const c_void> = slots
        .iter()
        .map(|s| s as *const u64 as *const c_void)
        .collect();
    // Twice: the second launch reuses the compiled module.
    for _ in 0..2 {
        y.copy_from_slice(&std::fs::read(ex.join("y.bin")).unwrap());
        // SAFETY: a valid PTX string and 4 argument slots; the kernel reads x and writes y,
        // both large enough.
        unsafe { ptx_run(ptx.as_ptr(), 4, args.as_ptr(), 4, 1, 1, 1, 1, 1, 0) };
        assert_eq!(y, expected);
    }
}
