//! A C program (`tests/clients/driver_api.c`, built here with the system `cc`) drives the
//! driver API end to end through `libptxjit_capi.so` on the bundled h2_axpy example.

use std::process::Command;

mod common;
use common::{library_dir, repo_root};

#[test]
fn a_c_program_runs_a_kernel_through_the_driver_api() {
    let root = repo_root();
    let lib = library_dir();
    let out = std::env::temp_dir().join(format!("ptxjit-driver-api-{}", std::process::id()));
    let built = Command::new("cc")
        .arg(root.join("tests/clients/driver_api.c"))
        .arg("-o")
        .arg(&out)
        .arg(format!("-L{}", lib.display()))
        .arg("-lptxjit_capi")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .status()
        .expect("a C compiler named cc");
    assert!(built.success());
    let run = Command::new(&out).arg(root).output().unwrap();
    let _ = std::fs::remove_file(&out);
    assert!(
        run.status.success(),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&run.stdout), "ok\n");
}
