//! What the client tests share: where the repository and the built cdylib are.

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
