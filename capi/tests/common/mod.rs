//! What the client tests share: where the repository and the built cdylib are.

// Each test binary uses a part of this module.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// The folder holding the `libptxjit_capi.so` cargo built beside this test.
pub fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    [deps, deps.parent().unwrap()]
        .into_iter()
        .find(|d| d.join("libptxjit_capi.so").is_file())
        .expect("libptxjit_capi.so next to the test binary")
        .to_path_buf()
}

/// Builds `tests/clients/NAME.c` with the system `cc` against the library, runs it with the
/// repository root as its argument, and requires it to print exactly "ok".
pub fn run_c_client(name: &str) {
    let root = repo_root();
    let lib = library_dir();
    let exe = std::env::temp_dir().join(format!("ptxjit-{name}-{}", std::process::id()));
    let built = std::process::Command::new("cc")
        .arg(root.join(format!("tests/clients/{name}.c")))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", lib.display()))
        .arg("-lptxjit_capi")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .status()
        .expect("a C compiler named cc");
    assert!(built.success());
    // cargo's LD_LIBRARY_PATH may name an older copy of the library (target/debug): it would
    // win over the rpath.
    let run = std::process::Command::new(&exe)
        .arg(root)
        .env("LD_LIBRARY_PATH", &lib)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&exe);
    assert!(
        run.status.success(),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&run.stdout), "ok\n");
}
